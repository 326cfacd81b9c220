//! Why an input could not be read: the one error of reading, with its code and help.

use miette::Diagnostic;
use thiserror::Error;

use super::decode::Undecodable;
use crate::diagnostic::codes;

#[derive(Debug, Error)]
pub enum InputError {
    #[error("cannot read {name}: {error}")]
    Io {
        name: String,
        // Not a `source`: its text is already in the message.
        error: std::io::Error,
    },

    #[error(
        "cannot read {name}: no such file (after `--`, every name is a file, even one that looks like an option)"
    )]
    OptionAfterSeparator { name: String },

    #[error(
        "{name}:{line}:{column}: looks like a Helm/Go template ({why}): render it first (`helm template`) or exclude \
            `charts/` (pre-commit `exclude:`)"
    )]
    Template {
        name: String,
        line: usize,
        column: usize,
        /// What makes it one (`template::Why`).
        why: String,
    },

    #[error(
        "{name}: no manifest here (a directory's .yaml, .yml and .json files are read, hidden ones skipped), so \
            nothing would be injected"
    )]
    EmptyDirectory { name: String },

    #[error(
        "{name}: no configuration: no {} {looked}",
        crate::tree::CONFIG_NAMES_SAID
    )]
    NoConfiguration { name: String, looked: String },

    /// Its nearest configuration is not read (`tree::NotFound::Refused`): `why`.
    #[error("{name}: no configuration: {why}")]
    ConfigurationRefused { name: String, why: String },

    #[error("{name}:{line}:{column}: {problem}")]
    Encoding {
        name: String,
        line: usize,
        column: usize,
        problem: Undecodable,
    },
}

impl Diagnostic for InputError {
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        Some(Box::new(match self {
            InputError::Io { .. }
            | InputError::OptionAfterSeparator { .. }
            | InputError::EmptyDirectory { .. } => codes::INPUT_IO,
            InputError::Encoding { .. } => codes::INPUT_ENCODING,
            InputError::NoConfiguration { .. } | InputError::ConfigurationRefused { .. } => {
                codes::INPUT_NO_CONFIGURATION
            }
            InputError::Template { .. } => codes::INPUT_TEMPLATE,
        }))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        let help = match self {
            InputError::Io { name, error } if error.kind() == std::io::ErrorKind::NotFound => {
                if name.contains("://") {
                    "kinject reads files and standard input, not URLs: download it first (`curl -fsSL URL | kinject \
                        inject -c CONFIG -`)"
                } else {
                    let similar = crate::diagnostic::similar_file(std::path::Path::new(name));
                    return similar.map(|s| Box::new(s) as Box<dyn std::fmt::Display>);
                }
            }
            InputError::Io { .. } => return None,
            InputError::Template { .. } => {
                "kinject reads manifests; a template's text is not what Kubernetes will read, and injecting into it \
                    would write into the chart"
            }
            InputError::EmptyDirectory { .. } => {
                "name the directory that holds the manifests, or the files themselves"
            }
            InputError::OptionAfterSeparator { .. } => {
                "options go before `--`. The pre-commit hooks end their `entry:` with `--`, so their `args:` are file \
                    names: to pass options, override the hook's `entry:` in .pre-commit-config.yaml (`entry: kinject \
                    inject --in-place -c sidecars.yaml --`)"
            }
            InputError::Encoding { .. } => {
                "kinject reads YAML and JSON text: UTF-8 (with or without BOM) or UTF-16 with a BOM"
            }
            InputError::NoConfiguration { .. } => {
                "pass -c FILE, or add a .kinject.yaml beside the file or in a directory above it (each file uses the \
                    nearest one)"
            }
            InputError::ConfigurationRefused { .. } => {
                "a configuration found beside the manifests is read only when it is a regular file inside the \
                    repository; pass -c FILE to name one (docs/security.md)"
            }
        };
        Some(Box::new(help))
    }
}
