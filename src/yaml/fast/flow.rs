//! Flow collections on one line (`[a, b]`, `{k: v}`), nested up to 64 deep.

use serde_json::{Map, Value};

use super::keys::long_key;
use super::reader::{GiveUp, R, Reader, scalar};
use crate::yaml::node::{Entry, Node, NodeKind, ScalarKind};
use crate::yaml::scalar::{key_text, resolve_plain};

impl<'a> Reader<'a> {
    /// A flow collection on one line from `pos` (`[` or `{`): node, value and the offset after
    /// it.
    pub(super) fn flow(&mut self, pos: usize, end: usize, depth: usize) -> R<(Node, Value, usize)> {
        if depth > 64 {
            return Err(GiveUp);
        }
        let open = self.b[pos];
        let close = if open == b'[' { b']' } else { b'}' };
        let (expected_items, expected_map) = match (self.expected()?, open) {
            (None, _) => (None, None),
            (Some(Value::Array(e)), b'[') => (Some(e), None),
            (Some(Value::Object(e)), b'{') => (None, Some(e)),
            _ => return Err(GiveUp),
        };
        let mut pairs = expected_map.map(|e| e.iter());
        let mut count = 0;
        let mut i = self.skip_blanks(pos + 1, end);
        let mut items = Vec::new();
        let mut values = Vec::new();
        let mut entries: Vec<Entry> = Vec::new();
        let mut map = Map::new();
        loop {
            if i >= end {
                return Err(GiveUp);
            }
            if self.b[i] == close {
                i += 1;
                break;
            }
            if open == b'[' {
                if let Some(e) = expected_items {
                    self.expect_child(e.get(count))?;
                }
                count += 1;
                let (node, value, after) = self.flow_value(i, end, depth)?;
                if self.build {
                    if self.spans {
                        items.push(node);
                    }
                    values.push(value);
                }
                i = after;
            } else {
                let (key, key_after) = match self.b[i] {
                    b'\'' | b'"' => self.quoted(i, end)?,
                    // Indicators no plain key starts with (found by fuzzing: `` {`a: b} ``).
                    b'`' | b'@' | b'&' | b'*' | b'!' | b'|' | b'>' | b'%' | b'?' | b'#' | b','
                    | b']' | b'}' | b'[' | b'{' => return Err(GiveUp),
                    _ => {
                        let e = self.flow_plain_end(i, end)?;
                        let raw = self.text[i..e].trim_end_matches(' ');
                        (key_text(&resolve_plain(raw)), i + raw.len())
                    }
                };
                let colon = self.skip_blanks(key_after, end);
                if colon >= end || self.b[colon] != b':' {
                    return Err(GiveUp);
                }
                long_key(i, colon)?;
                if let Some(pairs) = &mut pairs {
                    match pairs.next() {
                        Some((name, value)) if *name == key => self.expect_child(Some(value))?,
                        _ => return Err(GiveUp),
                    }
                }
                count += 1;
                let v = self.skip_blanks(colon + 1, end);
                let (node, value, after) = self.flow_value(v, end, depth)?;
                if key == "<<" {
                    return Err(GiveUp);
                }
                if self.build {
                    if map.insert(key.clone(), value).is_some() {
                        self.duplicates.push((i, key.clone()));
                    }
                    if self.spans {
                        entries.push(Entry {
                            key,
                            key_start: i,
                            value: node,
                        });
                    }
                }
                i = after;
            }
            i = self.skip_blanks(i, end);
            match self.b.get(i) {
                Some(b',') if i < end => i = self.skip_blanks(i + 1, end),
                Some(&c) if c == close && i < end => {}
                _ => return Err(GiveUp),
            }
        }
        let expected_len = expected_items.map(Vec::len).or(expected_map.map(Map::len));
        if expected_len.is_some_and(|n| n != count) {
            return Err(GiveUp);
        }
        let node = |kind| Node {
            start: pos,
            end: i,
            decorated: false,
            kind,
        };
        Ok(if open == b'[' {
            (
                node(NodeKind::Seq { flow: true, items }),
                Value::Array(values),
                i,
            )
        } else {
            (
                node(NodeKind::Map {
                    flow: true,
                    entries,
                }),
                Value::Object(map),
                i,
            )
        })
    }

    /// A value inside a flow collection: node, value, offset after it.
    fn flow_value(&mut self, i: usize, end: usize, depth: usize) -> R<(Node, Value, usize)> {
        // Nothing left of the line (`{a:` at its end): the general parser says what is wrong.
        if i >= end {
            return Err(GiveUp);
        }
        match self.b[i] {
            b'[' | b'{' => self.flow(i, end, depth + 1),
            b'\'' | b'"' => {
                let (s, after) = self.quoted(i, end)?;
                self.check_string(&s)?;
                let kind = if self.b[i] == b'\'' {
                    ScalarKind::SingleQuoted
                } else {
                    ScalarKind::DoubleQuoted
                };
                Ok((scalar(i, after, kind), Value::String(s), after))
            }
            b',' | b']' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|' | b'>' | b'%' | b'@' | b'`'
            | b'?' => Err(GiveUp),
            _ => {
                let e = self.flow_plain_end(i, end)?;
                let raw = self.text[i..e].trim_end_matches(' ');
                let e = i + raw.len();
                self.check_plain(raw)?;
                Ok((scalar(i, e, ScalarKind::Plain), resolve_plain(raw), e))
            }
        }
    }

    /// Where a plain scalar inside a flow collection ends (before `,`, `]`, `}` or a `: `).
    fn flow_plain_end(&self, i: usize, end: usize) -> R<usize> {
        let mut j = i;
        while j < end {
            match self.b[j] {
                b',' | b']' | b'}' | b'[' | b'{' => return Ok(j),
                b':' if j + 1 < end && matches!(self.b[j + 1], b' ' | b',' | b']' | b'}') => {
                    return Ok(j);
                }
                b'#' if self.b[j - 1] == b' ' => return Err(GiveUp),
                _ => {}
            }
            j += 1;
        }
        Err(GiveUp)
    }
}
