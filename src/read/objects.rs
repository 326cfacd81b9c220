//! The Kubernetes objects of a document (the items of a `kind: List` one by one) and the labels
//! of the `Namespace` objects among the inputs.

use serde_json::Value;

use crate::json::{Fields, Pointer};
use crate::yaml::parse_document;

use super::input::Input;

/// Labels of the `Namespace` objects among `inputs`, by namespace name.
pub(crate) fn namespace_labels<'a>(
    inputs: impl IntoIterator<Item = &'a Input>,
) -> std::collections::HashMap<String, serde_json::Map<String, Value>> {
    let mut out = std::collections::HashMap::new();
    for input in inputs {
        for doc in &input.documents {
            // A document not read yet is read here only when it may hold a Namespace.
            let read_now;
            let parsed = match doc.parsed.as_deref() {
                Some(Ok(p)) => p,
                Some(Err(_)) => continue,
                None => {
                    // Only a Namespace (or a list) can give labels.
                    let text = input.doc_text(doc);
                    let kind = crate::yaml::top_level_kind(text);
                    if kind.is_some_and(|k| k != "Namespace" && !k.ends_with("List"))
                        || !text.contains("Namespace")
                    {
                        continue;
                    }
                    let Ok(p) = parse_document(text) else {
                        continue;
                    };
                    read_now = p;
                    &read_now
                }
            };
            for (_, o) in objects(&parsed.value) {
                if o.field("kind").and_then(Value::as_str) != Some("Namespace") {
                    continue;
                }
                let Some(name) = o.at_pointer("/metadata/name").and_then(Value::as_str) else {
                    continue;
                };
                let labels = o
                    .at_pointer("/metadata/labels")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                out.insert(name.to_owned(), labels);
            }
        }
    }
    out
}

/// The Kubernetes objects of a document value, with their JSON pointer in the document:
/// the document itself, or each item of a `kind: List` / `*List` (recursively).
pub fn objects(value: &Value) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    collect_objects(value, String::new(), &mut out);
    out
}

fn collect_objects<'v>(value: &'v Value, pointer: String, out: &mut Vec<(String, &'v Value)>) {
    let Value::Object(map) = value else {
        return;
    };
    let is_list = map
        .field("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| k.ends_with("List"));
    match (is_list, map.field("items")) {
        (true, Some(Value::Array(items))) if !items.is_empty() => {
            for (i, item) in items.iter().enumerate() {
                collect_objects(item, format!("{pointer}/items/{i}"), out);
            }
        }
        // A list with no items (or items of no kind a list has) is reported as itself: every
        // document says what became of it.
        _ => out.push((pointer, value)),
    }
}
