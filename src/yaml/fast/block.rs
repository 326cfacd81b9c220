//! The document and its block collections: the markers around it, block sequences and
//! block mappings, each one collection deeper than the one holding it.

use serde_json::{Map, Value};

use super::compare::plain_reads_as_written;
use super::keys::KeySet;
use super::reader::{GiveUp, Line, R, Reader, empty};
use super::text::marker_alone;
use crate::yaml::node::{Entry, Node, NodeKind, Parsed};

impl<'a> Reader<'a> {
    pub(super) fn document(&mut self) -> R<Parsed> {
        let mut first = self.content_line(0);
        // After an explicit `---`, a document with no content is an empty scalar there.
        let mut marker_end = None;
        if let Some(l) = first
            && l.indent() == 0
            && self.text[l.content..].starts_with("---")
        {
            // `---` alone (or with a comment) on its line.
            if !marker_alone(&self.text[l.content + 3..l.end]) {
                return Err(GiveUp);
            }
            marker_end = Some(l.content + 3);
            first = self.content_line(self.after_line(l.end));
        }
        let nothing = |marker_end: Option<usize>| Parsed {
            value: Value::Null,
            root: marker_end.map(empty),
            duplicates: Vec::new(),
        };
        let Some(first) = first else {
            self.check_scalar(|| Value::Null)?;
            return Ok(nothing(marker_end));
        };
        if self.is_end_marker(first) {
            return Err(GiveUp);
        }
        let (node, value, next) = self.block_node(first, None)?;
        match next {
            None => {}
            Some(l) if self.is_end_marker(l) => self.after_end(l)?,
            Some(_) => return Err(GiveUp),
        }
        Ok(Parsed {
            value,
            root: Some(node),
            duplicates: std::mem::take(&mut self.duplicates),
        })
    }

    fn is_end_marker(&self, l: Line) -> bool {
        l.indent() == 0 && self.text[l.content..l.end].starts_with("...")
    }

    /// After `...`: only comments and blank lines.
    fn after_end(&self, l: Line) -> R<()> {
        if !marker_alone(&self.text[l.content + 3..l.end]) {
            return Err(GiveUp);
        }
        match self.content_line(self.after_line(l.end)) {
            None => Ok(()),
            Some(_) => Err(GiveUp),
        }
    }

    /// The block node whose first content line is `l`; `parent` is the indentation of the
    /// collection it belongs to. Returns the node, its value, and the next content line after
    /// it.
    fn block_node(&mut self, l: Line, parent: Option<usize>) -> R<(Node, Value, Option<Line>)> {
        if parent.is_some_and(|p| l.indent() <= p) {
            return Err(GiveUp);
        }
        if self.is_dash(l.content, l.end) {
            return self.block_seq(l.content, l);
        }
        if self.key_at(l.content, l.end)?.is_some() {
            return self.block_map(l.content, l);
        }
        // A scalar or flow collection on a line of its own.
        self.inline_then_next(l.content, l.end, l.indent(), parent)
    }

    /// A value on the rest of a line (see `inline_value`) and the next content line, which
    /// must not be more indented than `parent` (that would continue the value over lines,
    /// which the general parser reads).
    fn inline_then_next(
        &mut self,
        at: usize,
        end: usize,
        indent: usize,
        parent: Option<usize>,
    ) -> R<(Node, Value, Option<Line>)> {
        let (node, value, resume) = self.inline_value(at, end, indent)?;
        let next = self.content_line(resume);
        if next.is_some_and(|n| parent.is_none_or(|p| n.indent() > p) && !self.is_end_marker(n)) {
            return Err(GiveUp);
        }
        Ok((node, value, next))
    }

    /// A block sequence whose dashes are at column `col` of their lines, the first on `l` at
    /// byte `dash`.
    fn block_seq(&mut self, dash: usize, l: Line) -> R<(Node, Value, Option<Line>)> {
        self.nested(|r| r.block_seq_items(dash, l))
    }

    fn block_seq_items(&mut self, mut dash: usize, mut l: Line) -> R<(Node, Value, Option<Line>)> {
        let col = dash - l.start;
        let first_dash = dash;
        let expected = match self.expected()? {
            None => None,
            Some(Value::Array(e)) => Some(e),
            Some(_) => return Err(GiveUp),
        };
        let mut count = 0;
        let mut items = Vec::new();
        let mut values = Vec::new();
        let next = loop {
            if let Some(e) = expected {
                self.expect_child(e.get(count))?;
            }
            count += 1;
            let at = self.skip_blanks(dash + 1, l.end);
            let (node, value, next) = if at == l.end || self.b[at] == b'#' {
                // The item is on the following lines, or empty.
                let following = self.after_line(l.end);
                match self.content_line(following) {
                    // Comment or blank lines between the dash and the item: where the item
                    // starts is the general parser's to say (found by fuzzing).
                    Some(n) if n.indent() > col && n.start != following => return Err(GiveUp),
                    Some(n) if n.indent() > col => self.block_node(n, Some(col))?,
                    // An empty item with anything after its dash (spaces, `- # x`): where it
                    // ends is the general parser's to say (found by fuzzing: the spans
                    // differed).
                    _ if at > dash + 1 => return Err(GiveUp),
                    next => {
                        self.check_scalar(|| Value::Null)?;
                        (empty(dash + 1), Value::Null, next)
                    }
                }
            } else if self.is_dash(at, l.end) {
                // `- - x`: a sequence in the item.
                self.block_seq(at, l)?
            } else if self.key_at(at, l.end)?.is_some() {
                self.block_map(at, l)?
            } else {
                self.inline_then_next(at, l.end, col, Some(col))?
            };
            if self.build {
                if self.spans {
                    items.push(node);
                }
                values.push(value);
            }
            match next {
                Some(n) if n.indent() == col && self.is_dash(n.content, n.end) => {
                    l = n;
                    dash = n.content;
                }
                Some(n) if n.indent() > col => return Err(GiveUp),
                next => break next,
            }
        };
        if expected.is_some_and(|e| e.len() != count) {
            return Err(GiveUp);
        }
        let end = items.last().map_or(first_dash + 1, |n| n.end);
        let node = Node {
            start: first_dash,
            end,
            decorated: false,
            kind: NodeKind::Seq { flow: false, items },
        };
        Ok((node, Value::Array(values), next))
    }

    /// A block mapping whose keys are at column `col`, the first at byte `key` of `l`.
    fn block_map(&mut self, key: usize, l: Line) -> R<(Node, Value, Option<Line>)> {
        self.nested(|r| r.block_map_entries(key, l))
    }

    fn block_map_entries(&mut self, mut key: usize, mut l: Line) -> R<(Node, Value, Option<Line>)> {
        let col = key - l.start;
        // Only the root of a shallow read keeps some keys; below it nothing is built.
        let keep = self.keep.take();
        let outer_build = self.build;
        // Compared in order: the same keys in another order are left to a full comparison.
        let expected = match self.expected()? {
            None => None,
            Some(Value::Object(e)) => Some(e),
            Some(_) => return Err(GiveUp),
        };
        let mut pairs = expected.map(|e| e.iter());
        let mut count = 0;
        let mut entries: Vec<Entry> = Vec::new();
        let mut map = Map::new();
        let mut seen = KeySet::default();
        let next = loop {
            let Some((raw, colon)) = self.key_at(key, l.end)? else {
                return Err(GiveUp);
            };
            if let Some(pairs) = &mut pairs {
                let (name, value) = pairs.next().ok_or(GiveUp)?;
                let same = if plain_reads_as_written(raw) {
                    name == raw
                } else {
                    *name == self.key_text(raw, key)
                };
                if !same {
                    return Err(GiveUp);
                }
                self.expect_child(Some(value))?;
            }
            count += 1;
            let kept = keep.is_none_or(|k| k.contains(&raw));
            self.build = outer_build && kept;
            let at = self.skip_blanks(colon + 1, l.end);
            let (node, value, next) = if at == l.end || self.b[at] == b'#' {
                match self.content_line(self.after_line(l.end)) {
                    Some(n) if n.indent() > col => self.block_node(n, Some(col))?,
                    // A sequence may sit at its key's column.
                    Some(n) if n.indent() == col && self.is_dash(n.content, n.end) => {
                        self.block_seq(n.content, n)?
                    }
                    next => {
                        self.check_scalar(|| Value::Null)?;
                        (empty(colon), Value::Null, next)
                    }
                }
            } else {
                self.inline_then_next(at, l.end, col, Some(col))?
            };
            if raw == "<<" {
                return Err(GiveUp);
            }
            if outer_build && kept {
                let name = self.key_text(raw, key);
                // The last of two equal keys wins, in the first one's place.
                if map.insert(name.clone(), value).is_some() {
                    self.duplicates.push((key, name.clone()));
                }
                if self.spans {
                    entries.push(Entry {
                        key: name,
                        key_start: key,
                        value: node,
                    });
                }
            } else if expected.is_none() {
                // (Compared keys are those of a map, in its order: no duplicates.)
                // A key whose text is not what it reads as (quoted, or `TRUE`, `~`, `0x1`…)
                // is compared by what it reads as, as a full read compares it.
                let resolved = (!plain_reads_as_written(raw)).then(|| self.key_text(raw, key));
                seen.insert(key, raw, self.text, resolved);
            }
            match next {
                Some(n) if n.indent() == col && !self.is_end_marker(n) => {
                    if self.is_dash(n.content, n.end) {
                        return Err(GiveUp);
                    }
                    l = n;
                    key = n.content;
                }
                Some(n) if n.indent() > col => return Err(GiveUp),
                next => break next,
            }
        };
        if expected.is_some_and(|e| e.len() != count) {
            return Err(GiveUp);
        }
        self.build = outer_build;
        self.duplicates.extend(seen.duplicates(self.text));
        let start = entries.first().map_or(l.start + col, |e| e.key_start);
        let end = entries
            .last()
            .map_or(start, |e| e.value.end.max(e.key_start));
        let node = Node {
            start,
            end,
            decorated: false,
            kind: NodeKind::Map {
                flow: false,
                entries,
            },
        };
        Ok((node, Value::Object(map), next))
    }
}
