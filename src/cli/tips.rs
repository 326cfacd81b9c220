//! Tips for flags clap does not know, where its own would point the wrong way: a subcommand's
//! flag given to `kinject` alone (`kinject -c s.yaml < f.yaml`: clap said only "unexpected
//! argument"), and the flags of the injectors users come from (istioctl's
//! `--injectConfigFile`: clap said to pass it after `--`, which makes it a file name); and
//! `kinject serve` without certificates, which can be tried without them.

use clap::CommandFactory;
use clap::error::{ContextKind, ContextValue, Error, ErrorKind};

use crate::args::Cli;

/// Flags of other injectors' commands, and what kinject says instead.
const FOREIGN: [(&str, &str); 7] = [
    (
        "--injectConfigFile",
        "istioctl's --injectConfigFile is kinject's -c/--config: the configuration file (Istio's injection template is \
            not read; docs/compat.md)",
    ),
    (
        "--meshConfigFile",
        "kinject has no mesh configuration: what a sidecar needs is in its -c/--config file",
    ),
    (
        "--valuesFile",
        "template values are the configuration's `values:`, overridden with --set KEY=VALUE",
    ),
    (
        "--injectConfigMapName",
        "kinject reads no cluster: export the ConfigMap and give it with -c/--config",
    ),
    (
        "--ignore-cluster",
        "kinject never reads a cluster: leave the flag out",
    ),
    (
        "--manual",
        "kinject always writes the containers themselves: leave the flag out",
    ),
    (
        "--proxy-version",
        "the sidecar's image is the configuration's; set a templated version with --set",
    ),
];

/// `error` with a tip that fits, when it is an unknown argument one fits: given `subcommand`
/// (the one the user ran, if any).
pub(crate) fn with_tip(mut error: Error, subcommand: Option<&str>) -> Error {
    if error.kind() == ErrorKind::MissingRequiredArgument && subcommand == Some("serve") {
        error.insert(
            ContextKind::Suggested,
            ContextValue::StyledStrs(vec![
                "to try it without certificates, on this machine only: kinject serve -c FILE --insecure-plain-http \
                    --listen 127.0.0.1:8080 (docs/serve.md)".into(),
            ]),
        );
        return error;
    }
    if error.kind() != ErrorKind::UnknownArgument {
        return error;
    }
    let Some(ContextValue::String(arg)) = error.get(ContextKind::InvalidArg).cloned() else {
        return error;
    };
    let flag = arg.split_once('=').map_or(arg.as_str(), |(f, _)| f);
    let tip = if let Some((_, tip)) = FOREIGN.iter().find(|(f, _)| *f == flag) {
        (*tip).to_owned()
    } else if subcommand.is_none() && flag.starts_with('-') {
        format!(
            "{flag} is an option of a subcommand: to inject manifests, run `kinject inject {arg} …` (kinject without a \
                subcommand reads a KRM ResourceList on standard input)"
        )
    } else {
        return error;
    };
    error.insert(
        ContextKind::Suggested,
        ContextValue::StyledStrs(vec![tip.into()]),
    );
    error
}

/// The subcommand of a command line (its first argument that is one), if any.
pub(crate) fn subcommand_given(args: &[std::ffi::OsString]) -> Option<&str> {
    let names: Vec<String> = Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect();
    args.iter()
        .skip(1)
        .filter_map(|a| a.to_str())
        .find(|a| names.iter().any(|n| n == a))
}
