//! Standard input longer than a window, processed a window at a time: each window's output
//! is made and held back in a spool (memory, then a temporary file) and everything parsed
//! is let go of before the next window is read. The output reaches stdout only once the
//! whole stream has been processed without an error, as it does for any other input; the
//! report is held back too, and says what would have been done when nothing was written.

use std::io::Write;

use crate::cli::write::Spool;
use crate::config::Config;
use crate::inject::Mode;
use crate::pipeline::{self, FileResult};
use crate::render::RenderError;
use crate::render::json::Framed;
use crate::render::output::{Output, process_values};
use crate::render::yaml::{YamlOutput, YamlStream};

use crate::args::OutputArgs;
use crate::cli::held::SPOOL_IN_MEMORY;
use crate::cli::inputs::Inputs;
use crate::cli::output::write_output;
use crate::cli::report::{self, diagnostics, print_warnings};
use crate::cli::run::StdinWindows;
use crate::cli::status::ExitStatus;
use crate::diagnostic::codes;

pub(crate) fn run(
    config: &Config,
    mode: Mode,
    args: &Inputs,
    stdin: StdinWindows,
    out: Output<Spool>,
    output: &OutputArgs,
) -> ExitStatus {
    let settings = match args.settings(config, mode, &[]) {
        Ok(s) => s,
        Err(e) => {
            report::error(codes::USAGE, None, &e);
            return ExitStatus::Error;
        }
    };
    let StdinWindows { first, mut rest } = stdin;
    let mut first = Some(first);
    let mut held = Held {
        output: out,
        // The report too is held back (it comes after the diagnostics, as for other inputs),
        // worded both ways: what was done, and what would have been had nothing failed.
        report: Spool::new(SPOOL_IN_MEMORY),
        report_unwritten: Spool::new(SPOOL_IN_MEMORY),
        objects: 0,
    };
    let mut warnings = Vec::new();
    let mut notes = Vec::new();
    let mut failed = false;
    while let Some(window) = first.take().or_else(|| rest.as_mut()?.next_window()) {
        let input = match window {
            Ok(i) => i,
            Err(e) => {
                diagnostics(vec![e]);
                failed = true;
                continue;
            }
        };
        // Every output is made while processing, by the pipeline's sink: the other formats'
        // straight into the held output (there is nothing to write once anything failed).
        let (mut file, yaml) = match &mut held.output {
            Output::Yaml(_) => {
                let (file, yaml) = pipeline::process(input, &settings, YamlStream::new());
                (file, Some(yaml))
            }
            Output::Values(out) if failed => {
                let mut unused = Framed::part(out.framing());
                (process_values(input, &settings, &mut unused), None)
            }
            Output::Values(out) => (process_values(input, &settings, out), None),
        };
        if !file.errors.is_empty() {
            failed = true;
            diagnostics(std::mem::take(&mut file.errors));
        }
        failed |= !held.report(&file);
        warnings.append(&mut file.warnings);
        // Once anything failed nothing will be written: the rest is only checked.
        if failed {
            continue;
        }
        if let Some(yaml) = yaml {
            failed |= !held.yaml(&file, yaml, &mut notes);
        }
    }
    if held.objects == 0 && !failed {
        report::no_objects_in_stdin();
        failed = true;
    }
    let spool = held.output.finish().map_err(|e| cannot_hold(&e, "output"));
    failed |= spool.is_err();
    if failed {
        report::nothing_written();
        report::copy_to(|out| held.report_unwritten.copy_to(out));
    } else {
        report::copy_to(|out| held.report.copy_to(out));
    }
    if !output.quiet {
        print_warnings(warnings.iter().chain(&notes));
    }
    match spool {
        Ok(spool) if !failed => {
            write_output(output.output_file.as_deref(), |out| spool.copy_to(out))
        }
        _ => {
            report::people("error: nothing was written because of the errors above\n");
            ExitStatus::Error
        }
    }
}

/// What is held back until the whole stream has been processed without an error.
struct Held {
    /// The output (its array or `List` open until the last window).
    output: Output<Spool>,
    report: Spool,
    /// The report as it reads when nothing is written.
    report_unwritten: Spool,
    /// Objects read so far.
    objects: usize,
}

impl Held {
    /// Counts a window's report entries, and holds back their text (JSON lines are written
    /// as they come); `false` when they cannot be held.
    fn report(&mut self, file: &FileResult) -> bool {
        self.objects += file.docs.iter().map(|d| d.objects.len()).sum::<usize>();
        if report::quiet() {
            report::count_results(&file.docs);
            return true;
        }
        let mut entries = crate::render::report::entries(std::slice::from_ref(file));
        report::count(&entries);
        let written = report::worded(&mut entries, true);
        let unwritten = report::worded(&mut entries, false);
        hold(&mut self.report, &written, "report")
            && hold(&mut self.report_unwritten, &unwritten, "report")
    }

    /// Holds back a window's YAML output (made while processing); `false` when it cannot.
    /// Notes on it go to `notes`.
    fn yaml(
        &mut self,
        file: &FileResult,
        yaml: Result<YamlOutput, RenderError>,
        notes: &mut Vec<String>,
    ) -> bool {
        match yaml {
            // A window nothing changed is written from its own text, without a copy.
            Ok(y) => {
                if let Output::Yaml(out) = &mut self.output {
                    for piece in y.pieces(&file.input) {
                        out.push(piece);
                    }
                }
                notes.extend(y.notes);
                true
            }
            Err(e) => {
                report::error(codes::INTERNAL, Some(&e.file), &e.to_string());
                false
            }
        }
    }
}

/// Writes `text` to `spool`; says why not on stderr (`what` is held back).
fn hold(spool: &mut Spool, text: &str, what: &str) -> bool {
    match spool.write_all(text.as_bytes()) {
        Ok(()) => true,
        Err(e) => cannot_hold(&e, what),
    }
}

/// Says on stderr that `what` cannot be held back (`e`); `false`.
pub(crate) fn cannot_hold(e: &std::io::Error, what: &str) -> bool {
    report::error(
        codes::OUTPUT_WRITE,
        None,
        &format!("cannot hold the {what} back in a temporary file: {e}"),
    );
    false
}
