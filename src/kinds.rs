//! Which objects are workloads and where their pod template lives.

use serde_json::Value;

use crate::json::Fields;
use crate::model::CustomKind;

/// A workload kind: where its pod template is, and whether its pods run to completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadKind {
    pub kind: String,
    /// JSON pointer of the pod template (`""` for a Pod, whose template is itself).
    pub pod_template: String,
    pub runs_to_completion: bool,
}

/// Built-in workloads: (kind, pod template pointer, runs to completion).
const BUILT_IN: &[(&str, &str, bool)] = &[
    ("Pod", "", false),
    ("Deployment", "/spec/template", false),
    ("StatefulSet", "/spec/template", false),
    ("DaemonSet", "/spec/template", false),
    ("ReplicaSet", "/spec/template", false),
    ("ReplicationController", "/spec/template", false),
    ("Job", "/spec/template", true),
    ("CronJob", "/spec/jobTemplate/spec/template", true),
    ("PodTemplate", "/template", false),
    ("DeploymentConfig", "/spec/template", false),
];

/// API groups of the built-in kinds (core is ""); anything else with the same kind name is a
/// custom resource (an OpenKruise `StatefulSet` is not an `apps/v1` one).
fn built_in_group(kind: &str) -> &'static [&'static str] {
    match kind {
        "Pod" | "ReplicationController" | "PodTemplate" => &[""],
        "Deployment" | "DaemonSet" | "ReplicaSet" => &["apps", "extensions"],
        "StatefulSet" => &["apps"],
        "Job" | "CronJob" => &["batch"],
        "DeploymentConfig" => &["apps.openshift.io", ""],
        _ => &[],
    }
}

/// The workload kind of `object`, looking at custom kinds first.
pub fn workload_kind(object: &Value, custom: &[CustomKind]) -> Option<WorkloadKind> {
    let kind = object.field("kind")?.as_str()?;
    let api_version = object
        .field("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    for c in custom {
        let version_matches = c
            .api_version
            .as_deref()
            .is_none_or(|want| want == api_version || (!want.contains('/') && want == group));
        if c.kind == kind && version_matches {
            return Some(WorkloadKind {
                kind: kind.to_owned(),
                pod_template: c.pod_template.clone(),
                runs_to_completion: c.runs_to_completion,
            });
        }
    }
    let (name, pointer, completes) = BUILT_IN.iter().find(|(k, ..)| *k == kind)?;
    if !built_in_group(name).contains(&group) {
        return None;
    }
    Some(WorkloadKind {
        kind: (*name).to_owned(),
        pod_template: (*pointer).to_owned(),
        runs_to_completion: *completes,
    })
}

/// Whether an object of `kind` (in any API group) may be a workload: a built-in workload kind,
/// a custom one, or a list that may hold some.
pub(crate) fn may_be_workload(kind: &str, custom: &[CustomKind]) -> bool {
    kind.ends_with("List")
        || BUILT_IN.iter().any(|(k, ..)| *k == kind)
        || custom.iter().any(|c| c.kind == kind)
}

/// Names of every kind a rule may mention.
pub(crate) fn known_kinds(custom: &[CustomKind]) -> Vec<String> {
    BUILT_IN
        .iter()
        .map(|(k, ..)| (*k).to_owned())
        .chain(custom.iter().map(|c| c.kind.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn built_in_and_custom_kinds() {
        let d =
            workload_kind(&json!({"apiVersion": "apps/v1", "kind": "Deployment"}), &[]).unwrap();
        assert_eq!(d.pod_template, "/spec/template");
        let cj = workload_kind(&json!({"apiVersion": "batch/v1", "kind": "CronJob"}), &[]).unwrap();
        assert!(cj.runs_to_completion);
        assert!(
            workload_kind(
                &json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet"}),
                &[]
            )
            .is_none()
        );
        assert!(workload_kind(&json!({"apiVersion": "v1", "kind": "Service"}), &[]).is_none());
        let rollout = CustomKind {
            kind: "Rollout".into(),
            api_version: Some("argoproj.io".into()),
            pod_template: "/spec/template".into(),
            runs_to_completion: false,
        };
        let r = workload_kind(
            &json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout"}),
            &[rollout],
        )
        .unwrap();
        assert_eq!(r.kind, "Rollout");
    }
}
