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

/// Items of several parts as one pretty JSON array (`serde_json::to_string_pretty` of all of
/// them), written a part at a time.
#[derive(Default)]
pub struct PrettyArray {
    started: bool,
}

impl PrettyArray {
    /// `items`, each after a separator (or the opening bracket).
    pub fn push<T: serde::Serialize>(&mut self, items: &[T], out: &mut String) {
        for item in items {
            out.push_str(if self.started { ",\n" } else { "[\n" });
            self.started = true;
            let json = serde_json::to_string_pretty(item).unwrap_or_default();
            for (i, line) in json.lines().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                out.push_str("  ");
                out.push_str(line);
            }
        }
    }

    /// The closing bracket (the whole array when there were no items).
    pub fn finish(self, out: &mut String) {
        out.push_str(if self.started { "\n]\n" } else { "[]\n" });
    }
}
