//! What `process` finds: each input's result, its documents' and their objects' (who each
//! object is, its outcome, its operations).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::diagnostic::Located;
use crate::inject::{InjectError, Outcome};
use crate::json::Pointer;
use crate::json::patch::Op;
use crate::read::Input;

/// Who an object is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Identity {
    pub api_version: String,
    pub kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    pub name: String,
    /// `metadata.generateName`, for an object the API server names when it creates it (a
    /// Workflow's `steps-`, a Job's pods).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub generate_name: String,
}

impl Identity {
    pub fn of(object: &Value) -> Self {
        let s = |p: &str| {
            object
                .at_pointer(p)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        Identity {
            api_version: s("/apiVersion"),
            kind: s("/kind"),
            namespace: s("/metadata/namespace"),
            name: s("/metadata/name"),
            generate_name: s("/metadata/generateName"),
        }
    }

    /// `deployment/web` (kubectl's short form), with the namespace when known.
    pub fn short(&self) -> String {
        let kind = if self.kind.is_empty() {
            "object".to_owned()
        } else {
            self.kind.to_lowercase()
        };
        let generated;
        let name = if !self.name.is_empty() {
            &self.name
        } else if !self.generate_name.is_empty() {
            generated = format!("{}<generated>", self.generate_name);
            &generated
        } else {
            "<unnamed>"
        };
        if self.namespace.is_empty() {
            format!("{kind}/{name}")
        } else {
            format!("{kind}/{name} -n {}", self.namespace)
        }
    }
}

/// One object's result.
#[derive(Debug)]
pub struct ObjectResult {
    /// JSON pointer of the object in its document (`""`, or `/items/3` in a List).
    pub pointer: String,
    pub identity: Identity,
    /// Line of the object in its input.
    pub line: usize,
    /// Why the object could not be injected, when it could not (its located diagnostic is in
    /// `FileResult::errors`).
    pub outcome: Result<Outcome, InjectError>,
    /// Operations on the object (relative to the object), when the sink keeps values
    /// (`Sink::KEEPS_VALUES`; a sink that makes every document's output has them until then).
    pub ops: Vec<Op>,
}

/// One document's result.
#[derive(Debug)]
pub struct DocResult {
    pub index: usize,
    pub objects: Vec<ObjectResult>,
    /// The document's value after the operations, when any changed it and the sink keeps
    /// values (`Sink::KEEPS_VALUES`).
    /// Boxed: most documents have none, and a result is kept for every document.
    pub target: Option<Box<Value>>,
    /// Operations on the document (object operations with their pointer in front).
    pub ops: Vec<Op>,
}

impl DocResult {
    /// How the nulls the operations write were written before kinject filled them, where
    /// not empty, by pointer of the document.
    pub(crate) fn null_as(&self) -> BTreeMap<String, String> {
        null_as(&self.objects)
    }
}

/// How the nulls the objects' operations write were written before kinject filled them,
/// where not empty, by pointer of the document.
pub(crate) fn null_as(objects: &[ObjectResult]) -> BTreeMap<String, String> {
    objects
        .iter()
        .filter_map(|o| Some((&o.pointer, &o.outcome.as_ref().ok()?.null_as)))
        .flat_map(|(at, by)| by.iter().map(move |(p, s)| (format!("{at}{p}"), s.clone())))
        .collect()
}

/// An input's result: the input itself, its documents, and its errors.
#[derive(Debug)]
pub struct FileResult {
    pub input: Input,
    pub docs: Vec<DocResult>,
    pub errors: Vec<Located>,
    /// Duplicate keys and similar findings, already located.
    pub warnings: Vec<String>,
}

impl FileResult {
    /// The result of document `index` (documents that did not parse have none).
    pub fn doc(&self, index: usize) -> Option<&DocResult> {
        // Results are in document order.
        self.docs
            .binary_search_by_key(&index, |d| d.index)
            .ok()
            .map(|i| &self.docs[i])
    }
}
