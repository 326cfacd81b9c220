//! What `kinject test` shows of its cases: a line per failing case (with its diff) and a
//! summary line for people, JSON Lines for machines (docs/report.schema.json), JUnit XML for
//! CI systems; which cases `--run` selects; the exit status.

use std::io::Write;
use std::path::Path;

use serde_json::{Value, json};

use crate::cases::Outcome;
use crate::cli::status::ExitStatus;
use crate::diagnostic::printable;

/// A case as it ended: its name, how long it took, and its outcome with the expected files
/// `--update` wrote, or why it could not run.
#[derive(Debug)]
pub(crate) struct Verdict {
    pub name: String,
    pub seconds: f64,
    pub result: Result<(Outcome, Vec<String>), String>,
}

/// How a case ended, in the words of the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    Passed,
    Failed,
    CouldNotRun,
}

impl Verdict {
    fn ending(&self) -> Ending {
        match &self.result {
            Err(_) => Ending::CouldNotRun,
            Ok((outcome, _)) if outcome.failures.is_empty() => Ending::Passed,
            Ok(_) => Ending::Failed,
        }
    }

    /// The files `--update` wrote.
    fn written(&self) -> &[String] {
        self.result.as_ref().map_or(&[], |(_, w)| w.as_slice())
    }
}

/// The cases `--run` selects: a name containing one of the words, or matching one of the
/// globs (a word holding `*`, `?` or `[`), the whole name or its last folder's; every case
/// when none is given.
pub(crate) struct Filter {
    words: Vec<String>,
    globs: globset::GlobSet,
}

impl Filter {
    /// The filter of the `--run` arguments; `Err` names a glob that does not parse.
    pub(crate) fn new(run: &[String]) -> Result<Filter, String> {
        let mut words = Vec::new();
        let mut globs = globset::GlobSetBuilder::new();
        for w in run {
            if w.contains(['*', '?', '[']) {
                let glob = globset::Glob::new(w).map_err(|e| format!("--run {w}: {e}"))?;
                globs.add(glob);
            } else {
                words.push(w.clone());
            }
        }
        let globs = globs.build().map_err(|e| format!("--run: {e}"))?;
        Ok(Filter { words, globs })
    }

    /// Whether the case `name` runs.
    pub(crate) fn selects(&self, name: &str) -> bool {
        (self.words.is_empty() && self.globs.is_empty())
            || self.words.iter().any(|w| name.contains(w.as_str()))
            || self.globs.is_match(name)
            || name
                .rsplit('/')
                .next()
                .is_some_and(|last| self.globs.is_match(last))
    }
}

/// The run's exit status: 2 when a case could not run, 1 when one failed, else 0.
pub(crate) fn status(verdicts: &[Verdict]) -> ExitStatus {
    verdicts
        .iter()
        .map(|v| match v.ending() {
            Ending::Passed => ExitStatus::Success,
            Ending::Failed => ExitStatus::Changed,
            Ending::CouldNotRun => ExitStatus::Error,
        })
        .max()
        .unwrap_or(ExitStatus::Error)
}

/// `3 passed, 1 failed, 0 could not run` (and `, 2 updated` when `--update` wrote files).
fn summary(verdicts: &[Verdict]) -> String {
    let count = |e: Ending| verdicts.iter().filter(|v| v.ending() == e).count();
    let updated = verdicts.iter().filter(|v| !v.written().is_empty()).count();
    let mut line = format!(
        "{} passed, {} failed, {} could not run",
        count(Ending::Passed),
        count(Ending::Failed),
        count(Ending::CouldNotRun)
    );
    if updated > 0 {
        line.push_str(&format!(", {updated} updated"));
    }
    line
}

/// For people: a line per case that failed or could not run (with what failed, diffs
/// included), per case updated, per case that passed with `verbose`; then the summary.
pub(crate) fn text(verdicts: &[Verdict], verbose: bool) -> String {
    let mut out = String::new();
    for v in verdicts {
        for file in v.written() {
            out.push_str(&format!("updated {}: {file}\n", v.name));
        }
        match &v.result {
            Err(why) => out.push_str(&format!("ERROR {}: {}\n", v.name, printable(why))),
            Ok((outcome, _)) if outcome.failures.is_empty() => {
                if verbose {
                    out.push_str(&format!("ok    {}\n", v.name));
                }
            }
            Ok((outcome, _)) => {
                for f in &outcome.failures {
                    // A case's files are shown in it (diffs): none of their bytes may act on
                    // the terminal (erase a line, write a fake `ok`).
                    let message = printable(f.message.trim_end_matches('\n'));
                    out.push_str(&format!("FAIL  {}: {message}\n", v.name));
                }
            }
        }
    }
    out.push_str(&summary(verdicts));
    out.push('\n');
    out
}

/// For machines: a JSON object per case (`action` `passed`, `failed` or `error`), then the
/// summary with the run's exit status (`status`: 2 when the JUnit file could not be
/// written, whatever the cases did), one per line.
pub(crate) fn json_lines(verdicts: &[Verdict], status: ExitStatus) -> String {
    let mut lines: Vec<Value> = verdicts.iter().map(case_json).collect();
    let count = |e: Ending| verdicts.iter().filter(|v| v.ending() == e).count();
    lines.push(json!({
        "action": "summary",
        "code": "test.summary",
        "passed": count(Ending::Passed),
        "failed": count(Ending::Failed),
        "couldNotRun": count(Ending::CouldNotRun),
        "updated": verdicts.iter().filter(|v| !v.written().is_empty()).count(),
        "exitCode": status.code(),
    }));
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// For machines, when no case ran: the error (`kinject::test::not_run`), then the summary of
/// no case, exit 2.
pub(crate) fn not_run(message: &str) -> String {
    let error = json!({
        "action": "error", "code": crate::diagnostic::codes::TEST_NOT_RUN, "error": message,
    });
    format!("{error}\n{}", json_lines(&[], ExitStatus::Error))
}

/// A case's JSON line.
fn case_json(v: &Verdict) -> Value {
    let mut line = match &v.result {
        Err(why) => json!({
            "action": "error", "code": "test.could_not_run", "case": v.name, "message": why,
        }),
        Ok((outcome, _)) if outcome.failures.is_empty() => {
            json!({"action": "passed", "code": "test.passed", "case": v.name})
        }
        Ok((outcome, _)) => json!({
            "action": "failed",
            "code": outcome.failures[0].code,
            "case": v.name,
            "failures": outcome.failures.iter()
                .map(|f| json!({"code": f.code, "message": f.message}))
                .collect::<Vec<_>>(),
        }),
    };
    if !v.written().is_empty() {
        line["updated"] = json!(v.written());
    }
    line
}

/// Writes the JUnit XML of the cases to `path`, atomically: one `testsuite` whose
/// `testcase`s hold a `failure` (what failed, diffs included) or an `error` (why the case
/// could not run).
pub(crate) fn write_junit(path: &Path, verdicts: &[Verdict]) -> std::io::Result<()> {
    let mut file = crate::cli::write::Replacement::create(path)?;
    file.write_all(junit(verdicts).as_bytes())?;
    file.commit()
}

/// The JUnit XML document (the schema of Jenkins' JUnit plugin and of Ant's
/// `JUnitReportAntTask`, which GitLab, GitHub's test reporters and Jenkins read).
fn junit(verdicts: &[Verdict]) -> String {
    let count = |e: Ending| verdicts.iter().filter(|v| v.ending() == e).count();
    let total: f64 = verdicts.iter().map(|v| v.seconds).sum();
    let (tests, failures, errors) = (
        verdicts.len(),
        count(Ending::Failed),
        count(Ending::CouldNotRun),
    );
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuites name=\"kinject test\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" \
            time=\"{total:.3}\">\n"
    ));
    out.push_str(&format!(
        "  <testsuite name=\"kinject test\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" \
            skipped=\"0\" time=\"{total:.3}\">\n"
    ));
    for v in verdicts {
        out.push_str(&format!(
            "    <testcase name=\"{}\" classname=\"kinject\" time=\"{:.3}\"",
            xml(&v.name),
            v.seconds
        ));
        match &v.result {
            Ok((outcome, _)) if outcome.failures.is_empty() => out.push_str("/>\n"),
            Ok((outcome, _)) => {
                out.push_str(">\n");
                for f in &outcome.failures {
                    let first = f.message.lines().next().unwrap_or_default();
                    out.push_str(&format!(
                        "      <failure type=\"{}\" message=\"{}\">{}</failure>\n",
                        f.code,
                        xml(first),
                        escape(&f.message, false)
                    ));
                }
                out.push_str("    </testcase>\n");
            }
            Err(why) => out.push_str(&format!(
                ">\n      <error type=\"test.could_not_run\" message=\"{}\"/>\n    </testcase>\n",
                xml(why)
            )),
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

/// `text` escaped for an XML attribute; characters XML 1.0 cannot hold (controls other than
/// tab and newlines) written as `\u{…}`.
fn xml(text: &str) -> String {
    escape(text, true)
}

/// `text` escaped for XML (`attribute`: newlines and tabs as character references, which an
/// attribute's value would otherwise turn into spaces).
fn escape(text: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' | '\t' | '\r' if attribute => out.push_str(&format!("&#{};", c as u32)),
            '\r' => out.push_str("&#13;"),
            '\n' | '\t' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}
