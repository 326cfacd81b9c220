//! The shape of what injection reads and edits, checked before anything is changed. A
//! workload whose fields have types Kubernetes would refuse (a mapping where it has a list,
//! an annotation that is not a string) is refused with where the field is: kinject never
//! overwrites a value it does not understand, nor guesses what a mistyped one means.

use serde_json::Value;

use super::error::InjectError;
use crate::diagnostic::codes;
use crate::json::{Fields, Pointer, escape};

const CODE: &str = codes::INJECT_INVALID_OBJECT;

/// Pod spec fields injection edits, which Kubernetes has as lists.
const SPEC_LISTS: &[&str] = &[
    "containers",
    "initContainers",
    "volumes",
    "imagePullSecrets",
    "hostAliases",
];

/// Container fields injection edits, which Kubernetes has as lists.
const CONTAINER_LISTS: &[&str] = &["env", "envFrom", "volumeMounts", "command", "args"];

/// What a pod template's `containers` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Containers {
    Some,
    /// `containers: []`, written so.
    Empty,
    /// No `containers`, or `containers:` null: a partial manifest (a kustomize patch) or a
    /// broken one.
    Absent,
}

/// What the pod template at `pod_template` (a mapping with a `spec` mapping) has as
/// containers, once the fields injection touches are known to have Kubernetes' types.
/// Values are walked, not looked up by pointer: this runs for every workload, and a pointer
/// is made only for an error.
pub(crate) fn check(object: &Value, pod_template: &str) -> Result<Containers, InjectError> {
    metadata(object.field("metadata"), || "/metadata".to_owned())?;
    let Some(pod) = object.at_pointer(pod_template) else {
        return Ok(Containers::Absent);
    };
    metadata(pod.field("metadata"), || format!("{pod_template}/metadata"))?;
    let spec = pod.field("spec");
    let spec_at = || format!("{pod_template}/spec");
    for field in SPEC_LISTS {
        list(spec.and_then(|s| s.field(field)), || {
            format!("{}/{field}", spec_at())
        })?;
    }
    let containers = match spec.and_then(|s| s.field("containers")) {
        Some(Value::Array(items)) if items.is_empty() => Containers::Empty,
        Some(Value::Array(_)) => Containers::Some,
        _ => Containers::Absent,
    };
    for field in ["containers", "initContainers"] {
        let Some(Value::Array(items)) = spec.and_then(|s| s.field(field)) else {
            continue;
        };
        for (i, item) in items.iter().enumerate() {
            let at = || format!("{}/{field}/{i}", spec_at());
            let Value::Object(container) = item else {
                return Err(wrong_type(&at(), item, "a mapping"));
            };
            for list_field in CONTAINER_LISTS {
                list(container.field(list_field), || {
                    format!("{}/{list_field}", at())
                })?;
            }
        }
    }
    Ok(containers)
}

/// `metadata` (found at `at`), when there: a mapping whose labels and annotations map to
/// strings.
fn metadata(metadata: Option<&Value>, at: impl Fn() -> String) -> Result<(), InjectError> {
    let metadata = match metadata {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Object(m)) => m,
        Some(other) => return Err(wrong_type(&at(), other, "a mapping")),
    };
    for field in ["labels", "annotations"] {
        let map = match metadata.field(field) {
            None | Some(Value::Null) => continue,
            Some(Value::Object(m)) => m,
            Some(other) => {
                return Err(wrong_type(&format!("{}/{field}", at()), other, "a mapping"));
            }
        };
        // Null is Kubernetes' empty string; anything else but a string it refuses.
        if let Some((key, value)) = map.iter().find(|(_, v)| !(v.is_string() || v.is_null())) {
            let singular = field.trim_end_matches('s');
            return Err(InjectError::new(
                CODE,
                format!(
                    "the value of {singular} `{key}` is {}, not a string",
                    what(value)
                ),
            )
            .help(format!(
                "quote it (`{}`): Kubernetes takes only strings as {field}",
                quoted(key, value)
            ))
            .at(format!("{}/{field}/{}", at(), escape(key))));
        }
    }
    Ok(())
}

/// `value` (found at `at`), when there, is a list.
fn list(value: Option<&Value>, at: impl Fn() -> String) -> Result<(), InjectError> {
    match value {
        None | Some(Value::Null | Value::Array(_)) => Ok(()),
        Some(other) => Err(wrong_type(&at(), other, "a list")),
    }
}

fn wrong_type(at: &str, value: &Value, expected: &str) -> InjectError {
    let field = at.rsplit('/').next().unwrap_or_default();
    let field = if field.bytes().all(|b| b.is_ascii_digit()) {
        format!("item {field}")
    } else {
        format!("`{}`", field.replace("~1", "/").replace("~0", "~"))
    };
    InjectError::new(
        CODE,
        format!(
            "{field} is {}, where Kubernetes has {expected}",
            what(value)
        ),
    )
    .help("kinject edits only what has Kubernetes' types; Kubernetes refuses this manifest too")
    .at(at)
}

fn what(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// A scalar as it would read quoted; other values as JSON.
/// `key: "value"` as YAML that reads as the value's text (`false`, `8080`, a mapping's JSON),
/// whatever the key and the text hold: a suggestion must be something to paste.
fn quoted(key: &str, value: &Value) -> String {
    use crate::yaml::{emit::scalar, style::Quote};
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    format!(
        "{}: {}",
        scalar(&Value::String(key.to_owned()), true, Quote::Double),
        scalar(&Value::String(text), true, Quote::Double)
    )
}
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(spec: Value) -> Value {
        json!({"kind": "Deployment", "spec": {"template": {"spec": spec}}})
    }

    #[test]
    fn containers_are_found_and_wrong_types_located() {
        let at = |v: &Value| check(v, "/spec/template").map_err(|e| e.at.unwrap_or_default());
        let some = at(&deployment(json!({"containers": [{"name": "a"}]})));
        assert_eq!(some, Ok(Containers::Some));
        let null = at(&deployment(json!({"containers": null})));
        assert_eq!(null, Ok(Containers::Absent));
        let empty = at(&deployment(json!({"containers": []})));
        assert_eq!(empty, Ok(Containers::Empty));
        assert_eq!(at(&deployment(json!({}))), Ok(Containers::Absent));
        assert_eq!(
            at(&deployment(json!({"containers": {}}))),
            Err("/spec/template/spec/containers".to_owned())
        );
        assert_eq!(
            at(&deployment(json!({"containers": ["a"]}))),
            Err("/spec/template/spec/containers/0".to_owned())
        );
        assert_eq!(
            at(&deployment(json!({"containers": [{"env": {"A": "b"}}]}))),
            Err("/spec/template/spec/containers/0/env".to_owned())
        );
        assert_eq!(
            at(&deployment(json!({"volumes": "x"}))),
            Err("/spec/template/spec/volumes".to_owned())
        );
    }

    #[test]
    fn annotations_and_labels_are_strings() {
        let mut d = deployment(json!({"containers": [{"name": "a"}]}));
        d["metadata"] = json!({"annotations": {"a": "x", "b": null, "c/d": false}});
        let e = check(&d, "/spec/template").unwrap_err();
        assert_eq!(e.at.as_deref(), Some("/metadata/annotations/c~1d"));
        assert_eq!(
            e.message,
            "the value of annotation `c/d` is a boolean, not a string"
        );
        assert_eq!(
            e.help.as_deref(),
            Some("quote it (`c/d: \"false\"`): Kubernetes takes only strings as annotations")
        );
        // The suggestion reads as the value's text, whatever the key and the value hold.
        for (key, value) in [
            ("a\\b: #c", json!({"p": "C:\\x\"y"})),
            ("n", json!(8080)),
            ("x", json!([true, null])),
        ] {
            d["metadata"] = json!({"annotations": {key: value.clone()}});
            let e = check(&d, "/spec/template").unwrap_err();
            let help = e.help.expect("help");
            let suggestion = &help[help.find('`').unwrap() + 1..help.rfind('`').unwrap()];
            let read = crate::yaml::parse_value(suggestion).expect("the suggestion is YAML");
            assert_eq!(read, json!({key: value.to_string()}), "{suggestion}");
        }
        d["metadata"] = json!({});
        d["spec"]["template"]["metadata"] = json!({"labels": {"app": 1}});
        let e = check(&d, "/spec/template").unwrap_err();
        assert_eq!(e.at.as_deref(), Some("/spec/template/metadata/labels/app"));
        d["spec"]["template"]["metadata"] = json!({"labels": ["app"]});
        let e = check(&d, "/spec/template").unwrap_err();
        assert_eq!(
            e.message,
            "`labels` is a list, where Kubernetes has a mapping"
        );
    }
}
