//! `kinject krm` (and `kinject` with no subcommand, and `inject` given a ResourceList): a KRM
//! function over standard input.

use std::path::PathBuf;

use crate::config;
use crate::inject::NamespaceLabels;
use crate::integrations::krm;
use crate::read::Input;

use crate::args::{KrmArgs, RuleScopeArgs};
use crate::cli::inputs::parse_namespace_labels;
use crate::cli::output::stdout;
use crate::cli::report::{diagnostics, eprint};
use crate::cli::run::read_stdin;
use crate::cli::status::ExitStatus;

pub(crate) fn run(args: &KrmArgs) -> ExitStatus {
    let bytes = match read_stdin() {
        Ok(b) => b,
        Err(e) => {
            eprint(&format!("error: cannot read <stdin>: {e}\n"));
            return ExitStatus::Error;
        }
    };
    match krm::input(&bytes) {
        Ok(input) => run_input(input, &args.configs, &args.values.overrides(), &args.scope),
        Err(e) => {
            diagnostics(vec![e]);
            ExitStatus::Error
        }
    }
}

/// Runs the function on a read ResourceList; `configs` (when given) replace its functionConfig;
/// `sets` and `scope` apply to either, as they do for `inject`.
pub(crate) fn run_input(
    input: Input,
    configs: &[PathBuf],
    sets: &[config::Set],
    scope: &RuleScopeArgs,
) -> ExitStatus {
    let mut namespace_labels = NamespaceLabels::new();
    if let Err(e) = parse_namespace_labels(&scope.namespace_labels, &mut namespace_labels) {
        eprint(&format!("error: {e}\n"));
        return ExitStatus::Error;
    }
    let loaded = if configs.is_empty() {
        None
    } else {
        let paths: Vec<&std::path::Path> = configs.iter().map(PathBuf::as_path).collect();
        match config::load(&paths, sets) {
            Ok(mut c) => {
                diagnostics(std::mem::take(&mut c.warnings));
                Some(c)
            }
            Err(errors) => {
                diagnostics(errors);
                return ExitStatus::Error;
            }
        }
    };
    let options = krm::Options {
        namespace: scope.namespace.clone(),
        sets,
        namespace_labels,
    };
    let out = krm::run(input, loaded.as_ref(), options);
    diagnostics(out.errors);
    if out.text.is_empty() {
        return ExitStatus::Error;
    }
    let code = stdout(&out.text);
    if out.failed {
        eprint("error: the function failed: see the error results in the output\n");
        ExitStatus::Error
    } else {
        code
    }
}
