//! Where `inject`'s and `uninject`'s report goes, and in what form: text lines for people, or
//! JSON Lines (`--report json`) — one object per line, written as the run goes, every one
//! with a `code`: the objects' entries, the diagnostics, errors and warnings, and a summary
//! last — on stderr, or in the file `--report-file` names (stderr is then for people, as
//! with `-q`). It also counts what the report says, for the summary line. Every command says
//! its errors, warnings and located diagnostics here (`eprint`, `diagnostics`), so that
//! `--report json` holds them all and a progress line is cleared first.

use std::io::Write;
use std::sync::Mutex;

use serde::Serialize;
use serde_json::{Value, json};

use crate::diagnostic::codes;
use crate::pipeline::FileResult;
use crate::render::report::{self, Entry, Files, Groups, Tally, Wording};

use super::status::ExitStatus;
use crate::args::{Command, OutputArgs, ReportFormat};

/// The report being written, for `inject` and `uninject`.
struct Reporter {
    json: bool,
    quiet: bool,
    verbose: bool,
    wording: Wording,
    /// `--report-file` (put in place when the run ends), else stderr.
    file: Option<std::io::BufWriter<super::write::Replacement>>,
    tally: Tally,
    /// Whether the inputs were read and reported (objects or not).
    reported: bool,
    /// Whether the run's output is written (false once an error stopped it: the entries then
    /// say what would have been done).
    written: bool,
    /// The kinds of lines shown and counted, for the report as written (`[0]`) and as it reads
    /// when nothing is (`[1]`; standard input read a window at a time makes both).
    groups: [Groups; 2],
}

static REPORTER: Mutex<Option<Reporter>> = Mutex::new(None);

fn reporter() -> std::sync::MutexGuard<'static, Option<Reporter>> {
    REPORTER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Draws located diagnostics as this terminal can show them: without Unicode or colour
/// where it has none (`terminal::unicode`, `terminal::colour`), a line broken at spaces only.
pub(crate) fn style_diagnostics() {
    let _ = miette::set_hook(Box::new(|_| {
        let mut opts = miette::MietteHandlerOpts::new();
        if !super::terminal::unicode() {
            opts = opts.unicode(false);
        }
        if !super::terminal::colour(true) {
            opts = opts.color(false);
        }
        Box::new(
            opts.width(100)
                .terminal_links(false)
                // A line breaks at a space, never inside a name (`log-\nshipper`).
                .word_separator(textwrap::WordSeparator::AsciiSpace)
                .word_splitter(textwrap::WordSplitter::NoHyphenation)
                .break_words(false)
                .build(),
        )
    }));
}

/// Starts the report of a command that has one (`inject`, `uninject`), worded for it.
pub(crate) fn start_for(command: &Command) -> Result<(), String> {
    let (output, edit, uninject) = match command {
        Command::Inject(args) => (&args.output, &args.edit, false),
        Command::Uninject(args) => (&args.output, &args.edit, true),
        _ => return Ok(()),
    };
    let wording = Wording {
        uninject,
        dry_run: (edit.check || edit.diff) && !edit.in_place,
    };
    start(output, wording)
}

/// From now on, the run's report goes where `output` says, worded as `wording` says.
fn start(output: &OutputArgs, wording: Wording) -> Result<(), String> {
    let file = match &output.report_file {
        Some(path) => Some(std::io::BufWriter::new(
            super::write::Replacement::create(path).map_err(|e| {
                format!(
                    "--report-file {}: {e}",
                    crate::diagnostic::printable_name(&path.display().to_string())
                )
            })?,
        )),
        None => None,
    };
    *reporter() = Some(Reporter {
        json: output.report == ReportFormat::Json,
        quiet: output.quiet,
        verbose: output.verbose,
        wording,
        file,
        tally: Tally::default(),
        reported: false,
        written: true,
        groups: [Groups::default(), Groups::default()],
    });
    Ok(())
}

impl Reporter {
    /// Whether stderr is for people (it is not when it carries the JSON report).
    fn people_on_stderr(&self) -> bool {
        !self.json || self.file.is_some()
    }

    /// Writes `text` where the report goes.
    fn write(&mut self, text: &str) {
        match &mut self.file {
            Some(f) => {
                let _ = f.write_all(text.as_bytes());
            }
            None => write_stderr(text),
        }
    }

    /// Writes `item` as one JSON line where the report goes.
    fn line(&mut self, item: &impl Serialize) {
        let mut text = serde_json::to_string(item).unwrap_or_default();
        text.push('\n');
        self.write(&text);
    }
}

/// Whether a progress line may go on stderr: the report is not left out (`-q`) and stderr
/// does not carry a JSON report.
pub(crate) fn progress_allowed() -> bool {
    reporter()
        .as_ref()
        .is_some_and(|s| !s.quiet && s.people_on_stderr())
}

/// Whether the report is left out (`-q`).
pub(crate) fn quiet() -> bool {
    reporter().as_ref().is_some_and(|s| s.quiet)
}

/// The report of `entries`: counted, and returned as the text to write where the report goes
/// (`text`): JSON lines, or the lines a person is shown (every one with `-v`). Entries of a
/// dry run, or of a run that wrote nothing, say what would be done.
pub(crate) fn entries(entries: &mut [Entry]) -> String {
    count(entries);
    let written = reporter().as_ref().is_none_or(|s| s.written);
    worded(entries, written)
}

/// Counts `entries` for the summary: the inputs were read.
pub(crate) fn count(entries: &[Entry]) {
    if let Some(s) = reporter().as_mut() {
        s.reported = true;
        s.tally.add(entries);
    }
}

/// Counts the objects of `docs` for the summary, as `count` counts their entries, without
/// making them (`-q`).
pub(crate) fn count_results(docs: &[crate::pipeline::DocResult]) {
    if let Some(s) = reporter().as_mut() {
        s.reported = true;
        s.tally.add_results(docs);
    }
}

/// The report text of `entries` (`entries`, uncounted), for a run whose output is `written`
/// or not.
pub(crate) fn worded(entries: &mut [Entry], written: bool) -> String {
    let mut guard = reporter();
    let Some(s) = guard.as_mut() else {
        return report::text(entries, true, None);
    };
    for e in entries.iter_mut() {
        e.dry_run = s.wording.dry_run;
        e.written = (!written).then_some(false);
    }
    if s.quiet {
        return String::new();
    }
    if s.json {
        let mut out = String::new();
        for e in entries.iter() {
            out.push_str(&serde_json::to_string(e).unwrap_or_default());
            out.push('\n');
        }
        return out;
    }
    let groups = (!s.verbose).then(|| &mut s.groups[usize::from(!written)]);
    report::text(entries, s.verbose, groups)
}

/// From now on, the run's entries say that nothing was written (an error stopped the output).
pub(crate) fn nothing_written() {
    if let Some(s) = reporter().as_mut() {
        s.written = false;
    }
}

/// Writes the text of a report (made by `entries`) where the report goes.
pub(crate) fn text(text: &str) {
    match reporter().as_mut() {
        Some(s) => s.write(text),
        None => write_stderr(text),
    }
}

/// Runs `copy` on where the report goes.
pub(crate) fn copy_to(copy: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) {
    let _ = match reporter().as_mut().and_then(|s| s.file.as_mut()) {
        Some(f) => copy(f),
        None => {
            super::progress::clear();
            copy(&mut std::io::stderr().lock())
        }
    };
}

/// The files `--in-place`, `--check` or `--diff` compared, for the summary.
pub(crate) fn files(files: Files) {
    if let Some(s) = reporter().as_mut() {
        s.tally.files = Some(files);
    }
}

/// An error: `error: message` for people, a JSON line with `code` (and `file`, when given).
pub(crate) fn error(code: &'static str, file: Option<&str>, message: &str) {
    said_with("error", code, file, message);
}

/// A warning, as `error` writes an error.
pub(crate) fn warning(code: &'static str, message: &str) {
    said_with("warning", code, None, message);
}

fn said_with(action: &str, code: &'static str, file: Option<&str>, message: &str) {
    let one_line = crate::diagnostic::one_line(message);
    let mut guard = reporter();
    let Some(s) = guard.as_mut() else {
        write_stderr(&format!("{action}: {one_line}\n"));
        return;
    };
    if action == "error" {
        s.tally.errors += 1;
    }
    let line = format!("{action}: {one_line}\n");
    if s.people_on_stderr() {
        write_stderr(&line);
    }
    // A text report in a file has its warnings and errors too.
    if !s.json && s.file.is_some() {
        s.write(&line);
    }
    if s.json {
        let mut item = json!({"action": action, "code": code, action: message});
        if let Some(file) = file {
            item["file"] = Value::String(file.to_owned());
        }
        s.line(&item);
    }
}

/// Text kinject says to people (`error: …`, `warning: …` lines): as it is on stderr, or, in
/// a JSON report, as items (an error or a warning with no code of its own gets the generic
/// `kinject::error` or `kinject::warning`).
pub(crate) fn said(text: &str) {
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        match (l.strip_prefix("error: "), l.strip_prefix("warning: ")) {
            (Some(e), _) => error(codes::ERROR, None, e),
            (_, Some(w)) => warning(codes::WARNING, w),
            _ => people(&format!("{l}\n")),
        }
    }
}

/// Text only for people: on stderr, unless stderr carries the JSON report.
pub(crate) fn people(text: &str) {
    if reporter().as_ref().is_none_or(Reporter::people_on_stderr) {
        write_stderr(text);
    }
}

/// A diagnostic: drawn with its excerpt for people, a JSON line (its `code`, `file`, `line`
/// and `column`, message and help) in a JSON report.
pub(crate) fn diagnostic<D: miette::Diagnostic + Send + Sync + 'static>(d: D, at: Position) {
    let warning = d.severity() == Some(miette::Severity::Warning);
    let mut guard = reporter();
    if let Some(s) = guard.as_mut() {
        if !warning {
            s.tally.errors += 1;
        }
        if s.json {
            s.line(&diagnostic_item(&d, warning, at));
        }
    }
    if guard.as_ref().is_none_or(Reporter::people_on_stderr) {
        write_stderr(&format!("{:?}\n", miette::Report::new(d)));
    }
}

fn diagnostic_item(d: &dyn miette::Diagnostic, warning: bool, at: Position) -> Value {
    let action = if warning { "warning" } else { "error" };
    let mut item = json!({
        "action": action,
        "code": d.code().map_or(codes::ERROR.to_owned(), |c| c.to_string()),
    });
    if let Some((file, line, column)) = at {
        item["file"] = Value::String(file);
        if let Some((line, column)) = line.zip(column) {
            item["line"] = json!(line);
            item["column"] = json!(column);
        }
    }
    item[action] = Value::String(d.to_string());
    if let Some(help) = d.help() {
        item["help"] = Value::String(help.to_string());
    }
    item
}

/// Where a diagnostic points: file, and line and column (from 1) when it is in the text.
pub(crate) type Position = Option<(String, Option<usize>, Option<usize>)>;

/// Ends the report: says when nothing was injected, writes the summary (a line for people
/// when objects were reported; always, as the last JSON line, in a JSON report) and puts the
/// report file in place. The run's exit status, an error when the report file could not be
/// written.
pub(crate) fn finish(exit: ExitStatus) -> ExitStatus {
    let (warn, wording) = match reporter().as_ref() {
        // `-q` leaves the report out, not this warning: a CI step that injects nothing would
        // otherwise pass in silence.
        Some(s) if s.reported && !s.wording.uninject => (s.tally.nothing_injected(), s.wording),
        Some(s) => (None, s.wording),
        None => return exit,
    };
    if let Some(w) = warn {
        warning(codes::NOTHING_INJECTED, &w);
    }
    let mut guard = reporter();
    let Some(mut s) = guard.take() else {
        return exit;
    };
    if !s.quiet && s.json {
        let mut summary = json!({"action": "summary", "code": "summary"});
        if let (Some(out), Value::Object(tally)) = (
            summary.as_object_mut(),
            serde_json::to_value(&s.tally).unwrap_or_default(),
        ) {
            out.extend(tally);
        }
        if wording.dry_run {
            summary["dryRun"] = json!(true);
        }
        if !s.written {
            summary["written"] = json!(false);
        }
        summary["exitCode"] = json!(exit.code());
        s.line(&summary);
    } else if !s.quiet {
        let tail = s.groups[usize::from(!s.written)].tail();
        s.write(&tail);
        // A run that failed wrote nothing on stdout: what it found is what it would have done.
        let unwritten = (exit == ExitStatus::Error || !s.written) && s.tally.files.is_none();
        let line = if !s.reported {
            let errors = s.tally.errors.max(1);
            let plural = if errors == 1 { "" } else { "s" };
            format!("summary: nothing written: {errors} error{plural}, before any input was read\n")
        } else if unwritten {
            let would = Wording {
                dry_run: true,
                ..wording
            };
            format!("summary: nothing written: {}\n", s.tally.line(would))
        } else {
            format!("summary: {}\n", s.tally.line(wording))
        };
        s.write(&line);
    }
    let Some(file) = s.file.take() else {
        return exit;
    };
    let written = file
        .into_inner()
        .map_err(std::io::IntoInnerError::into_error)
        .and_then(super::write::Replacement::commit);
    match written {
        Ok(()) => exit,
        Err(e) => {
            write_stderr(&format!("error: --report-file: not written: {e}\n"));
            ExitStatus::Error
        }
    }
}

/// Where a diagnostic points, for `--report json`.
pub(crate) trait Positioned {
    fn position(&self) -> Position;
}

impl Positioned for crate::diagnostic::Located {
    fn position(&self) -> Position {
        let (file, line, column) = crate::diagnostic::Located::position(self);
        Some((file.to_owned(), Some(line), Some(column)))
    }
}

impl Positioned for crate::read::InputError {
    fn position(&self) -> Position {
        use crate::read::InputError;
        Some(match self {
            InputError::Io { name, .. }
            | InputError::OptionAfterSeparator { name }
            | InputError::EmptyDirectory { name }
            | InputError::NoConfiguration { name, .. }
            | InputError::ConfigurationRefused { name, .. } => (name.clone(), None, None),
            InputError::Encoding {
                name, line, column, ..
            }
            | InputError::Template {
                name, line, column, ..
            } => (name.clone(), Some(*line), Some(*column)),
        })
    }
}

/// Prints diagnostics to stderr (or writes them into the JSON report).
pub(crate) fn diagnostics<D>(errors: Vec<D>)
where
    D: miette::Diagnostic + Positioned + Send + Sync + 'static,
{
    for e in errors {
        let at = e.position();
        diagnostic(e, at);
    }
}

/// How many documents' entries of the report are made and printed at a time.
const REPORT_PART: usize = 4096;

/// Prints the report of the objects of `files`; the objects of the files in `unwritten` (name, why) are errors.
pub(crate) fn results(files: &[FileResult], notes: &[String], unwritten: &[(String, String)]) {
    // The inputs were read, objects or none: the summary says so.
    count(&[]);
    // `-q`: nothing of the report is shown, not even its summary; its entries are not made,
    // only counted (whether anything was injected is still said).
    if quiet() {
        for f in files {
            count_results(&f.docs);
        }
        return;
    }
    // A part at a time, so that the report of a million documents is not held whole.
    for f in files {
        for docs in f.docs.chunks(REPORT_PART) {
            let mut part = report::entries_of(f, docs);
            for e in &mut part {
                if let Some((_, why)) = unwritten.iter().find(|(name, _)| *name == e.file)
                    && e.action.changed()
                {
                    e.not_written(codes::OUTPUT_WRITE, why);
                }
            }
            text(&entries(&mut part));
        }
    }
    print_warnings(files.iter().flat_map(|f| &f.warnings).chain(notes));
}

/// Refuses standard input that held no object: `kustomize build … | kinject inject` after a
/// render that failed would otherwise write an empty file without a word (`kubectl apply -f
/// -` refuses the same: "no objects passed to apply").
pub(crate) fn no_objects_in_stdin() {
    error(
        codes::INPUT_NO_OBJECTS,
        Some("<stdin>"),
        "standard input holds no Kubernetes object (it is empty, or only comments and `---`): nothing to inject; did \
            the command before kinject fail?",
    );
}

pub(crate) fn print_warnings<'a>(warnings: impl IntoIterator<Item = &'a String>) {
    for w in warnings {
        warning(codes::WARNING, w);
    }
}

/// Says `text` (`error: …` and `warning: …` lines) on stderr, or in the JSON report.
pub(crate) fn eprint(text: &str) {
    said(text);
}

/// `text` on stderr as it is (a progress line cleared first).
pub(crate) fn write_stderr(text: &str) {
    super::progress::clear();
    let _ = std::io::stderr().write_all(text.as_bytes());
}
