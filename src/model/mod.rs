//! The native configuration format (`kinject.dev/v1alpha1`, `kind: InjectionConfig`): what can
//! be injected (sidecars), when (rules), and defaults. The JSON Schema is derived from these
//! types, so `kinject schema`, validation and the docs cannot drift apart. `schema` checks a
//! document against it.

pub(crate) mod schema;

use k8s_openapi::api::core::v1::{Container, EnvVar, LocalObjectReference, Volume, VolumeMount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub(crate) const API_VERSION: &str = "kinject.dev/v1alpha1";
pub(crate) const KIND: &str = "InjectionConfig";

/// A kinject configuration file.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "kinject InjectionConfig")]
pub(crate) struct ConfigFile {
    /// Always `kinject.dev/v1alpha1`.
    pub api_version: String,
    /// Always `InjectionConfig`.
    pub kind: String,
    /// Free-form metadata (kustomize needs `metadata.name` on a plugin's configuration).
    #[serde(default)]
    pub metadata: Map<String, Value>,
    /// Values for templates (`{{ values.x }}`); `--set key=value` (a string) and `--set-json key=json` override them.
    #[serde(default)]
    pub values: Map<String, Value>,
    /// What can be injected.
    #[serde(default)]
    pub sidecars: Vec<Sidecar>,
    /// When it is injected.
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// Skips that apply to every rule.
    #[serde(default)]
    pub defaults: Defaults,
    /// Custom resources that hold a pod template (Argo Rollout, Knative Service…).
    #[serde(default)]
    pub kinds: Vec<CustomKind>,
    /// How to read other injectors' files given as configuration: the command-line flags
    /// those injectors were run with, and their features that let a manifest change a
    /// sidecar, which are off unless turned on here.
    #[serde(default, skip_serializing_if = "Formats::is_empty")]
    pub formats: Formats,
    /// For kustomize, not read by kinject: run as a legacy exec transformer plugin, kinject
    /// gets these arguments from kustomize after this file's path, split on spaces, and reads
    /// them as flags (`--set version=1.2 -n prod`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args_one_liner: Option<String>,
    /// For kustomize, not read by kinject: a file (beside the kustomization) whose lines
    /// kustomize passes as arguments, as `argsOneLiner`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args_from_file: Option<String>,
}

/// Flags of other injectors, for reading their files as they run them; and the features of
/// those files that let a manifest change a sidecar, off unless turned on.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct Formats {
    /// The tumblr k8s-sidecar-injector's flags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tumblr: Option<TumblrFlags>,
    /// The salesforce generic-sidecar-injector's files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub salesforce: Option<SalesforceFlags>,
    /// The Expedia kubernetes-sidecar-injector's ConfigMaps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expedia: Option<ExpediaFlags>,
    /// OpenKruise SidecarSets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kruise: Option<KruiseFlags>,
}

impl Formats {
    pub(crate) fn is_empty(&self) -> bool {
        self == &Formats::default()
    }

    /// These flags with those `later` sets (each injector's, as a whole) over them.
    pub(crate) fn merged(self, later: Formats) -> Formats {
        Formats {
            tumblr: later.tumblr.or(self.tumblr),
            salesforce: later.salesforce.or(self.salesforce),
            expedia: later.expedia.or(self.expedia),
            kruise: later.kruise.or(self.kruise),
        }
    }

    /// Whether salesforce's `annotationConfig` is read.
    pub(crate) fn salesforce_annotation_config(&self) -> bool {
        self.salesforce
            .as_ref()
            .is_some_and(|f| f.allow_annotation_config)
    }

    /// Whether the older Expedia format's annotations become env vars.
    pub(crate) fn expedia_annotation_env(&self) -> bool {
        self.expedia
            .as_ref()
            .is_some_and(|f| f.allow_annotation_env)
    }

    /// Whether Kruise's `shareVolumePolicy` is read.
    pub(crate) fn kruise_share_volume_policy(&self) -> bool {
        self.kruise
            .as_ref()
            .is_some_and(|f| f.allow_share_volume_policy)
    }

    /// Whether Kruise's `shareVolumeDevicePolicy` is read.
    pub(crate) fn kruise_share_volume_device_policy(&self) -> bool {
        self.kruise
            .as_ref()
            .is_some_and(|f| f.allow_share_volume_device_policy)
    }
}

/// The tumblr k8s-sidecar-injector's flags (docs/compat.md).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct TumblrFlags {
    /// `--annotation-namespace` (default `injector.tumblr.com`): the prefix of the
    /// `<namespace>/request` and `<namespace>/status` annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotation_namespace: Option<String>,
}

/// How salesforce generic-sidecar-injector files are read (docs/compat.md).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct SalesforceFlags {
    /// Read `annotationConfig` (default false): a pod annotation `<annotationNamespace>/<name>`
    /// then adds the volume mounts it holds to the mutation's containers, as salesforce does.
    /// That lets a manifest change a sidecar (mount a volume of its own over the sidecar's
    /// files), so it is off unless turned on; while off, such annotations are not read and a
    /// warning says so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_annotation_config: bool,
}

/// How Expedia kubernetes-sidecar-injector ConfigMaps are read (docs/compat.md).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ExpediaFlags {
    /// In the older format (`sidecarconfig.yaml`), make every pod annotation
    /// `sidecar-injector.expedia.com/<key>` (but `inject` and `status`) the env var `<key>` of
    /// the injected containers, as that webhook did (default false). That lets a manifest
    /// change a sidecar (replace its `VAULT_ADDR`, add `LD_PRELOAD`), so it is off unless
    /// turned on; while off, such annotations are not read and a warning says so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_annotation_env: bool,
}

/// How OpenKruise SidecarSets are read (docs/compat.md).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct KruiseFlags {
    /// Read `shareVolumePolicy: {type: enabled}` (default false): the sidecar container then
    /// also mounts every volume the app containers mount, where they mount it, as OpenKruise
    /// does. That lets a manifest change a sidecar (mount a volume the app writes over the
    /// sidecar's own files), so it is off unless turned on; while off, a warning says so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_share_volume_policy: bool,
    /// Read `shareVolumeDevicePolicy: {type: enabled}` (default false): the sidecar container
    /// then also gets every volume device of the app containers, at its device path, as
    /// OpenKruise does. That lets a manifest change a sidecar (put a block device at a path
    /// of the sidecar's), so it is off unless turned on; while off, a warning says so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_share_volume_device_policy: bool,
}

/// A sidecar definition. Every string may be a minijinja template (`{{ pod.spec… }}`).
// Unknown fields are caught by the schema: serde cannot deny them next to `flatten`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct Sidecar {
    /// Name used by rules and by the `kinject.dev/inject` annotation.
    pub name: String,
    /// What the sidecar is for (shown by `kinject explain`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(flatten)]
    pub body: SidecarBody,
    /// Inject `containers` as native sidecars: into `initContainers` with
    /// `restartPolicy: Always` (Kubernetes ≥ 1.29). The fix for Jobs.
    #[serde(default)]
    pub native: bool,
    /// Where `containers` go: `after` (default) or `before` the pod's own containers.
    #[serde(default)]
    pub position: Option<Position>,
    /// Per-container exceptions to `position` and `initPosition` (by container name).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub positions: std::collections::BTreeMap<String, Position>,
    /// Strings are taken as they are, not as templates (definitions read from other
    /// injectors' formats).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub literal: bool,
    /// Where `initContainers` (and native sidecars) go relative to the pod's own init
    /// containers: `after` by default, `before` by default for native sidecars.
    #[serde(default)]
    pub init_position: Option<Position>,
    /// Who wins when the pod already has a service account: `ifUnset` (default: set it only
    /// when the pod has none or `default`), `never`, or `force`.
    #[serde(default)]
    pub service_account_policy: Option<ServiceAccountPolicy>,
    /// The app containers that receive `volumeMounts`, `env`, `appendArgs` and
    /// `appendCommand` (glob patterns; default: all of them).
    #[serde(default)]
    pub target_containers: Vec<String>,
    /// Also give `volumeMounts` and `env` to the pod's own init containers.
    #[serde(default)]
    pub target_init_containers: bool,
    /// Also give `volumeMounts` and `env` to this sidecar's own containers and init
    /// containers; their own entries win (tumblr's behaviour).
    #[serde(default)]
    pub target_sidecars: bool,
    /// A pod container with the same name as one of this sidecar's containers: `error`
    /// refuses it (default: a manifest must not replace or neutralise a sidecar by naming a
    /// container after it), `override` merges it over the sidecar (Istio's behaviour), which
    /// the report says (`overridden`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_name: Option<SameName>,
    /// How the sidecar's `annotations` meet the pod's own: `keep` the pod's (default),
    /// `overwrite` them, `mergeJson` (both are JSON objects: the sidecar's applied as an RFC
    /// 7386 merge patch, where `null` removes a key; keys sorted, as Go writes them),
    /// `appendList` (comma-separated lists: joined), `appendSortedList` (joined as a sorted
    /// set, as OpenKruise's `sidecarset-injected-list`), `sidecarSetHash` (OpenKruise's hash
    /// map: merged by set name, records of Kruise's older form, a bare hash, converted as
    /// Kruise converts them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotation_policy: Option<AnnotationPolicy>,
    /// Per-annotation exceptions to `annotationPolicy`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub annotation_policies: std::collections::BTreeMap<String, AnnotationPolicy>,
    /// Pod annotations with this prefix become env vars of the sidecar's containers (the
    /// annotation key without the prefix is the name), as the old Expedia injector did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_from_annotations: Option<EnvFromAnnotations>,
    /// Sidecar containers (glob patterns of their names) that also get every volume mount of
    /// the app containers (OpenKruise `shareVolumePolicy`; not those of an app container
    /// whose env has `IS_INJECTED: "true"`, a sidecar OpenKruise injected).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub share_volume_mounts: Vec<String>,
    /// Sidecar containers (glob patterns of their names) that also get every volume device of
    /// the app containers (OpenKruise `shareVolumeDevicePolicy`; not those of an app container
    /// whose env has `IS_INJECTED: "true"`), but at a path the container uses already.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub share_volume_devices: Vec<String>,
    /// Environment variables copied from app containers into sidecar containers (OpenKruise
    /// `transferEnv`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transfer_env: Vec<TransferEnv>,
    /// Resources of sidecar containers (by name) computed from the app containers' when the
    /// sidecar goes into a pod (OpenKruise `resourcesPolicy`): they replace the container's
    /// `resources`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub resources_policies: std::collections::BTreeMap<String, ResourcesPolicy>,
    /// Names of pod containers that are not app containers to the `resourcesPolicies` of the
    /// sidecars in a pod this sidecar goes into, beside the containers every sidecar there
    /// adds (OpenKruise leaves out every name its matched sets give a container or init
    /// container: a HotUpgrade container's `x`, injected as `x-1` and `x-2`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_app_containers: Vec<String>,
    /// Also give `volumeMounts` and `env` to the containers and init containers that earlier
    /// sidecars injected (salesforce applies each mutation to the pod as the previous ones
    /// left it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub target_earlier_sidecars: bool,
    /// Match `volumeMounts` by volume name instead of by `mountPath`: a container that already
    /// mounts a volume of that name gets none of the sidecar's mounts of it (salesforce and
    /// tumblr).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mounts_by_name: bool,
    /// A pod volume with the name of one of the sidecar's volumes is kept as it is and the
    /// sidecar's is not added (salesforce and tumblr). Default: a different definition under
    /// the same name is a conflict.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_pod_volumes: bool,
    /// When this sidecar sets the service account, remove the old account's token mounts
    /// (`/var/run/secrets/kubernetes.io/serviceaccount`) so the new one is mounted (tumblr).
    #[serde(default)]
    pub remove_token_mounts: bool,
    /// The whole definition as one template text rendering to YAML with any of the fields of
    /// the body (`containers`, `volumes`, …); loops and conditionals allowed. Values taken from
    /// the object are quoted on output, so an annotation cannot add fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
}

/// What a sidecar adds to a pod. Also the shape a sidecar `template` renders to.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct SidecarBody {
    /// Containers to add (Kubernetes `Container` objects).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<Container>")]
    pub containers: Vec<Value>,
    /// Init containers to add.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<Container>")]
    pub init_containers: Vec<Value>,
    /// Pod volumes, merged by name (an identical existing volume is fine; a different one
    /// under the same name is a conflict).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<Volume>")]
    pub volumes: Vec<Value>,
    /// Mounts added to the app containers (see `targetContainers`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<VolumeMount>")]
    pub volume_mounts: Vec<Value>,
    /// Environment variables added to the app containers; never overwrites the app's own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<EnvVar>")]
    pub env: Vec<Value>,
    /// Arguments appended to the app containers' `args`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub append_args: Vec<String>,
    /// Words appended to the app containers' `command` (only where one is set).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub append_command: Vec<String>,
    /// Image pull secrets, merged by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<LocalObjectReference>")]
    pub image_pull_secrets: Vec<Value>,
    /// Service account for the pod (the whole pod gets it: see `serviceAccountPolicy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    /// Annotations added to the pod template (the pod's own values win).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    #[schemars(with = "std::collections::BTreeMap<String, String>")]
    pub annotations: Map<String, Value>,
    /// Labels added to the pod template (the pod's own values win).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    #[schemars(with = "std::collections::BTreeMap<String, String>")]
    pub labels: Map<String, Value>,
    /// Host aliases appended to the pod.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<k8s_openapi::api::core::v1::HostAlias>")]
    pub host_aliases: Vec<Value>,
    /// Sets `hostNetwork: true` on the pod.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub host_network: bool,
    /// Sets `hostPID: true` on the pod.
    #[serde(
        default,
        rename = "hostPID",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub host_pid: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SameName {
    Override,
    #[default]
    Error,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum AnnotationPolicy {
    #[default]
    Keep,
    Overwrite,
    MergeJson,
    AppendList,
    AppendSortedList,
    SidecarSetHash,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EnvFromAnnotations {
    pub prefix: String,
    /// Annotation names (without the prefix) that are not env vars.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
}

/// How a sidecar container's resources are computed from the app containers' (OpenKruise
/// `resourcesPolicy`, as its pod webhook computes them).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourcesPolicy {
    /// `sum` or `max`: how the target containers' limits and requests are gathered (a limit
    /// one of them lacks is no limit; a missing request is 0).
    pub target_containers_mode: TargetContainersMode,
    /// The target containers: the pod's containers, and its init containers with
    /// `restartPolicy: Always`, whose names this regular expression matches (unanchored, RE2
    /// syntax; default `.*`); none is an error for the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_containers_name_regex: Option<String>,
    /// The expressions of the resources, each of `cpu` or `memory`, the gathered value
    /// (`max(cpu*50%, 50m)`: `+ - * /`, `max`, `min`, numbers, `50%`, quantities).
    pub resources_expr: ResourcesExpr,
}

/// How a `resourcesPolicy` gathers the target containers' resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TargetContainersMode {
    Sum,
    Max,
}

/// The expressions of a `resourcesPolicy`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourcesExpr {
    /// Limits: left unset where a target container has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<ResourceExprs>,
    /// Requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<ResourceExprs>,
}

/// An expression for `cpu` and one for `memory`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceExprs {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
}

/// Copies an environment variable of an app container into sidecar containers.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransferEnv {
    /// The sidecar containers that receive it (glob patterns; default all of the sidecar's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub containers: Vec<String>,
    /// The app container to copy from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_container_name: Option<String>,
    /// Or: the pod field naming it (`metadata.name`, `metadata.labels['k']`,
    /// `metadata.annotations['k']`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_container_name_from: Option<SourceFrom>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_name: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_names: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SourceFrom {
    pub field_ref: FieldRef,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FieldRef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    pub field_path: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Position {
    Before,
    After,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ServiceAccountPolicy {
    #[default]
    IfUnset,
    Never,
    Force,
}

/// When to inject which sidecars. A rule matches when every field of `match` that is set
/// matches (an empty `match` matches every workload).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Rule {
    /// Shown by the report and `kinject explain`.
    pub name: String,
    /// Which workloads the rule selects.
    #[serde(default, rename = "match")]
    pub matches: Match,
    /// Sidecar names, injected in this order.
    pub inject: Vec<String>,
    /// Workloads that run to completion (Job, CronJob, pods with `restartPolicy` Never or
    /// OnFailure): `skip` non-native sidecars (default), convert them to `native` sidecars,
    /// or `inject` them as they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<JobPolicy>,
    /// This rule's skips, instead of `defaults.skipHostNetwork` and `defaults.skipNamespaces`
    /// (rules read from other injectors' files carry their injector's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skips: Option<Skips>,
    /// The annotation of `match.annotationLists` is a list of requests (Expedia's
    /// `sidecar-injector.expedia.com/inject: "b, a"`): the sidecars of the rules that say so go
    /// in the order the annotation names them, and a name that no such rule selecting the
    /// object lists is reported: a warning (`warn`) or an error for the object (`error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_list: Option<RequestList>,
    /// Sidecars left out of an object this rule injects into, whichever rule selects them
    /// (an OpenKruise canary SidecarSet replaces its `apps.kruise.io/sidecarset-base`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replaces: Vec<String>,
}

/// How a request list reports a name no rule lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum RequestList {
    Warn,
    Error,
}

/// Pods a rule leaves alone whatever it matches.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Skips {
    /// Skip pods with `hostNetwork: true`.
    #[serde(default)]
    pub host_network: bool,
    /// Namespaces never injected.
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// Pods injected already: annotations and the value each has on such a pod, in any
    /// capitalisation (tumblr's `injector.tumblr.com/status: injected`). Skipped as
    /// `already_injected`, whatever else their annotations ask (the injector looks at its
    /// status before a request).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub injected: std::collections::BTreeMap<String, String>,
}

/// What a rule selects. Every field that is set must match.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Match {
    /// Workload kinds (`Deployment`, `CronJob`, a custom kind…).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<String>,
    /// Namespace glob patterns; objects without a namespace take `--namespace`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<String>,
    /// Selector on the labels of the object's namespace (from `Namespace` objects in the input,
    /// or `--namespace-labels ns=k=v`; `kubernetes.io/metadata.name` is always the namespace's
    /// name, as the API server sets it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<LabelSelector>")]
    pub namespace_selector: Option<Value>,
    /// Namespace glob patterns never matched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_namespaces: Vec<String>,
    /// Workload name glob patterns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    /// Selector on the pod template's labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<LabelSelector>")]
    pub label_selector: Option<Value>,
    /// Only workloads whose pods run to completion (`true`: Jobs, CronJobs, `restartPolicy`
    /// Never or OnFailure) or only long-running ones (`false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_to_completion: Option<bool>,
    /// Request annotations: each key must hold a comma-separated list that contains the value
    /// (`sidecar-injector.expedia.com/inject: "a, b"` holds `a`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub annotation_lists: std::collections::BTreeMap<String, String>,
    /// Selector on the annotations (pod template first, then the workload), with label
    /// selector syntax: `{matchExpressions: [{key: x/status, operator: NotIn, values: [injected]}]}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<LabelSelector>")]
    pub annotation_selector: Option<Value>,
    /// Trigger annotations: each key must be present on the pod template (or the workload)
    /// with a value matching the glob pattern (`"*"`: any value).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    #[schemars(with = "std::collections::BTreeMap<String, String>")]
    pub annotations: Map<String, Value>,
    /// `annotations`, `annotationLists` and `annotationSelector` read the pod template's
    /// annotations only, not a workload's own: another injector's webhook sees pods, which a
    /// workload's own annotations never reach (Expedia's). A workload whose own annotations
    /// would match is told so in a warning.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pod_annotations_only: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum JobPolicy {
    Skip,
    Native,
    Inject,
}

/// Settings that apply to every rule.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct Defaults {
    /// Skip pods with `hostNetwork: true` (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_host_network: Option<bool>,
    /// Namespaces never injected (default: kube-system, kube-public, kube-node-lease).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_namespaces: Option<Vec<String>>,
    /// Default for rules' `jobs` (default `skip`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<JobPolicy>,
    /// Sort injected init containers by name, those before the pod's own and those after it
    /// (OpenKruise's order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort_init_containers: Option<bool>,
    /// Let `kinject.dev/inject: "a,b"` request sidecars no rule selects (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_requests: Option<bool>,
}

/// A custom resource kind that holds a pod template.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CustomKind {
    pub kind: String,
    /// `group/version`, or just the group; any when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// JSON pointer to the pod template (`/spec/template`).
    pub pod_template: String,
    /// Its pods run to completion, like a Job's.
    #[serde(default)]
    pub runs_to_completion: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each injector's flags come from the last configuration that sets them; one that sets
    /// another injector's leaves them.
    #[test]
    fn formats_merge_by_injector() {
        let earlier = Formats {
            kruise: Some(KruiseFlags {
                allow_share_volume_policy: true,
                ..KruiseFlags::default()
            }),
            expedia: Some(ExpediaFlags {
                allow_annotation_env: true,
            }),
            ..Formats::default()
        };
        let later = Formats {
            expedia: Some(ExpediaFlags::default()),
            salesforce: Some(SalesforceFlags {
                allow_annotation_config: true,
            }),
            ..Formats::default()
        };
        let merged = earlier.merged(later);
        assert!(merged.kruise_share_volume_policy());
        assert!(!merged.expedia_annotation_env());
        assert!(merged.salesforce_annotation_config());
    }
}
