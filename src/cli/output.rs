//! Writing to the terminal: data to stdout (a closed pipe is a quiet success), diagnostics,
//! the report and warnings to stderr.

use std::io::Write;

use crate::diagnostic::codes;
use crate::pipeline::FileResult;
use crate::render::report;

use super::{ExitStatus, report_sink};

/// Writes `text` to stdout; returns the exit code (0, or 0 on a broken pipe, 2 otherwise).
pub(crate) fn stdout(text: &str) -> ExitStatus {
    write_stdout(|out| out.write_all(text.as_bytes()).and_then(|()| out.flush()))
}

/// Runs `write` on stdout; returns the exit code as `stdout` does.
pub(crate) fn write_stdout(
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> ExitStatus {
    match write(&mut std::io::stdout().lock()) {
        Ok(()) => ExitStatus::Success,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitStatus::Success,
        Err(e) => {
            report_sink::error(
                codes::OUTPUT_WRITE,
                None,
                &format!("cannot write output: {e}"),
            );
            ExitStatus::Error
        }
    }
}

/// Runs `write` on the run's output: the file `to` (`--output-file`, replaced atomically) or
/// stdout; returns the exit code as `stdout` does.
pub(crate) fn write_output(
    to: Option<&std::path::Path>,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> ExitStatus {
    let Some(path) = to else {
        return write_stdout(write);
    };
    match super::write::write_file_with(path, write) {
        Ok(()) => ExitStatus::Success,
        Err(e) => {
            super::eprint(&format!(
                "error: cannot write {}: {e} (it is unchanged)\n",
                crate::diagnostic::printable_name(&path.display().to_string())
            ));
            ExitStatus::Error
        }
    }
}

/// Writes `slices` one after the other, handed to the system a thousand at a time
/// (`writev`) rather than copied into a buffer first: the output of a large input is mostly
/// pieces of its text.
pub(crate) fn write_slices(out: &mut dyn Write, slices: &[&[u8]]) -> std::io::Result<()> {
    use std::io::IoSlice;
    // Linux's IOV_MAX: more in one call is refused.
    const BATCH: usize = 1024;
    for batch in slices.chunks(BATCH) {
        // (An empty slice would read as nothing written.)
        let mut io: Vec<IoSlice<'_>> = batch
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| IoSlice::new(s))
            .collect();
        let mut rest = &mut io[..];
        while !rest.is_empty() {
            match out.write_vectored(rest) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => IoSlice::advance_slices(&mut rest, n),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
    out.flush()
}

/// Where a diagnostic points, for `--report json`.
pub(crate) trait Positioned {
    fn position(&self) -> report_sink::Position;
}

impl Positioned for crate::diagnostic::Located {
    fn position(&self) -> report_sink::Position {
        let (file, line, column) = crate::diagnostic::Located::position(self);
        Some((file.to_owned(), Some(line), Some(column)))
    }
}

impl Positioned for crate::read::InputError {
    fn position(&self) -> report_sink::Position {
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
        report_sink::diagnostic(e, at);
    }
}

/// How many documents' entries of the report are made and printed at a time.
const REPORT_PART: usize = 4096;

/// Prints the report; the objects of the files in `unwritten` (name, why) are errors.
pub(crate) fn report(files: &[FileResult], notes: &[String], unwritten: &[(String, String)]) {
    // The inputs were read, objects or none: the summary says so.
    report_sink::count(&[]);
    // `-q`: nothing of the report is shown, not even its summary; its entries are not made,
    // only counted (whether anything was injected is still said).
    if report_sink::quiet() {
        for f in files {
            report_sink::count_results(&f.docs);
        }
        return;
    }
    // A part at a time, so that the report of a million documents is not held whole.
    for f in files {
        for docs in f.docs.chunks(REPORT_PART) {
            let mut entries = report::entries_of(f, docs);
            for e in &mut entries {
                if let Some((_, why)) = unwritten.iter().find(|(name, _)| *name == e.file)
                    && e.action.changed()
                {
                    e.not_written(codes::OUTPUT_WRITE, why);
                }
            }
            report_sink::text(&report_sink::entries(&mut entries));
        }
    }
    print_warnings(files.iter().flat_map(|f| &f.warnings).chain(notes));
}

/// Whether a terminal that is `is_terminal` is shown colour: not with `NO_COLOR`, nor on a
/// terminal that says it has none (`TERM=dumb`).
pub(crate) fn colour(is_terminal: bool) -> bool {
    is_terminal && std::env::var_os("NO_COLOR").is_none() && !dumb_terminal()
}

/// Whether diagnostics may draw with Unicode (boxes, `×`): not on a `TERM=dumb` terminal, nor
/// when the locale says its text is not UTF-8 (`LC_ALL=C`; no locale set at all draws them).
pub(crate) fn unicode() -> bool {
    let locale = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|l| !l.is_empty()));
    let utf8 = locale.is_none_or(|l| {
        let l = l.to_ascii_lowercase();
        l.contains("utf-8") || l.contains("utf8")
    });
    utf8 && !dumb_terminal()
}

fn dumb_terminal() -> bool {
    std::env::var_os("TERM").is_some_and(|t| t == "dumb")
}

/// Refuses standard input that held no object: `kustomize build … | kinject inject` after a
/// render that failed would otherwise write an empty file without a word (`kubectl apply -f
/// -` refuses the same: "no objects passed to apply").
pub(crate) fn no_objects_in_stdin() {
    report_sink::error(
        codes::INPUT_NO_OBJECTS,
        Some("<stdin>"),
        "standard input holds no Kubernetes object (it is empty, or only comments and `---`): nothing to inject; did the command before kinject fail?",
    );
}

pub(crate) fn print_warnings<'a>(warnings: impl IntoIterator<Item = &'a String>) {
    for w in warnings {
        report_sink::warning(codes::WARNING, w);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes at most `max` bytes per call, one slice's at a time now and then, as pipes and
    /// terminals may; `Interrupted` every third call.
    struct Stingy {
        max: usize,
        calls: usize,
        got: Vec<u8>,
    }

    impl Write for Stingy {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.max);
            self.got.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn write_vectored(&mut self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
            self.calls += 1;
            if self.calls.is_multiple_of(3) {
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            if self.calls.is_multiple_of(4) {
                return self.write(&bufs[0]);
            }
            let mut n = 0;
            for b in bufs {
                let take = b.len().min(self.max - n);
                self.got.extend_from_slice(&b[..take]);
                n += take;
                if n == self.max {
                    break;
                }
            }
            Ok(n)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn slices_are_written_whole_and_in_order_however_little_each_write_takes() {
        let text: Vec<String> = (0..2500).map(|i| format!("line {i}\n")).collect();
        let mut slices: Vec<&[u8]> = text.iter().map(|t| t.as_bytes()).collect();
        slices.insert(7, b"");
        for max in [1, 5, 64, 1 << 20] {
            let mut out = Stingy {
                max,
                calls: 0,
                got: Vec::new(),
            };
            write_slices(&mut out, &slices).expect("written");
            assert_eq!(out.got, text.concat().into_bytes(), "{max} bytes a call");
        }
    }
}
