//! YAML output: untouched documents byte for byte; touched ones edited in place (comments,
//! order, quoting and indentation kept), then read back and compared with the intended value.

use serde_json::Value;

use super::RenderError;
use crate::pipeline::{DocResult, FileResult};
use crate::yaml::emit::Emitter;
use crate::yaml::style::Style;
use crate::yaml::{NodeKind, Parsed, edit, parse_document};

/// The text of a processed input. `notes` says which documents had to be re-emitted whole.
#[derive(Debug, Clone)]
pub struct YamlOutput {
    pub text: String,
    pub notes: Vec<String>,
}

pub fn render(file: &FileResult) -> Result<YamlOutput, RenderError> {
    if let Some(made) = &file.yaml {
        return made.clone();
    }
    render_from(file, |index| file.doc(index).and_then(|d| d.text.clone()))
}

/// `render`, moving the text made while processing out of `file` instead of copying it (the
/// stream's output is then the only copy).
pub fn render_taking(file: &mut FileResult) -> Result<YamlOutput, RenderError> {
    match file.yaml.take() {
        Some(made) => made,
        None => render(file),
    }
}

/// The text of `file`, with `made(index)` the edited text of a document when it was made
/// while processing (asked for in document order).
fn render_from(
    file: &FileResult,
    mut made: impl FnMut(usize) -> Option<Result<(String, Option<String>), String>>,
) -> Result<YamlOutput, RenderError> {
    let input = &file.input;
    let mut text = String::with_capacity(input.text.len() + input.text.len() / 8 + 1024);
    let mut notes = Vec::new();
    if let Some(first) = input.documents.first() {
        text.push_str(&input.text[..first.range.start]);
    }
    for doc in &input.documents {
        let raw = input.doc_text(doc);
        let result = file.doc(doc.index);
        let made = match (made(doc.index), result, doc.value()) {
            (Some(t), ..) => Some(t),
            (
                None,
                Some(DocResult {
                    target: Some(target),
                    ops,
                    ..
                }),
                Some(parsed),
            ) => Some(edit_document(raw, parsed, ops, target)),
            _ => None,
        };
        match made {
            Some(made) => {
                let (edited, note) = made.map_err(|message| RenderError {
                    file: input.source.name.clone(),
                    document: doc.index,
                    message,
                })?;
                if let Some(n) = note {
                    notes.push(format!(
                        "{} document {}: {n}",
                        input.source.name,
                        doc.index + 1
                    ));
                }
                text.push_str(&edited);
            }
            None => text.push_str(raw),
        }
    }
    Ok(YamlOutput { text, notes })
}

/// The document's text with `ops` applied, and a note when it had to be re-emitted whole.
pub(crate) fn edit_document(
    raw: &str,
    parsed: &Parsed,
    ops: &[crate::patch::Op],
    target: &Value,
) -> Result<(String, Option<String>), String> {
    let Some(root) = &parsed.root else {
        return Err("internal error: an edit of an empty document".to_owned());
    };
    let style = Style::detect(raw, Some(root));
    let (text, note) = if is_json(raw, root) {
        (json_document(raw, root.start, root.end, target), None)
    } else {
        match edit::apply(raw, root, ops, target, &style) {
            Ok(t) => (t, None),
            Err(edit::Unsupported(why)) => (
                reemit(raw, root.start, target, &style),
                Some(format!("re-emitted whole (comments in it are lost): {why}")),
            ),
        }
    };
    match parse_document(&text) {
        Ok(p) if &p.value == target => Ok((text, note)),
        Ok(_) if std::env::var_os("KINJECT_DEBUG").is_some() => Err(format!("internal error: mismatch; edited text:\n{text}")),
        Ok(_) => Err("internal error: the edited document reads back differently from the injected object; nothing was written".to_owned()),
        Err(e) => Err(format!(
            "internal error: the edited document is not valid YAML ({}); nothing was written",
            e.message
        )),
    }
}

fn is_json(raw: &str, root: &crate::yaml::Node) -> bool {
    matches!(root.kind, NodeKind::Map { flow: true, .. })
        && raw[root.start..].starts_with('{')
        && serde_json::from_str::<serde::de::IgnoredAny>(&raw[root.start..root.end]).is_ok()
}

/// A JSON document re-printed with its own indentation.
fn json_document(raw: &str, start: usize, end: usize, target: &Value) -> String {
    let body = &raw[start..end];
    let indent = body
        .lines()
        .nth(1)
        .map_or(2, |l| l.len() - l.trim_start_matches(' ').len())
        .clamp(1, 8);
    let pad = " ".repeat(indent);
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(pad.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    let _ = serde::Serialize::serialize(target, &mut ser);
    let json = String::from_utf8(out).unwrap_or_default();
    let newline = if raw.contains("\r\n") { "\r\n" } else { "\n" };
    let json = if newline == "\r\n" {
        json.replace('\n', "\r\n")
    } else {
        json
    };
    format!("{}{json}{}", &raw[..start], &raw[end..])
}

/// The document's leading lines (marker, comments) and then `target` emitted afresh.
fn reemit(raw: &str, root_start: usize, target: &Value, style: &Style) -> String {
    let prefix_end = raw[..root_start].rfind('\n').map_or(0, |i| i + 1);
    let mut e = Emitter::new(style);
    e.document(target);
    format!("{}{}", &raw[..prefix_end], e.out)
}
