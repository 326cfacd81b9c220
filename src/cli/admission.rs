//! `kinject admission`: wiring only.

use super::output::stdout;
use super::run::read_stdin;
use super::{AdmissionArgs, ExitStatus, eprint};

pub(crate) fn run(args: &AdmissionArgs) -> ExitStatus {
    let Some(config) = args.config.load(true) else {
        return ExitStatus::Error;
    };
    let bytes = match read_stdin() {
        Ok(b) => b,
        Err(e) => {
            eprint(&format!("error: cannot read <stdin>: {e}\n"));
            return ExitStatus::Error;
        }
    };
    let mut labels = crate::inject::NamespaceLabels::new();
    if let Err(e) = super::parse_namespace_labels(&args.namespace_labels, &mut labels) {
        eprint(&format!("error: {e}\n"));
        return ExitStatus::Error;
    }
    let answer = crate::integrations::admission::review(&bytes, &config, &labels);
    for w in &answer.warnings {
        eprint(&format!("warning: {w}\n"));
    }
    let text = serde_json::to_string_pretty(&answer.response).unwrap_or_default();
    let code = stdout(&format!("{text}\n"));
    if answer.well_formed {
        code
    } else {
        ExitStatus::Error
    }
}
