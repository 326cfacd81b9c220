//! The layout habits of a document (indentation, sequence style, quotes, line endings), read
//! from its own text so that inserted lines look like their neighbours.

use super::node::{Node, NodeKind, ScalarKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quote {
    Double,
    Single,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Style {
    /// Spaces per mapping level.
    pub indent: usize,
    /// Column of a sequence's `-` relative to its parent key (0 = `- ` under the key).
    pub seq_indent: usize,
    /// Column of an item's content relative to its `-` (2 for `- name:`).
    pub item_offset: usize,
    pub quote: Quote,
    pub crlf: bool,
    /// `seq_indent` where the document shows another one under a key of that name (documents
    /// often mix `volumes:` lists indented and `volumeMounts:` lists not).
    pub seq_indent_by_key: Vec<(String, usize)>,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            indent: 2,
            seq_indent: 0,
            item_offset: 2,
            quote: Quote::Double,
            crlf: false,
            seq_indent_by_key: Vec::new(),
        }
    }
}

impl Style {
    /// The sequence indent for a list under `key`.
    pub(crate) fn seq_indent_for(&self, key: &str) -> usize {
        self.seq_indent_by_key
            .iter()
            .find(|(k, _)| k == key)
            .map_or(self.seq_indent, |(_, i)| *i)
    }

    pub(crate) fn newline(&self) -> &'static str {
        if self.crlf { "\r\n" } else { "\n" }
    }

    /// Reads the habits of `text`; whatever the document does not show keeps the default.
    pub(crate) fn detect(text: &str, root: Option<&Node>) -> Style {
        let mut seen = Seen::default();
        if let Some(root) = root {
            seen.walk(text, root);
        }
        let d = Style::default();
        Style {
            indent: seen.indent.unwrap_or(d.indent),
            seq_indent: seen.seq_indent.unwrap_or(d.seq_indent),
            item_offset: seen.item_offset.unwrap_or(d.item_offset),
            quote: if seen.single > seen.double {
                Quote::Single
            } else {
                Quote::Double
            },
            crlf: memchr::memmem::find(text.as_bytes(), b"\r\n").is_some(),
            seq_indent_by_key: seen.by_key,
        }
    }
}

#[derive(Default)]
struct Seen {
    indent: Option<usize>,
    seq_indent: Option<usize>,
    item_offset: Option<usize>,
    single: usize,
    double: usize,
    by_key: Vec<(String, usize)>,
}

impl Seen {
    fn walk(&mut self, text: &str, node: &Node) {
        match &node.kind {
            NodeKind::Scalar(ScalarKind::SingleQuoted) => self.single += 1,
            NodeKind::Scalar(ScalarKind::DoubleQuoted) => self.double += 1,
            NodeKind::Scalar(_) | NodeKind::Alias => {}
            NodeKind::Seq { items, flow } => {
                if !flow
                    && let Some(first) = items.first()
                    && same_line(text, node.start, first.start)
                    && self.item_offset.is_none()
                {
                    self.item_offset = Some(first.start - node.start);
                }
                for item in items {
                    self.walk(text, item);
                }
            }
            NodeKind::Map { entries, flow } => {
                for e in entries {
                    if !flow && !same_line(text, e.key_start, e.value.start) {
                        let key_col = column(text, e.key_start);
                        let value_col = column(text, e.value.start);
                        match &e.value.kind {
                            NodeKind::Map { flow: false, .. } if value_col > key_col => {
                                self.indent.get_or_insert(value_col - key_col);
                            }
                            NodeKind::Seq { flow: false, .. } if value_col >= key_col => {
                                self.seq_indent.get_or_insert(value_col - key_col);
                                if !self.by_key.iter().any(|(k, _)| *k == e.key) {
                                    self.by_key.push((e.key.clone(), value_col - key_col));
                                }
                            }
                            _ => {}
                        }
                    }
                    self.walk(text, &e.value);
                }
            }
        }
    }
}

/// Byte offset of the start of the line holding `offset`.
pub(crate) fn line_start(text: &str, offset: usize) -> usize {
    memchr::memrchr(b'\n', &text.as_bytes()[..offset]).map_or(0, |i| i + 1)
}

/// Column of `offset` in its line (bytes; indentation is ASCII).
pub(crate) fn column(text: &str, offset: usize) -> usize {
    offset - line_start(text, offset)
}

fn same_line(text: &str, a: usize, b: usize) -> bool {
    let (a, b) = if a <= b { (a, b) } else { (b, a) };
    memchr::memchr(b'\n', &text.as_bytes()[a..b]).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_document;

    fn style_of(text: &str) -> Style {
        let p = parse_document(text).unwrap();
        Style::detect(text, p.root.as_ref())
    }

    #[test]
    fn detects_four_space_indented_sequences() {
        let s = style_of("spec:\n    containers:\n        -   name: a\n            image: 'b'\n");
        assert_eq!(s.indent, 4);
        assert_eq!(s.seq_indent, 4);
        assert_eq!(s.item_offset, 4);
        assert_eq!(s.quote, Quote::Single);
    }

    #[test]
    fn sequences_keep_the_indent_of_their_key() {
        let s = style_of("volumes:\n  - name: a\ncontainers:\n  - volumeMounts:\n    - name: a\n");
        assert_eq!(s.seq_indent, 2);
        assert_eq!(s.seq_indent_for("volumeMounts"), 0);
        assert_eq!(s.seq_indent_for("env"), 2);
    }

    #[test]
    fn detects_compact_sequences_and_crlf() {
        let s = style_of("spec:\r\n  containers:\r\n  - name: a\r\n");
        assert_eq!(
            (s.indent, s.seq_indent, s.item_offset, s.crlf),
            (2, 0, 2, true)
        );
    }
}
