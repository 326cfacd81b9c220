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

/// Built-in workloads: (kind, pod template pointer, runs to completion, resource: the plural
/// the API server serves it as, in its group's `v1`).
const BUILT_IN: &[(&str, &str, bool, &str)] = &[
    ("Pod", "", false, "pods"),
    ("Deployment", "/spec/template", false, "deployments"),
    ("StatefulSet", "/spec/template", false, "statefulsets"),
    ("DaemonSet", "/spec/template", false, "daemonsets"),
    ("ReplicaSet", "/spec/template", false, "replicasets"),
    (
        "ReplicationController",
        "/spec/template",
        false,
        "replicationcontrollers",
    ),
    ("Job", "/spec/template", true, "jobs"),
    (
        "CronJob",
        "/spec/jobTemplate/spec/template",
        true,
        "cronjobs",
    ),
    ("PodTemplate", "/template", false, "podtemplates"),
    (
        "DeploymentConfig",
        "/spec/template",
        false,
        "deploymentconfigs",
    ),
];

/// API groups of the built-in kinds (core is ""), the one they are served in today first;
/// anything else with the same kind name is a
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
    let (name, pointer, completes, _) = BUILT_IN.iter().find(|(k, ..)| *k == kind)?;
    if !built_in_group(name).contains(&group) {
        return None;
    }
    Some(WorkloadKind {
        kind: (*name).to_owned(),
        pod_template: (*pointer).to_owned(),
        runs_to_completion: *completes,
    })
}

/// Where the API server serves objects of a kind: what a webhook configuration's `rules`
/// name (`apiGroups`, `apiVersions`, `resources`). `"*"` for any.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(not(feature = "serve"), allow(dead_code))] // `kinject serve`'s alone
pub(crate) struct Resource {
    pub group: String,
    pub version: String,
    /// The plural (`deployments`).
    pub resource: String,
    /// A custom kind's plural, guessed as the API server's own `UnsafeGuessKindToResource`
    /// does (lowercase; `s` → `ses`, `y` → `ies`, else `+s`): a CRD may name it otherwise.
    pub guessed: bool,
}

/// The resource of a kind a rule may name: a custom kind's (its `apiVersion`'s group and
/// version, any when it does not say; its plural guessed), else a built-in's.
#[cfg_attr(not(feature = "serve"), allow(dead_code))] // `kinject serve`'s alone
pub(crate) fn resource(kind: &str, custom: &[CustomKind]) -> Option<Resource> {
    if let Some(c) = custom.iter().find(|c| c.kind == kind) {
        let (group, version) = match c.api_version.as_deref() {
            Some(v) => v.rsplit_once('/').unwrap_or((v, "*")),
            None => ("*", "*"),
        };
        let lower = kind.to_lowercase();
        let resource = match lower.strip_suffix('y') {
            Some(stem) => format!("{stem}ies"),
            None if lower.ends_with('s') => format!("{lower}es"),
            None => format!("{lower}s"),
        };
        return Some(Resource {
            group: group.to_owned(),
            version: version.to_owned(),
            resource,
            guessed: true,
        });
    }
    let (name, _, _, plural) = BUILT_IN.iter().find(|(k, ..)| *k == kind)?;
    Some(Resource {
        group: built_in_group(name).first()?.to_string(),
        version: "v1".to_owned(),
        resource: (*plural).to_owned(),
        guessed: false,
    })
}

/// Whether an object of `kind` (in any API group) may be a workload: a built-in workload kind,
/// a custom one, or a list that may hold some.
pub(crate) fn may_be_workload(kind: &str, custom: &[CustomKind]) -> bool {
    kind.ends_with("List")
        || BUILT_IN.iter().any(|(k, ..)| *k == kind)
        || custom.iter().any(|c| c.kind == kind)
}

/// Whether `kind` is a built-in workload kind or one the configuration defines: the kinds
/// `kinject serve` counts by name in its metrics (any other is `other`).
#[cfg_attr(not(feature = "serve"), allow(dead_code))] // `kinject serve`'s alone
pub(crate) fn is_known(kind: &str, custom: &[CustomKind]) -> bool {
    BUILT_IN.iter().any(|(k, ..)| *k == kind) || custom.iter().any(|c| c.kind == kind)
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

    #[test]
    fn resources_of_kinds() {
        let cj = resource("CronJob", &[]).unwrap();
        assert_eq!(
            (cj.group.as_str(), cj.resource.as_str()),
            ("batch", "cronjobs")
        );
        let rc = resource("ReplicationController", &[]).unwrap();
        assert_eq!((rc.group.as_str(), rc.version.as_str()), ("", "v1"));
        let custom = |kind: &str, api_version: Option<&str>| CustomKind {
            kind: kind.into(),
            api_version: api_version.map(str::to_owned),
            pod_template: "/spec/template".into(),
            runs_to_completion: false,
        };
        let kinds = [
            custom("Rollout", Some("argoproj.io/v1alpha1")),
            custom("Policy", Some("example.com")),
            custom("Cluster", None),
            custom("Redis", None),
        ];
        let r = resource("Rollout", &kinds).unwrap();
        assert_eq!(
            (
                r.group.as_str(),
                r.version.as_str(),
                r.resource.as_str(),
                r.guessed
            ),
            ("argoproj.io", "v1alpha1", "rollouts", true)
        );
        let p = resource("Policy", &kinds).unwrap();
        assert_eq!((p.version.as_str(), p.resource.as_str()), ("*", "policies"));
        assert_eq!(resource("Cluster", &kinds).unwrap().group, "*");
        assert_eq!(resource("Redis", &kinds).unwrap().resource, "redises");
        assert!(resource("Service", &[]).is_none());
    }
}
