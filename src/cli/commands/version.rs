//! `kinject version` (`--version`'s facts, as text or JSON), `kinject schema` and
//! `kinject completions`: wiring only.

use clap::CommandFactory;

use crate::args::{Cli, ReportFormat};
use crate::cli::output;
use crate::cli::status::ExitStatus;

/// `kinject version`.
pub(crate) fn run(format: ReportFormat) -> ExitStatus {
    output::stdout(&version(format))
}

/// `kinject schema`: the configuration's JSON Schema.
pub(crate) fn schema() -> ExitStatus {
    let text = serde_json::to_string_pretty(&crate::model::schema::document()).unwrap_or_default();
    output::stdout(&format!("{text}\n"))
}

/// `kinject completions SHELL`.
pub(crate) fn completions(shell: clap_complete::Shell) -> ExitStatus {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "kinject", &mut buf);
    output::stdout(&String::from_utf8_lossy(&buf))
}

/// `--version`'s text, or the same facts as JSON.
fn version(format: ReportFormat) -> String {
    let full = env!("KINJECT_VERSION");
    match format {
        ReportFormat::Text => format!("kinject {full}\n"),
        ReportFormat::Json => {
            let (version, build) = full.split_once(' ').unwrap_or((full, ""));
            let build = build.trim_start_matches('(').trim_end_matches(')');
            let value = serde_json::json!({"kinject": {"version": version, "build": build}});
            format!(
                "{}\n",
                serde_json::to_string_pretty(&value).unwrap_or_default()
            )
        }
    }
}
