//! The inputs of a run as the command resolves them from its flags: the names given, the
//! facts the rules read of namespaces, what the inputs are read for, and the files once found.

use std::path::PathBuf;

use crate::read::{Intent, Source};

use super::report::eprint;
use crate::args::{EditArgs, InputArgs, RuleScopeArgs};

/// Where a run's manifests come from and what it reads them for.
#[derive(Debug, Clone)]
pub(crate) struct Inputs {
    /// The PATH arguments, then the `-f` names; none, or `-`, is standard input.
    pub(crate) paths: Vec<PathBuf>,
    /// `-l`: only objects this kubectl label selector selects.
    pub(crate) selector: Option<String>,
    /// The namespace facts the rules read (none for `uninject`, which has no rules).
    pub(crate) scope: RuleScopeArgs,
    /// Whether the run rewrites the inputs (then only regular files are read; a FIFO is
    /// refused before it is opened), says how it would (`--check`, `--diff`: then no name
    /// leading out of its tree is read), or only reads them.
    pub(crate) intent: Intent,
    /// The inputs, when already found (`configs::plan`); else the paths are walked when the
    /// inputs are read.
    pub(crate) sources: Option<Vec<Source>>,
}

/// The hint for a run that reads manifests from a terminal (`waits`).
fn stdin_hint(waits: bool, command: &str) -> Option<String> {
    waits.then(|| {
        format!(
            "reading manifests from standard input (Ctrl-D to end; kinject {command} --help for usage)\n"
        )
    })
}

/// Namespace labels from `--namespace-labels ns=k=v` flags, added to `labels`.
pub(crate) fn parse_namespace_labels(
    flags: &[String],
    labels: &mut crate::inject::NamespaceLabels,
) -> Result<(), String> {
    for flag in flags {
        let mut parts = flag.splitn(3, '=');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(ns), Some(k), Some(v)) if !ns.is_empty() && !k.is_empty() => {
                labels
                    .entry(ns.to_owned())
                    .or_default()
                    .insert(k.to_owned(), serde_json::Value::String(v.to_owned()));
            }
            _ => {
                return Err(format!(
                    "--namespace-labels `{flag}`: expected NS=KEY=VALUE"
                ));
            }
        }
    }
    Ok(())
}

impl Inputs {
    /// The inputs `args` name, with the rules' namespace facts of `scope`, read for what
    /// `edit` says.
    pub(crate) fn new(args: &InputArgs, scope: &RuleScopeArgs, edit: &EditArgs) -> Self {
        let intent = match (edit.in_place, edit.any()) {
            (true, _) => Intent::Rewrite,
            (false, true) => Intent::Preview,
            (false, false) => Intent::Read,
        };
        Inputs {
            paths: args.all_paths(),
            selector: args.selector.clone(),
            scope: scope.clone(),
            intent,
            sources: None,
        }
    }

    /// Settings for these inputs: namespace labels from `Namespace` objects among them and
    /// from `--namespace-labels`.
    pub(crate) fn settings<'c>(
        &self,
        config: &'c crate::config::Config,
        mode: crate::inject::Mode,
        inputs: &[crate::read::Input],
    ) -> Result<crate::inject::Settings<'c>, String> {
        let mut given = crate::inject::NamespaceLabels::new();
        parse_namespace_labels(&self.scope.namespace_labels, &mut given)?;
        let namespace = self.scope.namespace.clone();
        let mut settings = crate::inject::Settings::new(config, namespace, mode);
        if let Some(text) = &self.selector {
            let selector = crate::select::kubectl_selector(text)
                .map_err(|e| format!("-l/--selector `{text}`: {e}"))?;
            settings.selector = Some(selector);
        }
        Ok(settings.with_namespace_labels(inputs, given))
    }

    /// The size of the inputs, when they are all files (for a progress line).
    pub(crate) fn total_bytes(&self) -> Option<u64> {
        let sizes: Option<Vec<u64>> = match &self.sources {
            Some(sources) => sources
                .iter()
                .map(|s| std::fs::metadata(s.path.as_ref()?).ok().map(|m| m.len()))
                .collect(),
            None => self
                .paths
                .iter()
                .map(|p| {
                    std::fs::metadata(p)
                        .ok()
                        .filter(|m| m.is_file())
                        .map(|m| m.len())
                })
                .collect(),
        };
        sizes.map(|s| s.iter().sum()).filter(|t| *t > 0)
    }

    /// Whether the manifests are read from standard input (no path, or `-`).
    pub(crate) fn reads_stdin(&self) -> bool {
        self.paths.is_empty() || self.paths.iter().any(|p| p.as_os_str() == "-")
    }

    /// Whether files are named (a path that is not `-`).
    pub(crate) fn files_named(&self) -> bool {
        self.paths.iter().any(|p| p.as_os_str() != "-")
    }

    /// Says, on a terminal, that the manifests are awaited there: `kinject inject` with no
    /// file otherwise waits in silence. `command` names the subcommand for its help.
    pub(crate) fn hint_on_terminal(&self, command: &str) {
        let terminal = std::io::IsTerminal::is_terminal(&std::io::stdin());
        if let Some(hint) = stdin_hint(self.reads_stdin() && terminal, command) {
            eprint(&hint);
        }
    }
}
