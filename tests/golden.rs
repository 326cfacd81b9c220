//! Golden cases: every folder under `testdata/cases/` is one case.
//!
//! A case holds `input.yaml` (or `input.json`, or an `input/` folder), usually `config.yaml`,
//! optionally `args` (the command line after `kinject`, default `inject -c config.yaml
//! input.yaml`), and exactly one expectation: `expected.yaml`, `expected.json`,
//! `expected.patch.json` or `expected.txt` for stdout, or `expected.stderr` for a failing run.
//! `report.txt`, when present, is the expected stderr of a successful run. `stdin.yaml`, when
//! present, is the run's standard input (`krm` reads nothing else). `expect-error`
//! makes a run's exit code 2: with `expected.stderr` nothing may be written to stdout; with
//! `expected.txt` (`explain`, which explains what it could read) stdout is checked too.
//!
//! Every successful `inject` case with YAML output is also checked for idempotence (inject of
//! the output changes nothing), patch/YAML agreement (applying `-o patch` to the input gives
//! the output), and reversibility (`uninject` of the output gives the input back byte for byte;
//! a file `no-uninject` opts out, saying why).
//!
//! Regenerate expectations with `KINJECT_BLESS=1 cargo test --test it golden::`, then read the
//! diff. `KINJECT_CASE=name[,name…]` runs only those cases. Cases run several at a time.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::common::{self, objects};

fn run(dir: &Path, args: &[String], stdin: Option<&[u8]>) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    common::kinject_with_stdin(dir, &args, stdin.unwrap_or_default())
}

fn bless() -> bool {
    std::env::var_os("KINJECT_BLESS").is_some()
}

fn check_file(path: &Path, actual: &str, failures: &mut Vec<String>) {
    if bless() {
        std::fs::write(path, actual).expect("write expectation");
        return;
    }
    match std::fs::read_to_string(path) {
        Ok(expected) if expected == actual => {}
        Ok(expected) => failures.push(format!(
            "{}: differs\n{}",
            path.display(),
            similar::TextDiff::from_lines(&expected, actual)
                .unified_diff()
                .header("expected", "actual")
        )),
        Err(e) => failures.push(format!("{}: {e}", path.display())),
    }
}

fn case_args(dir: &Path) -> Vec<String> {
    let input = ["input.yaml", "input.json", "input"]
        .into_iter()
        .find(|f| dir.join(f).exists())
        .unwrap_or("input.yaml");
    match std::fs::read_to_string(dir.join("args")) {
        Ok(text) => text.split_whitespace().map(str::to_owned).collect(),
        Err(_) => ["inject", "-c", "config.yaml", input]
            .map(str::to_owned)
            .to_vec(),
    }
}

fn expectation(dir: &Path) -> Option<PathBuf> {
    let found: Vec<PathBuf> = [
        "expected.yaml",
        "expected.json",
        "expected.patch.json",
        "expected.txt",
        "expected.stderr",
    ]
    .iter()
    .map(|f| dir.join(f))
    .filter(|p| p.exists())
    .collect();
    match found.len() {
        1 => found.into_iter().next(),
        0 if bless() => {
            let args = case_args(dir).join(" ");
            let name = if dir.join("expect-error").exists() && !args.starts_with("explain") {
                "expected.stderr"
            } else if args.contains("-o patch") {
                "expected.patch.json"
            } else if args.contains("-o json") {
                "expected.json"
            } else if args.starts_with("explain")
                || args.starts_with("schema")
                || args.starts_with("completions")
            {
                "expected.txt"
            } else {
                "expected.yaml"
            };
            Some(dir.join(name))
        }
        _ => None,
    }
}

fn check_case(dir: &Path) -> Vec<String> {
    let mut failures = Vec::new();
    let Some(expected) = expectation(dir) else {
        return vec![format!(
            "{}: needs exactly one expected.* file",
            dir.display()
        )];
    };
    let args = case_args(dir);
    let stdin = std::fs::read(dir.join("stdin.yaml")).ok();
    let out = run(dir, &args, stdin.as_deref());
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let wants_error = expected.file_name().is_some_and(|n| n == "expected.stderr");
    if wants_error {
        if out.status.code() != Some(2) {
            failures.push(format!(
                "{}: expected exit 2, got {:?}\n{stderr}",
                dir.display(),
                out.status.code()
            ));
        }
        if !stdout.is_empty() {
            failures.push(format!("{}: a failing run wrote to stdout", dir.display()));
        }
        check_file(&expected, &stderr, &mut failures);
        return failures;
    }
    // `explain` explains what it could read and exits 2 when something could not be:
    // `expect-error` beside `expected.txt` (and `report.txt` for its stderr).
    let code = if dir.join("expect-error").exists() {
        2
    } else {
        0
    };
    if out.status.code() != Some(code) {
        failures.push(format!(
            "{}: exit {:?}\n{stderr}",
            dir.display(),
            out.status.code()
        ));
        return failures;
    }
    check_file(&expected, &stdout, &mut failures);
    if dir.join("report.txt").exists() {
        check_file(&dir.join("report.txt"), &stderr, &mut failures);
    }
    let is_yaml_inject = args.first().is_some_and(|a| a == "inject")
        && !args.iter().any(|a| a == "-o" || a == "--output")
        && expected.extension().is_some_and(|e| e == "yaml");
    if is_yaml_inject && !bless() {
        failures.extend(invariants(dir, &args, &stdout));
    }
    failures
}

/// Idempotence, patch/YAML agreement and reversibility of an inject case.
fn invariants(dir: &Path, args: &[String], output: &str) -> Vec<String> {
    let mut failures = Vec::new();
    let input_pos = args.len() - 1;
    let input_path = dir.join(&args[input_pos]);
    if input_path.is_dir() {
        return failures;
    }
    let input = std::fs::read_to_string(&input_path).expect("input");
    if objects(&input).is_empty() {
        // No object: nothing to inject twice, patch or take back, and on standard input (as
        // the checks feed it) such a stream is refused (`kinject::input::no_objects`).
        return failures;
    }
    let mut stdin_args = args.to_vec();
    stdin_args[input_pos] = "-".to_owned();

    let again = run(dir, &stdin_args, Some(output.as_bytes()));
    let again_out = String::from_utf8_lossy(&again.stdout);
    if again_out != output {
        failures.push(format!(
            "{}: not idempotent\n{}",
            dir.display(),
            similar::TextDiff::from_lines(output, &again_out)
                .unified_diff()
                .header("first", "second")
        ));
    }

    let mut patch_args = stdin_args.clone();
    patch_args.splice(1..1, ["-o".to_owned(), "patch".to_owned()]);
    let patch = run(dir, &patch_args, Some(input.as_bytes()));
    let entries: Vec<Value> = serde_json::from_slice(&patch.stdout).unwrap_or_default();
    let mut patched = objects(&input);
    let wanted = objects(output);
    if entries.len() != patched.len() {
        failures.push(format!(
            "{}: -o patch has {} entries for {} objects",
            dir.display(),
            entries.len(),
            patched.len()
        ));
    } else {
        for (obj, entry) in patched.iter_mut().zip(&entries) {
            // Applied by an independent RFC 6902 implementation.
            let ops: json_patch::Patch =
                serde_json::from_value(entry["patch"].clone()).expect("RFC 6902 ops");
            if let Err(e) = json_patch::patch(obj, &ops) {
                failures.push(format!("{}: patch does not apply: {e}", dir.display()));
            }
        }
        if patched != wanted {
            failures.push(format!(
                "{}: applying -o patch to the input does not give the YAML output",
                dir.display()
            ));
        }
    }

    if !dir.join("no-uninject").exists() {
        // With the configurations that injected: what their sidecars add is what uninject
        // may remove.
        let mut uninject_args = vec!["uninject".to_owned()];
        for pair in args.windows(2) {
            if pair[0] == "-c" || pair[0] == "--config" {
                uninject_args.extend(["-c".to_owned(), pair[1].clone()]);
            }
        }
        uninject_args.push("-".to_owned());
        let back = run(dir, &uninject_args, Some(output.as_bytes()));
        let back_out = String::from_utf8_lossy(&back.stdout);
        if back_out != input {
            failures.push(format!(
                "{}: uninject does not give the input back\n{}",
                dir.display(),
                similar::TextDiff::from_lines(&input, &back_out)
                    .unified_diff()
                    .header("input", "uninjected")
            ));
        }
    }
    failures
}

/// Every case checked, several at a time (each runs kinject as a process, and waits for it);
/// failures in the cases' order.
fn check_all(dirs: &[PathBuf]) -> Vec<String> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let workers = std::thread::available_parallelism()
        .map_or(2, usize::from)
        .max(2);
    let next = AtomicUsize::new(0);
    let found: Mutex<Vec<(usize, Vec<String>)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(dir) = dirs.get(i) else { break };
                    let failures = check_case(dir);
                    found.lock().expect("not poisoned").push((i, failures));
                }
            });
        }
    });
    let mut found = found.into_inner().expect("not poisoned");
    found.sort_by_key(|(i, _)| *i);
    found.into_iter().flat_map(|(_, f)| f).collect()
}

/// Every case, or those `KINJECT_CASE` names (`KINJECT_CASE=kms-plugin,webhook-curl`).
#[test]
fn golden_cases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cases");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("testdata/cases")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    if let Some(names) = std::env::var_os("KINJECT_CASE") {
        let names = names.to_string_lossy().into_owned();
        let wanted: Vec<&str> = names.split(',').map(str::trim).collect();
        dirs.retain(|d| {
            d.file_name()
                .is_some_and(|n| wanted.iter().any(|w| n == *w))
        });
        assert!(
            !dirs.is_empty(),
            "KINJECT_CASE={names}: no such case in testdata/cases"
        );
    }
    assert!(!dirs.is_empty());
    let failures = check_all(&dirs);
    assert!(
        failures.is_empty(),
        "{} golden failure(s):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
