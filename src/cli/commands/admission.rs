//! `kinject admission`: wiring only.

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::diagnostic::Located;
use crate::integrations::admission;

use crate::args::AdmissionArgs;
use crate::cli::discover;
use crate::cli::inputs::parse_namespace_labels;
use crate::cli::output::stdout;
use crate::cli::report::{diagnostics, eprint};
use crate::cli::run::read_stdin;
use crate::cli::status::ExitStatus;

/// The status code of a refusal because kinject's own configuration is broken: the webhook's
/// fault, not the request's (docs/admission.md).
const CONFIG_BROKEN: u16 = 500;

pub(crate) fn run(args: &AdmissionArgs) -> ExitStatus {
    let path = args.path.as_ref().or(args.filename.as_ref());
    let from_stdin = path.is_none_or(|p| p.as_os_str() == "-");
    if from_stdin && std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        eprint(
            "reading an AdmissionReview from standard input (Ctrl-D to end; kinject admission --help for usage)\n",
        );
    }
    let bytes = match read(path.filter(|_| !from_stdin)) {
        Ok(b) => b,
        Err(e) => {
            eprint(&format!("error: {e}\n"));
            return ExitStatus::Error;
        }
    };
    let config = match load(args, from_stdin) {
        Ok(c) => c,
        Err(message) => return refuse(&bytes, message),
    };
    let mut labels = crate::inject::NamespaceLabels::new();
    if let Err(e) = parse_namespace_labels(&args.namespace_labels, &mut labels) {
        eprint(&format!("error: {e}\n"));
        return refuse(&bytes, e);
    }
    let answer = admission::review(&bytes, &admission::Policy::new(&config, &labels));
    for w in &answer.warnings {
        eprint(&format!("warning: {w}\n"));
    }
    if !answer.well_formed {
        let message = answer.message().unwrap_or("malformed");
        eprint(&format!(
            "error: the request cannot be answered: {message}\n"
        ));
    }
    let text = serde_json::to_string_pretty(&answer.response).unwrap_or_default();
    let code = stdout(&format!("{text}\n"));
    if answer.well_formed {
        code
    } else {
        ExitStatus::Error
    }
}

/// The request's bytes, from `path` or standard input.
fn read(path: Option<&PathBuf>) -> Result<Vec<u8>, String> {
    match path {
        None => read_stdin().map_err(|e| format!("cannot read <stdin>: {e}")),
        Some(p) => std::fs::read(p).map_err(|e| {
            let name = crate::diagnostic::printable_name(&p.display().to_string()).into_owned();
            format!("cannot read {name}: {e}")
        }),
    }
}

/// The configuration, its warnings and errors said on stderr; on error, what they say, for
/// the refusal's message.
fn load(args: &AdmissionArgs, from_stdin: bool) -> Result<Config, String> {
    let paths = discover::paths(&args.config, from_stdin).inspect_err(|e| {
        eprint(&format!("error: {e}\n"));
    })?;
    let paths: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    match crate::config::load(&paths, &args.config.overrides()) {
        Ok(mut c) => {
            diagnostics(std::mem::take(&mut c.warnings));
            Ok(c)
        }
        Err(errors) => {
            let said: Vec<String> = errors.iter().map(Located::one_line).collect();
            diagnostics(errors);
            Err(format!("kinject's configuration: {}", said.join("; ")))
        }
    }
}

/// Exit 2, having answered the request with a refusal when it can be answered at all.
fn refuse(bytes: &[u8], message: String) -> ExitStatus {
    match admission::refusal(bytes, CONFIG_BROKEN, message) {
        Some(response) => {
            let text = serde_json::to_string_pretty(&response).unwrap_or_default();
            let _ = stdout(&format!("{text}\n"));
        }
        None => eprint("error: the request has no `uid`: no AdmissionReview can answer it\n"),
    }
    ExitStatus::Error
}
