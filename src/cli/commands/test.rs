//! `kinject test`: the case folders under the paths given found, filtered by `--run`, run
//! on every core and checked by `kinject::cases` (the golden runner's own code), their
//! expectations written with `--update`; wiring only (`test_results` shows them).
//!
//! Each case runs this executable (`std::env::current_exe`) as a process, as the golden
//! runner runs the built binary: a case is then exactly a user's `kinject` command line, run
//! in the case's folder — the configuration discovered from there as `inject` discovers it,
//! the exit code and the report on stderr as the user gets them — and one case's run cannot
//! reach another's state (the report, the current directory) inside one process.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::args::TestArgs;
use crate::cases::{Layout, Outcome, Record, Rules, Runner, Steps};
use crate::cli::output;
use crate::cli::report;
use crate::cli::status::ExitStatus;
use crate::cli::test_results::{self, Verdict};

/// `kinject test`.
pub(crate) fn run(args: &TestArgs) -> ExitStatus {
    if let Some(why) = junit_refused(args) {
        return refused(args, &why);
    }
    match cases(args) {
        Ok(dirs) => {
            let exe = match std::env::current_exe() {
                Ok(exe) => exe,
                Err(e) => {
                    let why = format!("cannot find kinject's own executable: {e}");
                    return refused(args, &why);
                }
            };
            let rules = match configs(&args.configs) {
                Ok(configs) => Rules {
                    untrusted: true,
                    configs,
                    new_expectation: args.update,
                },
                Err(e) => return refused(args, &e),
            };
            let runner = Runner::untrusted(exe);
            let verdicts: Vec<Verdict> = dirs
                .par_iter()
                .map(|(name, dir)| match dir {
                    Ok(dir) => one(name, dir, &rules, &runner, args),
                    Err(why) => Verdict {
                        name: name.clone(),
                        seconds: 0.0,
                        result: Err(why.clone()),
                    },
                })
                .collect();
            finish(args, &verdicts)
        }
        Err(e) => refused(args, &e),
    }
}

/// An error that stops the run before any case: on stderr (and, with `--report json`, as a
/// JSON line and a summary on stdout), exit 2. A `--junit` file says it too, as one case that
/// could not run: a report of an earlier run left in place would show a CI its passes.
fn refused(args: &TestArgs, message: &str) -> ExitStatus {
    report::eprint(&format!("error: {message}\n"));
    if let Some(path) = args
        .junit
        .as_ref()
        .filter(|_| junit_refused(args).is_none())
    {
        let none = Verdict {
            name: "(no case run)".to_owned(),
            seconds: 0.0,
            result: Err(message.to_owned()),
        };
        if let Err(e) = test_results::write_junit(path, &[none]) {
            report::eprint(&format!(
                "error: --junit {}: {e}\n",
                crate::diagnostic::printable_name(&path.display().to_string())
            ));
        }
    }
    if matches!(args.report, crate::args::ReportFormat::Json) {
        // The machine's channel says it too: the error, then a summary of no case.
        return output::stdout(&test_results::not_run(message)).max(ExitStatus::Error);
    }
    ExitStatus::Error
}

/// Why the `--junit` file cannot be written: it leads out of the tree it is named in (a
/// committed `report.xml -> ~/.bashrc`), or it is a configuration, as `--output-file` is
/// refused (`tree::output_refused`).
fn junit_refused(args: &TestArgs) -> Option<String> {
    let path = args.junit.as_ref()?;
    crate::tree::output_refused("--junit", path, &args.paths, &args.configs)
}

/// The configurations of `-c`, made absolute (cases run in their own folders).
fn configs(given: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    given
        .iter()
        .map(|c| {
            if !c.exists() {
                return Err(format!(
                    "-c {}: no such file or directory",
                    crate::diagnostic::printable_name(&c.display().to_string())
                ));
            }
            std::path::absolute(c).map_err(|e| format!("-c {}: {e}", c.display()))
        })
        .collect()
}

/// A case to run, by its name: its folder, or why the folder cannot run (unreadable, or a
/// case holding cases).
type Named = (String, Result<PathBuf, String>);

/// The cases to run, each with its name (its path as found, without a leading `./`),
/// sorted, those `--run` selects, and every folder that cannot run (unreadable, or a case
/// holding cases: an error, whatever `--run` says); `Err` when there is none, or when a PATH
/// leads out of its tree.
fn cases(args: &TestArgs) -> Result<Vec<Named>, String> {
    let roots = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let filter = test_results::Filter::new(&args.run)?;
    let mut found = Vec::new();
    for root in &roots {
        // A PATH is the command line's, but where it leads may be a pull request's (a
        // committed `tests -> /elsewhere`): kept to its tree, as `-i` keeps a name.
        let bare: PathBuf = root.components().collect();
        if let Some(outside) = crate::tree::name_outside(&bare) {
            return Err(format!(
                "{}: {outside}: no case run there (a symlink is not followed out of the tree a PATH is written in)",
                crate::diagnostic::printable_name(&root.display().to_string())
            ));
        }
        let under = crate::cases::find(root, args.update)?;
        for dir in under.cases {
            let name = case_name(&dir);
            if filter.selects(&name) {
                found.push((name, Ok(dir)));
            }
        }
        for (dir, why) in under.errors {
            found.push((case_name(&dir), Err(why)));
        }
    }
    if found.is_empty() {
        let wh = roots
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let filtered = if args.run.is_empty() {
            ""
        } else {
            " that --run selects"
        };
        return Err(format!(
            "no test case{filtered} under {wh}: a case is a folder holding input.yaml, input.json, \
                args or an expected.* file (with --update, an input/ folder too; docs/test.md)"
        ));
    }
    Ok(found)
}

/// A case's name: its path as found, without a leading `./`.
fn case_name(dir: &Path) -> String {
    let shown = dir.strip_prefix(".").unwrap_or(dir);
    let name = crate::diagnostic::printable_name(&shown.display().to_string()).into_owned();
    if name.is_empty() {
        ".".to_owned()
    } else {
        name
    }
}

/// One case run and checked, its expectations written with `--update`.
fn one(name: &str, dir: &Path, rules: &Rules, runner: &Runner, args: &TestArgs) -> Verdict {
    let start = std::time::Instant::now();
    let result = checked(dir, rules, runner, args);
    Verdict {
        name: name.to_owned(),
        seconds: start.elapsed().as_secs_f64(),
        result,
    }
}

/// The case's outcome and the files `--update` wrote; `Err` when it could not run.
fn checked(
    dir: &Path,
    rules: &Rules,
    runner: &Runner,
    args: &TestArgs,
) -> Result<(Outcome, Vec<String>), String> {
    let layout = Layout::read(dir, rules)?;
    let steps = Steps {
        compare: !args.update,
        invariants: true,
    };
    if !args.update {
        let outcome = crate::cases::check(&layout, rules, runner, &crate::cases::apply_own, steps)?;
        return Ok((outcome, Vec::new()));
    }
    let hash = crate::cases::input_hash(&layout, rules)?;
    let expected_name = layout
        .expected
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    let record = Record::of(dir, &hash, rules)?;
    if record == Record::Changed && layout.expected.exists() && !args.force {
        return Err(format!(
            "the input changed since {} was written (input.sha256): compare the two, then \
                --update --force to write it anew",
            expected_name.unwrap_or_default()
        ));
    }
    let outcome = crate::cases::check(&layout, rules, runner, &crate::cases::apply_own, steps)?;
    let mut written = Vec::new();
    // The record only with an expectation written (or as written already): it says what
    // input the expectation is of.
    let record = (Record::path(dir), Record::text(&hash));
    let record = (!outcome.actual.is_empty()).then_some(&record);
    for (path, text) in outcome.actual.iter().chain(record) {
        if unchanged(dir, path, text, rules)? {
            continue;
        }
        write_expectation(dir, path, text)?;
        if Some(path) != record.map(|r| &r.0) {
            written.push(path.strip_prefix(dir).unwrap_or(path).display().to_string());
        }
    }
    Ok((outcome, written))
}

/// Whether the case file `path` holds `text` already; `Err` when it is there but cannot be read
/// as a case file (a symlink out, a fifo, too large).
fn unchanged(dir: &Path, path: &Path, text: &str, rules: &Rules) -> Result<bool, String> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(false);
    }
    let old = crate::cases::read_case_file(dir, path, rules)?;
    Ok(old == text.as_bytes())
}

/// Writes an expected file of the case in `dir` atomically, never through a symlink (a case
/// folder may come from a pull request).
fn write_expectation(dir: &Path, path: &Path, text: &str) -> Result<(), String> {
    let name = path.strip_prefix(dir).unwrap_or(path).display().to_string();
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_file()) {
        return Err(format!("{name}: not a regular file, not written"));
    }
    let write = || -> std::io::Result<()> {
        let mut file = crate::cli::write::Replacement::create(path)?;
        std::io::Write::write_all(&mut file, text.as_bytes())?;
        file.commit()
    };
    write().map_err(|e| format!("{name}: {e}"))
}

/// The results shown (and written to `--junit`), and the exit status: 2 when a case could
/// not run or the JUnit file cannot be written (the results shown all the same), 1 when one
/// failed.
fn finish(args: &TestArgs, verdicts: &[Verdict]) -> ExitStatus {
    let junit = args
        .junit
        .as_ref()
        .and_then(|path| Some((path, test_results::write_junit(path, verdicts).err()?)));
    let status = match junit {
        Some(_) => ExitStatus::Error,
        None => test_results::status(verdicts),
    };
    let text = match args.report {
        crate::args::ReportFormat::Text => test_results::text(verdicts, args.verbose),
        crate::args::ReportFormat::Json => test_results::json_lines(verdicts, status),
    };
    let shown = output::stdout(&text).max(status);
    if let Some((path, e)) = junit {
        report::eprint(&format!(
            "error: --junit {}: {e}\n",
            crate::diagnostic::printable_name(&path.display().to_string())
        ));
    }
    shown
}
