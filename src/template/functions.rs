//! The functions templates call to read the pod: `annotation`, `annotation_list`,
//! `service_account`.

use serde_json::Value;

use super::filters::{invalid, ser};

/// `annotation(key, default="")`: the pod template's annotation `key`, or `default` when it
/// has none (written without a value, it is the empty string Kubernetes stores).
pub(super) fn annotation(
    state: &minijinja::State,
    key: &str,
    default: Option<minijinja::Value>,
) -> minijinja::Value {
    let found = state
        .lookup("pod")
        .and_then(|pod| pod.get_attr("metadata").ok())
        .and_then(|m| m.get_attr("annotations").ok())
        .and_then(|a| a.get_item(&minijinja::Value::from(key)).ok())
        .filter(|v| !v.is_undefined());
    match found {
        Some(v) if v.is_none() => minijinja::Value::from(""),
        Some(v) => v,
        None => default.unwrap_or_else(|| minijinja::Value::from("")),
    }
}

/// `annotation_list(key)`: the pod template's annotation `key` read as a JSON list (none when
/// the annotation is absent or empty).
pub(super) fn annotation_list(
    state: &minijinja::State,
    key: &str,
) -> Result<minijinja::Value, minijinja::Error> {
    let text = annotation(state, key, None);
    let text = text.as_str().unwrap_or_default().trim();
    if text.is_empty() {
        return Ok(minijinja::Value::from(Vec::<minijinja::Value>::new()));
    }
    let fail = |why: String| invalid(format!("annotation `{key}` must hold a JSON list: {why}"));
    match serde_json::from_str::<Value>(text) {
        Ok(list @ Value::Array(_)) => Ok(ser(list)),
        Ok(other) => Err(fail(format!(
            "it holds {}",
            crate::model::schema::type_name(&other)
        ))),
        Err(e) => Err(fail(e.to_string())),
    }
}

/// `service_account()`: the pod's service account as admission sees it: `serviceAccountName`,
/// else the deprecated `serviceAccount`, else `default` (what the ServiceAccount admission
/// plugin sets before any webhook runs).
pub(super) fn service_account(state: &minijinja::State) -> minijinja::Value {
    let spec = state
        .lookup("pod")
        .and_then(|pod| pod.get_attr("spec").ok());
    ["serviceAccountName", "serviceAccount"]
        .into_iter()
        .filter_map(|f| spec.as_ref()?.get_attr(f).ok())
        .find(|v| v.as_str().is_some_and(|s| !s.is_empty()))
        .unwrap_or_else(|| minijinja::Value::from("default"))
}
