//! `kinject inject`: wiring only.

use crate::inject::Mode;

use crate::args::InjectArgs;
use crate::cli::configs::{self, Configs};
use crate::cli::inputs::Inputs;
use crate::cli::report::{diagnostics, eprint};
use crate::cli::run::{StdinWindows, read_while};
use crate::cli::status::ExitStatus;

use super::manifests::{self, Given, open_stdin};

/// `kinject inject`.
pub(crate) fn run(args: &InjectArgs) -> ExitStatus {
    let inputs = &Inputs::new(&args.input, &args.scope, &args.edit);
    if let Some(why) = args.edit.refused_for(inputs.reads_stdin()) {
        eprint(&format!("error: {why}\n"));
        return ExitStatus::Error;
    }
    inputs.hint_on_terminal("inject");
    let mut stdin = open_stdin(inputs, &args.edit);
    // A ResourceList on standard input: kinject is a KRM function.
    let resource_list = stdin.as_mut().is_some_and(|s| {
        s.first
            .as_mut()
            .is_ok_and(crate::integrations::krm::starts_with_resource_list)
    });
    if resource_list && let Some(s) = stdin.take() {
        match s.whole() {
            Ok(mut input) => {
                input.parse_all();
                if crate::integrations::krm::is_resource_list(&input) {
                    return super::krm::run_input(
                        input,
                        &args.config.configs,
                        &args.config.overrides(),
                        &inputs.scope,
                    );
                }
                stdin = Some(StdinWindows::from_whole(input));
            }
            Err(e) => {
                diagnostics(vec![e]);
                return ExitStatus::Error;
            }
        }
    }
    if args.emit_kustomize.is_none() && per_file(args, inputs) {
        return run_per_file(args, inputs, stdin);
    }
    let (config, early) = match &args.emit_kustomize {
        None => read_while(inputs, || {
            configs::load_one(&args.config, inputs.reads_stdin())
        }),
        Some(_) => (configs::load_one(&args.config, inputs.reads_stdin()), None),
    };
    let Some(config) = config else {
        return ExitStatus::Error;
    };
    match &args.emit_kustomize {
        Some(dir) => super::overlay::run(&config, inputs, dir, &args.output),
        None => manifests::run(
            Configs::one(config),
            Mode::Inject,
            Given {
                inputs,
                stdin,
                early,
            },
            &args.output,
            &args.edit,
        ),
    }
}

/// Whether the inputs' configurations are decided per file (`configs::plan`): files are
/// named and no `-c` is given, or a run that checks or rewrites files may need to widen to
/// those a configuration among them applies to.
fn per_file(args: &InjectArgs, input: &Inputs) -> bool {
    input.files_named() && (args.config.configs.is_empty() || args.edit.any())
}

/// `inject` with each file's own configuration.
fn run_per_file(args: &InjectArgs, input: &Inputs, stdin: Option<StdinWindows>) -> ExitStatus {
    let planned = configs::Planned {
        edit: args.edit.any(),
        quiet: args.output.quiet,
        ..configs::Planned::default()
    };
    let Some((plan, input)) =
        configs::plan(&args.config.configs, &args.config.discovery, input, planned)
    else {
        return ExitStatus::Error;
    };
    let (configs, early) = read_while(&input, || plan.load(&args.config.overrides()));
    let Some(configs) = configs else {
        return ExitStatus::Error;
    };
    let given = Given {
        inputs: &input,
        stdin,
        early,
    };
    manifests::run(configs, Mode::Inject, given, &args.output, &args.edit)
}
