//! YAML output: untouched documents byte for byte; touched ones edited in place (comments,
//! order, quoting and indentation kept), then read back and compared with the intended value.

use std::ops::Range;

use serde_json::Value;

use super::RenderError;
use crate::pipeline::{DocResult, FileResult};
use crate::read::{Document, Input};
use crate::yaml::emit::Emitter;
use crate::yaml::style::Style;
use crate::yaml::{NodeKind, Parsed, edit, parse_value, reads_as};

/// The text of a processed input. `notes` says which documents had to be re-emitted whole.
#[derive(Debug, Clone)]
pub struct YamlOutput {
    /// `None` when no document changed: the output is the input's text (not copied).
    made: Option<Made>,
    pub notes: Vec<String>,
}

/// The output of an input some documents of which changed, in pieces: the unchanged text
/// is not copied, only the edited documents' texts are held (packed into blocks that are
/// never reallocated).
#[derive(Debug, Clone, Default)]
struct Made {
    blocks: Vec<String>,
    pieces: Vec<Piece>,
}

#[derive(Debug, Clone)]
enum Piece {
    /// Bytes of the input's text.
    Input(Range<usize>),
    /// Bytes of a block.
    Made(usize, Range<usize>),
}

/// The size of a block of edited texts (a larger text is a block alone).
const BLOCK: usize = 1 << 20;

impl Made {
    fn push(&mut self, text: &str) {
        let fits = self
            .blocks
            .last()
            .is_some_and(|b| b.capacity() - b.len() >= text.len());
        if !fits {
            self.blocks
                .push(String::with_capacity(BLOCK.max(text.len())));
        }
        let i = self.blocks.len() - 1;
        let block = &mut self.blocks[i];
        let start = block.len();
        block.push_str(text);
        self.pieces.push(Piece::Made(i, start..block.len()));
    }

    fn piece<'a>(&'a self, piece: &Piece, input: &'a Input) -> &'a str {
        match piece {
            Piece::Input(r) => &input.text[r.clone()],
            Piece::Made(b, r) => &self.blocks[*b][r.clone()],
        }
    }
}

impl YamlOutput {
    /// The output text of `input` (the input this output was made from), in pieces.
    pub fn pieces<'a>(&'a self, input: &'a Input) -> impl Iterator<Item = &'a str> + 'a {
        let (whole, made) = match &self.made {
            None => (Some(input.text.as_str()), None),
            Some(m) => (None, Some(m)),
        };
        whole.into_iter().chain(
            made.into_iter()
                .flat_map(|m| m.pieces.iter().map(|p| m.piece(p, input))),
        )
    }

    /// The whole output text of `input`, copied only when something changed.
    pub fn text<'a>(&'a self, input: &'a Input) -> std::borrow::Cow<'a, str> {
        match &self.made {
            None => std::borrow::Cow::Borrowed(input.text.as_str()),
            Some(_) => std::borrow::Cow::Owned(self.pieces(input).collect()),
        }
    }

    pub fn into_text(self, input: &Input) -> String {
        self.text(input).into_owned()
    }
}

pub fn render(file: &FileResult) -> Result<YamlOutput, RenderError> {
    if let Some(made) = &file.yaml {
        return made.clone();
    }
    let input = &file.input;
    let mut stream = YamlStream::new();
    for doc in &input.documents {
        let made = match (file.doc(doc.index), doc.value()) {
            (
                Some(
                    d @ DocResult {
                        target: Some(target),
                        ops,
                        ..
                    },
                ),
                Some(parsed),
            ) => Some(edit_document(
                input.doc_text(doc),
                parsed,
                ops,
                target,
                &d.null_as(),
            )),
            _ => None,
        };
        stream.push(input, doc, made);
    }
    stream.finish(input)
}

/// `render`, moving the text made while processing out of `file` instead of copying it (the
/// stream's output is then the only copy).
pub fn render_taking(file: &mut FileResult) -> Result<YamlOutput, RenderError> {
    match file.yaml.take() {
        Some(made) => made,
        None => render(file),
    }
}

/// The YAML output of an input, made document by document in order; the first document
/// that could not be made is the error. Unchanged text is not copied: the output refers to
/// the input's.
pub(crate) struct YamlStream {
    made: Option<Made>,
    /// How much of the input's text is accounted for in `made`.
    copied: usize,
    notes: Vec<String>,
    error: Option<RenderError>,
}

impl YamlStream {
    pub(crate) fn new() -> Self {
        YamlStream {
            made: None,
            copied: 0,
            notes: Vec::new(),
            error: None,
        }
    }

    /// Appends `doc`: its edited text when one was made, else its text as it is.
    pub(crate) fn push(
        &mut self,
        input: &Input,
        doc: &Document,
        made: Option<Result<(String, Option<String>), String>>,
    ) {
        match made {
            None => {}
            Some(Ok((text, note))) => {
                let out = self.made.get_or_insert_with(Made::default);
                // What comes before: unchanged documents, or a byte-order mark.
                if self.copied < doc.range.start {
                    out.pieces.push(Piece::Input(self.copied..doc.range.start));
                }
                out.push(&text);
                self.copied = doc.range.end;
                if let Some(n) = note {
                    self.notes.push(format!(
                        "{} document {}: {n}",
                        input.source.name,
                        doc.index + 1
                    ));
                }
            }
            Some(Err(message)) => {
                self.error.get_or_insert(RenderError {
                    file: input.source.name.clone(),
                    document: doc.index,
                    message,
                });
            }
        }
    }

    pub(crate) fn finish(mut self, input: &Input) -> Result<YamlOutput, RenderError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if let Some(out) = &mut self.made
            && self.copied < input.text.len()
        {
            out.pieces.push(Piece::Input(self.copied..input.text.len()));
        }
        Ok(YamlOutput {
            made: self.made,
            notes: self.notes,
        })
    }
}

/// The document's text with `ops` applied, and a note when it had to be re-emitted whole.
pub(crate) fn edit_document(
    raw: &str,
    parsed: &Parsed,
    ops: &[crate::patch::Op],
    target: &Value,
    null_as: &std::collections::BTreeMap<String, String>,
) -> Result<(String, Option<String>), String> {
    let Some(root) = &parsed.root else {
        return Err("internal error: an edit of an empty document".to_owned());
    };
    let style = Style::detect(raw, Some(root));
    let (text, note) = if is_json(raw, root) {
        (json_document(raw, root.start, root.end, target), None)
    } else {
        match edit::apply(raw, root, ops, target, &style, null_as) {
            Ok(t) => (t, None),
            Err(edit::Unsupported(why)) => (
                reemit(raw, root.start, target, &style),
                Some(format!("re-emitted whole (comments in it are lost): {why}")),
            ),
        }
    };
    // Read back: most edited texts are found to hold the object without building it.
    if reads_as(&text, target) {
        return Ok((text, note));
    }
    match parse_value(&text) {
        Ok(value) if crate::patch::equal(&value, target) => Ok((text, note)),
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
    let json = super::json::pretty(target, &" ".repeat(indent));
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
