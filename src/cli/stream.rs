//! Standard input longer than a window, processed a window at a time: each window's output
//! is made and held back in a spool (memory, then a temporary file) and everything parsed
//! is let go of before the next window is read. The output reaches stdout only once the
//! whole stream has been processed without an error, as it does for any other input.

use crate::cli::write::Spool;
use crate::config::Config;
use crate::inject::Mode;
use crate::pipeline::{self, Values};
use crate::render;
use crate::render::report;
use crate::render::yaml::YamlStream;

use super::output::{diagnostics, print_warnings, write_stdout};
use super::run::StdinWindows;
use super::{ExitStatus, Format, InputArgs, OutputArgs, ReportFormat, eprint};

/// Output kept in memory before it goes to a temporary file.
const SPOOL_IN_MEMORY: usize = 4 << 20;

pub(crate) fn run(
    config: &Config,
    mode: Mode,
    args: &InputArgs,
    stdin: StdinWindows,
    output: &OutputArgs,
) -> ExitStatus {
    let settings = match args.settings(config, mode, &[]) {
        Ok(s) => s,
        Err(e) => {
            eprint(&format!("error: {e}\n"));
            return ExitStatus::Error;
        }
    };
    let StdinWindows { first, mut rest } = stdin;
    let mut first = Some(first);
    let mut spool = Spool::new(SPOOL_IN_MEMORY);
    let mut patches = render::json::PrettyArray::default();
    // The report too is held back (it comes after the diagnostics, as for other inputs).
    let mut report = Spool::new(SPOOL_IN_MEMORY);
    let mut warnings = Vec::new();
    let mut notes = Vec::new();
    let mut failed = false;
    let mut text = String::new();
    while let Some(window) = first.take().or_else(|| rest.as_mut()?.next_window()) {
        let input = match window {
            Ok(i) => i,
            Err(e) => {
                diagnostics(vec![e]);
                failed = true;
                continue;
            }
        };
        // YAML is made while processing, by the pipeline's sink.
        let (mut file, yaml) = if output.output == Format::Yaml {
            let (file, yaml) = pipeline::process(input, &settings, YamlStream::new());
            (file, Some(yaml))
        } else {
            (
                pipeline::process(input, &settings, Values::default()).0,
                None,
            )
        };
        if !file.errors.is_empty() {
            failed = true;
            diagnostics(std::mem::take(&mut file.errors));
        }
        if !output.quiet {
            let entries = report::entries(std::slice::from_ref(&file));
            match output.report {
                ReportFormat::Text => {
                    failed |= !hold(&mut report, &report::text(&entries), "report");
                }
                // One JSON list of everything, in the order it happens.
                ReportFormat::Json => super::json_stderr::items(&entries),
            }
        }
        warnings.append(&mut file.warnings);
        // Once anything failed nothing will be written: the rest is only checked.
        if failed {
            continue;
        }
        text.clear();
        let held = match yaml {
            // A window nothing changed is written from its own text, without a copy.
            Some(Ok(y)) => {
                let held = y
                    .pieces(&file.input)
                    .all(|piece| hold(&mut spool, piece, "output"));
                notes.extend(y.notes);
                held
            }
            Some(Err(e)) => {
                eprint(&format!("error: {e}\n"));
                false
            }
            None if output.output == Format::Json => {
                text = render::json::render(&render::json::documents(&file));
                hold(&mut spool, &text, "output")
            }
            None => {
                patches.push(&render::patch::entries(&file), &mut text);
                hold(&mut spool, &text, "output")
            }
        };
        failed |= !held;
    }
    if output.output == Format::Patch && !failed {
        text.clear();
        patches.finish(&mut text);
        failed |= spool.write(text.as_bytes()).is_err();
    }
    if !output.quiet {
        let _ = report.copy_to(&mut std::io::stderr().lock());
        print_warnings(warnings.iter().chain(&notes));
    }
    if failed {
        eprint("error: nothing was written because of the errors above\n");
        return ExitStatus::Error;
    }
    write_stdout(|out| spool.copy_to(out))
}

/// Writes `text` to `spool`; says why not on stderr (`what` is held back).
fn hold(spool: &mut Spool, text: &str, what: &str) -> bool {
    match spool.write(text.as_bytes()) {
        Ok(()) => true,
        Err(e) => {
            eprint(&format!(
                "error: cannot hold the {what} back in a temporary file: {e}\n"
            ));
            false
        }
    }
}
