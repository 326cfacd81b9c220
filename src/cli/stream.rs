//! Standard input longer than a window, processed a window at a time: each window's output
//! is made and held back in a spool (memory, then a temporary file) and everything parsed
//! is let go of before the next window is read. The output reaches stdout only once the
//! whole stream has been processed without an error, as it does for any other input; the
//! report is held back too, and says what would have been done when nothing was written.

use crate::cli::write::Spool;
use crate::config::Config;
use crate::inject::Mode;
use crate::pipeline::FileResult;
use crate::pipeline::{self, Values};
use crate::render;
use crate::render::RenderError;
use crate::render::report;
use crate::render::yaml::{YamlOutput, YamlStream};

use super::output::{diagnostics, print_warnings, write_output};
use super::run::StdinWindows;
use super::{ExitStatus, Format, InputArgs, OutputArgs, report_sink};
use crate::diagnostic::codes;

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
            report_sink::error(codes::USAGE, None, &e);
            return ExitStatus::Error;
        }
    };
    let StdinWindows { first, mut rest } = stdin;
    let mut first = Some(first);
    let mut held = Held {
        output: Spool::new(SPOOL_IN_MEMORY),
        patches: render::json::PrettyArray::default(),
        list: render::json::PrettyList::default(),
        // The report too is held back (it comes after the diagnostics, as for other inputs),
        // worded both ways: what was done, and what would have been had nothing failed.
        report: Spool::new(SPOOL_IN_MEMORY),
        report_unwritten: Spool::new(SPOOL_IN_MEMORY),
        objects: 0,
        text: String::new(),
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
        failed |= !held.report(&file);
        warnings.append(&mut file.warnings);
        // Once anything failed nothing will be written: the rest is only checked.
        if failed {
            continue;
        }
        failed |= !held.output(&file, yaml, output.output, &mut notes);
    }
    if held.objects == 0 && !failed {
        super::output::no_objects_in_stdin();
        failed = true;
    }
    if !failed {
        held.text.clear();
        match output.output {
            Format::Patch => held.patches.finish(&mut held.text),
            Format::JsonList => held.list.finish(&mut held.text),
            Format::Yaml | Format::Json => {}
        }
        failed |= !hold(&mut held.output, &held.text, "output");
    }
    if failed {
        report_sink::nothing_written();
        report_sink::copy_to(|out| held.report_unwritten.copy_to(out));
    } else {
        report_sink::copy_to(|out| held.report.copy_to(out));
    }
    if !output.quiet {
        print_warnings(warnings.iter().chain(&notes));
    }
    if failed {
        report_sink::people("error: nothing was written because of the errors above\n");
        return ExitStatus::Error;
    }
    write_output(output.output_file.as_deref(), |out| {
        held.output.copy_to(out)
    })
}

/// What is held back until the whole stream has been processed without an error.
struct Held {
    output: Spool,
    /// The patches' array, open until the last window.
    patches: render::json::PrettyArray,
    /// The `List` of `-o json-list`, open until the last window.
    list: render::json::PrettyList,
    report: Spool,
    /// The report as it reads when nothing is written.
    report_unwritten: Spool,
    /// Objects read so far.
    objects: usize,
    /// Room for a window's text, reused.
    text: String,
}

impl Held {
    /// Counts a window's report entries, and holds back their text (JSON lines are written
    /// as they come); `false` when they cannot be held.
    fn report(&mut self, file: &FileResult) -> bool {
        self.objects += file.docs.iter().map(|d| d.objects.len()).sum::<usize>();
        if report_sink::quiet() {
            report_sink::count_results(&file.docs);
            return true;
        }
        let mut entries = report::entries(std::slice::from_ref(file));
        report_sink::count(&entries);
        let written = report_sink::worded(&mut entries, true);
        let unwritten = report_sink::worded(&mut entries, false);
        hold(&mut self.report, &written, "report")
            && hold(&mut self.report_unwritten, &unwritten, "report")
    }

    /// Holds back a window's output in `format`: its YAML (`yaml`, made while processing), its
    /// JSON documents (or `List` items), or its patches; `false` when it cannot. Notes on the
    /// YAML go to `notes`.
    fn output(
        &mut self,
        file: &FileResult,
        yaml: Option<Result<YamlOutput, RenderError>>,
        format: Format,
        notes: &mut Vec<String>,
    ) -> bool {
        self.text.clear();
        match yaml {
            // A window nothing changed is written from its own text, without a copy.
            Some(Ok(y)) => {
                let held = y
                    .pieces(&file.input)
                    .all(|piece| hold(&mut self.output, piece, "output"));
                notes.extend(y.notes);
                held
            }
            Some(Err(e)) => {
                report_sink::error(codes::INTERNAL, Some(&e.file), &e.to_string());
                false
            }
            None if format == Format::Json => {
                self.text = render::json::render(&render::json::documents(file));
                hold(&mut self.output, &self.text, "output")
            }
            None if format == Format::JsonList => {
                let documents = render::json::documents(file);
                self.list.push(&documents, &mut self.text);
                hold(&mut self.output, &self.text, "output")
            }
            None => {
                self.patches
                    .push(&render::patch::entries(file), &mut self.text);
                hold(&mut self.output, &self.text, "output")
            }
        }
    }
}

/// Writes `text` to `spool`; says why not on stderr (`what` is held back).
fn hold(spool: &mut Spool, text: &str, what: &str) -> bool {
    match spool.write(text.as_bytes()) {
        Ok(()) => true,
        Err(e) => {
            report_sink::error(
                codes::OUTPUT_WRITE,
                None,
                &format!("cannot hold the {what} back in a temporary file: {e}"),
            );
            false
        }
    }
}
