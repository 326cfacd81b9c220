//! What rendering the virtual tree reads: the original text, its style, and how replaced
//! nulls were written; where lines, comments and a key's `:` are in that text. The splices
//! each kind of node gets are in `replace`, `block` and `flow`.

use std::collections::BTreeMap;

use serde_json::Value;

use super::splice::{Res, Splice, Unsupported, unsupported};
use super::tree::{V, is_empty_collection, new_value};
use crate::yaml::emit::Emitter;
use crate::yaml::node::{Entry, Node, NodeKind, ScalarKind};
use crate::yaml::style::{Style, line_start};

/// How a node sits in its parent, which decides how replacement text is laid out.
#[derive(Clone, Copy)]
pub(super) enum Place<'k> {
    Root,
    MapValue {
        key: &'k str,
        key_col: usize,
        colon: usize,
    },
    SeqItem {
        dash_col: usize,
        content_col: usize,
    },
    Flow,
}

/// Renders the virtual tree into splices of the original `text`.
pub(super) struct Ctx<'a> {
    pub(super) text: &'a str,
    pub(super) style: &'a Style,
    /// How a null that replaces the node starting at an offset is written, when not empty.
    pub(super) spelled: BTreeMap<usize, &'a str>,
}

impl Ctx<'_> {
    /// The splices that write `v` in its `place`: none for an original node.
    pub(super) fn render(&self, v: &V<'_>, place: Place<'_>, out: &mut Vec<Splice>) -> Res<()> {
        match v {
            V::Orig(_) => Ok(()),
            V::New(_) => unsupported("a new node without a parent"),
            V::Replaced(node, value) => self.replace(node, value, place, out),
            V::Seq(node, children, removed) | V::Map(node, children, removed)
                if children.is_empty() =>
            {
                let empty = if matches!(node.kind, NodeKind::Seq { .. }) {
                    Value::Array(Vec::new())
                } else {
                    Value::Object(serde_json::Map::new())
                };
                let _ = removed;
                self.replace(node, &empty, place, out)
            }
            V::Seq(node, children, removed) | V::Map(node, children, removed) => {
                let flow = matches!(
                    node.kind,
                    NodeKind::Seq { flow: true, .. } | NodeKind::Map { flow: true, .. }
                );
                if flow && is_empty_collection(node) {
                    // `{}` or `[]` that receives content becomes a block (and an emptied block
                    // is written `{}`/`[]` again, so removing the content restores it).
                    self.replace(node, &new_value(node, children)?, place, out)
                } else if flow {
                    self.render_flow(node, children, out)
                } else if matches!(node.kind, NodeKind::Seq { .. }) {
                    self.render_block_seq(node, children, removed, out)
                } else {
                    self.render_block_map(node, children, removed, out)
                }
            }
        }
    }

    pub(super) fn emitter(&self) -> Emitter<'_> {
        Emitter::new(self.style)
    }

    /// End of the last line holding `node`'s content, before its line break.
    pub(super) fn last_line_end(&self, node: &Node, fallback: usize) -> usize {
        let last = if node.end > node.start {
            node.end - 1
        } else {
            fallback
        };
        let last = if self.text.as_bytes().get(last) == Some(&b'\n') && last > node.start {
            last - 1
        } else {
            last
        };
        line_end(self.text, last)
    }

    /// A `# comment` on the key's line that must survive a replacement, with its lead space.
    pub(super) fn comment_in(
        &self,
        from: usize,
        to: usize,
        node: &Node,
        inline_old: bool,
    ) -> String {
        let line_end_pos = line_end(self.text, from).min(to);
        let scan_from = if inline_old { node.end.max(from) } else { from };
        if scan_from >= line_end_pos {
            return String::new();
        }
        let rest = &self.text[scan_from..line_end_pos];
        match rest.find('#') {
            Some(i) if rest[..i].trim().is_empty() => format!(" {}", rest[i..].trim_end()),
            _ => String::new(),
        }
    }

    /// Deletes whole lines from `start` through the line ending at `end`.
    pub(super) fn removal(&self, start: usize, end: usize) -> Splice {
        Splice {
            start,
            end: after_newline(self.text, end),
            text: String::new(),
        }
    }

    /// Text inserted at `at`; at the end of a document without a final line break, the break
    /// moves to the front so the document still ends the way it did.
    pub(super) fn insertion(&self, at: usize, text: String) -> Splice {
        let text = if at == self.text.len() && !self.text.is_empty() && !self.text.ends_with('\n') {
            format!("{}{}", self.style.newline(), trim_newline(text, self.style))
        } else {
            text
        };
        Splice {
            start: at,
            end: at,
            text,
        }
    }

    /// After the line holding offset `end - 1`, plus the comment lines indented deeper than
    /// `col` that follow it (they belong to the last item).
    pub(super) fn trailing_end(&self, end: usize, col: usize) -> usize {
        let last = end.saturating_sub(1);
        let mut pos = if self.text.as_bytes().get(last) == Some(&b'\n') {
            end
        } else {
            after_newline(self.text, line_end(self.text, last))
        };
        while pos < self.text.len() {
            let next = after_newline(self.text, line_end(self.text, pos));
            let line = &self.text[pos..next];
            let indent = line.len() - line.trim_start_matches(' ').len();
            if line.trim_start().starts_with('#') && indent > col {
                pos = next;
            } else {
                break;
            }
        }
        pos
    }

    /// The start of the comment lines at exactly `col` directly above `line`.
    pub(super) fn leading_comments_start(&self, line: usize, col: usize) -> usize {
        let mut at = line;
        while at > 0 {
            let prev = line_start(self.text, at - 1);
            let l = &self.text[prev..at];
            let indent = l.len() - l.trim_start_matches(' ').len();
            if l.trim_start().starts_with('#') && indent == col {
                at = prev;
            } else {
                break;
            }
        }
        at
    }

    pub(super) fn starts_line(&self, offset: usize) -> bool {
        self.text[line_start(self.text, offset)..offset]
            .trim()
            .is_empty()
    }

    pub(super) fn same_line(&self, a: usize, b: usize) -> bool {
        !self.text[a.min(b)..a.max(b)].contains('\n')
    }

    /// The `:` after an entry's key.
    pub(super) fn colon_after(&self, e: &Entry) -> Res<usize> {
        let from = e.key_start;
        let to = e.value.start.max(from);
        // The key may be quoted and contain `:`; the separator is the last `:` before the value
        // that is followed by a blank, a line break, or the value itself.
        let region = &self.text[from..to];
        let bytes = region.as_bytes();
        let mut found = None;
        for (i, b) in bytes.iter().enumerate() {
            if *b == b':' {
                let next = bytes.get(i + 1).copied();
                if next.is_none_or(|n| matches!(n, b' ' | b'\t' | b'\n' | b'\r'))
                    || from + i + 1 == to
                {
                    found = Some(from + i);
                }
            }
        }
        if matches!(e.value.kind, NodeKind::Scalar(ScalarKind::Empty)) && found.is_none() {
            // An empty value's span sits on the colon itself.
            if self.text.as_bytes().get(e.value.start) == Some(&b':') {
                return Ok(e.value.start);
            }
        }
        found.ok_or_else(|| Unsupported("a key without a `:`".to_owned()))
    }
}

/// Offset of the line break ending the line that holds `offset` (or the text's end).
fn line_end(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    // Bytes, not characters: `offset` may be anywhere (found by fuzzing).
    let end = memchr::memchr(b'\n', &text.as_bytes()[offset..]).map_or(text.len(), |i| offset + i);
    if end > offset && text.as_bytes()[end - 1] == b'\r' {
        end - 1
    } else {
        end
    }
}

/// Just past the line break at or after `offset`.
fn after_newline(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    memchr::memchr(b'\n', &text.as_bytes()[offset..]).map_or(text.len(), |i| offset + i + 1)
}

pub(super) fn trim_newline(mut s: String, style: &Style) -> String {
    if s.ends_with(style.newline()) {
        s.truncate(s.len() - style.newline().len());
    } else if s.ends_with('\n') {
        s.pop();
    }
    s
}
