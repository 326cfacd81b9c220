//! `kinject uninject`: wiring only.

use crate::config::{self, Config};
use crate::inject::Mode;

use crate::args::{RuleScopeArgs, UninjectArgs};
use crate::cli::configs::{self, Configs};
use crate::cli::discover;
use crate::cli::inputs::Inputs;
use crate::cli::report::{diagnostics, eprint, print_warnings};
use crate::cli::run::read_while;
use crate::cli::status::ExitStatus;

use super::manifests::{self, Given, open_stdin};

/// `kinject uninject`.
pub(crate) fn run(args: &UninjectArgs) -> ExitStatus {
    // No rules: no namespace facts.
    let inputs = &Inputs::new(&args.input, &RuleScopeArgs::default(), &args.edit);
    if let Some(why) = args.edit.refused_for(inputs.reads_stdin()) {
        eprint(&format!("error: {why}\n"));
        return ExitStatus::Error;
    }
    warn_of_rule_flags(args);
    inputs.hint_on_terminal("uninject");
    let stdin = open_stdin(inputs, &args.edit);
    let mode = if args.trust_status {
        Mode::UninjectTrustingStatus
    } else {
        Mode::Uninject
    };
    // Files named without `-c`: each with its own nearest configuration, as `inject` finds
    // them (a two-team repository uninjected from its root found none for either team).
    if inputs.files_named() && args.configs.is_empty() && !args.discovery.no_discovery {
        let planned = configs::Planned {
            edit: args.edit.any(),
            quiet: args.output.quiet,
            uninject: true,
            trusting: args.trust_status,
        };
        let Some((plan, input)) = configs::plan(&[], &args.discovery, inputs, planned) else {
            return ExitStatus::Error;
        };
        let (configs, early) = read_while(&input, || plan.load(&[]));
        let Some(configs) = configs else {
            return ExitStatus::Error;
        };
        let given = Given {
            inputs: &input,
            stdin,
            early,
        };
        return manifests::run(configs, mode, given, &args.output, &args.edit);
    }
    // The configuration given, else the nearest default one (unless `--no-discovery`), else
    // none (then every record needs `--trust-status`).
    let found = if !args.configs.is_empty() {
        discover::files(&args.configs, &args.discovery, inputs.reads_stdin())
    } else if args.discovery.no_discovery {
        Ok(Vec::new())
    } else {
        discover::nearest_here().map(|found| found.into_iter().collect())
    };
    let found = match found {
        Ok(found) => found,
        Err(e) => {
            eprint(&format!("error: {e}\n"));
            return ExitStatus::Error;
        }
    };
    let paths: Vec<&std::path::Path> = found.iter().map(|p| p.as_path()).collect();
    let (config, early) = read_while(inputs, || {
        if paths.is_empty() {
            Ok(Config::empty())
        } else {
            config::load_untried(&paths)
        }
    });
    match config {
        Ok(config) => manifests::run(
            Configs::one(config),
            mode,
            Given {
                inputs,
                stdin,
                early,
            },
            &args.output,
            &args.edit,
        ),
        Err(errors) => {
            diagnostics(errors);
            ExitStatus::Error
        }
    }
}

/// Says that `-n` and `--namespace-labels`, which `uninject` accepts (flags are never
/// removed), change nothing: it consults no rules.
fn warn_of_rule_flags(args: &UninjectArgs) {
    let given: Vec<&str> = [
        ("-n/--namespace", args.namespace.is_some()),
        ("--namespace-labels", !args.namespace_labels.is_empty()),
    ]
    .into_iter()
    .filter_map(|(flag, given)| given.then_some(flag))
    .collect();
    if !given.is_empty() {
        let verb = if given.len() == 1 { "has" } else { "have" };
        print_warnings(&[format!(
            "{} {verb} no effect on uninject: it removes what the status annotation records, and consults no rules",
            given.join(" and ")
        )]);
    }
}
