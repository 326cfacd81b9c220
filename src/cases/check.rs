//! A case run and checked: what kinject wrote against the expectation, byte for byte (a
//! unified diff where they differ), the exit code and the report, and for a successful
//! `inject` with YAML output the three invariants.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::layout::{Layout, Rules, read_case_file};
use super::run::{Ran, Runner};

/// Applies one object's RFC 6902 operations (the `patch` of an `-o patch` entry) to it.
/// The golden runner passes an independent implementation (the json-patch crate), so that
/// the patch/YAML invariant does not check kinject against itself; `kinject test` passes
/// `apply_own`.
pub type Apply = dyn Fn(&mut Value, &Value) -> Result<(), String> + Sync;

/// kinject's own RFC 6902 application (`json::patch::apply`).
pub fn apply_own(object: &mut Value, patch: &Value) -> Result<(), String> {
    let ops: Vec<crate::json::patch::Op> = serde_json::from_value(patch.clone())
        .map_err(|e| format!("not RFC 6902 operations: {e}"))?;
    crate::json::patch::apply(object, &ops)
}

/// What a check does besides running the case.
#[derive(Debug, Clone, Copy)]
pub struct Steps {
    /// Compare the output with the expected files (not when they are being written).
    pub compare: bool,
    /// Check the invariants of an inject case.
    pub invariants: bool,
}

/// One way a case failed: a code (`test.differs`, `test.exit_code`, …, docs/test.md) and
/// what to show, a diff included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: &'static str,
    pub message: String,
}

/// A case checked: its failures, and what each expected file would hold (for the bless; none
/// when the run ended otherwise than its expectation says: exit 0 for `expected.stderr`).
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub failures: Vec<Failure>,
    pub actual: Vec<(PathBuf, String)>,
}

impl Outcome {
    fn fail(&mut self, code: &'static str, message: String) {
        self.failures.push(Failure { code, message });
    }

    /// `actual`, the content of `path`, recorded and (with `compare`) compared; `Err` when
    /// the expected file cannot be read.
    fn expect(
        &mut self,
        path: &Path,
        actual: &str,
        steps: Steps,
        layout: &Layout,
        rules: &Rules,
    ) -> Result<(), String> {
        self.actual.push((path.to_owned(), actual.to_owned()));
        if !steps.compare {
            return Ok(());
        }
        let name = path
            .strip_prefix(&layout.dir)
            .unwrap_or(path)
            .display()
            .to_string();
        let expected = read_case_file(&layout.dir, path, rules)?;
        let Ok(expected) = String::from_utf8(expected) else {
            return Err(format!("{name}: not UTF-8"));
        };
        if expected != actual {
            self.fail(
                "test.differs",
                format!(
                    "{name}: differs\n{}",
                    diff(&expected, actual, "expected", "actual")
                ),
            );
        }
        Ok(())
    }
}

/// A unified diff of `a` and `b`, line by line.
fn diff(a: &str, b: &str, a_name: &str, b_name: &str) -> String {
    similar::TextDiff::from_lines(a, b)
        .unified_diff()
        .header(a_name, b_name)
        .to_string()
}

/// Runs the case and checks it; `Err` when it could not run (a file that cannot be read,
/// kinject that cannot be started).
pub fn check(
    layout: &Layout,
    rules: &Rules,
    runner: &Runner,
    apply: &Apply,
    steps: Steps,
) -> Result<Outcome, String> {
    let mut outcome = Outcome::default();
    let stdin = match &layout.stdin {
        Some(p) => read_case_file(&layout.dir, p, rules)?,
        None => Vec::new(),
    };
    let ran = runner.run(&layout.dir, &layout.args, &stdin)?;
    if layout.wants_error() {
        if ran.code != Some(layout.exit_code) {
            // Its stderr is shown by the comparison with `expected.stderr`.
            let message = exit_message(layout.exit_code, &ran);
            let first = message.lines().next().unwrap_or_default().to_owned();
            outcome.fail("test.exit_code", first);
        }
        if !ran.stdout.is_empty() {
            outcome.fail("test.exit_code", "a failing run wrote to stdout".to_owned());
        }
        outcome.expect(&layout.expected, &ran.stderr, steps, layout, rules)?;
        if ran.code != Some(layout.exit_code) {
            // Not the run the expectation is of: nothing for an update to write.
            outcome.actual.clear();
        }
        return Ok(outcome);
    }
    if ran.code != Some(layout.exit_code) {
        outcome.fail("test.exit_code", exit_message(layout.exit_code, &ran));
        return Ok(outcome);
    }
    outcome.expect(&layout.expected, &ran.stdout, steps, layout, rules)?;
    if let Some(report) = &layout.report {
        outcome.expect(report, &ran.stderr, steps, layout, rules)?;
    }
    if steps.invariants && layout.is_yaml_inject() {
        invariants(layout, rules, runner, apply, &ran.stdout, &mut outcome)?;
    }
    Ok(outcome)
}

/// The message of a run that ended with another exit code than `wanted`.
fn exit_message(wanted: i32, ran: &Ran) -> String {
    let got = ran
        .code
        .map_or_else(|| "a signal".to_owned(), |c| format!("exit {c}"));
    format!("expected exit {wanted}, got {got}\n{}", ran.stderr)
}

/// The Kubernetes objects of a YAML or JSON stream (List items included); None where it
/// does not read.
fn objects(text: &str) -> Option<Vec<Value>> {
    let input = crate::read::from_bytes(crate::read::Source::stdin(), text.as_bytes()).ok()?;
    Some(
        input
            .documents
            .iter()
            .filter_map(|d| d.value())
            .flat_map(|p| {
                crate::read::objects(&p.value)
                    .into_iter()
                    .map(|(_, v)| v.clone())
                    .collect::<Vec<_>>()
            })
            .collect(),
    )
}

/// Where the input is among the case's arguments: the last argument that is the case's
/// input (`input.yaml`), else the last argument when it names a file of the case; None for
/// standard input (`-`, `stdin.yaml`), which the checks feed themselves.
fn input_position(layout: &Layout) -> Option<usize> {
    let args = &layout.args;
    let named = layout
        .input
        .and_then(|input| args.iter().rposition(|a| a == input));
    named.or_else(|| {
        let last = args.len() - 1;
        (args[last] != "-" && layout.dir.join(&args[last]).is_file()).then_some(last)
    })
}

/// Idempotence, patch/YAML agreement and reversibility of an inject case whose `output`
/// is YAML, its input read from the one file it names (not checked for an input folder, nor
/// for several inputs: their output is one stream, which no one input gives back).
fn invariants(
    layout: &Layout,
    rules: &Rules,
    runner: &Runner,
    apply: &Apply,
    output: &str,
    outcome: &mut Outcome,
) -> Result<(), String> {
    let args = &layout.args;
    let Some(input_pos) = input_position(layout) else {
        return Ok(());
    };
    if layout.reads.iter().filter(|r| *r != "-").count() > 1 {
        return Ok(());
    }
    let input_path = layout.dir.join(&args[input_pos]);
    if input_path.is_dir() {
        return Ok(());
    }
    let input = String::from_utf8(read_case_file(&layout.dir, &input_path, rules)?)
        .map_err(|_| format!("{}: not UTF-8", args[input_pos]))?;
    let Some(mut patched) = objects(&input).filter(|o| !o.is_empty()) else {
        // No object: nothing to inject twice, patch or take back, and on standard input (as
        // the checks feed it) such a stream is refused (`kinject::input::no_objects`).
        return Ok(());
    };
    let mut stdin_args = args.clone();
    stdin_args[input_pos] = "-".to_owned();

    let again = runner.run(&layout.dir, &stdin_args, output.as_bytes())?;
    if again.stdout != output {
        outcome.fail(
            "test.not_idempotent",
            format!(
                "not idempotent\n{}",
                diff(output, &again.stdout, "first", "second")
            ),
        );
    }

    let mut patch_args = stdin_args.clone();
    patch_args.splice(1..1, ["-o".to_owned(), "patch".to_owned()]);
    let patch = runner.run(&layout.dir, &patch_args, input.as_bytes())?;
    let entries: Vec<Value> = serde_json::from_str(&patch.stdout).unwrap_or_default();
    if entries.len() != patched.len() {
        outcome.fail(
            "test.patch_disagrees",
            format!(
                "-o patch has {} entries for {} objects",
                entries.len(),
                patched.len()
            ),
        );
    } else {
        for (obj, entry) in patched.iter_mut().zip(&entries) {
            if let Err(e) = apply(obj, &entry["patch"]) {
                outcome.fail("test.patch_disagrees", format!("patch does not apply: {e}"));
            }
        }
        if Some(patched) != objects(output) {
            outcome.fail(
                "test.patch_disagrees",
                "applying -o patch to the input does not give the YAML output".to_owned(),
            );
        }
    }

    if !layout.no_uninject {
        // With the configurations that injected: what their sidecars add is what uninject
        // may remove.
        let mut uninject_args = vec!["uninject".to_owned()];
        for config in &layout.configs {
            uninject_args.extend(["-c".to_owned(), config.clone()]);
        }
        uninject_args.push("-".to_owned());
        let back = runner.run(&layout.dir, &uninject_args, output.as_bytes())?;
        if back.stdout != input {
            outcome.fail(
                "test.not_reversible",
                format!(
                    "uninject does not give the input back\n{}",
                    diff(&input, &back.stdout, "input", "uninjected")
                ),
            );
        }
    }
    Ok(())
}
