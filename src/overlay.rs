//! `--emit-kustomize`: instead of rewriting a kustomize base, write an overlay whose patches
//! (RFC 6902, with targets) apply the injection to it, so GitOps repositories keep their bases
//! as they are.

use std::path::{Component, Path, PathBuf};

use serde_json::{Value, json};

use crate::patch::Op;
use crate::pipeline::Identity;
use crate::yaml::emit::Emitter;
use crate::yaml::style::Style;

/// File names kustomize reads as a kustomization.
pub const KUSTOMIZATION_FILES: [&str; 3] =
    ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Kustomization fields a base may use: they change neither which objects there are nor the
/// fields kinject's operations touch (names and namespaces are followed in the targets).
const ALLOWED: [&str; 9] = [
    "apiVersion",
    "kind",
    "metadata",
    "resources",
    "namespace",
    "namePrefix",
    "nameSuffix",
    "images",
    "sortOptions",
];

/// A kustomize base: its manifest files and how it renames objects.
#[derive(Debug, Clone, Default)]
pub struct Base {
    pub dir: PathBuf,
    pub files: Vec<PathBuf>,
    pub name_prefix: String,
    pub name_suffix: String,
    pub namespace: Option<String>,
}

/// The kustomization file of `dir`, if it has one.
pub fn kustomization_file(dir: &Path) -> Option<PathBuf> {
    KUSTOMIZATION_FILES
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file())
}

/// Reads the base at `dir`: the files its `resources` list (nested bases included).
pub fn base(dir: &Path) -> Result<Base, String> {
    let mut b = Base {
        dir: dir.to_owned(),
        ..Base::default()
    };
    collect(dir, &mut b, 0)?;
    Ok(b)
}

fn collect(dir: &Path, b: &mut Base, depth: usize) -> Result<(), String> {
    if depth > 16 {
        return Err(format!("{}: bases nest too deeply", dir.display()));
    }
    let file = kustomization_file(dir).ok_or_else(|| {
        format!("{} is not a kustomize base (no kustomization.yaml): kustomize cannot load files outside an overlay, so --emit-kustomize needs bases", dir.display())
    })?;
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let k = crate::yaml::parse_document(&text)
        .map_err(|e| format!("{}: invalid YAML: {}", file.display(), e.message))?
        .value;
    let Value::Object(map) = &k else {
        return Err(format!("{}: not a kustomization", file.display()));
    };
    let unsupported: Vec<&str> = map
        .keys()
        .map(String::as_str)
        .filter(|k| !ALLOWED.contains(k))
        .collect();
    if !unsupported.is_empty() {
        return Err(format!(
            "{}: --emit-kustomize cannot follow `{}` (it changes the objects the patches would apply to); supported: {}",
            file.display(),
            unsupported.join("`, `"),
            ALLOWED.join(", ")
        ));
    }
    let s = |k: &str| {
        map.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    // Outer bases apply their renames after inner ones.
    b.name_prefix = s("namePrefix") + &b.name_prefix;
    b.name_suffix.push_str(&s("nameSuffix"));
    if b.namespace.is_none() && map.contains_key("namespace") {
        b.namespace = Some(s("namespace"));
    }
    for r in map
        .get("resources")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(r) = r.as_str() else { continue };
        if r.contains("://") || r.starts_with("github.com/") {
            return Err(format!(
                "{}: remote resource `{r}` is not supported",
                file.display()
            ));
        }
        let path = dir.join(r);
        if path.is_dir() {
            let mut inner = Base::default();
            collect(&path, &mut inner, depth + 1)?;
            for f in inner.files {
                b.files.push(f);
            }
            if !inner.name_prefix.is_empty()
                || !inner.name_suffix.is_empty()
                || inner.namespace.is_some()
            {
                return Err(format!(
                    "{}: a nested base that renames objects is not supported",
                    path.display()
                ));
            }
        } else {
            b.files.push(path);
        }
    }
    Ok(())
}

/// The kustomize patch target of an object of `base`.
pub fn target(identity: &Identity, base: &Base) -> Value {
    let (group, version) = match identity.api_version.rsplit_once('/') {
        Some((g, v)) => (g, v),
        None => ("", identity.api_version.as_str()),
    };
    let mut t = json!({
        "group": group,
        "version": version,
        "kind": identity.kind,
        "name": format!("{}{}{}", base.name_prefix, identity.name, base.name_suffix),
    });
    let namespace = base
        .namespace
        .clone()
        .unwrap_or_else(|| identity.namespace.clone());
    if !namespace.is_empty() {
        t["namespace"] = json!(namespace);
    }
    t
}

/// The overlay's kustomization.yaml text.
pub fn kustomization(resources: &[String], patches: &[(Value, Vec<Op>)]) -> String {
    let patches: Vec<Value> = patches
        .iter()
        .map(|(target, ops)| {
            json!({
                "target": target,
                "patch": serde_json::to_string_pretty(ops).unwrap_or_default(),
            })
        })
        .collect();
    let doc = json!({
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": resources,
        "patches": patches,
    });
    let style = Style::default();
    let mut e = Emitter::new(&style);
    e.document(&doc);
    format!(
        "# Generated by `kinject inject --emit-kustomize`: the sidecar injection as patches over\n# the base, which stays as it is. Regenerate rather than edit.\n{}",
        e.out
    )
}

/// `to` relative to the directory `from` (both made absolute first).
pub fn relative(from: &Path, to: &Path) -> Result<String, String> {
    let abs = |p: &Path| -> Result<PathBuf, String> {
        let p = if p.is_absolute() {
            p.to_owned()
        } else {
            std::env::current_dir().map_err(|e| e.to_string())?.join(p)
        };
        Ok(crate::read::normalize(&p))
    };
    let (from, to) = (abs(from)?, abs(to)?);
    let f: Vec<Component> = from.components().collect();
    let t: Vec<Component> = to.components().collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = std::iter::repeat_n("..".to_owned(), f.len() - common).collect();
    parts.extend(
        t[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    Ok(if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative(Path::new("/a/b/overlay"), Path::new("/a/b/base")).unwrap(),
            "../base"
        );
        assert_eq!(
            relative(Path::new("/a/overlay/x"), Path::new("/a/base")).unwrap(),
            "../../base"
        );
        assert_eq!(
            relative(Path::new("/a"), Path::new("/a/./b/../c")).unwrap(),
            "c"
        );
    }

    #[test]
    fn targets_follow_renames() {
        let id = Identity {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            namespace: String::new(),
            name: "web".into(),
        };
        let b = Base {
            name_prefix: "shop-".into(),
            namespace: Some("prod".into()),
            ..Base::default()
        };
        assert_eq!(
            target(&id, &b),
            json!({"group": "apps", "version": "v1", "kind": "Deployment", "name": "shop-web", "namespace": "prod"})
        );
    }
}
