//! Golden cases: every folder under `testdata/cases/` is one case, read, run and checked by
//! `kinject::cases`, the code `kinject test` runs (docs/test.md), so that the two cannot drift.
//!
//! A case holds `input.yaml` (or `input.json`, or an `input/` folder), usually `config.yaml`,
//! optionally `args` (the command line after `kinject`, default `inject -c config.yaml
//! input.yaml`), and exactly one expectation: `expected.yaml`, `expected.json`,
//! `expected.patch.json` or `expected.txt` for stdout, or `expected.stderr` for a failing run.
//! `report.txt`, when present, is the expected stderr of a successful run. `stdin.yaml`, when
//! present, is the run's standard input (`krm` reads nothing else). `expect-error`
//! makes a run's exit code 2 (or the code it holds, `1`): with `expected.stderr` nothing may be written to stdout; with
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

use kinject::cases::{Layout, Rules, Runner, Steps};

fn bless() -> bool {
    std::env::var_os("KINJECT_BLESS").is_some()
}

/// Applies a patch with an independent RFC 6902 implementation (the json-patch crate), so
/// that the patch/YAML invariant does not check kinject against itself.
fn apply(object: &mut serde_json::Value, patch: &serde_json::Value) -> Result<(), String> {
    let ops: json_patch::Patch =
        serde_json::from_value(patch.clone()).map_err(|e| e.to_string())?;
    json_patch::patch(object, &ops).map_err(|e| e.to_string())
}

/// The case in `dir` run with `binary` and checked by the code `kinject test` runs
/// (`kinject::cases`); with `KINJECT_BLESS`, its expectations written instead.
fn check_case(dir: &Path, binary: &Path) -> Vec<String> {
    let rules = Rules {
        new_expectation: bless(),
        ..Rules::default()
    };
    let runner = Runner::new(binary.to_owned());
    let steps = Steps {
        compare: !bless(),
        invariants: !bless(),
    };
    let checked = Layout::read(dir, &rules)
        .and_then(|layout| kinject::cases::check(&layout, &rules, &runner, &apply, steps));
    match checked {
        Err(why) => vec![format!("{}: {why}", dir.display())],
        Ok(outcome) => {
            if bless() {
                for (path, text) in &outcome.actual {
                    std::fs::write(path, text).expect("write expectation");
                }
            }
            outcome
                .failures
                .iter()
                .map(|f| format!("{}: {}", dir.display(), f.message))
                .collect()
        }
    }
}

/// Every case checked with `binary`, several at a time (each runs kinject as a process, and
/// waits for it); failures in the cases' order.
fn check_all(dirs: &[PathBuf], binary: &Path) -> Vec<String> {
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
                    let failures = check_case(dir, binary);
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
    every_case_passes_with(Path::new(env!("CARGO_BIN_EXE_kinject")));
}

/// The cases run with `binary`: the test build's above, and the release's static binary, the
/// one users download (tests/release.rs): a library default that differs between debug and
/// release builds once changed an error message in release builds only.
pub fn every_case_passes_with(binary: &Path) {
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
    let failures = check_all(&dirs, binary);
    assert!(
        failures.is_empty(),
        "{} golden failure(s) of {}:\n\n{}",
        failures.len(),
        binary.display(),
        failures.join("\n\n")
    );
}
