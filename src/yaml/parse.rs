//! One YAML document's text → its Kubernetes value plus the span tree (`Node`), in one pass
//! over the parser's events.

use std::collections::HashMap;

use granit_parser::{Event, Options, Parser, ScalarStyle, Span, StructureStyle};
use serde_json::{Map, Value};

use super::scalar::{key_text, resolve_plain, resolve_tagged};
use super::{Entry, Node, NodeKind, Parsed, ScalarKind};

/// A syntax error at a byte offset of the document text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub offset: usize,
    pub message: String,
}

/// How many values `value` holds, itself included.
fn values_in(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(values_in).sum(),
        Value::Object(map) => map.values().map(values_in).sum(),
        _ => 0,
    }
}

/// Parses the text of exactly one document (it may start with `---` and end with `...`) with
/// the general YAML parser. Text holding only comments yields `Value::Null` and no root.
pub(crate) fn parse_general(text: &str) -> Result<Parsed, ParseError> {
    let mut options = Options::default();
    options.set_emit_comments(false);
    let mut builder = Builder {
        text,
        parser: Parser::new_from_str_with_options(text, options),
        anchors: HashMap::new(),
        duplicates: Vec::new(),
        lookahead: None,
        depth: 0,
        expanded: 0,
    };
    builder.document()
}

type Ev<'a> = (Event<'a>, Span);

struct Builder<'a> {
    text: &'a str,
    parser: Parser<'a, granit_parser::StrInput<'a>>,
    /// Anchored values, and how many values each holds.
    anchors: HashMap<usize, (Value, usize)>,
    duplicates: Vec<(usize, String)>,
    lookahead: Option<Ev<'a>>,
    /// Nodes open around the current one.
    depth: usize,
    /// Values the aliases read so far expanded to.
    expanded: usize,
}

impl<'a> Builder<'a> {
    fn next(&mut self) -> Result<Ev<'a>, ParseError> {
        if let Some(ev) = self.lookahead.take() {
            return Ok(ev);
        }
        match self.parser.next() {
            Some(Ok(ev)) => Ok(ev),
            Some(Err(e)) => {
                let marker = e.marker();
                let offset = marker
                    .byte_offset()
                    .unwrap_or_else(|| char_to_byte(self.text, marker.index()));
                Err(ParseError {
                    offset: offset.min(self.text.len()),
                    message: e.kind().to_string(),
                })
            }
            None => Err(ParseError {
                offset: self.text.len(),
                message: "unexpected end of input".to_owned(),
            }),
        }
    }

    fn offset(&self, m: &granit_parser::Marker) -> usize {
        m.byte_offset()
            .unwrap_or_else(|| char_to_byte(self.text, m.index()))
    }

    fn document(&mut self) -> Result<Parsed, ParseError> {
        let mut root = None;
        let mut value = Value::Null;
        let mut seen_document = false;
        loop {
            let (ev, span) = self.next()?;
            match ev {
                Event::StreamStart | Event::DocumentEnd => {}
                Event::DocumentStart(..) => {
                    if seen_document {
                        return Err(ParseError {
                            offset: self.offset(&span.start),
                            message: "a second document starts here without a `---` line"
                                .to_owned(),
                        });
                    }
                    seen_document = true;
                    let (node, v) = self.node()?;
                    root = Some(node);
                    value = v;
                }
                Event::StreamEnd => break,
                other => {
                    return Err(ParseError {
                        offset: self.offset(&span.start),
                        message: format!("unexpected {other:?}"),
                    });
                }
            }
        }
        Ok(Parsed {
            value,
            root,
            duplicates: std::mem::take(&mut self.duplicates),
        })
    }

    /// Remembers the value of an anchored node for its aliases.
    fn anchored(&mut self, anchor: usize, node: Node, value: Value) -> (Node, Value) {
        if anchor != 0 {
            self.anchors
                .insert(anchor, (value.clone(), values_in(&value)));
        }
        (node, value)
    }

    /// The next node, refused when nested deeper than `MAX_DEPTH`.
    fn node(&mut self) -> Result<(Node, Value), ParseError> {
        if self.depth >= super::MAX_DEPTH {
            let (ev, span) = self.next()?;
            let offset = self.offset(&span.start);
            self.lookahead = Some((ev, span));
            return Err(ParseError {
                offset,
                message: format!("nested more than {} levels deep: refused", super::MAX_DEPTH),
            });
        }
        self.depth += 1;
        let out = self.node_here();
        self.depth -= 1;
        out
    }

    fn node_here(&mut self) -> Result<(Node, Value), ParseError> {
        let (ev, span) = self.next()?;
        let start = self.offset(&span.start);
        let end = self.offset(&span.end);
        match ev {
            Event::Scalar(text, style, anchor, tag) => {
                let suffix = tag
                    .as_ref()
                    .and_then(|t| t.suffix_in_namespace("tag:yaml.org,2002:"));
                let tagged = match suffix {
                    Some(suffix) => {
                        resolve_tagged(&text, &suffix).map_err(|message| ParseError {
                            offset: start,
                            message,
                        })?
                    }
                    None => None,
                };
                let value = tagged.unwrap_or_else(|| resolve_untagged(&text, style));
                if anchor != 0 {
                    self.anchors.insert(anchor, (value.clone(), 1));
                }
                let (kind, start) = match style {
                    ScalarStyle::Plain if start == end => (ScalarKind::Empty, start),
                    ScalarStyle::Plain => (ScalarKind::Plain, start),
                    ScalarStyle::SingleQuoted => (ScalarKind::SingleQuoted, start),
                    ScalarStyle::DoubleQuoted => (ScalarKind::DoubleQuoted, start),
                    _ => (
                        ScalarKind::Block,
                        block_header_start(self.text, start, &text),
                    ),
                };
                // A block scalar's span may run into the next line's indentation: end it at
                // the line break after its last line.
                let end = if kind == ScalarKind::Block {
                    block_end(self.text, start, end)
                } else {
                    end
                };
                let node = Node {
                    start,
                    end,
                    decorated: anchor != 0 || tag.is_some(),
                    kind: NodeKind::Scalar(kind),
                };
                Ok((node, value))
            }
            Event::Alias(id) => {
                let (value, values) = self.anchors.get(&id).ok_or_else(|| ParseError {
                    offset: start,
                    message: "alias to an unknown anchor".to_owned(),
                })?;
                self.expanded += values;
                if self.expanded > super::MAX_ALIAS_EXPANSION {
                    return Err(ParseError {
                        offset: start,
                        message: format!(
                            "the aliases expand to more than {} values (an alias bomb?): refused",
                            super::MAX_ALIAS_EXPANSION
                        ),
                    });
                }
                let value = value.clone();
                let node = Node {
                    start,
                    end,
                    decorated: false,
                    kind: NodeKind::Alias,
                };
                Ok((node, value))
            }
            Event::SequenceStart(style, anchor, tag) => {
                let flow = style == StructureStyle::Flow;
                let mut items = Vec::new();
                let mut values = Vec::new();
                let close = loop {
                    let (ev, sp) = self.next()?;
                    if matches!(ev, Event::SequenceEnd) {
                        break sp;
                    }
                    self.lookahead = Some((ev, sp));
                    let (n, v) = self.node()?;
                    items.push(n);
                    values.push(v);
                };
                let (start, end) = if flow {
                    (start, self.offset(&close.end))
                } else {
                    // Indentless sequences report their first item as the start: use the dash.
                    let first = items.first().map_or(start, |n| n.start);
                    let dash = dash_before(self.text, first).unwrap_or(start);
                    (dash.min(start), items.last().map_or(end, |n| n.end))
                };
                let value = Value::Array(values);
                let node = Node {
                    start,
                    end,
                    decorated: anchor != 0 || tag.is_some(),
                    kind: NodeKind::Seq { flow, items },
                };
                Ok(self.anchored(anchor, node, value))
            }
            Event::MappingStart(style, anchor, tag) => {
                let flow = style == StructureStyle::Flow;
                let mut entries: Vec<Entry> = Vec::new();
                let mut map = Map::new();
                let mut merged: Vec<Map<String, Value>> = Vec::new();
                let close = loop {
                    let (ev, sp) = self.next()?;
                    if matches!(ev, Event::MappingEnd) {
                        break sp;
                    }
                    let merge_key =
                        matches!(&ev, Event::Scalar(t, ScalarStyle::Plain, _, None) if t == "<<");
                    self.lookahead = Some((ev, sp));
                    let (key_node, key_value) = self.node()?;
                    let (value_node, value) = self.node()?;
                    if merge_key {
                        collect_merge(&value, &mut merged).map_err(|message| ParseError {
                            offset: value_node.start,
                            message,
                        })?;
                    } else {
                        let key = key_text(&key_value);
                        if map.contains_key(&key) {
                            self.duplicates.push((key_node.start, key.clone()));
                        }
                        map.insert(key.clone(), value);
                        entries.push(Entry {
                            key,
                            key_start: key_node.start,
                            value: value_node,
                        });
                        continue;
                    }
                    entries.push(Entry {
                        key: "<<".to_owned(),
                        key_start: key_node.start,
                        value: value_node,
                    });
                };
                // Merge keys: explicit keys win, earlier merged maps win over later ones.
                for m in merged {
                    for (k, v) in m {
                        map.entry(k).or_insert(v);
                    }
                }
                let end = if flow {
                    self.offset(&close.end)
                } else {
                    entries.last().map_or(end, |e| e.value.end.max(e.key_start))
                };
                let value = Value::Object(map);
                let node = Node {
                    start,
                    end,
                    decorated: anchor != 0 || tag.is_some(),
                    kind: NodeKind::Map { flow, entries },
                };
                Ok(self.anchored(anchor, node, value))
            }
            other => Err(ParseError {
                offset: start,
                message: format!("unexpected {other:?}"),
            }),
        }
    }
}

fn resolve_untagged(text: &str, style: ScalarStyle) -> Value {
    if style == ScalarStyle::Plain {
        resolve_plain(text)
    } else {
        Value::String(text.to_owned())
    }
}

fn collect_merge(value: &Value, out: &mut Vec<Map<String, Value>>) -> Result<(), String> {
    match value {
        Value::Object(m) => out.push(m.clone()),
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::Object(m) => out.push(m.clone()),
                    _ => return Err("a merge key (`<<`) takes mappings only".to_owned()),
                }
            }
        }
        _ => return Err("a merge key (`<<`) takes a mapping or a list of mappings".to_owned()),
    }
    Ok(())
}

/// A block scalar's node starts at its `|`/`>` header, the last token of the nearest
/// non-blank line at or above its content. The event's span starts at the content, or,
/// for a scalar with no content line at the end of the input, at the header itself, or at
/// whatever follows the scalar (a comment line, the next key).
fn block_header_start(text: &str, span_start: usize, value: &str) -> usize {
    let at_header = matches!(text.as_bytes().get(span_start), Some(b'|' | b'>'));
    if at_header && value.bytes().all(|b| b == b'\n') {
        return span_start;
    }
    let before = &text[..span_start];
    let mut line_end = before.len();
    loop {
        let line_start = before[..line_end].rfind('\n').map_or(0, |i| i + 1);
        let code = strip_comment(&before[line_start..line_end]).trim_end();
        if let Some(pos) = code.rfind(['|', '>']) {
            return line_start + pos;
        }
        if line_start == 0 || !code.trim_start().is_empty() {
            return span_start;
        }
        line_end = line_start - 1;
    }
}

fn block_end(text: &str, start: usize, end: usize) -> usize {
    let bytes = text.as_bytes();
    let mut e = end.min(text.len());
    while e > start && matches!(bytes[e - 1], b' ' | b'\t') {
        e -= 1;
    }
    if e == start || bytes[e - 1] == b'\n' {
        e
    } else {
        end
    }
}

/// The part of a line before a ` #` comment, or nothing of a comment line (good enough
/// for header lines).
fn strip_comment(line: &str) -> &str {
    if line.trim_start().starts_with('#') {
        return "";
    }
    let bytes = line.as_bytes();
    match (1..bytes.len()).find(|&i| bytes[i] == b'#' && matches!(bytes[i - 1], b' ' | b'\t')) {
        Some(i) => &line[..i],
        None => line,
    }
}

/// The `-` that introduces the block sequence item starting at `item_start`.
pub(crate) fn dash_before(text: &str, item_start: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = item_start;
    // Skip back over blanks and line breaks (an item may start on the line after its dash).
    while i > 0 && matches!(bytes[i - 1], b' ' | b'\t' | b'\n' | b'\r') {
        i -= 1;
    }
    if i > 0 && bytes[i - 1] == b'-' {
        return Some(i - 1);
    }
    // Anchors or tags between the dash and the content: the last "- " on that line.
    let line = text[..i].rfind('\n').map_or(0, |n| n + 1);
    text[line..i]
        .match_indices("- ")
        .last()
        .map(|(pos, _)| line + pos)
        .or_else(|| text[line..i].ends_with('-').then(|| i - 1))
}

fn char_to_byte(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn value_and_spans() {
        let text = "# c\na: 1 # x\nb:\n  - name: x\n    v: 'q'\n  - {name: z}\nd: |\n  foo\ne:\n";
        let p = parse_general(text).unwrap();
        assert_eq!(
            p.value,
            json!({"a": 1, "b": [{"name": "x", "v": "q"}, {"name": "z"}], "d": "foo\n", "e": null})
        );
        let root = p.root.unwrap();
        let b = root.get("b").unwrap();
        assert_eq!(&text[b.start..b.start + 1], "-");
        let NodeKind::Seq { items, flow } = &b.kind else {
            panic!()
        };
        assert!(!flow);
        assert_eq!(&text[items[1].start..items[1].end], "{name: z}");
        let d = root.get("d").unwrap();
        assert_eq!(&text[d.start..d.end], "|\n  foo\n");
        assert!(matches!(
            root.get("e").unwrap().kind,
            NodeKind::Scalar(ScalarKind::Empty)
        ));
    }

    #[test]
    fn block_scalars_start_at_their_header() {
        // The parser's span for a block scalar starts at its content, at its header, or past
        // it, depending on whether it has content and what follows.
        for text in [
            "a: |\n  x\nb: |\n",
            "a: |\n  x\nb: >-\n\n",
            "a: |+\n\n\nb: 1\n",
            "a: >-\n\nb: 1\n",
            "a: |2\n",
            "- |\n- x\n",
            "a: !!str |\n",
            "a: | # c | d\n",
            "a: |\t# c | d\n",
            "a: |\n# c | d\nb: 1\n",
            "a: |\n  # c | d\nb: 1\n",
            "a:\n  |\n   x\n",
            "a:\n  |\n",
            "a: |\n  |x\n",
            "a: |\n  |\n",
            "a: |\n  >\nb: |\n",
            "k: &x |\n\n  \n",
        ] {
            let p = parse_general(text).unwrap();
            let mut stack = vec![p.root.unwrap()];
            let mut blocks = 0;
            while let Some(node) = stack.pop() {
                match node.kind {
                    NodeKind::Map { entries, .. } => {
                        stack.extend(entries.into_iter().map(|e| e.value))
                    }
                    NodeKind::Seq { items, .. } => stack.extend(items),
                    NodeKind::Scalar(ScalarKind::Block) => {
                        blocks += 1;
                        let header = text[node.start..].split('\n').next().unwrap();
                        let header = header.split([' ', '\t']).next().unwrap();
                        assert!(
                            matches!(header, "|" | ">-" | "|+" | "|2"),
                            "{text:?}: block scalar at {} ({header:?})",
                            node.start
                        );
                    }
                    _ => {}
                }
            }
            assert!(blocks > 0, "{text:?}");
        }
    }

    #[test]
    fn anchors_and_merge_keys() {
        let text = "base: &b {x: 1, w: 2}\nother:\n  <<: *b\n  w: 3\nalias: *b\n";
        let p = parse_general(text).unwrap();
        assert_eq!(p.value["other"], json!({"w": 3, "x": 1}));
        assert_eq!(p.value["alias"], json!({"x": 1, "w": 2}));
    }

    #[test]
    fn errors_have_offsets() {
        let err = parse_general("a: b\n  c: d\n").unwrap_err();
        assert!(err.offset > 0, "{err:?}");
    }

    #[test]
    fn duplicate_keys_warn_and_last_wins() {
        let p = parse_general("a: 1\na: 2\n").unwrap();
        assert_eq!(p.value, json!({"a": 2}));
        assert_eq!(p.duplicates.len(), 1);
    }

    #[test]
    fn comment_only_document() {
        let p = parse_general("# only a comment\n").unwrap();
        assert!(p.root.is_none());
        assert_eq!(p.value, Value::Null);
    }

    #[test]
    fn kubernetes_scalars() {
        let p = parse_general("mode: 0644\non: on\nq: \"on\"\ns: !!str 12\n").unwrap();
        assert_eq!(
            p.value,
            json!({"mode": 420, "true": true, "q": "on", "s": "12"})
        );
    }
}
