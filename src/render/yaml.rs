//! YAML output: untouched documents byte for byte; touched ones edited in place (comments,
//! order, quoting and indentation kept), then read back and compared with the intended value.

use std::ops::Range;

use serde_json::Value;

use super::RenderError;
use crate::diagnostic::Located;
use crate::pipeline::{Changed, DocResult, FileResult, Sink};
use crate::read::{Document, Input};
use crate::yaml::edit::{self, Splice};
use crate::yaml::emit::Emitter;
use crate::yaml::style::Style;
use crate::yaml::{NodeKind, Parsed, parse_value, reads_as};

/// The text of a processed input. `notes` says which documents had to be re-emitted whole.
#[derive(Debug, Clone)]
pub struct YamlOutput {
    /// `None` when no document changed: the output is the input's text (not copied).
    made: Option<Made>,
    pub notes: Vec<String>,
}

/// The output of an input some documents of which changed, in pieces: the unchanged text
/// is not copied, only what the edits wrote is held (packed into blocks that are never
/// reallocated).
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

/// The size of a block of edited texts (a larger text is a block alone). Small enough to be
/// carved from memory the allocator has already touched: a 1 MiB block was fresh memory the
/// system had to fault in on the command's thread while the cores waited, 0.3 ms of a 1k run
/// (docs/performance.md).
const BLOCK: usize = 64 << 10;

/// Unchanged text between two edits this short is copied with them rather than referred to
/// (a piece of the input costs as much as this many bytes).
const SHORT: usize = 32;

impl Made {
    fn push(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
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
        let end = block.len();
        // Right after the last piece: the same piece, longer.
        match self.pieces.last_mut() {
            Some(Piece::Made(b, r)) if *b == i && r.end == start => r.end = end,
            _ => self.pieces.push(Piece::Made(i, start..end)),
        }
    }

    /// Appends `range` of the input's `text`: referred to, or copied when short and right
    /// after an edit.
    fn input(&mut self, text: &str, range: Range<usize>) {
        if range.len() <= SHORT && matches!(self.pieces.last(), Some(Piece::Made(..))) {
            self.push(&text[range]);
        } else if !range.is_empty() {
            self.pieces.push(Piece::Input(range));
        }
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

/// The YAML output of a processed input the results of which kept values
/// (`pipeline::Values`); `YamlStream` makes it while processing.
pub fn render(file: &FileResult) -> Result<YamlOutput, RenderError> {
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
        stream.push(input, doc, made.map(EditedDocument));
    }
    stream.finish(input)
}

/// The YAML output of an input, made document by document in order, as the pipeline's sink:
/// each document that changed is edited on the worker that processed it and read back, and
/// nothing else is kept of it. The first document that could not be made is the error.
/// Unchanged text is not copied: the output refers to the input's.
#[derive(Default)]
pub(crate) struct YamlStream {
    made: Option<Made>,
    /// How much of the input's text is accounted for in `made`.
    copied: usize,
    notes: Vec<String>,
    error: Option<RenderError>,
}

/// What the stream makes of a document that changed: its edits (and a note when it had to be
/// re-emitted whole), or why they could not be made.
pub(crate) struct EditedDocument(Result<(Edited, Option<String>), String>);

impl YamlStream {
    pub(crate) fn new() -> Self {
        Self::default()
    }
}

impl Sink for YamlStream {
    type Made = EditedDocument;
    type Output = Result<YamlOutput, RenderError>;
    const KEEPS_VALUES: bool = false;

    fn make(
        &self,
        changed: Changed<'_>,
        target: Box<Value>,
        _: &mut Vec<Located>,
    ) -> (Option<EditedDocument>, Option<Box<Value>>) {
        let Changed {
            input,
            doc,
            parsed,
            ops,
            ..
        } = changed;
        let text = input.doc_text(doc);
        let made = edit_document(text, parsed, ops, &target, &changed.null_as());
        (Some(EditedDocument(made)), None)
    }

    /// Appends `doc`: its edits when it was edited, else its text as it is.
    fn push(&mut self, input: &Input, doc: &Document, made: Option<EditedDocument>) {
        match made.map(|m| m.0) {
            None => {}
            Some(Ok((edited, note))) => {
                let out = self.made.get_or_insert_with(Made::default);
                // What comes before each edit: unchanged text (of this document, of those
                // before it, or a byte-order mark) is referred to.
                let at = doc.range.start;
                match edited {
                    Edited::Splices(splices) => {
                        for s in splices {
                            out.input(&input.text, self.copied..at + s.start);
                            out.push(&s.text);
                            self.copied = at + s.end;
                        }
                    }
                    Edited::Whole(text) => {
                        out.input(&input.text, self.copied..at);
                        out.push(&text);
                        self.copied = doc.range.end;
                    }
                }
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

    fn finish(mut self, input: &Input) -> Result<YamlOutput, RenderError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if let Some(out) = &mut self.made {
            out.input(&input.text, self.copied..input.text.len());
        }
        Ok(YamlOutput {
            made: self.made,
            notes: self.notes,
        })
    }
}

/// A document's edited text.
#[derive(Debug)]
pub(crate) enum Edited {
    /// Its text with these splices (`edit::apply`'s: in order, none overlapping).
    Splices(Vec<Splice>),
    /// A new text.
    Whole(String),
}

/// The document's text with `ops` applied, and a note when it had to be re-emitted whole.
pub(crate) fn edit_document(
    raw: &str,
    parsed: &Parsed,
    ops: &[crate::json::patch::Op],
    target: &Value,
    null_as: &std::collections::BTreeMap<String, String>,
) -> Result<(Edited, Option<String>), String> {
    let Some(root) = &parsed.root else {
        return Err("internal error: an edit of an empty document".to_owned());
    };
    let style = Style::detect(raw, Some(root));
    let (edited, note) = if is_json(raw, root) {
        let text = super::json_edit::edit(raw, root, &parsed.value, target);
        (Edited::Whole(text), None)
    } else {
        match edit::apply(raw, root, ops, target, &style, null_as) {
            Ok(splices) => (Edited::Splices(splices), None),
            Err(edit::Unsupported(why)) => (
                Edited::Whole(reemit(raw, root.start, target, &style)),
                Some(format!("re-emitted whole (comments in it are lost): {why}")),
            ),
        }
    };
    // Read back: most edited texts are found to hold the object without building it. The
    // text of splices is made for this only: the output refers to the input around them.
    let spliced;
    let text = match &edited {
        Edited::Splices(splices) => {
            spliced = edit::spliced(raw, splices);
            &spliced
        }
        Edited::Whole(text) => text,
    };
    if reads_as(text, target) {
        return Ok((edited, note));
    }
    match parse_value(text) {
        Ok(value) if crate::json::patch::equal(&value, target) => Ok((edited, note)),
        Ok(_) if std::env::var_os("KINJECT_DEBUG").is_some() => Err(format!("internal error: mismatch; edited \
            text:\n{text}")),
        Ok(_) => Err("internal error: the edited document reads back differently from the injected object; nothing was \
            written".to_owned()),
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

/// The document's leading lines (marker, comments) and then `target` emitted afresh.
fn reemit(raw: &str, root_start: usize, target: &Value, style: &Style) -> String {
    let prefix_end = raw[..root_start].rfind('\n').map_or(0, |i| i + 1);
    let mut e = Emitter::new(style);
    e.document(target);
    format!("{}{}", &raw[..prefix_end], e.out)
}

#[cfg(test)]
mod tests {
    use super::{Edited, EditedDocument, Piece, Splice, YamlStream};
    use crate::pipeline::Sink;
    use crate::read::{Source, from_bytes};

    fn splice(start: usize, end: usize, text: &str) -> Splice {
        Splice {
            start,
            end,
            text: text.to_owned(),
        }
    }

    /// Edits are held, the text around them is referred to (or copied when it is short),
    /// and the pieces make the edited stream.
    #[test]
    fn splices_become_pieces_around_the_input() {
        let long = "x".repeat(100);
        let text = format!("a: 1\nb: {long}\nc: 3\n---\nd: 4\n---\ne: 5\n");
        let input = from_bytes(Source::stdin(), text.as_bytes()).unwrap();
        let [first, second, third] = &input.documents[..] else {
            panic!("three documents: {:?}", input.documents);
        };
        let c = input.doc_text(first).find("c: 3").unwrap();
        let mut stream = YamlStream::new();
        let edits = vec![
            // Replaces `1`; the next edit is a long way off.
            splice(3, 4, "2"),
            // Inserts before `c`, deletes `c: 3\n`.
            splice(c, c, "z: 0\n"),
            splice(c, c + 5, ""),
        ];
        let edited = EditedDocument(Ok((Edited::Splices(edits), None)));
        stream.push(&input, first, Some(edited));
        stream.push(&input, second, None);
        let e = input.doc_text(third).find('5').unwrap();
        let whole = Edited::Splices(vec![splice(e, e + 1, "6")]);
        stream.push(&input, third, Some(EditedDocument(Ok((whole, None)))));
        let out = stream.finish(&input).unwrap();
        assert_eq!(
            out.text(&input),
            format!("a: 2\nb: {long}\nz: 0\n---\nd: 4\n---\ne: 6\n")
        );
        let made = out.made.as_ref().unwrap();
        // The long line and the unchanged document are referred to; what is between
        // the last two edits is short and was copied with them.
        let input_pieces: Vec<_> = made
            .pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Input(r) => Some(&text[r.clone()]),
                Piece::Made(..) => None,
            })
            .collect();
        assert_eq!(input_pieces, ["a: ", format!("\nb: {long}\n").as_str()]);
        assert_eq!(made.blocks.len(), 1);
        assert_eq!(made.blocks[0], "2z: 0\n---\nd: 4\n---\ne: 6\n");
    }
}
