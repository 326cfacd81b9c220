//! The salesforce generic-sidecar-injector's two files onto the native model.
//!
//! The *sidecar file* (`--sidecar-config-file`) is a catalog of `initContainers`,
//! `containers`, `volumes` and `volumeMounts`, one Go template with `{%` `%}` delimiters over
//! the pod's `.Annotations` and `.Spec.ServiceAccountName`; kinject translates each templated
//! value to minijinja (see `gotemplate`). The *mutation file* (`--mutation-config-file`) has
//! `mutationConfigs`, each a native sidecar made of the catalog entries it names, triggered by
//! `<annotationNamespace>/<annotationTrigger>: "true"|"enabled"` unless
//! `<annotationNamespace>/status` is `injected`. Its `volumeMounts` go into every container
//! and init container the pod has when it applies (those of earlier mutations included), a
//! container that already mounts the volume keeping its own; a pod volume of the same name
//! wins. Pods that run to completion get no sidecar containers unless
//! `implementsSidecarLifecycle`, which adds the `sidecar-lifecycle` volume instead.
//! `annotationConfig` (pod annotations that add mounts to the sidecar: a manifest changing it)
//! is read only when `formats.salesforce.allowAnnotationConfig` turns it on.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Container, Volume, VolumeMount};
use schemars::JsonSchema;
use serde_json::{Map, Value, json};

use super::context::{Catalogs, Context, Failure, Problem, describe_violation, nothing};
use super::gotemplate::{self, Translator, quote};
use crate::diagnostic::Located;
use crate::diagnostic::codes;
use crate::json::Pointer;
use crate::model::schema::{coerce_scalars, validate};
use crate::yaml::{Node, NodeKind, ScalarKind};

/// The catalog's lists, in the order salesforce reads them.
const LISTS: [&str; 4] = ["initContainers", "containers", "volumes", "volumeMounts"];

/// The sidecar file (only for its JSON Schema).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
struct SidecarConfig {
    init_containers: Option<Vec<Container>>,
    containers: Option<Vec<Container>>,
    volumes: Option<Vec<Volume>>,
    volume_mounts: Option<Vec<VolumeMount>>,
}

/// The mutation file (only for its JSON Schema).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
struct MutationConfigs {
    mutation_configs: Vec<MutationConfig>,
}

#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
struct MutationConfig {
    name: String,
    annotation_namespace: String,
    annotation_trigger: String,
    annotation_config: Option<AnnotationConfig>,
    init_containers_before_pod_init_containers: Option<Vec<String>>,
    init_containers: Option<Vec<String>>,
    containers: Option<Vec<String>>,
    volumes: Option<Vec<String>>,
    volume_mounts: Option<Vec<String>>,
    ignore_namespaces: Option<Vec<String>>,
    whitelist_namespaces: Option<Vec<String>>,
    implements_sidecar_lifecycle: Option<bool>,
}

#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
struct AnnotationConfig {
    volume_mounts: Option<Vec<AnnotationVolumeMounts>>,
}

#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
struct AnnotationVolumeMounts {
    name: String,
    container_refs: Option<Vec<String>>,
    init_container_refs: Option<Vec<String>>,
}

fn sidecar_schema() -> &'static Value {
    static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        serde_json::to_value(schemars::schema_for!(SidecarConfig)).unwrap_or(Value::Null)
    })
}

fn mutation_schema() -> &'static Value {
    static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        serde_json::to_value(schemars::schema_for!(MutationConfigs)).unwrap_or(Value::Null)
    })
}

/// The volume and mount salesforce adds to pods that run to completion when a mutation
/// `implementsSidecarLifecycle`.
const LIFECYCLE: &str = "sidecar-lifecycle";
const LIFECYCLE_PATH: &str = "/var/run/sidecar-lifecycle";

/// A document without `apiVersion`/`kind` holding the sidecar file's lists (its keys matched
/// without regard to case, as Go's JSON decoder matches them).
pub(crate) fn is_sidecar_file(value: &Value) -> bool {
    value.as_object().is_some_and(|m| {
        !m.contains_key("apiVersion")
            && !m.contains_key("kind")
            && !m.contains_key("name")
            && !m.contains_key("mutationConfigs")
            && m.keys().any(|k| list_key(k).is_some())
    })
}

fn list_key(key: &str) -> Option<&'static str> {
    LISTS.into_iter().find(|l| l.eq_ignore_ascii_case(key))
}

pub(crate) fn is_mutation_config(value: &Value) -> bool {
    value.as_object().is_some_and(|m| {
        !m.contains_key("apiVersion")
            && !m.contains_key("kind")
            && m.contains_key("mutationConfigs")
    })
}

/// The sidecar file's document `text` (at `base` in file `name`) parsed with its template
/// actions set aside: `None` when it is not a sidecar file.
pub(crate) fn read_sidecar_file(
    name: &str,
    file: &Arc<str>,
    range: std::ops::Range<usize>,
    catalogs: &mut Catalogs,
) -> Option<Result<(), Vec<Located>>> {
    let base = range.start;
    let text = &file[range];
    // A document with a top-level `kind` is not one (it is read once, elsewhere).
    if crate::yaml::top_level_kind(text).is_some() {
        return None;
    }
    let located = |offset: usize, code: &'static str, message: String| {
        Located::new(
            code,
            name,
            file,
            (base + offset, base + offset + 1),
            message,
        )
    };
    let actions = match gotemplate::actions(text) {
        Ok(a) => a,
        Err(e) => {
            // Only a sidecar file has Go actions; anything else reports its own errors.
            return masked_shape(text, &[]).map(|_| {
                Err(vec![located(
                    e.offset,
                    codes::CONFIG_TEMPLATE_SYNTAX,
                    e.message,
                )])
            });
        }
    };
    let parsed = masked_shape(text, &actions)?;
    if catalogs.first.is_none() {
        catalogs.first = Some((name.to_owned(), Arc::clone(file), base));
    }
    let added = add_entries(parsed, text, &actions, catalogs);
    catalogs.failed |= added.is_err();
    Some(added.map_err(|errors| {
        errors
            .into_iter()
            .map(|(offset, code, message)| located(offset, code, message))
            .collect()
    }))
}

/// `text` parsed with each action replaced by a same-length placeholder, when it then is a
/// sidecar file.
fn masked_shape(text: &str, actions: &[gotemplate::Action]) -> Option<crate::yaml::Parsed> {
    let mut masked = text.to_owned();
    for a in actions {
        masked.replace_range(a.start..a.end, &placeholder(a.end - a.start));
    }
    let parsed = crate::yaml::parse_document(&masked).ok()?;
    is_sidecar_file(&parsed.value).then_some(parsed)
}

/// What stands in for an action while the YAML around it is read: as long as it, and made of
/// a character YAML reads as part of a plain word and manifests rarely hold.
fn placeholder(len: usize) -> String {
    "~".repeat(len)
}

type Errors = Vec<(usize, &'static str, String)>;

fn add_entries(
    parsed: crate::yaml::Parsed,
    text: &str,
    actions: &[gotemplate::Action],
    catalogs: &mut Catalogs,
) -> Result<(), Errors> {
    let Some(root) = parsed.root else {
        return Ok(());
    };
    let mut value = parsed.value;
    // Keys as Go's decoder matches them: `InitContainers` is `initContainers`.
    if let Value::Object(m) = &mut value {
        let renamed: Map<String, Value> = std::mem::take(m)
            .into_iter()
            .map(|(k, v)| (list_key(&k).map_or(k, str::to_owned), v))
            .collect();
        *m = renamed;
    }
    let mut translation = Translation::new(&root, text, actions);
    translation.value(&mut value);
    let mut errors = translation.errors;
    for (a, used) in actions.iter().zip(&translation.used) {
        // Go renders an action in a comment into the comment: it changes nothing.
        if !used && !in_comment(text, a.start) {
            errors.push((
                a.start,
                codes::CONFIG_TEMPLATE_SYNTAX,
                "a template action outside a value (around keys or whole lines) is not supported: kinject translates \
                 actions inside values".to_owned(),
            ));
        }
    }
    coerce_scalars(sidecar_schema(), &mut value);
    for v in validate(sidecar_schema(), "", &value) {
        let (at, message) = describe_violation(Some(&root), &v, None);
        errors.push((at, v.code(), message));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    for list in LISTS {
        for entry in value
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            catalogs.entries.push((list, entry.clone()));
        }
    }
    Ok(())
}

/// Whether byte `at` of `text` follows a `#` that starts a YAML comment on its line.
fn in_comment(text: &str, at: usize) -> bool {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..at];
    before.trim_start().starts_with('#') || before.contains(" #")
}

/// The sidecar file's values being translated: where its actions are, which of them were
/// found in a value, and what could not be translated.
struct Translation<'a> {
    root: &'a Node,
    text: &'a str,
    actions: &'a [gotemplate::Action],
    /// For each action, whether a value holds it.
    used: Vec<bool>,
    /// The path to the value being translated.
    path: Vec<String>,
    translator: Translator,
    errors: Errors,
}

impl<'a> Translation<'a> {
    fn new(root: &'a Node, text: &'a str, actions: &'a [gotemplate::Action]) -> Self {
        Translation {
            root,
            text,
            actions,
            used: vec![false; actions.len()],
            path: Vec::new(),
            translator: Translator::new(),
            errors: Vec::new(),
        }
    }

    /// Replaces the placeholders in the strings of `value` by the translated templates.
    fn value(&mut self, value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    self.path.push(k.clone());
                    self.value(v);
                    self.path.pop();
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter_mut().enumerate() {
                    self.path.push(i.to_string());
                    self.value(v);
                    self.path.pop();
                }
            }
            Value::String(s) => self.string(s),
            _ => {}
        }
    }

    /// The string at `path`, as a minijinja template of the actions in it.
    fn string(&mut self, s: &mut String) {
        let root = self.root;
        let Some(node) = root.at(&self.path) else {
            return;
        };
        let inside: Vec<usize> = (0..self.actions.len())
            .filter(|&i| self.actions[i].start >= node.start && self.actions[i].end <= node.end)
            .collect();
        if inside.is_empty() {
            // A literal that looks like a minijinja template stays literal.
            *s = gotemplate::literal(s);
            return;
        }
        let Some((restored, local)) = self.restore(s, &inside) else {
            return;
        };
        match self.translator.translate(&restored, &local) {
            Ok(t) => *s = yaml_scalar(t, &restored, &local, node),
            Err(e) => {
                // Back to the file: which action, and where in it.
                let (i, a) = local
                    .iter()
                    .enumerate()
                    .rev()
                    .find(|(_, a)| a.start <= e.offset)
                    .unwrap_or((0, &local[0]));
                let file_offset =
                    self.actions[inside[i]].start + (e.offset - a.start).min(a.end - a.start);
                self.errors
                    .push((file_offset, codes::CONFIG_TEMPLATE_SYNTAX, e.message));
            }
        }
    }

    /// `s` with the actions `inside` it put back where their placeholders are, and where each
    /// is in the result; `None` when one's placeholder is not there (its error recorded).
    fn restore(&mut self, s: &str, inside: &[usize]) -> Option<(String, Vec<gotemplate::Action>)> {
        let mut restored = String::new();
        let mut local = Vec::new();
        let mut rest = s;
        for &i in inside {
            let a = &self.actions[i];
            let mark = placeholder(a.end - a.start);
            let Some(at) = rest.find(&mark) else {
                self.errors.push((
                    a.start,
                    codes::CONFIG_TEMPLATE_SYNTAX,
                    "a template action split by YAML quoting or folding is not supported"
                        .to_owned(),
                ));
                return None;
            };
            restored.push_str(&rest[..at]);
            let start = restored.len();
            restored.push_str(&self.text[a.start..a.end]);
            local.push(gotemplate::Action {
                start,
                end: restored.len(),
                inner: a.inner.clone(),
            });
            rest = &rest[at + mark.len()..];
            self.used[i] = true;
        }
        restored.push_str(rest);
        Some((restored, local))
    }
}

/// The translation `t` of `restored`: when it is one action in a plain scalar, what it prints
/// read as YAML reads a scalar (Go wrote the text, then YAML read it).
fn yaml_scalar(t: String, restored: &str, local: &[gotemplate::Action], node: &Node) -> String {
    let whole = local.len() == 1 && local[0].start == 0 && local[0].end == restored.len();
    if whole
        && matches!(node.kind, NodeKind::Scalar(ScalarKind::Plain))
        && let Some(expr) = t.strip_prefix("{{ ").and_then(|x| x.strip_suffix(" }}"))
    {
        return format!("{{{{ ({expr}) | yaml_scalar }}}}");
    }
    t
}

/// The native configuration for a mutation file.
pub(crate) fn to_native(value: &Value, ctx: &Context<'_>) -> Result<Value, Failure> {
    *ctx.catalogs.used.borrow_mut() = true;
    let violations = validate(mutation_schema(), "", value);
    if !violations.is_empty() {
        return Err(Failure::Schema(violations));
    }
    if ctx.catalogs.is_empty() {
        return Err(Failure::Problems(vec![Problem {
            path: vec!["mutationConfigs".into()],
            code: codes::CONFIG_MISSING_SIDECAR_CONFIG,
            message: "a salesforce mutation file names sidecars its sidecar file defines"
                .to_owned(),
            span: None,
        }]));
    }
    if ctx.catalogs.failed {
        return Ok(nothing());
    }
    let mut native = Mutations::default();
    for (i, m) in value["mutationConfigs"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        native.add(i, m, ctx);
    }
    if !native.problems.is_empty() {
        return Err(Failure::Problems(native.problems));
    }
    Ok(super::context::native(native.sidecars, native.rules))
}

/// The native sidecars and rules of a mutation file's mutations, so far.
#[derive(Default)]
struct Mutations {
    sidecars: Vec<Value>,
    rules: Vec<Value>,
    /// The mutations' `annotationNamespace`s.
    namespaces: Vec<String>,
    problems: Vec<Problem>,
}

impl Mutations {
    /// Adds mutation `i` (`m`).
    fn add(&mut self, i: usize, m: &Value, ctx: &Context<'_>) {
        let at = |field: &str| {
            vec![
                "mutationConfigs".to_owned(),
                i.to_string(),
                field.to_owned(),
            ]
        };
        let name = m["name"].as_str().unwrap_or_default().to_owned();
        let ns = m["annotationNamespace"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let trigger = m["annotationTrigger"].as_str().unwrap_or_default();
        if m.get("whitelistNamespaces")
            .and_then(Value::as_array)
            .is_some_and(|w| !w.is_empty())
        {
            self.problems.push(unsupported(
                at("whitelistNamespaces"),
                "`whitelistNamespaces` is never read by salesforce (it injects in every namespace anyway); remove it, \
                 or use `ignoreNamespaces`".to_owned(),
            ));
        }
        if self.namespaces.contains(&ns) {
            self.problems.push(unsupported(
                at("annotationNamespace"),
                format!("annotationNamespace `{ns}` is used by an earlier mutation too: salesforce would skip this one \
                         wherever that one applies (both write `{ns}/status`); give each its own"),
            ));
        }
        self.namespaces.push(ns.clone());
        let mut body = chosen_entries(m, &name, ctx, &at);
        let positions = positions(m, ctx, &at);
        if ctx.options.salesforce_annotation_config() {
            if let Err(p) = annotation_mounts(m, &ns, &mut body, &at) {
                self.problems.push(p);
            }
        } else {
            leave_annotation_mounts_unread(m, &ns, &name, ctx, &at);
        }
        let sidecar = sidecar(&body, &name, positions, &ns);
        let mut matches = json!({
            "annotationSelector": {"matchExpressions": [
                {"key": format!("{ns}/{trigger}"), "operator": "In", "values": ["true", "enabled"]},
                {"key": format!("{ns}/status"), "operator": "NotIn", "values": ["injected", "Injected", "INJECTED"]},
            ]},
            // The webhook sees pods: a workload's own annotations never reach it.
            "podAnnotationsOnly": true,
        });
        let ignored = names(m, "ignoreNamespaces");
        if !ignored.is_empty() {
            matches["excludeNamespaces"] = json!(ignored);
        }
        if body.contains_key("containers") {
            self.push_with_job_variant(m, &name, sidecar, matches);
        } else {
            self.sidecars.push(Value::Object(sidecar));
            self.rules.push(json!({
                "name": format!("salesforce/{name}"), "match": matches, "inject": [name], "jobs": "inject",
            }));
        }
    }

    /// Adds a sidecar with containers and its rule for pods that run for good, and for pods
    /// that run to completion its variant without the containers, or with the lifecycle
    /// volume when they implement it.
    fn push_with_job_variant(
        &mut self,
        m: &Value,
        name: &str,
        sidecar: Map<String, Value>,
        matches: Value,
    ) {
        let job_name = job_variant(name);
        let mut job = sidecar.clone();
        job.insert("name".into(), json!(job_name));
        if m.get("implementsSidecarLifecycle") == Some(&Value::Bool(true)) {
            add_lifecycle(&mut job);
        } else {
            job.shift_remove("containers");
        }
        let mut long = matches.clone();
        long["runsToCompletion"] = json!(false);
        let mut short = matches;
        short["runsToCompletion"] = json!(true);
        self.sidecars.push(Value::Object(sidecar));
        self.sidecars.push(Value::Object(job));
        self.rules.push(json!({
            "name": format!("salesforce/{name}"), "match": long, "inject": [name], "jobs": "inject",
        }));
        self.rules.push(json!({
            "name": format!("salesforce/{name} (runs to completion)"),
            "match": short, "inject": [job_name], "jobs": "inject",
        }));
    }
}

/// The name of mutation `name`'s sidecar for pods that run to completion.
fn job_variant(name: &str) -> String {
    format!("{name} (runs to completion)")
}

/// A field of a mutation that kinject refuses.
fn unsupported(path: Vec<String>, message: String) -> Problem {
    Problem {
        path,
        code: codes::CONFIG_UNSUPPORTED_FIELD,
        message,
        span: None,
    }
}

/// The strings of the mutation's list `field`.
fn names(m: &Value, field: &str) -> Vec<String> {
    m.get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// The catalog entries mutation `m` (`name`) names, by list; a name no sidecar file defines
/// is skipped, as salesforce skips it, with a warning.
fn chosen_entries(
    m: &Value,
    name: &str,
    ctx: &Context<'_>,
    at: &dyn Fn(&str) -> Vec<String>,
) -> Map<String, Value> {
    let mut body = Map::new();
    for list in LISTS {
        let wanted = names(m, list);
        let chosen: Vec<Value> = ctx
            .catalogs
            .entries
            .iter()
            .filter(|(l, e)| {
                *l == list
                    && wanted
                        .iter()
                        .any(|w| e.get("name").and_then(Value::as_str) == Some(w))
            })
            .map(|(_, e)| e.clone())
            .collect();
        for (j, w) in wanted.iter().enumerate() {
            if !chosen
                .iter()
                .any(|e| e.get("name").and_then(Value::as_str) == Some(w))
            {
                ctx.warnings.borrow_mut().push(Problem {
                    path: [at(list), vec![j.to_string()]].concat(),
                    code: codes::CONFIG_UNKNOWN_ENTRY,
                    message: format!(
                        "mutation `{name}` names `{w}` in `{list}`, which the sidecar file does not define: salesforce \
                         skips it, and so does kinject"
                    ),
                    span: None,
                });
            }
        }
        if !chosen.is_empty() {
            body.insert(list.to_owned(), Value::Array(chosen));
        }
    }
    body
}

/// `initContainersBeforePodInitContainers` as positions: each of the mutation's init
/// containers it names goes before the pod's (a name it does not have is warned of).
fn positions(m: &Value, ctx: &Context<'_>, at: &dyn Fn(&str) -> Vec<String>) -> Map<String, Value> {
    let before = names(m, "initContainersBeforePodInitContainers");
    let mut positions = Map::new();
    let init_containers = names(m, "initContainers");
    for (j, b) in before.iter().enumerate() {
        if init_containers.contains(b) {
            positions.insert(b.clone(), json!("before"));
        } else {
            ctx.warnings.borrow_mut().push(Problem {
                path: [
                    at("initContainersBeforePodInitContainers"),
                    vec![j.to_string()],
                ]
                .concat(),
                code: codes::CONFIG_UNKNOWN_ENTRY,
                message: format!(
                    "`{b}` is not in this mutation's `initContainers`: salesforce injects nothing for it, and neither \
                     does kinject"
                ),
                span: None,
            });
        }
    }
    positions
}

/// The native sidecar of mutation `name`: what it adds (`body`), where, and the
/// `<ns>/status` annotation salesforce marks the pod with.
fn sidecar(
    body: &Map<String, Value>,
    name: &str,
    positions: Map<String, Value>,
    ns: &str,
) -> Map<String, Value> {
    let mut sidecar = body.clone();
    sidecar.insert("name".into(), json!(name));
    sidecar.insert(
        "description".into(),
        json!(format!("salesforce mutation {name}")),
    );
    if !positions.is_empty() {
        sidecar.insert("positions".into(), Value::Object(positions));
    }
    sidecar.insert("targetInitContainers".into(), json!(true));
    sidecar.insert("targetEarlierSidecars".into(), json!(true));
    sidecar.insert("mountsByName".into(), json!(true));
    sidecar.insert("keepPodVolumes".into(), json!(true));
    sidecar.insert("sameName".into(), json!("error"));
    let status = format!("{ns}/status");
    sidecar.insert("annotations".into(), json!({&status: "injected"}));
    sidecar.insert("annotationPolicies".into(), json!({&status: "overwrite"}));
    sidecar
}

/// salesforce's Helm chart ConfigMap: both files as `data` keys, which the chart mounts for
/// the webhook's `--sidecar-config-file` and `--mutation-config-file`. (Expedia's older
/// format uses `sidecarconfig.yaml` alone.)
pub(crate) fn is_chart_config_map(value: &Value) -> bool {
    value.get("kind").and_then(Value::as_str) == Some("ConfigMap")
        && value.get("data").is_some_and(|d| {
            d.get("mutationconfig.yaml").is_some() && d.get("sidecarconfig.yaml").is_some()
        })
}

/// `annotationConfig.volumeMounts`: the pod annotation `<ns>/<name>` holds a JSON list of
/// mounts for the injected containers it names. Their `volumeMounts` become an expression
/// that appends them.
fn annotation_mounts(
    m: &Value,
    ns: &str,
    body: &mut Map<String, Value>,
    at: &dyn Fn(&str) -> Vec<String>,
) -> Result<(), Problem> {
    let entries = m
        .at_pointer("/annotationConfig/volumeMounts")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (list, refs_key) in [
        ("containers", "containerRefs"),
        ("initContainers", "initContainerRefs"),
    ] {
        let Some(Value::Array(containers)) = body.get_mut(list) else {
            continue;
        };
        for c in containers.iter_mut() {
            let cname = c
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let keys: Vec<String> = entries
                .iter()
                .filter(|e| {
                    e.get(refs_key)
                        .and_then(Value::as_array)
                        .is_some_and(|r| r.iter().any(|x| x.as_str() == Some(&cname)))
                })
                .filter_map(|e| e.get("name").and_then(Value::as_str))
                .map(|n| format!("{ns}/{n}"))
                .collect();
            if keys.is_empty() {
                continue;
            }
            let own = c.get("volumeMounts").cloned().unwrap_or(json!([]));
            if serde_json::to_string(&own).is_ok_and(|t| crate::model::schema::is_template(&t)) {
                return Err(Problem {
                    path: at("annotationConfig"),
                    code: codes::CONFIG_UNSUPPORTED_FIELD,
                    message: format!(
                        "container `{cname}` has templated volume mounts and mounts from annotations; kinject cannot \
                         combine both"
                    ),
                    span: None,
                });
            }
            let mut expr = format!("({} | from_json)", quote(&own.to_string()));
            for k in keys {
                // Read as salesforce's json.Unmarshal reads them: unknown members ignored.
                expr.push_str(&format!(
                    " + (annotation_list({}) | go_volume_mounts)",
                    quote(&k)
                ));
            }
            if let Value::Object(cm) = c {
                cm.insert("volumeMounts".into(), json!(format!("{{{{ {expr} }}}}")));
            }
        }
    }
    Ok(())
}

/// The flag that makes kinject read `annotationConfig`.
const ANNOTATION_CONFIG_FLAG: &str = "formats.salesforce.allowAnnotationConfig";

/// `annotationConfig.volumeMounts` while the configuration does not turn it on: a warning at
/// the field, and its annotations noted as unread for the mutation's sidecars (`name` and its
/// variant for pods that run to completion).
fn leave_annotation_mounts_unread(
    m: &Value,
    ns: &str,
    name: &str,
    ctx: &Context<'_>,
    at: &dyn Fn(&str) -> Vec<String>,
) {
    let keys: Vec<String> = m
        .at_pointer("/annotationConfig/volumeMounts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| e.get("name").and_then(Value::as_str))
        .map(|n| format!("{ns}/{n}"))
        .collect();
    if keys.is_empty() {
        return;
    }
    ctx.warnings.borrow_mut().push(Problem {
        path: at("annotationConfig"),
        code: codes::CONFIG_OFF_BY_DEFAULT,
        message: format!(
            "`annotationConfig` is not read: it lets a pod's annotations add volume mounts to the \
             mutation's containers, so a manifest could change the sidecar; `{ANNOTATION_CONFIG_FLAG}: true` \
             in a native configuration turns it on"
        ),
        span: None,
    });
    ctx.unread
        .borrow_mut()
        .push(crate::config::UnreadAnnotations {
            sidecars: vec![name.to_owned(), job_variant(name)],
            keys: crate::config::AnnotationKeys::Keys(keys),
            effect: "salesforce's `annotationConfig` makes such annotations volume mounts",
            flag: ANNOTATION_CONFIG_FLAG,
        });
}

/// salesforce's `AddSidecarLifecycleDefaults`: the `sidecar-lifecycle` volume, and its mount in
/// the mutation's containers and (through its `volumeMounts`) the pod's.
fn add_lifecycle(sidecar: &mut Map<String, Value>) {
    let mount = json!({"name": LIFECYCLE, "mountPath": LIFECYCLE_PATH});
    let named = |list: &Value| {
        list.as_array().is_some_and(|l| {
            l.iter()
                .any(|x| x.get("name").and_then(Value::as_str) == Some(LIFECYCLE))
        })
    };
    for (field, item) in [
        ("volumes", json!({"name": LIFECYCLE, "emptyDir": {}})),
        ("volumeMounts", mount.clone()),
    ] {
        let list = sidecar.entry(field).or_insert_with(|| json!([]));
        if !named(list)
            && let Value::Array(l) = list
        {
            l.push(item);
        }
    }
    if let Some(Value::Array(containers)) = sidecar.get_mut("containers") {
        for c in containers {
            let Value::Object(cm) = c else { continue };
            let mounts = cm.entry("volumeMounts").or_insert_with(|| json!([]));
            if let Value::String(expr) = mounts {
                // Mounts from annotations: the lifecycle mount joins them.
                *expr = format!(
                    "{} + [{}] }}}}",
                    expr.trim_end_matches('}').trim_end(),
                    mount
                );
            } else if !named(mounts)
                && let Value::Array(l) = mounts
            {
                l.push(mount.clone());
            }
        }
    }
}
