//! `kinject admission`: wiring only.

use super::output::stdout;
use super::run::read_stdin;
use super::{AdmissionArgs, EXIT_ERROR, eprint};

pub(crate) fn run(args: &AdmissionArgs) -> u8 {
    let Some(config) = args.config.load(true) else {
        return EXIT_ERROR;
    };
    let bytes = match read_stdin() {
        Ok(b) => b,
        Err(e) => {
            eprint(&format!("error: cannot read <stdin>: {e}\n"));
            return EXIT_ERROR;
        }
    };
    let mut labels = std::collections::HashMap::new();
    if let Err(e) = super::parse_namespace_labels(&args.namespace_labels, &mut labels) {
        eprint(&format!("error: {e}\n"));
        return EXIT_ERROR;
    }
    let answer = crate::integrations::admission::review(&bytes, &config, &labels);
    let text = serde_json::to_string_pretty(&answer.response).unwrap_or_default();
    let code = stdout(&format!("{text}\n"));
    if answer.well_formed { code } else { EXIT_ERROR }
}
