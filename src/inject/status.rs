//! The `kinject.dev/status` annotation: exactly what each sidecar added to a pod template,
//! so re-injection can replace it, `uninject` can remove it, and hand edits can be noticed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::pod;
use crate::json::{Fields, Pointer};

pub(crate) const STATUS_ANNOTATION: &str = "kinject.dev/status";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Status {
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
pub(crate) struct Record {
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
pub(crate) struct AppRecord {
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
pub(crate) struct RemovedMount {
    pub index: usize,
    pub mount: Value,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct PreviousBool {
    #[serde(default)]
    pub previous: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Previous {
    #[serde(default)]
    pub previous: Option<String>,
}

impl Status {
    /// Reads the status of a pod template; `Ok(None)` when it has none.
    pub(crate) fn read(pod: &Value) -> Result<Option<Status>, String> {
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

    pub(crate) fn to_annotation(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Pointer of the first mapping under `value` whose annotations hold kinject's status.
pub(super) fn status_holder(value: &Value, pointer: String) -> Option<String> {
    match value {
        Value::Object(m) => {
            let has_status = m
                .field("metadata")
                .and_then(|md| md.field("annotations"))
                .and_then(|a| a.field(STATUS_ANNOTATION))
                .is_some();
            if has_status && m.field("spec").is_some_and(Value::is_object) {
                return Some(pointer);
            }
            m.iter()
                .find_map(|(k, v)| status_holder(v, crate::json::push(&pointer, k)))
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| status_holder(v, crate::json::push(&pointer, &i.to_string()))),
        _ => None,
    }
}

/// Pod-template pointers as pointers of the object, whose pod template is at `prefix`.
pub(super) fn within(
    prefix: &str,
    by_pointer: BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    by_pointer
        .into_iter()
        .map(|(p, s)| (format!("{prefix}{p}"), s))
        .collect()
}

/// How the nulls of the pod template `before` this run's sidecars were written, where that
/// was not empty: as recorded for those an earlier run's sidecars filled (and `strip` made
/// null again), else as the object's text writes them.
pub(super) struct Spelling<'a> {
    /// From `strip`, by pointer of `before`.
    pub(super) respelled: &'a BTreeMap<String, String>,
    pub(super) before: &'a Value,
    /// The pod template as the text holds it (with an earlier run's sidecars).
    pub(super) text: &'a Value,
    /// Where the pod template is in the object.
    pub(super) prefix: &'a str,
    pub(super) null_text: &'a dyn Fn(&str) -> Option<String>,
    /// Where the containers of `before` and of `text` are, made when first asked.
    pub(super) containers: [std::cell::OnceCell<pod::ContainerIndex>; 2],
}

impl Spelling<'_> {
    fn before_containers(&self) -> &pod::ContainerIndex {
        self.containers[0].get_or_init(|| pod::ContainerIndex::of(self.before))
    }

    fn text_containers(&self) -> &pod::ContainerIndex {
        self.containers[1].get_or_init(|| pod::ContainerIndex::of(self.text))
    }

    /// Of the pod-template pointers `null`, how each was written where not empty.
    fn pod(&self, null: &[String]) -> BTreeMap<String, String> {
        null.iter()
            .filter_map(|p| {
                let s = self.respelled.get(p).cloned();
                let s = s.or_else(|| (self.null_text)(&format!("{}{p}", self.prefix)))?;
                Some((p.clone(), s))
            })
            .collect()
    }

    /// Of the fields `null` of the app container `name`, how each was written where not
    /// empty.
    fn app(&self, name: &str, null: &[String]) -> BTreeMap<String, String> {
        null.iter()
            .filter_map(|f| {
                let s = self
                    .before_containers()
                    .field(self.before, name, f)
                    .and_then(|p| self.respelled.get(&p).cloned());
                let s = s.or_else(|| {
                    let p = self.text_containers().field(self.text, name, f)?;
                    (self.null_text)(&format!("{}{p}", self.prefix))
                })?;
                Some((f.clone(), s))
            })
            .collect()
    }
}

/// Writes the status annotation for `records` (or leaves none when there are none).
pub(super) fn write_status(
    pod: &mut Value,
    kept: Vec<Record>,
    records: Vec<Record>,
    spelling: &Spelling,
) {
    let before = spelling.before;
    let sidecars: Vec<Record> = kept.into_iter().chain(records).collect();
    if sidecars.is_empty() {
        return;
    }
    let Value::Object(pod) = pod else { return };
    let mut status = Status {
        version: 1,
        sidecars,
        created: Vec::new(),
        null: Vec::new(),
        null_as: BTreeMap::new(),
    };
    // A null container list becomes one: it is null again once its sidecars are gone.
    if before
        .at_pointer("/spec/containers")
        .is_some_and(Value::is_null)
    {
        status.created.push("/spec/containers".to_owned());
    }
    if !matches!(pod.field("metadata"), Some(Value::Object(_))) {
        pod.shift_insert(0, "metadata".to_owned(), Value::Object(Map::new()));
        status.created.push("/metadata".to_owned());
    }
    let Some(Value::Object(metadata)) = pod.field_mut("metadata") else {
        return;
    };
    if !matches!(metadata.field("annotations"), Some(Value::Object(_))) {
        metadata.insert("annotations".to_owned(), Value::Object(Map::new()));
        status.created.push("/metadata/annotations".to_owned());
    }
    status.null = nulls(before, &status.created);
    status.null_as = spelling.pod(&status.null);
    if let Some(Value::Object(a)) = metadata.field_mut("annotations") {
        a.insert(
            STATUS_ANNOTATION.to_owned(),
            Value::String(status.to_annotation()),
        );
    }
}

/// Of the pod-template pointers `created`, those that were null in the pod `before`.
fn nulls(before: &Value, created: &[String]) -> Vec<String> {
    created
        .iter()
        .filter(|p| before.at_pointer(p).is_some_and(Value::is_null))
        .cloned()
        .collect()
}

/// Notes in each record which of the fields it created were null in the pod before, and how
/// they were written.
pub(super) fn note_nulls(spelling: &Spelling, records: &mut [Record]) {
    let before = spelling.before;
    for r in records {
        r.null = nulls(before, &r.created);
        r.null_as = spelling.pod(&r.null);
        for app in &mut r.app_containers {
            let container = spelling
                .before_containers()
                .at(before, &app.name)
                .and_then(|(list, i)| before.at_pointer(list)?.get(i));
            if let Some(Value::Object(c)) = container {
                app.null = app
                    .created
                    .iter()
                    .filter(|f| c.field(f.as_str()).is_some_and(Value::is_null))
                    .cloned()
                    .collect();
                app.null_as = spelling.app(&app.name, &app.null);
            }
        }
    }
}
