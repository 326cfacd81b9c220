//! kinject run as another tool's plugin: as kubectl's (`kubectl-kinject`, named so in help
//! and errors), and as kustomize's legacy exec plugin (`InjectionConfig <config file>`), with
//! which file the configuration came from.
//!
//! kustomize hands a plugin its configuration as a temporary copy, re-serialised (other line
//! numbers, other quoting), and deletes it afterwards: a diagnostic located in that copy
//! points at nothing the user can open. kustomize also says where the kustomization that lists
//! the plugin is (`KUSTOMIZE_PLUGIN_CONFIG_ROOT`, also the plugin's working directory); the
//! file listed under its `transformers:` that holds the same configuration is the user's, and
//! is read instead, so that diagnostics name it, at its own lines.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::CommandFactory;
use serde_json::Value;

use crate::args::Cli;

/// The user's file holding the configuration kustomize copied to `copy`, when one of the
/// kustomization's `transformers:` holds exactly it; else `copy`.
pub(crate) fn config_file(copy: OsString) -> OsString {
    let Some(root) = std::env::var_os("KUSTOMIZE_PLUGIN_CONFIG_ROOT") else {
        return copy;
    };
    match original(Path::new(&copy), Path::new(&root)) {
        Some(path) => path.into_os_string(),
        None => copy,
    }
}

/// The file under `root`'s kustomization `transformers:` whose one document reads as the
/// same value as `copy`'s.
fn original(copy: &Path, root: &Path) -> Option<PathBuf> {
    let wanted = read_value(copy)?;
    let root = root.canonicalize().ok()?;
    let kustomization = ["kustomization.yaml", "kustomization.yml", "Kustomization"]
        .iter()
        .find_map(|name| read_value(&root.join(name)))?;
    let listed = kustomization.get("transformers")?.as_array()?;
    listed
        .iter()
        .filter_map(Value::as_str)
        .map(|entry| root.join(entry))
        // kustomize's own load restriction: files inside the kustomization's directory.
        .filter(|path| path.canonicalize().is_ok_and(|p| p.starts_with(&root)))
        .find(|path| read_value(path).as_ref() == Some(&wanted))
}

/// A file's one YAML document, as a value; `None` when it cannot be read or holds another
/// number of documents.
fn read_value(path: &Path) -> Option<Value> {
    let meta = std::fs::metadata(path).ok()?;
    // A configuration is small; a file listed there that is not is not one.
    if !meta.is_file() || meta.len() > 16 << 20 {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    crate::yaml::parse_value(&text).ok()
}

/// The name kubectl runs a plugin by: installed as `kubectl-kinject`, kinject is `kubectl
/// kinject`.
const KUBECTL_PLUGIN_NAME: &str = "kubectl-kinject";

/// The command line's definition, named as the user ran it: `kubectl kinject` as kubectl's
/// plugin (help and errors then show what to type), else `kinject`.
pub(crate) fn command_as_run() -> clap::Command {
    let argv0 = std::env::args_os().next().map(PathBuf::from);
    let as_plugin = argv0
        .as_deref()
        .and_then(Path::file_name)
        .is_some_and(|n| n == KUBECTL_PLUGIN_NAME);
    let command = Cli::command();
    if as_plugin {
        command.bin_name("kubectl kinject")
    } else {
        command
    }
}

/// The file name kustomize gives a legacy exec transformer plugin of kind `InjectionConfig`.
const KUSTOMIZE_PLUGIN_NAME: &str = "InjectionConfig";

/// Installed (or symlinked) as kustomize's plugin file `InjectionConfig`, kinject is run as
/// `InjectionConfig <config file> [args…]` with the resources on stdin: that is
/// `kinject inject -c <config file> [args…] -`. Its report says what was injected, and
/// warns when nothing was: kustomize (v4 and later) shows a plugin's stderr when it fails;
/// `KINJECT_REPORT_FILE` (`--report-file`) keeps the report of a build that succeeds.
pub(crate) fn plugin_args() -> Option<Vec<OsString>> {
    let mut args = std::env::args_os();
    let argv0 = PathBuf::from(args.next()?);
    if argv0.file_name()? != KUSTOMIZE_PLUGIN_NAME {
        return None;
    }
    let config = args.next()?;
    let mut out: Vec<OsString> = ["kinject", "inject", "-c"].iter().map(Into::into).collect();
    out.push(config_file(config));
    out.extend(args);
    out.push("-".into());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::original;

    #[test]
    fn the_listed_file_holding_the_same_configuration_is_the_original() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        let config = "# mine\napiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nmetadata: {name: s}\nvalues: \
            {v: '1'}\n";
        let copy = "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nmetadata:\n  name: s\nvalues:\n  v: \"1\"\n";
        std::fs::write(d.join("sidecars.yaml"), config).expect("write");
        std::fs::write(d.join("other.yaml"), "kind: Other\n").expect("write");
        std::fs::write(d.join("copy"), copy).expect("write");
        std::fs::write(
            d.join("kustomization.yaml"),
            "transformers: [other.yaml, sidecars.yaml, missing.yaml, ../outside.yaml]\n",
        )
        .expect("write");
        let found = original(&d.join("copy"), d).expect("found");
        assert!(found.ends_with("sidecars.yaml"), "{found:?}");
        // Another configuration: the copy is all there is.
        std::fs::write(d.join("copy"), copy.replace("\"1\"", "\"2\"")).expect("write");
        assert_eq!(original(&d.join("copy"), d), None);
    }
}
