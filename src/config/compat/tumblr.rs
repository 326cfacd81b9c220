//! The tumblr k8s-sidecar-injector's sidecar configurations onto the native model.
//!
//! One file per sidecar (`name: foo:v2`, default version `latest`), or a ConfigMap whose every
//! data value is one. A pod asks for one with `<namespace>/request: foo` (namespace
//! `injector.tumblr.com` unless `formats.tumblr.annotationNamespace` says otherwise); it gets
//! the containers, init containers and volumes (a volume the pod already has stays), `env` and
//! `volumeMounts` in every container (never overwriting what one has, matched by name),
//! hostAliases, hostNetwork/hostPID, the service account when the pod has none or `default`
//! (its old token mounts removed), and `<namespace>/status: injected`, which also makes it
//! skip the pod from then on. `inherits` is a path relative to the file; unlike tumblr,
//! kinject stops at a cycle.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Container, EnvVar, HostAlias, Volume, VolumeMount};
use schemars::JsonSchema;
use serde_json::{Map, Value, json};

use super::context::{Context, Failure, Problem, embedded};
use crate::diagnostic::Located;
use crate::diagnostic::codes;
use crate::model::schema::validate;

/// tumblr's default `--annotation-namespace`.
pub(crate) const DEFAULT_NAMESPACE: &str = "injector.tumblr.com";

/// A tumblr sidecar configuration (only for its JSON Schema).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
struct InjectionConfig {
    /// `name` or `name:version`.
    name: String,
    inherits: Option<String>,
    containers: Option<Vec<Container>>,
    volumes: Option<Vec<Volume>>,
    env: Option<Vec<EnvVar>>,
    volume_mounts: Option<Vec<VolumeMount>>,
    host_aliases: Option<Vec<HostAlias>>,
    host_network: Option<bool>,
    #[serde(rename = "hostPID")]
    host_pid: Option<bool>,
    init_containers: Option<Vec<Container>>,
    service_account_name: Option<String>,
}

fn schema() -> &'static Value {
    static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        serde_json::to_value(schemars::schema_for!(InjectionConfig)).unwrap_or(Value::Null)
    })
}

/// Lists merged by name when a configuration inherits another.
const NAMED_LISTS: [&str; 5] = [
    "containers",
    "volumes",
    "env",
    "volumeMounts",
    "initContainers",
];

/// A document that is a tumblr sidecar configuration: no `apiVersion`/`kind`, a `name`.
pub(crate) fn is_config(value: &Value) -> bool {
    value.as_object().is_some_and(|m| {
        !m.contains_key("apiVersion")
            && !m.contains_key("kind")
            && !m.contains_key("mutationConfigs")
            && m.contains_key("name")
    })
}

/// A ConfigMap whose every data value is a tumblr sidecar configuration (a value that is not
/// text, which Kubernetes refuses in `data`, does not make it something else: it is refused
/// when the ConfigMap is read).
pub(crate) fn is_config_map(value: &Value) -> bool {
    let holds_config = |v: &Value| {
        v.as_str()
            .and_then(|t| crate::yaml::parse_document(t).ok())
            .is_some_and(|p| is_config(&p.value))
    };
    value.get("kind").and_then(Value::as_str) == Some("ConfigMap")
        && value
            .get("data")
            .and_then(Value::as_object)
            .is_some_and(|data| {
                data.values().any(holds_config)
                    && data.values().all(|v| !v.is_string() || holds_config(v))
            })
}

/// The native configuration for one sidecar file's document.
pub(crate) fn to_native(value: &Value, ctx: &Context<'_>) -> Result<Value, Failure> {
    let value = &go_decoded(value);
    let violations = validate(schema(), "", value);
    if !violations.is_empty() {
        return Err(Failure::Schema(violations));
    }
    let file = Path::new(ctx.file);
    let mut chain = vec![(canonical(file), clean(file))];
    let within = inherits_tree(file);
    let merged = resolve(value, file, within.as_ref(), &mut chain, &[], ctx)?;
    native(&[(merged, ctx.file.to_owned())], ctx)
}

/// The native configuration for a ConfigMap of sidecar configurations.
pub(crate) fn config_map_to_native(
    cm: &Value,
    root: &crate::yaml::Node,
    doc: &str,
    ctx: &Context<'_>,
) -> Result<Value, Failure> {
    let cm_name = super::context::string_field(cm, &["metadata", "name"])
        .map_err(|p| Failure::Problems(vec![p]))?
        .unwrap_or_default();
    let mut configs = Vec::new();
    let mut problems = Vec::new();
    for (key, text) in cm["data"].as_object().into_iter().flatten() {
        let text = match super::context::string_field(text, &[]) {
            Ok(text) => text.unwrap_or_default(),
            Err(mut p) => {
                p.path = vec!["data".to_owned(), key.clone()];
                p.message = format!(
                    "`data.{key}` must be a string, found {}",
                    crate::model::schema::type_name(text)
                );
                problems.push(p);
                continue;
            }
        };
        let inner = match embedded(root, doc, &["data", key], text) {
            Ok(found) => found,
            Err(p) => {
                problems.push(p);
                continue;
            }
        };
        let path = vec!["data".to_owned(), key.clone()];
        let config = &go_decoded(&inner.parsed.value);
        let node_start = |field: &str| {
            inner
                .parsed
                .root
                .as_ref()
                .and_then(|r| r.at(&[field]))
                .map_or(0, |n| n.start)
        };
        for v in validate(schema(), "", config) {
            problems.push(inner.violation(&v, &path, key));
        }
        if config.get("inherits").is_some() {
            problems.push(Problem {
                path: path.clone(),
                code: codes::CONFIG_UNSUPPORTED_FIELD,
                message: "`inherits` in a ConfigMap: tumblr ignores it there (it only follows it for files); put the \
                          configuration in a file"
                    .to_owned(),
                span: Some(inner.span(node_start("inherits"))),
            });
        }
        if let Err(message) = full_name(config) {
            problems.push(Problem {
                path: path.clone(),
                code: codes::CONFIG_INVALID_VALUE,
                message,
                span: Some(inner.span(node_start("name"))),
            });
        }
        configs.push((config.clone(), format!("ConfigMap {cm_name}, key {key}")));
    }
    if !problems.is_empty() {
        return Err(Failure::Problems(problems));
    }
    native(&configs, ctx)
}

/// `value` with what it inherits merged under it, none of it read outside `within` (the
/// tree of the file the chain starts from, `inherits_tree`). `chain` holds the files being
/// read (as the file system resolves them, and as shown), to stop at a cycle; `shown` is the
/// inheriting file's text (for errors).
fn resolve(
    value: &Value,
    file: &Path,
    within: Option<&crate::tree::Tree>,
    chain: &mut Vec<(PathBuf, PathBuf)>,
    shown: &[(String, Arc<str>, usize)],
    ctx: &Context<'_>,
) -> Result<Value, Failure> {
    let Some(inherits) = value.get("inherits").and_then(Value::as_str) else {
        return Ok(value.clone());
    };
    // tumblr joins the path onto the file's directory (an absolute one too).
    let dir = file.parent().unwrap_or(Path::new(""));
    let parent_path = clean(&dir.join(inherits.trim_start_matches('/')));
    if let Some(tree) = within
        && let Err(outside) = tree.check(&parent_path)
    {
        return Err(refusal(shown, format!("`inherits`: {outside}: not read")));
    }
    let key = canonical(&parent_path);
    if let Some(cycle) = cycle(chain, &key, &parent_path) {
        return Err(refusal(shown, format!("`inherits` makes a cycle: {cycle}")));
    }
    // Resolved before (for another file of the chain): its chain has no cycle, and none
    // through this one, which is not in it.
    if let Some(base) = ctx.inherited.borrow().get(&key) {
        return Ok(merge(base.clone(), value));
    }
    let parent = read_inherited(&parent_path, shown)?;
    chain.push((key.clone(), parent_path.clone()));
    let mut shown = shown.to_vec();
    shown.push((parent.name, Arc::clone(&parent.text), parent.inherits_at));
    let base = resolve(&parent.value, &parent_path, within, chain, &shown, ctx)?;
    chain.pop();
    ctx.inherited.borrow_mut().insert(key, base.clone());
    Ok(merge(base, value))
}

/// The files of the cycle `parent_path` (resolved: `key`) would close in `chain`, as shown,
/// joined by arrows; `None` when it closes none.
fn cycle(chain: &[(PathBuf, PathBuf)], key: &Path, parent_path: &Path) -> Option<String> {
    let i = chain.iter().position(|p| p.0 == key)?;
    let cycle: Vec<String> = chain[i..]
        .iter()
        .map(|p| p.1.display().to_string())
        .chain(std::iter::once(parent_path.display().to_string()))
        .collect();
    Some(cycle.join(" → "))
}

/// A refused `inherits`: pointed at in the inherited file it is in (the last one `shown`),
/// or else at the field of the document being converted.
fn refusal(shown: &[(String, Arc<str>, usize)], message: String) -> Failure {
    match shown.last() {
        // Inside an inherited file: point there.
        Some((name, text, at)) => Failure::Located(vec![Located::new(
            codes::CONFIG_INHERITS,
            name,
            text,
            (*at, *at + 1),
            message,
        )]),
        None => Failure::Problems(vec![Problem {
            path: vec!["inherits".to_owned()],
            code: codes::CONFIG_INHERITS,
            message,
            span: None,
        }]),
    }
}

/// A configuration an `inherits` names, read and checked, its own `inherits` not followed yet.
struct Inherited {
    name: String,
    text: Arc<str>,
    /// Where its `inherits` is in `text` (where errors further up its chain point).
    inherits_at: usize,
    /// Its document, as Go decodes it.
    value: Value,
}

/// Reads the configuration at `path` that the last file `shown` (or the document being
/// converted) inherits.
fn read_inherited(path: &Path, shown: &[(String, Arc<str>, usize)]) -> Result<Inherited, Failure> {
    #[cfg(test)]
    tests::READS.with(|r| r.set(r.get() + 1));
    let text = std::fs::read_to_string(path).map_err(|e| {
        refusal(
            shown,
            format!(
                "cannot read the inherited configuration {}: {e}",
                path.display()
            ),
        )
    })?;
    let name = path.display().to_string();
    if text.contains('\0') {
        return Err(refusal(
            shown,
            format!(
                "the inherited file {name} is binary (it holds a NUL byte), not a configuration"
            ),
        ));
    }
    let text: Arc<str> = Arc::from(text);
    let range = crate::read::documents(&text)
        .into_iter()
        .next()
        .unwrap_or(0..0);
    let located = |offset: usize, code: &'static str, message: String| {
        Failure::Located(vec![Located::new(
            code,
            &name,
            &text,
            (range.start + offset, range.start + offset + 1),
            message,
        )])
    };
    let parsed = crate::yaml::parse_document(&text[range.clone()]).map_err(|e| {
        located(
            e.offset,
            codes::CONFIG_SYNTAX,
            format!("invalid YAML: {}", e.message),
        )
    })?;
    let Some(root) = parsed.root else {
        return Err(located(
            0,
            codes::CONFIG_MISSING_FIELD,
            "the inherited configuration is empty".to_owned(),
        ));
    };
    let decoded = go_decoded(&parsed.value);
    if !decoded.is_object() {
        // Not a configuration: none of its text is shown (it may be anything).
        return Err(Failure::Located(vec![
            Located::new(
                codes::CONFIG_MISSING_FIELD,
                &name,
                &text,
                (range.start, range.start),
                "the inherited file is not a configuration (a mapping with `name`)",
            )
            .without_excerpt(),
        ]));
    }
    let violations = validate(schema(), "", &decoded);
    if !violations.is_empty() {
        return Err(Failure::Located(
            violations
                .iter()
                .map(|v| crate::config::located_violation(&name, &text, range.start, &root, v))
                .collect(),
        ));
    }
    let inherits_at = root
        .key_span(&["inherits"])
        .map_or(root.start, |s| s.0 + range.start);
    Ok(Inherited {
        name,
        text,
        inherits_at,
        value: decoded,
    })
}

/// tumblr's `Merge`: the child's named items replace the parent's in place or are appended,
/// host aliases are appended, the child's service account wins when it sets one, and the
/// parent's `hostNetwork`/`hostPID` stay (tumblr does not merge them).
fn merge(mut base: Value, child: &Value) -> Value {
    let Value::Object(b) = &mut base else {
        return child.clone();
    };
    for key in ["name", "inherits"] {
        match child.get(key) {
            Some(v) => {
                b.insert(key.to_owned(), v.clone());
            }
            None => {
                b.shift_remove(key);
            }
        }
    }
    for key in NAMED_LISTS {
        let Some(items) = child.get(key).and_then(Value::as_array) else {
            continue;
        };
        let list = b.entry(key).or_insert_with(|| json!([]));
        if !list.is_array() {
            *list = json!([]);
        }
        let Value::Array(list) = list else { continue };
        for item in items {
            let mut found = false;
            for existing in list.iter_mut() {
                if existing.get("name") == item.get("name") {
                    *existing = item.clone();
                    found = true;
                }
            }
            if !found {
                list.push(item.clone());
            }
        }
    }
    if let Some(aliases) = child.get("hostAliases").and_then(Value::as_array) {
        let list = b.entry("hostAliases").or_insert_with(|| json!([]));
        if let Value::Array(list) = list {
            list.extend(aliases.iter().cloned());
        }
    }
    if let Some(sa) = child
        .get("serviceAccountName")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        b.insert("serviceAccountName".to_owned(), json!(sa));
    }
    base
}

/// `foo` → `foo:latest`, lower-cased: the key tumblr finds a configuration by.
fn full_name(config: &Value) -> Result<String, String> {
    let name = config
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if name.is_empty() {
        return Err(
            "`name` is required (tumblr: name field is required for an injection config)"
                .to_owned(),
        );
    }
    let (n, v) = split_version(name).ok_or_else(|| {
        format!("`{name}` is not `name` or `name:version` (tumblr: not a valid name or name:version format)")
    })?;
    Ok(format!("{n}:{v}").to_lowercase())
}

fn split_version(name: &str) -> Option<(&str, &str)> {
    let mut parts = name.split(':');
    let n = parts.next()?;
    let v = parts.next().filter(|v| !v.is_empty()).unwrap_or("latest");
    parts.next().is_none().then_some((n, v))
}

/// A glob matching every spelling of a request tumblr resolves to `full` (`Foo`, `foo:`,
/// `foo:latest` for `foo:latest`; case-insensitive).
fn request_glob(full: &str) -> String {
    let literal = |s: &str| -> String {
        s.chars()
            .map(|c| match c {
                c if c.is_ascii_alphabetic() => {
                    format!("[{}{}]", c.to_ascii_lowercase(), c.to_ascii_uppercase())
                }
                '*' | '?' | '[' | ']' | '{' | '}' | ',' | '!' | '\\' => format!("[{c}]"),
                c => c.to_string(),
            })
            .collect()
    };
    match full.strip_suffix(":latest") {
        Some(n) => format!(
            "{{{n},{n}:,{n}:{latest}}}",
            n = literal(n),
            latest = literal("latest")
        ),
        None => literal(full),
    }
}

/// The native configuration for resolved tumblr configurations (each with where it was read).
fn native(configs: &[(Value, String)], ctx: &Context<'_>) -> Result<Value, Failure> {
    let ns = ctx
        .options
        .tumblr
        .as_ref()
        .and_then(|t| t.annotation_namespace.clone())
        .unwrap_or_else(|| DEFAULT_NAMESPACE.to_owned());
    let status = format!("{ns}/status");
    let mut sidecars = Vec::new();
    let mut rules = Vec::new();
    for (config, from) in configs {
        let full = full_name(config).map_err(|message| {
            Failure::Problems(vec![Problem {
                path: vec!["name".to_owned()],
                code: codes::CONFIG_INVALID_VALUE,
                message,
                span: None,
            }])
        })?;
        let mut s = Map::new();
        s.insert("name".into(), json!(full));
        s.insert(
            "description".into(),
            json!(format!(
                "tumblr sidecar {} ({from})",
                config["name"].as_str().unwrap_or_default()
            )),
        );
        for key in NAMED_LISTS.into_iter().chain(["hostAliases"]) {
            if let Some(items) = config
                .get(key)
                .filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
            {
                s.insert(key.into(), items.clone());
            }
        }
        for key in ["hostNetwork", "hostPID"] {
            if config.get(key) == Some(&Value::Bool(true)) {
                s.insert(key.into(), json!(true));
            }
        }
        if let Some(sa) = config
            .get("serviceAccountName")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            s.insert("serviceAccountName".into(), json!(sa));
            s.insert("serviceAccountPolicy".into(), json!("ifUnset"));
            s.insert("removeTokenMounts".into(), json!(true));
        }
        s.insert("literal".into(), json!(true));
        s.insert("targetInitContainers".into(), json!(true));
        s.insert("targetSidecars".into(), json!(true));
        s.insert("mountsByName".into(), json!(true));
        s.insert("keepPodVolumes".into(), json!(true));
        // tumblr appends a same-named container and the API server refuses the pod.
        s.insert("sameName".into(), json!("error"));
        s.insert("annotations".into(), json!({&status: "injected"}));
        s.insert("annotationPolicies".into(), json!({&status: "overwrite"}));
        sidecars.push(Value::Object(s));
        rules.push(json!({
            "name": format!("tumblr/{full}"),
            "match": {
                "annotations": {format!("{ns}/request"): request_glob(&full)},
                // The webhook sees pods: a workload's own annotations never reach it.
                "podAnnotationsOnly": true,
            },
            // tumblr skips a pod whose status says `injected` in any case (`already_injected`).
            "skips": {"injected": {&status: "injected"}},
            "inject": [full],
            "jobs": "inject",
        }));
    }
    Ok(super::context::native(sidecars, rules))
}

/// The configuration as tumblr's Go reader sees it (null fields absent, scalars in string
/// fields strings).
fn go_decoded(value: &Value) -> Value {
    let mut value = value.clone();
    crate::model::schema::coerce_scalars(schema(), &mut value);
    value
}

/// `path` without `.` steps and with `..` taken back where it can be, as Go's
/// `filepath.Clean` writes it.
fn clean(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out: Vec<Component<'_>> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    if out.is_empty() {
        return PathBuf::from(".");
    }
    out.iter().collect()
}

/// The tree the `inherits` chain of the configuration `file` may not leave: the git
/// repository it is in (by its path as named, not where a symlink leads); outside a
/// repository, the directory a configuration found beside the manifests was looked for up to
/// (the current one, or its own) — for a file named as one is (`.kinject.yaml`,
/// `kinject.yaml`), and for a text that is no file (a KRM function's `functionConfig`, which a
/// committed kustomization holds). A configuration a pull request adds could otherwise read
/// any file of the CI runner (`inherits: ../../../proc/self/environ`) and show it in a
/// diagnostic, in a repository or in a checkout without one (a tarball, `GIT_STRATEGY:
/// none`). In a case of `kinject test` (`tree::in_test_case`), whose folder a pull request
/// may have written, a file inside the case folder (the current directory) inherits only from
/// that folder, even named with `-c`. Otherwise, `None`: the file was named with `-c`, which
/// is trusted.
fn inherits_tree(file: &Path) -> Option<crate::tree::Tree> {
    let cwd = std::env::current_dir().ok()?;
    let absolute = crate::tree::normalize(&cwd.join(file));
    if crate::tree::in_test_case() && absolute.starts_with(&cwd) {
        // The current directory is canonical already: the tree even when it cannot be read.
        let shown = || "the case folder".to_owned();
        let tree = crate::tree::Tree::shown_as(&cwd, shown());
        return Some(tree.unwrap_or_else(|_| crate::tree::Tree::canonical(&cwd)));
    }
    let dir = absolute.parent()?;
    if let Some(root) = crate::tree::repository(dir) {
        return crate::tree::Tree::shown_as(root, format!("the repository {}", root.display()))
            .ok();
    }
    let found_name = absolute
        .file_name()
        .is_some_and(|n| crate::tree::CONFIG_NAMES.iter().any(|c| n == *c));
    if !found_name && absolute.is_file() {
        return None;
    }
    let top = crate::tree::boundary(dir, &cwd);
    crate::tree::Tree::shown_as(top, crate::tree::shown_dir(top, &cwd)).ok()
}

/// The path as the file system resolves it (for cycle detection), or as written.
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// Inherited files read, on this thread.
        pub(super) static READS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// A chain of n files in one configuration directory (each a sidecar inheriting the one
    /// before): every inherited file is read once per load. Each file resolved its whole
    /// chain again, n²/2 reads, with a merge each: 1,000 files took 28.8 s, 2,000 over two
    /// minutes. (What is left grows with what the files mean: every file is a sidecar holding
    /// its whole chain.)
    #[test]
    fn an_inherits_chain_is_read_once_per_load() {
        let n = 60;
        let dir = tempfile::tempdir().unwrap();
        for i in 0..n {
            let inherits = if i == 0 {
                String::new()
            } else {
                format!("inherits: c{:03}.yaml\n", i - 1)
            };
            let text = format!("name: c{i:03}\n{inherits}env:\n- name: E{i}\n  value: v\n");
            std::fs::write(dir.path().join(format!("c{i:03}.yaml")), text).unwrap();
        }
        READS.with(|r| r.set(0));
        let config = crate::config::load(&[dir.path()], &[]).unwrap();
        assert_eq!(READS.with(std::cell::Cell::get), n - 1);
        assert_eq!(config.sidecars.len(), n);
        let last = &config.sidecars[n - 1].definition;
        assert_eq!(last["env"].as_array().map(Vec::len), Some(n), "{last}");
    }

    #[test]
    fn paths_are_cleaned_as_go_cleans_them() {
        assert_eq!(
            clean(Path::new("a/./b/../c.yaml")),
            PathBuf::from("a/c.yaml")
        );
        assert_eq!(
            clean(Path::new("bad/../../etc/passwd")),
            PathBuf::from("../etc/passwd")
        );
        assert_eq!(clean(Path::new("./x.yaml")), PathBuf::from("x.yaml"));
    }

    #[test]
    fn names_and_versions() {
        assert_eq!(full_name(&json!({"name": "Foo"})).unwrap(), "foo:latest");
        assert_eq!(full_name(&json!({"name": "foo:V2"})).unwrap(), "foo:v2");
        assert_eq!(full_name(&json!({"name": "foo:"})).unwrap(), "foo:latest");
        assert!(full_name(&json!({"name": "a:b:c"})).is_err());
        assert!(full_name(&json!({"name": ""})).is_err());
    }

    #[test]
    fn requests_match_as_tumblr_resolves_them() {
        let g = crate::select::glob(&request_glob("sidecar-test:latest")).unwrap();
        for yes in [
            "sidecar-test",
            "Sidecar-Test",
            "sidecar-test:",
            "sidecar-test:LATEST",
        ] {
            assert!(g.is_match(yes), "{yes}");
        }
        for no in ["sidecar-test:v2", "sidecar", "x:sidecar-test"] {
            assert!(!g.is_match(no), "{no}");
        }
        let g = crate::select::glob(&request_glob("complex-sidecar:v420.69")).unwrap();
        assert!(g.is_match("complex-sidecar:v420.69"));
        assert!(!g.is_match("complex-sidecar"));
        let g = crate::select::glob(&request_glob("a*b{c}:latest")).unwrap();
        assert!(g.is_match("a*b{c}") && !g.is_match("axb{c}"));
    }

    #[test]
    fn merge_replaces_in_place_and_appends() {
        let parent = json!({"name": "p", "containers": [{"name": "a", "image": "1"}, {"name": "b"}],
            "hostAliases": [{"ip": "1.2.3.4"}], "hostNetwork": true, "serviceAccountName": "x"});
        let child = json!({"name": "c", "inherits": "p.yaml",
            "containers": [{"name": "b", "image": "2"}, {"name": "n"}],
            "hostAliases": [{"ip": "1.2.3.4"}], "hostPID": true, "serviceAccountName": ""});
        let m = merge(parent, &child);
        assert_eq!(m["name"], "c");
        assert_eq!(
            m["containers"],
            json!([{"name": "a", "image": "1"}, {"name": "b", "image": "2"}, {"name": "n"}])
        );
        assert_eq!(m["hostAliases"].as_array().map(Vec::len), Some(2));
        assert_eq!(m["serviceAccountName"], "x");
        assert!(m.get("hostPID").is_none(), "tumblr does not merge hostPID");
    }
}
