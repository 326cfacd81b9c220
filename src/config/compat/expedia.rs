//! The Expedia kubernetes-sidecar-injector's ConfigMaps onto the native model.
//!
//! Current format (pkg/webhook/sidecarhandler.go): a ConfigMap whose `sidecars.yaml` holds a
//! list of `{name, initContainers, containers, volumes, imagePullSecrets, annotations,
//! labels}`; a pod annotation `sidecar-injector.expedia.com/inject: a,b` names ConfigMaps, and
//! everything in each is added (annotations and labels only where the pod has none). Opt-out
//! (the chart's selectors): the pod labels `sidecar-injector.expedia.com/inject: skip` and
//! `sidecar-injector.expedia.com/disable-inject: "true"`, the namespace label
//! `sidecar-injector.expedia.com/disable-inject: "true"`.
//!
//! Older format (`sidecarconfig.yaml`: `sidecars: [{name, sidecar: {containers, volumes}}]`):
//! only in namespaces labelled `kubernetes-sidecar-injector: enabled`, the annotation names
//! sidecars, and every pod annotation with the prefix `sidecar-injector.expedia.com/` (but
//! `inject` and `status`) becomes an env var of the injected containers: a manifest changing
//! a sidecar, so only when `formats.expedia.allowAnnotationEnv` turns it on. Injected pods get
//! `sidecar-injector.expedia.com/status: injected`, and pods that have it are skipped.

use serde_json::{Map, Value, json};

use super::context::{Context, Failure, embedded, string_field};
use crate::config::{AnnotationKeys, UnreadAnnotations};
use crate::model::schema::validate;
use crate::yaml::Node;

const PREFIX: &str = "sidecar-injector.expedia.com";
const CURRENT_KEY: &str = "sidecars.yaml";
const OLD_KEY: &str = "sidecarconfig.yaml";
/// The older webhook's status annotation, `injected` on the pods it has injected.
const OLD_STATUS: &str = "sidecar-injector.expedia.com/status";
/// The flag that makes the older format's annotations env vars of its sidecars.
const ANNOTATION_ENV_FLAG: &str = "formats.expedia.allowAnnotationEnv";

pub(crate) fn is_sidecar_config_map(value: &Value) -> bool {
    value.get("kind").and_then(Value::as_str) == Some("ConfigMap")
        && value
            .get("data")
            .is_some_and(|d| d.get(CURRENT_KEY).is_some() || d.get(OLD_KEY).is_some())
}

/// The JSON Schema of one sidecar of the current format (its `$ref`s are to the embedded
/// definitions, which the validator finds by name).
fn sidecar_schema() -> &'static Value {
    static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        let k8s = crate::model::schema::body_schema();
        let p = &k8s["properties"];
        json!({
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "name": {"type": "string"},
                    "initContainers": p["initContainers"],
                    "containers": p["containers"],
                    "volumes": p["volumes"],
                    "imagePullSecrets": p["imagePullSecrets"],
                    "annotations": p["annotations"],
                    "labels": p["labels"],
                },
            },
        })
    })
}

fn old_schema() -> &'static Value {
    static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        let current = sidecar_schema();
        let body = current["items"]["properties"].clone();
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"sidecars": {"type": "array", "items": {
                "type": "object",
                "additionalProperties": false,
                "required": ["name"],
                "properties": {"name": {"type": "string"}, "sidecar": {
                    "type": "object", "additionalProperties": false, "properties": body,
                }},
            }}},
        })
    })
}

/// The native configuration for one ConfigMap. `root` and `doc` locate errors in the embedded
/// document.
pub(crate) fn to_native(
    cm: &Value,
    root: &Node,
    doc: &str,
    ctx: &Context<'_>,
) -> Result<Value, Failure> {
    let old = cm["data"].get(CURRENT_KEY).is_none();
    let key = if old { OLD_KEY } else { CURRENT_KEY };
    let (cm_name, namespace, text) = fields(cm, key)?;
    let inner =
        embedded(root, doc, &["data", key], text).map_err(|p| Failure::Problems(vec![p]))?;
    let schema = if old { old_schema() } else { sidecar_schema() };
    let value = if inner.parsed.value.is_null() {
        if old { json!({}) } else { json!([]) }
    } else {
        inner.parsed.value.clone()
    };
    let path = vec!["data".to_owned(), key.to_owned()];
    let violations = validate(schema, "", &value);
    if !violations.is_empty() {
        return Err(Failure::Problems(
            violations
                .iter()
                .map(|v| inner.violation(v, &path, key))
                .collect(),
        ));
    }
    let entries: Vec<(String, Value)> = if old {
        old_entries(&value)
    } else {
        // Everything in the ConfigMap is added for its name.
        vec![(cm_name.clone(), merged(&value))]
    };
    let mut sidecars = Vec::new();
    let mut rules = Vec::new();
    let annotation_env = old && ctx.options.expedia_annotation_env();
    for (name, body) in entries {
        sidecars.push(sidecar(&name, &body, &cm_name, old, annotation_env));
        rules.push(rule(&name, namespace, old));
    }
    if old && !annotation_env {
        ctx.unread.borrow_mut().push(UnreadAnnotations {
            sidecars: sidecars
                .iter()
                .filter_map(|s| s["name"].as_str().map(str::to_owned))
                .collect(),
            keys: AnnotationKeys::Prefix {
                prefix: format!("{PREFIX}/"),
                except: vec!["inject".to_owned(), "status".to_owned()],
            },
            effect: "the older Expedia format makes such annotations env vars",
            flag: ANNOTATION_ENV_FLAG,
        });
    }
    Ok(super::context::native(sidecars, rules))
}

/// The ConfigMap's name, namespace and the text of its `data` `key`; every one of them that
/// is not a string a problem.
fn fields<'v>(cm: &'v Value, key: &str) -> Result<(String, Option<&'v str>, &'v str), Failure> {
    let fields = (
        string_field(cm, &["metadata", "name"]),
        string_field(cm, &["metadata", "namespace"]),
        string_field(cm, &["data", key]),
    );
    match fields {
        (Ok(name), Ok(namespace), Ok(text)) => Ok((
            name.unwrap_or_default().to_owned(),
            namespace,
            text.unwrap_or_default(),
        )),
        (name, namespace, text) => {
            let problems = [name.err(), namespace.err(), text.err()];
            Err(Failure::Problems(problems.into_iter().flatten().collect()))
        }
    }
}

/// The older format's sidecars: each name with what it adds.
fn old_entries(value: &Value) -> Vec<(String, Value)> {
    value["sidecars"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            (
                s["name"].as_str().unwrap_or_default().to_owned(),
                s.get("sidecar").cloned().unwrap_or(json!({})),
            )
        })
        .collect()
}

/// The current format's sidecars, all in one: lists appended, mappings merged (the first
/// value of a key kept), other fields the last one's.
fn merged(value: &Value) -> Value {
    let mut merged = Map::new();
    for s in value.as_array().into_iter().flatten() {
        for (k, v) in s
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| *k != "name")
        {
            match (merged.get_mut(k), v) {
                (Some(Value::Array(a)), Value::Array(b)) => a.extend(b.iter().cloned()),
                (Some(Value::Object(a)), Value::Object(b)) => {
                    for (bk, bv) in b {
                        a.entry(bk.clone()).or_insert(bv.clone());
                    }
                }
                _ => {
                    merged.insert(k.clone(), v.clone());
                }
            }
        }
    }
    Value::Object(merged)
}

/// The native sidecar `name` adding `body`, from the ConfigMap `cm_name` (of the `old` format
/// or not), with the older format's env from annotations when `annotation_env`.
fn sidecar(name: &str, body: &Value, cm_name: &str, old: bool, annotation_env: bool) -> Value {
    let mut s = body.as_object().cloned().unwrap_or_default();
    s.insert("name".into(), json!(name));
    s.insert(
        "description".into(),
        json!(format!("Expedia sidecar {name} (ConfigMap {cm_name})")),
    );
    s.insert("literal".into(), json!(true));
    if annotation_env {
        s.insert(
            "envFromAnnotations".into(),
            json!({"prefix": format!("{PREFIX}/"), "exclude": ["inject", "status"]}),
        );
    }
    if old {
        // `mutate` marks the pods it injects (and `shouldMutate` skips them).
        s.insert("annotations".into(), json!({OLD_STATUS: "injected"}));
        s.insert(
            "annotationPolicies".into(),
            json!({OLD_STATUS: "overwrite"}),
        );
    }
    Value::Object(s)
}

/// The rule injecting sidecar `name` where the pod's annotation names it, unless the pod or
/// its namespace opts out (or, in the `old` format, the namespace does not opt in).
fn rule(name: &str, namespace: Option<&str>, old: bool) -> Value {
    let mut m = if old {
        // The older webhook (deployment/kubectl/mutatingwebhook-template.yaml) has only a
        // namespaceSelector, and skips pods it has injected (`shouldMutate`).
        json!({
            "annotationLists": {format!("{PREFIX}/inject"): name},
            "namespaceSelector": {"matchLabels": {"kubernetes-sidecar-injector": "enabled"}},
            "annotationSelector": {"matchExpressions": [
                {"key": OLD_STATUS, "operator": "NotIn", "values": ["injected", "Injected", "INJECTED"]},
            ]},
        })
    } else {
        // The chart's objectSelector and namespaceSelector (templates/mutatingwebhook.yaml).
        json!({
            "annotationLists": {format!("{PREFIX}/inject"): name},
            "labelSelector": {"matchExpressions": [
                {"key": format!("{PREFIX}/inject"), "operator": "NotIn", "values": ["skip"]},
                {"key": format!("{PREFIX}/disable-inject"), "operator": "NotIn", "values": ["true"]},
            ]},
            "namespaceSelector": {"matchExpressions": [
                {"key": format!("{PREFIX}/disable-inject"), "operator": "NotIn", "values": ["true"]},
            ]},
        })
    };
    if let Some(ns) = namespace {
        // ConfigMaps are looked up in the pod's own namespace.
        m["namespaces"] = json!([ns]);
    }
    // The webhook sees pods: a workload's own annotations never reach it.
    m["podAnnotationsOnly"] = json!(true);
    // The webhook injects in the annotation's order; a name it cannot find is a warning in
    // its log (the current format) or denies the pod (the older one: `CreateRawPatch`).
    let unlisted = if old { "error" } else { "warn" };
    json!({"name": format!("expedia/{name}"), "match": m, "inject": [name], "jobs": "inject", "requestList": unlisted})
}
