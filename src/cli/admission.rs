//! `kinject admission`: wiring only.

use crate::config;

use super::output::{diagnostics, read_stdin, stdout};
use super::{AdmissionArgs, EXIT_ERROR, eprint};

pub(crate) fn run(args: &AdmissionArgs) -> u8 {
    let paths = match args.config.paths() {
        Ok(p) => p,
        Err(e) => {
            eprint(&format!("error: {e}\n"));
            return EXIT_ERROR;
        }
    };
    let paths: Vec<&std::path::Path> = paths.iter().map(|p| p.as_path()).collect();
    let config = match config::load(&paths, &args.config.sets) {
        Ok(c) => c,
        Err(errors) => {
            diagnostics(errors);
            return EXIT_ERROR;
        }
    };
    let bytes = match read_stdin() {
        Ok(b) => b,
        Err(e) => {
            eprint(&format!("error: cannot read <stdin>: {e}\n"));
            return EXIT_ERROR;
        }
    };
    let answer = crate::admission::review(&bytes, &config);
    let text = serde_json::to_string_pretty(&answer.response).unwrap_or_default();
    let code = stdout(&format!("{text}\n"));
    if answer.well_formed { code } else { EXIT_ERROR }
}
