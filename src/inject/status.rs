//! The `kinject.dev/status` annotation: exactly what each sidecar added to a pod template,
//! so re-injection can replace it, `uninject` can remove it, and hand edits can be noticed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::json::{Fields, Pointer};

pub const STATUS_ANNOTATION: &str = "kinject.dev/status";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Status {
    pub version: u32,
    pub sidecars: Vec<Record>,
    /// Pod-template pointers created to hold the status annotation itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created: Vec<String>,
    /// Of all that was created, what was written as null before (`annotations:` alone): made
    /// null again, not removed, when left empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub null: Vec<String>,
    /// Of those, the ones written other than empty, and how (`null`, `~`): written so again.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub null_as: BTreeMap<String, String>,
}

/// What one sidecar added.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Record {
    pub name: String,
    /// Hash of the rendered definition: a change means the sidecar is upgraded.
    pub hash: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub containers: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub init_containers: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_pull_secrets: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub app_containers: Vec<AppRecord>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub annotations: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    /// Set when the sidecar set the service account: the value it replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<Previous>,
    /// The pod's own same-name containers, merged over the sidecar's (user overrides).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub overrides: Map<String, Value>,
    /// Annotations this sidecar changed (overwrite, merge, append), with their earlier value.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub replaced_annotations: Map<String, Value>,
    /// Host aliases appended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_aliases: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_network: Option<PreviousBool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_pid: Option<PreviousBool>,
    /// Pod-template pointers this sidecar created (removed again when left empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created: Vec<String>,
    /// Of those, the ones that were null before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub null: Vec<String>,
    /// Of those, the ones written other than empty, and how.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub null_as: BTreeMap<String, String>,
}

/// What a sidecar added to one of the pod's own containers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AppRecord {
    pub name: String,
    /// Mount paths.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volume_mounts: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// Mounts this sidecar removed (old service account tokens), with their index.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed_mounts: Vec<RemovedMount>,
    /// Fields of the container this sidecar created (`volumeMounts`, `env`, `args`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created: Vec<String>,
    /// Of those, the ones that were null before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub null: Vec<String>,
    /// Of those, the ones written other than empty, and how.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub null_as: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RemovedMount {
    pub index: usize,
    pub mount: Value,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PreviousBool {
    #[serde(default)]
    pub previous: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Previous {
    #[serde(default)]
    pub previous: Option<String>,
}

impl Status {
    /// Reads the status of a pod template; `Ok(None)` when it has none.
    pub fn read(pod: &Value) -> Result<Option<Status>, String> {
        let Some(raw) = pod
            .at_pointer("/metadata/annotations")
            .and_then(|a| a.field(STATUS_ANNOTATION))
        else {
            return Ok(None);
        };
        let text = raw
            .as_str()
            .ok_or("the status annotation is not a string")?;
        serde_json::from_str(text)
            .map(Some)
            .map_err(|e| format!("the `{STATUS_ANNOTATION}` annotation is not kinject's: {e}"))
    }

    pub fn to_annotation(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}
