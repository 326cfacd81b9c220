//! JSON output: one JSON document per input document (the objects after the operations), or
//! all of them as the items of one kubectl `List`.

use serde_json::Value;

use crate::pipeline::FileResult;

/// The values of every document with content, in order.
pub(crate) fn documents(file: &FileResult) -> Vec<Value> {
    file.input
        .documents
        .iter()
        .filter_map(|doc| {
            let parsed = doc.value()?;
            parsed.root.as_ref()?;
            let result = file.doc(doc.index);
            Some(
                result
                    .and_then(|r| r.target.as_deref().cloned())
                    .unwrap_or_else(|| parsed.value.clone()),
            )
        })
        .collect()
}

/// Pretty JSON documents, one after the other (YAML-safe: `pretty`).
pub(crate) fn render(values: &[Value]) -> String {
    let mut out = String::new();
    for v in values {
        out.push_str(&pretty(v, "  "));
        out.push('\n');
    }
    out
}

/// `value` as pretty JSON indented by `indent`, that YAML readers read as the same value:
/// besides what JSON escapes, the characters YAML does not allow raw (DEL, C1 controls,
/// U+FEFF, U+FFFE, U+FFFF) and those YAML 1.1 readers such as kubectl's take for line
/// breaks (NEL, U+2028, U+2029) are written as `\u` escapes.
pub(crate) fn pretty<T: serde::Serialize + ?Sized>(value: &T, indent: &str) -> String {
    let mut out = Vec::new();
    let fmt = YamlSafe(serde_json::ser::PrettyFormatter::with_indent(
        indent.as_bytes(),
    ));
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    let _ = serde::Serialize::serialize(value, &mut ser);
    String::from_utf8(out).unwrap_or_default()
}

struct YamlSafe<'a>(serde_json::ser::PrettyFormatter<'a>);

fn yaml_unsafe(c: char) -> bool {
    matches!(
        c,
        '\u{7F}'..='\u{9F}' | '\u{2028}' | '\u{2029}' | '\u{FEFF}' | '\u{FFFE}' | '\u{FFFF}'
    )
}

impl serde_json::ser::Formatter for YamlSafe<'_> {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut rest = fragment;
        while let Some(i) = rest.find(yaml_unsafe) {
            let c = rest[i..].chars().next().unwrap_or_default();
            writer.write_all(&rest.as_bytes()[..i])?;
            write!(writer, "\\u{:04x}", u32::from(c))?;
            rest = &rest[i + c.len_utf8()..];
        }
        writer.write_all(rest.as_bytes())
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// Items of several parts as one pretty JSON array (`serde_json::to_string_pretty` of all of
/// them), written a part at a time.
#[derive(Default)]
pub(crate) struct PrettyArray {
    started: bool,
}

impl PrettyArray {
    /// `items`, each after a separator (or the opening bracket).
    pub(crate) fn push<T: serde::Serialize>(&mut self, items: &[T], out: &mut String) {
        for item in items {
            out.push_str(if self.started { ",\n" } else { "[\n" });
            self.started = true;
            push_indented(item, "  ", out);
        }
    }

    /// The closing bracket (the whole array when there were no items).
    pub(crate) fn finish(self, out: &mut String) {
        out.push_str(if self.started { "\n]\n" } else { "[]\n" });
    }
}

/// `item` as pretty JSON, each line after `indent` (none after the last line).
fn push_indented<T: serde::Serialize>(item: &T, indent: &str, out: &mut String) {
    let json = pretty(item, "  ");
    for (i, line) in json.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(indent);
        out.push_str(line);
    }
}

/// Values of several parts as the items of one kubectl `List` (`-o json-list`), as
/// `kubectl get -o json` prints several objects: `{"apiVersion": "v1", "items": […], "kind":
/// "List", "metadata": {"resourceVersion": ""}}`, keys in its order; written a part at a time.
#[derive(Default)]
pub(crate) struct PrettyList {
    started: bool,
}

/// What comes before the first item.
const LIST_START: &str = "{\n  \"apiVersion\": \"v1\",\n  \"items\": [";

/// What comes after the items.
const LIST_END: &str =
    "],\n  \"kind\": \"List\",\n  \"metadata\": {\n    \"resourceVersion\": \"\"\n  }\n}\n";

impl PrettyList {
    /// `items`, each after a separator (or the list's start).
    pub(crate) fn push(&mut self, items: &[Value], out: &mut String) {
        // An empty document (`---` with nothing after it) is no object: kubectl skips it too.
        for item in items.iter().filter(|v| !v.is_null()) {
            if !self.started {
                out.push_str(LIST_START);
            }
            out.push_str(if self.started { ",\n" } else { "\n" });
            self.started = true;
            push_indented(item, "    ", out);
        }
    }

    /// The rest of the list (the whole list when there were no items).
    pub(crate) fn finish(self, out: &mut String) {
        if self.started {
            out.push_str("\n  ");
        } else {
            out.push_str(LIST_START);
        }
        out.push_str(LIST_END);
    }
}

/// `values` as one kubectl `List` (`PrettyList`).
pub(crate) fn list(values: &[Value]) -> String {
    let mut out = String::new();
    let mut list = PrettyList::default();
    list.push(values, &mut out);
    list.finish(&mut out);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_list_printed_in_parts_is_kubectls_list_printed_whole() {
        let items: Vec<serde_json::Value> = (0..4)
            .map(|i| serde_json::json!({"kind": "Deployment", "n": i, "spec": {"a": [i, {}]}}))
            .collect();
        let mut with_empty = items.clone();
        with_empty.insert(2, serde_json::Value::Null);
        for split in 0..=with_empty.len() {
            let mut list = super::PrettyList::default();
            let mut out = String::new();
            list.push(&with_empty[..split], &mut out);
            list.push(&with_empty[split..], &mut out);
            list.finish(&mut out);
            let whole = serde_json::json!({
                "apiVersion": "v1",
                "items": items,
                "kind": "List",
                "metadata": {"resourceVersion": ""},
            });
            let whole = serde_json::to_string_pretty(&whole).expect("JSON");
            assert_eq!(out, format!("{whole}\n"), "split at {split}");
        }
        let empty = serde_json::json!({"apiVersion": "v1", "items": [], "kind": "List", "metadata": {"resourceVersion": ""}});
        let empty = serde_json::to_string_pretty(&empty).expect("JSON");
        assert_eq!(super::list(&[]), format!("{empty}\n"));
    }

    #[test]
    fn an_array_printed_in_parts_is_the_array_printed_whole() {
        let items: Vec<serde_json::Value> = (0..5)
            .map(|i| serde_json::json!({"n": i, "list": [i, "x"], "empty": {}}))
            .collect();
        for split in 0..=items.len() {
            let mut array = super::PrettyArray::default();
            let mut out = String::new();
            array.push(&items[..split], &mut out);
            array.push(&items[split..], &mut out);
            array.finish(&mut out);
            let whole = serde_json::to_string_pretty(&items).expect("JSON");
            assert_eq!(out, format!("{whole}\n"), "split at {split}");
        }
        let mut out = String::new();
        super::PrettyArray::default().finish(&mut out);
        assert_eq!(out, "[]\n");
    }

    #[test]
    fn pretty_json_reads_back_as_yaml() {
        let value = serde_json::json!({"a": "x\u{7f}\u{85}\u{2028}\u{2029}\u{feff}\u{fffe}\u{ffff}é\u{1b}"});
        let text = super::pretty(&value, "  ");
        assert!(
            text.contains(r"\u007f\u0085\u2028\u2029\ufeff\ufffe\uffffé\u001b"),
            "{text}"
        );
        let input = crate::read::from_bytes(crate::read::Source::stdin(), text.as_bytes())
            .expect("YAML readers read it");
        assert_eq!(input.documents[0].value().expect("parsed").value, value);
    }
}
