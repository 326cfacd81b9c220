//! Writing to the terminal: data to stdout (a closed pipe is a quiet success), diagnostics and
//! reports to stderr.

use std::io::Write;

use crate::diagnostic::Located;
use crate::pipeline::FileResult;
use crate::read::{self, InputError};

use super::{EXIT_ERROR, InputArgs};

/// Writes `text` to stdout; returns the exit code (0, or 0 on a broken pipe, 2 otherwise).
pub(crate) fn stdout(text: &str) -> u8 {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            super::eprint(&format!("error: cannot write output: {e}\n"));
            EXIT_ERROR
        }
    }
}

/// Prints diagnostics to stderr.
pub(crate) fn diagnostics<D: miette::Diagnostic + Send + Sync + 'static>(errors: Vec<D>) {
    for e in errors {
        super::eprint(&format!("{:?}\n", miette::Report::new(e)));
    }
}

/// Reads every input the arguments name (stdin at most once) and runs `process` on each.
/// Inputs that cannot be read are reported and skipped; the others are still processed.
pub(crate) fn each_input(
    args: &InputArgs,
    stdin: Option<Vec<u8>>,
    mut process: impl FnMut(read::Input) -> FileResult,
) -> (Vec<FileResult>, Vec<InputError>) {
    let (sources, mut errors) = read::discover(&args.all_paths());
    let mut stdin = stdin;
    let mut stdin_used = false;
    let mut files = Vec::new();
    for source in sources {
        if source.path.is_none() {
            if stdin_used {
                continue;
            }
            stdin_used = true;
        }
        let loaded = match (source.path.is_none(), stdin.take()) {
            (true, Some(bytes)) => read::from_bytes(source, &bytes),
            _ => read::load(&source, &mut std::io::stdin().lock()),
        };
        match loaded {
            Ok(input) => files.push(process(input)),
            Err(e) => errors.push(e),
        }
    }
    (files, errors)
}

/// Reads all of standard input.
pub(crate) fn read_stdin() -> Result<Vec<u8>, std::io::Error> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut bytes)?;
    Ok(bytes)
}

/// Moves every located error out of the results.
pub(crate) fn take_errors(files: &mut [FileResult]) -> Vec<Located> {
    files
        .iter_mut()
        .flat_map(|f| std::mem::take(&mut f.errors))
        .collect()
}
