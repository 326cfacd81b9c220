//! The command line run, on the grammar `crate::args` declares (the flags as clap reads them,
//! nothing the run decides): `commands` (one file per subcommand, wiring only), and the
//! services they share below (`discover` and `configs`: which configuration; `inputs` and
//! `run`: the inputs read and processed; `report` and `output`: what the user sees on stderr
//! and stdout; `test_results`: what `kinject test` shows; `write`: files rewritten in place;
//! `plugin`: kinject as kubectl's and kustomize's plugin). This file holds only `main`: it
//! parses, dispatches, and turns the run's `ExitStatus` into the exit code.

mod commands;
mod configs;
mod discover;
mod held;
mod inputs;
mod output;
mod plugin;
mod progress;
mod report;
mod run;
mod status;
mod terminal;
mod test_results;
mod tips;
pub(crate) mod write;

use std::process::ExitCode;

use clap::FromArgMatches;

pub use crate::args::Cli;
use crate::args::{Command, KrmArgs};
pub use status::ExitStatus;

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    write::fail_writes_past_the_file_size_limit();
    report::style_diagnostics();
    let args = plugin::plugin_args().unwrap_or_else(|| std::env::args_os().collect());
    let matches = plugin::command_as_run()
        .try_get_matches_from(&args)
        .unwrap_or_else(|e| tips::with_tip(e, tips::subcommand_given(&args)).exit());
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let command = match cli.command {
        Some(c) => c,
        // kustomize and kpt run an exec function with no arguments.
        None if !std::io::IsTerminal::is_terminal(&std::io::stdin()) => {
            Command::Krm(KrmArgs::default())
        }
        None => {
            let _ = plugin::command_as_run().print_help();
            return ExitCode::from(ExitStatus::Error);
        }
    };
    if let Some(refused) = output::refused(&command) {
        report::eprint(&format!("error: {refused}\n"));
        return ExitCode::from(ExitStatus::Error);
    }
    if let Err(e) = report::start_for(&command) {
        report::eprint(&format!("error: {e}\n"));
        return ExitCode::from(ExitStatus::Error);
    }
    let code = match command {
        Command::Krm(args) => commands::krm::run(&args),
        Command::Admission(args) => commands::admission::run(&args),
        Command::Serve(args) => commands::serve::run(&args),
        Command::Inject(args) => commands::inject::run(&args),
        Command::Uninject(args) => commands::uninject::run(&args),
        Command::Explain(args) => commands::explain::run(&args),
        Command::Test(args) => commands::test::run(&args),
        Command::Schema => commands::version::schema(),
        Command::Version { output } => commands::version::run(output),
        Command::Completions { shell } => commands::version::completions(shell),
    };
    ExitCode::from(report::finish(code))
}
