//! The run's output: data to stdout (a closed pipe is a quiet success) or to `--output-file`
//! (which must be neither an input nor a configuration), and what the terminal can show.

use std::io::Write;

use super::report;
use super::status::ExitStatus;
use crate::args::Command;
use crate::diagnostic::codes;

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
            report::error(
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
            report::eprint(&format!(
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

/// Why the command's `--output-file` or `--report-file` cannot be written
/// (`tree::output_refused`): they are neither inputs nor the configuration, nor a file a
/// configuration would be found as.
pub(crate) fn refused(command: &Command) -> Option<String> {
    let (outputs, input, configs) = match command {
        Command::Inject(a) => (
            [
                ("--output-file", a.output.output_file.as_deref()),
                ("--report-file", a.output.report_file.as_deref()),
            ],
            &a.input,
            &a.config.configs,
        ),
        Command::Uninject(a) => (
            [
                ("--output-file", a.output.output_file.as_deref()),
                ("--report-file", a.output.report_file.as_deref()),
            ],
            &a.input,
            &a.configs,
        ),
        Command::Explain(a) => (
            [("--output-file", a.output_file.as_deref()), ("", None)],
            &a.input,
            &a.config.configs,
        ),
        _ => return None,
    };
    outputs.iter().find_map(|(flag, file)| {
        let file = (*file)?;
        let found_as_configuration = file
            .file_name()
            .is_some_and(|n| crate::tree::CONFIG_NAMES.iter().any(|c| n == *c));
        if found_as_configuration {
            return Some(format!(
                "{flag} {}: a configuration file's name (kinject would find it as one): write the output elsewhere",
                crate::diagnostic::printable_name(&file.display().to_string())
            ));
        }
        crate::tree::output_refused(flag, file, &input.all_paths(), configs)
    })
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
