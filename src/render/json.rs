//! JSON output: one JSON document per input document (the objects after the operations).

use serde_json::Value;

use crate::pipeline::FileResult;

/// The values of every document with content, in order.
pub fn documents(file: &FileResult) -> Vec<Value> {
    file.input
        .documents
        .iter()
        .filter_map(|doc| {
            let parsed = doc.value()?;
            parsed.root.as_ref()?;
            let result = file.doc(doc.index);
            Some(
                result
                    .and_then(|r| r.target.clone())
                    .unwrap_or_else(|| parsed.value.clone()),
            )
        })
        .collect()
}

/// Pretty JSON documents, one after the other.
pub fn render(values: &[Value]) -> String {
    let mut out = String::new();
    for v in values {
        out.push_str(&serde_json::to_string_pretty(v).unwrap_or_default());
        out.push('\n');
    }
    out
}
