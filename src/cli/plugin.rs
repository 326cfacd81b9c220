//! kustomize's legacy exec plugin mode: which file the configuration came from.
//!
//! kustomize hands a plugin its configuration as a temporary copy, re-serialised (other line
//! numbers, other quoting), and deletes it afterwards: a diagnostic located in that copy
//! points at nothing the user can open. kustomize also says where the kustomization that lists
//! the plugin is (`KUSTOMIZE_PLUGIN_CONFIG_ROOT`, also the plugin's working directory); the
//! file listed under its `transformers:` that holds the same configuration is the user's, and
//! is read instead, so that diagnostics name it, at its own lines.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

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

#[cfg(test)]
mod tests {
    use super::original;

    #[test]
    fn the_listed_file_holding_the_same_configuration_is_the_original() {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        let config = "# mine\napiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nmetadata: {name: s}\nvalues: {v: '1'}\n";
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
