//! OpenKruise `SidecarSet` (`apps.kruise.io/v1alpha1` and `v1beta1`) onto the native model.
//!
//! What Kruise's pod webhook does at creation (pkg/webhook/pod/mutating/sidecarset.go) becomes
//! native settings: the selector, namespace and namespaceSelector a rule; containers with
//! their `podInjectPolicy` (Before by API defaulting) positions; init containers after the
//! pod's own, sorted by name; only the volumes the sidecar mounts; `shareVolumePolicy` and
//! `shareVolumeDevicePolicy` (when `formats.kruise.allowShareVolumePolicy` and
//! `…allowShareVolumeDevicePolicy` turn them on: they give the sidecar the mounts and devices
//! a manifest writes) and `transferEnv`; `IS_INJECTED=true` in every injected container;
//! `patchPodMetadata` with its policies; and Kruise's own annotations (`kruise.io/sidecarset-hash`,
//! `-hash-without-image`, `-injected-list`), merged across sets. A same-named app container is
//! refused, not replaced (openkruise/kruise#565); conflicts are decided on the actual pod,
//! not on selector overlap (#732).

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{Container, LocalObjectReference, Volume};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use schemars::JsonSchema;
use serde_json::{Map, Value, json};

#[rustfmt::skip]
mod hash;

use super::context::{Context, Problem, injector_skips};
use crate::diagnostic::codes;
use crate::json::Pointer;

/// The SidecarSet as the validator sees it (only for its JSON Schema).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
struct SidecarSet {
    api_version: String,
    kind: String,
    metadata: Metadata,
    spec: Spec,
    /// What the cluster observed (a SidecarSet exported with `kubectl get -o yaml`): read
    /// nothing from it.
    status: Option<Value>,
}

#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
struct Metadata {
    name: String,
    namespace: Option<String>,
    labels: Option<std::collections::BTreeMap<String, String>>,
    annotations: Option<std::collections::BTreeMap<String, String>>,
}

#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
struct Spec {
    selector: Option<LabelSelector>,
    /// v1alpha1 only.
    namespace: Option<String>,
    namespace_selector: Option<LabelSelector>,
    containers: Option<Vec<SidecarContainer>>,
    init_containers: Option<Vec<SidecarContainer>>,
    volumes: Option<Vec<Volume>>,
    image_pull_secrets: Option<Vec<LocalObjectReference>>,
    update_strategy: Option<UpdateStrategy>,
    injection_strategy: Option<InjectionStrategy>,
    revision_history_limit: Option<i32>,
    /// v1beta1: the version label of the set's revisions (`apps.kruise.io/sidecarset-custom-version`).
    custom_version: Option<String>,
    patch_pod_metadata: Option<Vec<PatchPodMetadata>>,
}

#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
struct SidecarContainer {
    #[serde(flatten)]
    container: Container,
    pod_inject_policy: Option<InjectPolicy>,
    upgrade_strategy: Option<UpgradeStrategy>,
    share_volume_policy: Option<SharePolicy>,
    share_volume_device_policy: Option<SharePolicy>,
    transfer_env: Option<Vec<TransferEnvVar>>,
    resources_policy: Option<crate::model::ResourcesPolicy>,
}

#[derive(JsonSchema)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
enum InjectPolicy {
    BeforeAppContainer,
    AfterAppContainer,
}

#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
struct UpgradeStrategy {
    upgrade_type: Option<String>,
    hot_upgrade_empty_image: Option<String>,
}

#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
struct SharePolicy {
    #[serde(rename = "type")]
    kind: Option<String>,
}

#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
struct TransferEnvVar {
    source_container_name: Option<String>,
    source_container_name_from: Option<SourceContainerNameFrom>,
    env_name: Option<String>,
    env_names: Option<Vec<String>>,
}

#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
struct SourceContainerNameFrom {
    field_ref: k8s_openapi::api::core::v1::ObjectFieldSelector,
}

/// How Kruise updates running pods: checked, with no offline meaning.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
struct UpdateStrategy {
    #[serde(rename = "type")]
    kind: Option<UpdateType>,
    paused: Option<bool>,
    selector: Option<LabelSelector>,
    partition: Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,
    max_unavailable: Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,
    priority_strategy: Option<PriorityStrategy>,
    scatter_strategy: Option<Vec<ScatterTerm>>,
}

#[derive(JsonSchema)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
enum UpdateType {
    NotUpdate,
    RollingUpdate,
}

#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
struct PriorityStrategy {
    weight_priority: Option<Vec<WeightPriority>>,
    order_priority: Option<Vec<OrderPriority>>,
}

#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
struct WeightPriority {
    weight: i32,
    match_selector: LabelSelector,
}

#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
struct OrderPriority {
    ordered_key: String,
}

#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
struct ScatterTerm {
    key: String,
    value: String,
}

#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
struct InjectionStrategy {
    paused: Option<bool>,
    revision: Option<Value>,
}

#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
struct PatchPodMetadata {
    annotations: Option<std::collections::BTreeMap<String, String>>,
    patch_policy: Option<PatchPolicy>,
}

#[derive(JsonSchema)]
#[expect(dead_code, reason = "exists only to derive the JSON Schema")]
enum PatchPolicy {
    Retain,
    Overwrite,
    MergePatchJson,
}

pub(crate) fn schema() -> &'static Value {
    static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        serde_json::to_value(schemars::schema_for!(SidecarSet)).unwrap_or(Value::Null)
    })
}

pub(crate) fn is_sidecar_set(value: &Value) -> bool {
    let api = value.get("apiVersion").and_then(Value::as_str);
    value.get("kind").and_then(Value::as_str) == Some("SidecarSet")
        && matches!(
            api,
            Some("apps.kruise.io/v1alpha1" | "apps.kruise.io/v1beta1")
        )
}

const KRUISE_FIELDS: [&str; 6] = [
    "podInjectPolicy",
    "upgradeStrategy",
    "shareVolumePolicy",
    "shareVolumeDevicePolicy",
    "transferEnv",
    "resourcesPolicy",
];

/// The flag that makes kinject read `shareVolumePolicy`.
const SHARE_VOLUME_POLICY_FLAG: &str = "formats.kruise.allowShareVolumePolicy";

/// The flag that makes kinject read `shareVolumeDevicePolicy`.
const SHARE_VOLUME_DEVICE_POLICY_FLAG: &str = "formats.kruise.allowShareVolumeDevicePolicy";

/// The native configuration (a `ConfigFile` value) for one SidecarSet; `shareVolumePolicy`
/// read when `ctx.options` turns it on, else warned of.
pub(crate) fn to_native(set: &Value, ctx: &Context<'_>) -> Result<Value, Vec<Problem>> {
    let name = set
        .at_pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let spec = &set["spec"];
    let mut problems = Vec::new();
    refuse_unsupported(set, &mut problems);
    if !problems.is_empty() {
        return Err(problems);
    }
    let paused = spec.at_pointer("/injectionStrategy/paused") == Some(&Value::Bool(true));
    // A paused set is not defined at all: pods it injected earlier keep their sidecars.
    let (sidecars, rules) = if paused {
        (json!([]), json!([]))
    } else {
        let rules: Vec<Value> = rule(spec, &name, canary_base(set)).into_iter().collect();
        let allowed = Sharing {
            mounts: ctx.options.kruise_share_volume_policy(),
            devices: ctx.options.kruise_share_volume_device_policy(),
        };
        let containers = Containers::of(spec, allowed);
        ctx.warnings
            .borrow_mut()
            .extend(unknown_volumes(spec, &name));
        for (path, devices) in &containers.unshared {
            ctx.warnings
                .borrow_mut()
                .push(unshared(path.clone(), *devices));
        }
        let sidecar = sidecar(spec, &name, containers);
        (json!([Value::Object(sidecar)]), json!(rules))
    };
    Ok(json!({
        "apiVersion": crate::config::API_VERSION,
        "kind": crate::config::KIND,
        "sidecars": sidecars,
        "rules": rules,
        // Kruise injects into the pods of its own workloads too.
        "kinds": [
            {"kind": "CloneSet", "apiVersion": "apps.kruise.io", "podTemplate": "/spec/template"},
            {"kind": "StatefulSet", "apiVersion": "apps.kruise.io", "podTemplate": "/spec/template"},
            {"kind": "DaemonSet", "apiVersion": "apps.kruise.io", "podTemplate": "/spec/template"},
            {"kind": "BroadcastJob", "apiVersion": "apps.kruise.io", "podTemplate": "/spec/template",
             "runsToCompletion": true},
        ],
        "defaults": {
            "sortInitContainers": true,
        },
    }))
}

/// The warning for a `shareVolumePolicy` (at `path`), or a `shareVolumeDevicePolicy`
/// (`devices`), left unread.
fn unshared(path: Vec<String>, devices: bool) -> Problem {
    let message = if devices {
        format!(
            "`shareVolumeDevicePolicy` is not read: it gives the sidecar container every volume \
             device of the app containers, so a manifest could change the sidecar (put a block \
             device at a path of the sidecar's); `{SHARE_VOLUME_DEVICE_POLICY_FLAG}: true` in a \
             native configuration turns it on"
        )
    } else {
        format!(
            "`shareVolumePolicy` is not read: it gives the sidecar container every volume mount \
             of the app containers, so a manifest could change the sidecar (mount a volume it \
             writes over the sidecar's files); `{SHARE_VOLUME_POLICY_FLAG}: true` in a native \
             configuration turns it on"
        )
    };
    Problem {
        path,
        code: codes::CONFIG_OFF_BY_DEFAULT,
        message,
        span: None,
    }
}

/// Warnings for the `volumeMounts` and `volumeDevices` of the set `name` (its `spec`) that
/// name a volume the set lacks, as Kruise's pod webhook logs them (buildSidecars); the
/// sidecar is injected all the same, and the pod must have the volume.
fn unknown_volumes(spec: &Value, name: &str) -> Vec<Problem> {
    let volumes: BTreeSet<&str> = spec
        .get("volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .collect();
    let mut out = Vec::new();
    for list in ["initContainers", "containers"] {
        let containers = spec
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        for (i, c) in containers.enumerate() {
            for field in ["volumeMounts", "volumeDevices"] {
                let items = c.get(field).and_then(Value::as_array).into_iter().flatten();
                for (j, m) in items.enumerate() {
                    let Some(volume) = m.get("name").and_then(Value::as_str) else {
                        continue;
                    };
                    if volumes.contains(volume) {
                        continue;
                    }
                    let path = ["spec", list, &i.to_string(), field, &j.to_string(), "name"];
                    out.push(Problem {
                        path: path.map(str::to_owned).to_vec(),
                        code: codes::CONFIG_UNKNOWN_ENTRY,
                        message: format!(
                            "`{field}` names volume `{volume}`, which the `volumes` of SidecarSet `{name}` \
                             lack: the sidecar is injected all the same, as Kruise injects it (logging that \
                             the volume cannot be found), and a pod without a volume of that name is refused \
                             by the API server"
                        ),
                        span: None,
                    });
                }
            }
        }
    }
    out
}

/// Which of Kruise's sharing policies a configuration lets kinject read.
#[derive(Default, Clone, Copy)]
struct Sharing {
    /// `shareVolumePolicy`.
    mounts: bool,
    /// `shareVolumeDevicePolicy`.
    devices: bool,
}

/// The native sidecar for the set `name` (its `spec`, its `containers` read).
fn sidecar(spec: &Value, name: &str, mut containers: Containers) -> Map<String, Value> {
    let mut sidecar = Map::new();
    sidecar.insert("name".into(), json!(name));
    sidecar.insert(
        "description".into(),
        json!(format!("OpenKruise SidecarSet {name}")),
    );
    sidecar.insert("literal".into(), json!(true));
    sidecar.insert("sameName".into(), json!("error"));
    let sidecar_list: Vec<String> = containers.sidecar_list.iter().cloned().collect();
    let hot = std::mem::take(&mut containers.hot);
    let volumes = mounted_volumes(spec, &containers.mounted);
    if !containers.init_containers.is_empty() {
        sidecar.insert(
            "initContainers".into(),
            Value::Array(containers.init_containers),
        );
    }
    sidecar.insert("containers".into(), Value::Array(containers.containers));
    if !volumes.is_empty() {
        sidecar.insert("volumes".into(), Value::Array(volumes));
    }
    if let Some(secrets) = spec.get("imagePullSecrets") {
        sidecar.insert("imagePullSecrets".into(), secrets.clone());
    }
    sidecar.insert("positions".into(), Value::Object(containers.positions));
    if !containers.share.is_empty() {
        sidecar.insert("shareVolumeMounts".into(), Value::Array(containers.share));
    }
    if !containers.share_devices.is_empty() {
        sidecar.insert(
            "shareVolumeDevices".into(),
            Value::Array(containers.share_devices),
        );
    }
    if !containers.transfer.is_empty() {
        sidecar.insert("transferEnv".into(), Value::Array(containers.transfer));
    }
    if !containers.resources.is_empty() {
        sidecar.insert(
            "resourcesPolicies".into(),
            Value::Object(containers.resources),
        );
    }
    // Kruise's getTargetContainers leaves out every name the matched sets give a container
    // or init container, a HotUpgrade pair's name in the set included.
    sidecar.insert("notAppContainers".into(), json!(containers.set_names));
    let (mut annotations, mut policies) = pod_annotations(spec, name, &sidecar_list);
    hot_upgrade_annotations(&hot, &mut annotations, &mut policies);
    sidecar.insert("annotations".into(), Value::Object(annotations));
    sidecar.insert("annotationPolicies".into(), Value::Object(policies));
    sidecar
}

/// The set's containers and init containers as the native sidecar has them, and what the
/// sidecar's settings gather from them.
#[derive(Default)]
struct Containers {
    containers: Vec<Value>,
    init_containers: Vec<Value>,
    /// Each container's `podInjectPolicy`, as a position.
    positions: Map<String, Value>,
    /// Containers whose `shareVolumePolicy` is enabled.
    share: Vec<Value>,
    /// Containers whose `shareVolumeDevicePolicy` is enabled.
    share_devices: Vec<Value>,
    /// Every container's `transferEnv`, each naming its container.
    transfer: Vec<Value>,
    /// Each container's `resourcesPolicy`, by its name in the pod.
    resources: Map<String, Value>,
    /// The volumes the containers use, in the order of first use.
    mounted: Vec<String>,
    /// Which sharing policies are read.
    allowed: Sharing,
    /// The names Kruise lists as the set's sidecars (`sidecarList`): its containers and its
    /// native sidecars (init containers that keep running), by their names in the set.
    sidecar_list: BTreeSet<String>,
    /// The containers injected as HotUpgrade pairs, by their names in the set.
    hot: Vec<String>,
    /// Every container's and init container's name in the set.
    set_names: Vec<String>,
    /// Where a sharing policy that enables sharing is left unread, and whether it is
    /// `shareVolumeDevicePolicy`.
    unshared: Vec<(Vec<String>, bool)>,
}

impl Containers {
    /// The set's containers (its `spec`'s), the sharing policies read that `allowed` says.
    fn of(spec: &Value, allowed: Sharing) -> Self {
        let mut out = Containers {
            allowed,
            ..Containers::default()
        };
        // Init containers first: Kruise gathers the volumes they use first (buildSidecars).
        for (list, init) in [("initContainers", true), ("containers", false)] {
            for (i, c) in spec
                .get(list)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let path = ["spec", list, &i.to_string()].map(str::to_owned);
                let containers = out.read(c, init, &path);
                if init {
                    out.init_containers.extend(containers);
                } else {
                    out.containers.extend(containers);
                }
            }
        }
        out
    }

    /// The native containers for Kruise's `c` (an `init` container or not): the container,
    /// or its HotUpgrade pair; with what it mounts and transfers noted, their positions and
    /// their volume sharing (`c` at `path`).
    fn read(&mut self, c: &Value, init: bool, path: &[String]) -> Vec<Value> {
        let cname = c
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        // Kruise lists the set's containers, and its init containers that keep running
        // (native sidecars), by their names in the set.
        let native = c.get("restartPolicy").and_then(Value::as_str) == Some("Always");
        self.set_names.push(cname.clone());
        if !init || native {
            self.sidecar_list.insert(cname.clone());
        }
        let hot = (!init || native) && is_hot_upgrade(c);
        let names = if hot {
            self.hot.push(cname.clone());
            vec![format!("{cname}-1"), format!("{cname}-2")]
        } else {
            vec![cname.clone()]
        };
        let mut container = c.as_object().cloned().unwrap_or_default();
        for f in KRUISE_FIELDS {
            container.shift_remove(f);
        }
        // The volumes of `volumeMounts` and of `volumeDevices` are added (buildSidecars).
        for list in ["volumeMounts", "volumeDevices"] {
            let items = c.get(list).and_then(Value::as_array).into_iter().flatten();
            for n in items.filter_map(|m| m.get("name").and_then(Value::as_str)) {
                if !self.mounted.iter().any(|m| m == n) {
                    self.mounted.push(n.to_owned());
                }
            }
        }
        // Kruise marks every container it injects.
        let env = container.entry("env").or_insert_with(|| json!([]));
        if let Value::Array(env) = env {
            env.push(json!({"name": "IS_INJECTED", "value": "true"}));
        }
        // API defaulting: containers go before the app's and init containers after the pod's
        // own, unless they say otherwise; both go through mergeSidecarContainers.
        let policy = c.get("podInjectPolicy").and_then(Value::as_str);
        let before = if init {
            policy == Some("BeforeAppContainer")
        } else {
            policy != Some("AfterAppContainer")
        };
        for n in &names {
            self.positions
                .insert(n.clone(), json!(if before { "before" } else { "after" }));
        }
        for (policy, devices) in [
            ("shareVolumePolicy", false),
            ("shareVolumeDevicePolicy", true),
        ] {
            let enabled = c
                .get(policy)
                .and_then(|p| p.get("type"))
                .and_then(Value::as_str)
                == Some("enabled");
            let (allowed, list) = if devices {
                (self.allowed.devices, &mut self.share_devices)
            } else {
                (self.allowed.mounts, &mut self.share)
            };
            if !enabled {
                continue;
            }
            if allowed {
                list.extend(names.iter().map(|n| json!(n)));
            } else {
                let mut at = path.to_vec();
                at.push(policy.to_owned());
                self.unshared.push((at, devices));
            }
        }
        for t in c
            .get("transferEnv")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let mut t = t.as_object().cloned().unwrap_or_default();
            t.insert("containers".into(), json!(names));
            self.transfer.push(Value::Object(t));
        }
        if let Some(policy) = c.get("resourcesPolicy") {
            for n in &names {
                self.resources.insert(n.clone(), policy.clone());
            }
        }
        if !hot {
            return vec![Value::Object(container)];
        }
        let empty_image = c
            .at_pointer("/upgradeStrategy/hotUpgradeEmptyImage")
            .cloned()
            .unwrap_or_default();
        names
            .iter()
            .enumerate()
            .map(|(i, n)| hot_upgrade_container(&container, n, (i == 1).then_some(&empty_image)))
            .collect()
    }
}

/// Whether Kruise injects container `c` as a HotUpgrade pair.
fn is_hot_upgrade(c: &Value) -> bool {
    c.at_pointer("/upgradeStrategy/upgradeType")
        .and_then(Value::as_str)
        == Some("HotUpgrade")
}

/// One of a HotUpgrade pair as Kruise's generateHotUpgradeContainers writes it: `container`
/// named `name`, with `image` (the second: `hotUpgradeEmptyImage`) and the env vars that read
/// its version annotations.
fn hot_upgrade_container(
    container: &Map<String, Value>,
    name: &str,
    image: Option<&Value>,
) -> Value {
    let mut c = container.clone();
    c.insert("name".into(), json!(name));
    if let Some(image) = image {
        c.insert("image".into(), image.clone());
    }
    if let Some(Value::Array(env)) = c.get_mut("env") {
        for (var, annotation) in [
            ("SIDECARSET_VERSION", VERSION_ANNOTATION),
            ("SIDECARSET_VERSION_ALT", VERSION_ALT_ANNOTATION),
        ] {
            let path = format!("metadata.annotations['{annotation}{name}']");
            env.push(json!({"name": var, "valueFrom": {"fieldRef": {"fieldPath": path}}}));
        }
    }
    Value::Object(c)
}

/// The prefixes of the pod annotations holding a HotUpgrade container's version and the
/// other one's (Kruise's GetPodSidecarSetVersionAnnotation and …AltAnnotation).
const VERSION_ANNOTATION: &str = "version.sidecarset.kruise.io/";
const VERSION_ALT_ANNOTATION: &str = "versionalt.sidecarset.kruise.io/";

/// The pod annotation saying which of each HotUpgrade pair works.
const WORKING_HOT_UPGRADE: &str = "kruise.io/sidecarset-working-hotupgrade-container";

/// The set's volumes that its containers use, in the order of first use (the others are not
/// injected); of two volumes of one name, the last (Kruise's map of them).
fn mounted_volumes(spec: &Value, mounted: &[String]) -> Vec<Value> {
    let volumes = spec.get("volumes").and_then(Value::as_array);
    mounted
        .iter()
        .filter_map(|name| {
            volumes?
                .iter()
                .rev()
                .find(|v| v.get("name").and_then(Value::as_str) == Some(name))
                .cloned()
        })
        .collect()
}

/// The annotations the sidecar adds to the pod and their policies: `patchPodMetadata`, and
/// Kruise's own, which merge across sets.
fn pod_annotations(
    spec: &Value,
    name: &str,
    sidecar_list: &[String],
) -> (Map<String, Value>, Map<String, Value>) {
    let mut annotations = Map::new();
    let mut policies = Map::new();
    for p in spec
        .get("patchPodMetadata")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let policy = match p.get("patchPolicy").and_then(Value::as_str) {
            Some("Overwrite") => "overwrite",
            Some("MergePatchJson") => "mergeJson",
            _ => "keep",
        };
        for (k, v) in p
            .get("annotations")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            annotations.insert(k.clone(), v.clone());
            policies.insert(k.clone(), json!(policy));
        }
    }
    let entry = |hash: String| {
        json!({name: {"hash": hash, "sidecarSetName": name, "sidecarList": sidecar_list}})
            .to_string()
    };
    annotations.insert(
        "kruise.io/sidecarset-hash".into(),
        json!(entry(hash::of(spec, true))),
    );
    annotations.insert(
        "kruise.io/sidecarset-hash-without-image".into(),
        json!(entry(hash::of(spec, false))),
    );
    annotations.insert("kruise.io/sidecarset-injected-list".into(), json!(name));
    policies.insert("kruise.io/sidecarset-hash".into(), json!("sidecarSetHash"));
    policies.insert(
        "kruise.io/sidecarset-hash-without-image".into(),
        json!("sidecarSetHash"),
    );
    policies.insert(
        "kruise.io/sidecarset-injected-list".into(),
        json!("appendSortedList"),
    );
    (annotations, policies)
}

/// What Kruise's SidecarSet webhook refuses in container `c`'s `resourcesPolicy` (`policy`;
/// `sidecar`: a container, or an init container that keeps running), each with its path
/// under `resourcesPolicy` (validateResourcesPolicy).
fn resources_policy_problems(
    c: &Value,
    policy: &Value,
    sidecar: bool,
) -> Vec<(Vec<&'static str>, String)> {
    let mut out = Vec::new();
    if !sidecar {
        out.push((
            vec![],
            "`resourcesPolicy` of an init container needs `restartPolicy: Always` (Kruise refuses the set)".into(),
        ));
    }
    let set = |list: &str| {
        c.at_pointer(&format!("/resources/{list}"))
            .and_then(Value::as_object)
            .is_some_and(|m| !m.is_empty())
    };
    if set("limits") || set("requests") {
        out.push((
            vec![],
            "`resourcesPolicy` and `resources` together (Kruise refuses the set)".into(),
        ));
        return out;
    }
    if let Some(regex) = policy
        .get("targetContainersNameRegex")
        .and_then(Value::as_str)
    {
        if regex.is_empty() {
            out.push((
                vec!["targetContainersNameRegex"],
                "an empty regular expression".into(),
            ));
        } else if let Err(e) = crate::calculator::container_regex(regex) {
            out.push((vec!["targetContainersNameRegex"], e));
        }
    }
    let Some(exprs) = policy.get("resourcesExpr") else {
        return out;
    };
    if exprs.get("limits").is_none() && exprs.get("requests").is_none() {
        out.push((
            vec!["resourcesExpr"],
            "neither `limits` nor `requests`".into(),
        ));
    }
    for list in ["limits", "requests"] {
        for resource in ["cpu", "memory"] {
            let Some(text) = exprs
                .get(list)
                .and_then(|l| l.get(resource))
                .and_then(Value::as_str)
            else {
                continue;
            };
            if text.is_empty() {
                continue;
            }
            if let Err(e) = crate::calculator::validate(text, resource) {
                out.push((
                    vec!["resourcesExpr", list, resource],
                    format!("`{text}` is not an expression Kruise accepts: {e}"),
                ));
            }
        }
    }
    out
}

/// The set a canary SidecarSet stands in for: `apps.kruise.io/sidecarset-base` when
/// `apps.kruise.io/sidecarset-canary` is `"true"` (Kruise's IsCanarySidecarSet).
fn canary_base(set: &Value) -> Option<&str> {
    let annotations = set.at_pointer("/metadata/annotations")?;
    let canary = annotations
        .get("apps.kruise.io/sidecarset-canary")?
        .as_str();
    let base = annotations
        .get("apps.kruise.io/sidecarset-base")?
        .as_str()?;
    (canary == Some("true") && !base.is_empty()).then_some(base)
}

/// The annotations Kruise's injectHotUpgradeContainers writes for the HotUpgrade containers
/// `hot` (their names in the set), and their policies: each pair's versions (the first works:
/// 1, the second, empty: 0), set as Kruise sets them, and which of each pair works, merged
/// into the pod's map.
fn hot_upgrade_annotations(
    hot: &[String],
    annotations: &mut Map<String, Value>,
    policies: &mut Map<String, Value>,
) {
    if hot.is_empty() {
        return;
    }
    let mut working = Map::new();
    for name in hot {
        for (n, version, alt) in [
            (format!("{name}-1"), "1", "0"),
            (format!("{name}-2"), "0", "1"),
        ] {
            for (prefix, value) in [(VERSION_ANNOTATION, version), (VERSION_ALT_ANNOTATION, alt)] {
                annotations.insert(format!("{prefix}{n}"), json!(value));
                policies.insert(format!("{prefix}{n}"), json!("overwrite"));
            }
        }
        working.insert(name.clone(), json!(format!("{name}-1")));
    }
    working.sort_keys();
    annotations.insert(
        WORKING_HOT_UPGRADE.into(),
        json!(Value::Object(working).to_string()),
    );
    policies.insert(WORKING_HOT_UPGRADE.into(), json!("mergeJson"));
}

/// The rule of the set `name` (its `spec`): its selector, namespace and namespaceSelector,
/// and, for a canary set, the `base` set it replaces in the pods it selects. None when the
/// selector is empty, which selects nothing (`!selector.Empty()` in Kruise).
fn rule(spec: &Value, name: &str, base: Option<&str>) -> Option<Value> {
    let selector = spec
        .get("selector")
        .filter(|s| s.as_object().is_some_and(|m| !m.is_empty()))?;
    let mut m = json!({"labelSelector": selector});
    if let Some(ns) = spec
        .get("namespace")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    {
        m["namespaces"] = json!([ns]);
    }
    if let Some(ns) = spec.get("namespaceSelector") {
        m["namespaceSelector"] = ns.clone();
    }
    let mut rule = json!({
        "name": format!("sidecarset/{name}"),
        "match": m,
        "inject": [name],
        "jobs": "inject",
        "skips": injector_skips(),
    });
    if let Some(base) = base {
        rule["replaces"] = json!([base]);
    }
    Some(rule)
}

/// Fields whose behaviour needs a cluster (revision history), or that would give a pod the
/// API server refuses, are refused; so are the `resourcesPolicy` values Kruise's SidecarSet
/// webhook refuses.
fn refuse_unsupported(set: &Value, problems: &mut Vec<Problem>) {
    let spec = &set["spec"];
    // Values Kruise's SidecarSet webhook refuses.
    let mut invalid = Vec::new();
    let mut refuse = |path: Vec<String>, message: String| {
        problems.push(Problem {
            path,
            code: codes::CONFIG_UNSUPPORTED_FIELD,
            message,
            span: None,
        });
    };
    // Each API version has a field the other lacks (the CRD's schemas): the API server
    // refuses or prunes it, so it would not do what it says.
    let version = set
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    for (field, of, instead) in [
        (
            "namespace",
            "apps.kruise.io/v1alpha1",
            "select namespaces with `namespaceSelector` (for one namespace: `kubernetes.io/metadata.name`)",
        ),
        (
            "customVersion",
            "apps.kruise.io/v1beta1",
            "it names a revision in v1beta1 only",
        ),
    ] {
        if spec.get(field).is_some() && version != of {
            refuse(
                vec!["spec".into(), field.into()],
                format!("`spec.{field}` is a field of {of} only, not of {version}: {instead}"),
            );
        }
    }
    if spec.at_pointer("/injectionStrategy/revision").is_some() {
        refuse(
            vec!["spec".into(), "injectionStrategy".into(), "revision".into()],
            "`injectionStrategy.revision` injects a historical ControllerRevision, which only the cluster has".into(),
        );
    }
    for list in ["containers", "initContainers"] {
        for (i, c) in spec
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = |f: &str| vec!["spec".into(), list.into(), i.to_string(), f.into()];
            let empty_image = c
                .at_pointer("/upgradeStrategy/hotUpgradeEmptyImage")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let native = c.get("restartPolicy").and_then(Value::as_str) == Some("Always");
            let paired = is_hot_upgrade(c) && (list == "containers" || native);
            if paired && empty_image.is_empty() {
                refuse(
                    at("upgradeStrategy"),
                    "`upgradeType: HotUpgrade` without `hotUpgradeEmptyImage`: Kruise injects a second \
                     container with that image, and the API server refuses a container without one"
                        .into(),
                );
            }
            if let Some(policy) = c.get("resourcesPolicy") {
                let sidecar = list == "containers" || native;
                for (path, message) in resources_policy_problems(c, policy, sidecar) {
                    let mut at = at("resourcesPolicy");
                    at.extend(path.iter().map(|p| (*p).to_owned()));
                    invalid.push(Problem {
                        path: at,
                        code: codes::CONFIG_INVALID_VALUE,
                        message,
                        span: None,
                    });
                }
            }
        }
    }
    problems.append(&mut invalid);
}
