//! One YAML document's text → its Kubernetes value plus the span tree (`Node`), in one pass
//! over the parser's events.

use std::collections::HashMap;

use granit_parser::{Event, Options, Parser, ScalarStyle, Span, StructureStyle};
use serde_json::{Map, Value};

use super::node::{Entry, Node, NodeKind, Parsed, ScalarKind};
use super::scalar::{key_text, resolve_plain, resolve_tagged};

/// A syntax error at a byte offset of the document text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub offset: usize,
    pub message: String,
}

/// What a node costs when copied: how many values it holds (itself included) and the bytes
/// of its text (scalars and keys, as read).
#[derive(Debug, Clone, Copy, Default)]
struct Size {
    values: usize,
    bytes: usize,
}

impl Size {
    fn add(&mut self, other: Size) {
        self.values += other.values;
        self.bytes += other.bytes;
    }

    /// Whether this is more than anchors and aliases may copy (`MAX_ALIAS_EXPANSION`,
    /// `MAX_ALIAS_TEXT`).
    fn too_much(self) -> bool {
        self.values > super::node::MAX_ALIAS_EXPANSION || self.bytes > super::node::MAX_ALIAS_TEXT
    }
}

/// What kind of value a node is (a key must be a scalar).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Scalar,
    Sequence,
    Mapping,
}

/// A node read: its place in the text, its value (`Null` when only checking), what a copy
/// of it costs, and its shape.
struct Read {
    node: Node,
    value: Value,
    size: Size,
    shape: Shape,
}

/// Parses the text of exactly one document (it may start with `---` and end with `...`) with
/// the general YAML parser. Text holding only comments yields `Value::Null` and no root.
pub(crate) fn parse_general(text: &str) -> Result<Parsed, ParseError> {
    Builder::new(text, true).document()
}

/// Whether `parse_general` reads the text, found without building anything: the error it
/// would give, from the same events and checks (syntax, nesting, anchors and aliases, keys),
/// but for a merge key's value (which takes the values). Memory: the parser's own, and a
/// number per anchor.
pub(crate) fn check_general(text: &str) -> Result<(), ParseError> {
    Builder::new(text, false).document().map(|_| ())
}

type Ev<'a> = (Event<'a>, Span);

struct Builder<'a> {
    text: &'a str,
    parser: Parser<'a, granit_parser::StrInput<'a>>,
    /// Build the value and the span tree; when off, the text is only checked.
    build: bool,
    /// Anchored values (copies, for their aliases; `Null` when only checking), what each
    /// copy costs, and their shape.
    anchors: HashMap<usize, (Value, Size, Shape)>,
    duplicates: Vec<(usize, String)>,
    lookahead: Option<Ev<'a>>,
    /// Nodes open around the current one.
    depth: usize,
    /// What the anchors and aliases read so far copied: a copy per anchor, one per alias.
    copied: Size,
}

impl<'a> Builder<'a> {
    fn new(text: &'a str, build: bool) -> Self {
        let mut options = Options::default();
        options.set_emit_comments(false);
        Builder {
            text,
            parser: Parser::new_from_str_with_options(text, options),
            build,
            anchors: HashMap::new(),
            duplicates: Vec::new(),
            lookahead: None,
            depth: 0,
            copied: Size::default(),
        }
    }

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
                let message = e.kind().to_string();
                Err(ParseError {
                    offset: at_the_tab(self.text, offset.min(self.text.len()), &message),
                    message,
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
                    let read = self.node()?;
                    root = Some(read.node);
                    value = read.value;
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

    /// Remembers a copy of the value of an anchored node for its aliases. Nested anchors
    /// copy what they hold again, so copies are counted against the same budget as aliases.
    fn anchored(&mut self, anchor: usize, read: Read) -> Result<Read, ParseError> {
        if anchor != 0 {
            self.copy(read.node.start, read.size, "the anchors and aliases copy")?;
            let value = if self.build {
                read.value.clone()
            } else {
                Value::Null
            };
            self.anchors.insert(anchor, (value, read.size, read.shape));
        }
        Ok(read)
    }

    /// Counts a copy of `size` made at `offset` (`what` made it, for the message); refused
    /// when the document's anchors and aliases have copied more than they may in all.
    fn copy(&mut self, offset: usize, size: Size, what: &str) -> Result<(), ParseError> {
        self.copied.add(size);
        if !self.copied.too_much() {
            return Ok(());
        }
        let limit = if self.copied.values > super::node::MAX_ALIAS_EXPANSION {
            format!("{} values", super::node::MAX_ALIAS_EXPANSION)
        } else {
            format!("{} MiB of text", super::node::MAX_ALIAS_TEXT >> 20)
        };
        Err(ParseError {
            offset,
            message: format!("{what} more than {limit} (an alias bomb?): refused"),
        })
    }

    /// The next node, refused when nested deeper than `MAX_DEPTH`.
    fn node(&mut self) -> Result<Read, ParseError> {
        if self.depth >= super::node::MAX_DEPTH {
            let (ev, span) = self.next()?;
            let offset = self.offset(&span.start);
            self.lookahead = Some((ev, span));
            return Err(ParseError {
                offset,
                message: format!(
                    "nested more than {} levels deep: refused",
                    super::node::MAX_DEPTH
                ),
            });
        }
        self.depth += 1;
        let out = self.node_here();
        self.depth -= 1;
        out
    }

    /// The node that starts with the next event.
    fn node_here(&mut self) -> Result<Read, ParseError> {
        let (ev, span) = self.next()?;
        let start = self.offset(&span.start);
        let end = self.offset(&span.end);
        match ev {
            Event::Scalar(text, style, anchor, tag) => {
                let decorated = anchor != 0 || tag.is_some();
                let suffix = tag
                    .as_ref()
                    .and_then(|t| t.suffix_in_namespace("tag:yaml.org,2002:"));
                let scalar = Scalar {
                    text: &text,
                    style,
                    decorated,
                    suffix: suffix.as_deref(),
                };
                self.scalar(scalar, anchor, (start, end))
            }
            Event::Alias(id) => self.alias(id, (start, end)),
            Event::SequenceStart(style, anchor, tag) => {
                let decorated = anchor != 0 || tag.is_some();
                self.sequence(style, anchor, decorated, (start, end))
            }
            Event::MappingStart(style, anchor, tag) => {
                let decorated = anchor != 0 || tag.is_some();
                self.mapping(style, anchor, decorated, (start, end))
            }
            other => Err(ParseError {
                offset: start,
                message: format!("unexpected {other:?}"),
            }),
        }
    }

    /// A scalar, resolved (its tag's type, or a plain scalar's YAML 1.1 type, as Kubernetes
    /// reads it).
    fn scalar(
        &mut self,
        scalar: Scalar<'_>,
        anchor: usize,
        (start, end): (usize, usize),
    ) -> Result<Read, ParseError> {
        let Scalar {
            text,
            style,
            decorated,
            suffix,
        } = scalar;
        // Checked when only checking too (`!!binary` that does not decode).
        let tagged = match suffix {
            Some(suffix) => resolve_tagged(text, suffix).map_err(|message| ParseError {
                offset: start,
                message,
            })?,
            None => None,
        };
        let value = if self.build {
            tagged.unwrap_or_else(|| resolve_untagged(text, style))
        } else {
            Value::Null
        };
        let (kind, start) = match style {
            ScalarStyle::Plain if start == end => (ScalarKind::Empty, start),
            ScalarStyle::Plain => (ScalarKind::Plain, start),
            ScalarStyle::SingleQuoted => (ScalarKind::SingleQuoted, start),
            ScalarStyle::DoubleQuoted => (ScalarKind::DoubleQuoted, start),
            _ => (
                ScalarKind::Block,
                block_header_start(self.text, start, text),
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
            decorated,
            kind: NodeKind::Scalar(kind),
        };
        let size = Size {
            values: 1,
            bytes: text.len(),
        };
        let read = Read {
            node,
            value,
            size,
            shape: Shape::Scalar,
        };
        self.anchored(anchor, read)
    }

    /// An alias: a copy of its anchor's value, counted against the budget.
    fn alias(&mut self, id: usize, (start, end): (usize, usize)) -> Result<Read, ParseError> {
        let (size, shape) = self
            .anchors
            .get(&id)
            .map(|(_, size, shape)| (*size, *shape))
            .ok_or_else(|| ParseError {
                offset: start,
                message: "alias to an unknown anchor".to_owned(),
            })?;
        self.copy(start, size, "the aliases expand to")?;
        let value = self.anchors[&id].0.clone();
        let node = Node {
            start,
            end,
            decorated: false,
            kind: NodeKind::Alias,
        };
        Ok(Read {
            node,
            value,
            size,
            shape,
        })
    }

    /// A sequence, its items read one by one.
    fn sequence(
        &mut self,
        style: StructureStyle,
        anchor: usize,
        decorated: bool,
        (start, end): (usize, usize),
    ) -> Result<Read, ParseError> {
        let flow = style == StructureStyle::Flow;
        let mut items = Vec::new();
        let mut values = Vec::new();
        let mut size = Size {
            values: 1,
            bytes: 0,
        };
        let close = loop {
            let (ev, sp) = self.next()?;
            if matches!(ev, Event::SequenceEnd) {
                break sp;
            }
            self.lookahead = Some((ev, sp));
            let item = self.node()?;
            size.add(item.size);
            if self.build {
                items.push(item.node);
                values.push(item.value);
            }
        };
        let (start, end) = if flow {
            (start, self.offset(&close.end))
        } else {
            // Indentless sequences report their first item as the start: use the dash.
            let first = items.first().map_or(start, |n| n.start);
            let dash = dash_before(self.text, first).unwrap_or(start);
            (dash.min(start), items.last().map_or(end, |n| n.end))
        };
        let node = Node {
            start,
            end,
            decorated,
            kind: NodeKind::Seq { flow, items },
        };
        let read = Read {
            node,
            value: Value::Array(values),
            size,
            shape: Shape::Sequence,
        };
        self.anchored(anchor, read)
    }

    /// A mapping, its entries read one by one: merge keys merged, duplicate keys noted (the
    /// last one wins), collection keys refused.
    fn mapping(
        &mut self,
        style: StructureStyle,
        anchor: usize,
        decorated: bool,
        (start, end): (usize, usize),
    ) -> Result<Read, ParseError> {
        let flow = style == StructureStyle::Flow;
        let mut entries: Vec<Entry> = Vec::new();
        let mut map = Map::new();
        let mut merged: Vec<Map<String, Value>> = Vec::new();
        let mut size = Size {
            values: 1,
            bytes: 0,
        };
        let close = loop {
            let (ev, sp) = self.next()?;
            if matches!(ev, Event::MappingEnd) {
                break sp;
            }
            let merge_key =
                matches!(&ev, Event::Scalar(t, ScalarStyle::Plain, _, None) if t == "<<");
            self.lookahead = Some((ev, sp));
            let key = self.node()?;
            let value = self.node()?;
            // A key counts its text, its value all of it.
            size.bytes += key.size.bytes;
            size.add(value.size);
            if merge_key {
                if self.build {
                    collect_merge(&value.value, &mut merged).map_err(|message| ParseError {
                        offset: value.node.start,
                        message,
                    })?;
                    entries.push(Entry {
                        key: "<<".to_owned(),
                        key_start: key.node.start,
                        value: value.node,
                    });
                }
                continue;
            }
            refuse_collection_key(key.shape, key.node.start)?;
            if self.build {
                let name = key_text(&key.value);
                if map.contains_key(&name) {
                    self.duplicates.push((key.node.start, name.clone()));
                }
                map.insert(name.clone(), value.value);
                entries.push(Entry {
                    key: name,
                    key_start: key.node.start,
                    value: value.node,
                });
            }
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
        let node = Node {
            start,
            end,
            decorated,
            kind: NodeKind::Map { flow, entries },
        };
        let read = Read {
            node,
            value: Value::Object(map),
            size,
            shape: Shape::Mapping,
        };
        self.anchored(anchor, read)
    }
}

/// A scalar event's parts.
struct Scalar<'t> {
    text: &'t str,
    style: ScalarStyle,
    /// With an anchor or a tag.
    decorated: bool,
    /// The suffix of a tag of YAML's namespace (`!!binary`: `binary`).
    suffix: Option<&'t str>,
}

fn resolve_untagged(text: &str, style: ScalarStyle) -> Value {
    if style == ScalarStyle::Plain {
        resolve_plain(text)
    } else {
        Value::String(text.to_owned())
    }
}

/// A mapping or a sequence as a mapping key: Kubernetes' YAML readers (go-yaml v2 and v3)
/// refuse it ("invalid map key"), and a text for it would be made from its contents (as JSON),
/// which a key of a key holds escaped again, doubling per level of nesting.
fn refuse_collection_key(key: Shape, offset: usize) -> Result<(), ParseError> {
    let what = match key {
        Shape::Mapping => "a mapping",
        Shape::Sequence => "a sequence",
        Shape::Scalar => return Ok(()),
    };
    Err(ParseError {
        offset,
        message: format!(
            "{what} as a mapping key: Kubernetes' YAML reader refuses it (\"invalid map key\")"
        ),
    })
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

/// Where a tab error is: the parser reports "found a tab" at the start of the scalar it was
/// reading (the line before the tab, when a continuation line is indented with one); the tab
/// itself is the first at or after that, on the next lines.
fn at_the_tab(text: &str, offset: usize, message: &str) -> usize {
    if !message.contains("found a tab") {
        return offset;
    }
    let rest = &text.as_bytes()[offset..];
    // Within the line reported and the one after it.
    let lines_end = memchr::memchr_iter(b'\n', rest)
        .nth(1)
        .map_or(rest.len(), |i| i);
    memchr::memchr(b'\t', &rest[..lines_end]).map_or(offset, |i| offset + i)
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

    /// `? {? {? … a : 1} : 1} : v`, nested `levels` deep.
    fn nested_keys(levels: usize) -> String {
        let mut key = "a".to_owned();
        for _ in 0..levels {
            key = format!("{{? {key} : 1}}");
        }
        format!("? {key}\n: v\n")
    }

    #[test]
    fn collections_as_keys_are_refused_where_the_first_one_is() {
        // 30 levels once made a text doubling per level (3.7 GB and an abort).
        let text = nested_keys(30);
        let err = parse_general(&text).unwrap_err();
        assert!(err.message.contains("invalid map key"), "{err:?}");
        assert_eq!(err.offset, text.rfind("{? a").unwrap(), "{err:?}");
        // A sequence, an alias to a mapping or to a sequence, in block and flow mappings.
        for (text, at) in [
            ("? [a, 1]\n: v\n", "[a"),
            ("a: &a [x]\n? [*a, n]\n: n\n", "[*a"),
            ("a: &a {x: 1}\n? *a\n: n\n", "*a\n"),
            ("a: &a [x]\nb: {*a : n}\n", "*a :"),
            ("k: {[a]: 1}\n", "[a]"),
        ] {
            let err = parse_general(text).unwrap_err();
            assert!(err.message.contains("invalid map key"), "{text:?}: {err:?}");
            assert_eq!(err.offset, text.find(at).unwrap(), "{text:?}: {err:?}");
        }
        // Scalars of every kind are keys as Kubernetes reads them.
        let p = parse_general("1: a\ntrue: b\n~: c\n? x\n: d\na: &k yy\n*k : e\n").unwrap();
        assert_eq!(
            p.value,
            json!({"1": "a", "true": "b", "null": "c", "x": "d", "a": "yy", "yy": "e"})
        );
    }

    #[test]
    fn nested_anchors_count_as_copies() {
        // Each anchor keeps a copy of what it holds: 100 nested anchors around 300,000 items
        // (600 KB) once made 2.3 GB.
        let levels = 100;
        let text = format!(
            "k: {}{}1{}\n",
            "&a [".repeat(levels).replace("&a", "&x"),
            "1,".repeat(300_000),
            "]".repeat(levels)
        );
        let err = parse_general(&text).unwrap_err();
        assert!(
            err.message
                .contains("the anchors and aliases copy more than 1000000 values"),
            "{err:?}"
        );
        // A long string aliased many times: counted by its bytes.
        let text = format!(
            "a: &a {}\nb: [{}]\n",
            "x".repeat(1 << 20),
            ["*a"; 100].join(", ")
        );
        let err = parse_general(&text).unwrap_err();
        assert!(
            err.message
                .contains("the aliases expand to more than 64 MiB of text"),
            "{err:?}"
        );
        // What manifests do: a small anchored mapping merged and aliased a few times.
        let text = "base: &b {x: 1, w: 2}\nl: [*b, *b, *b]\nm:\n  <<: *b\n  w: 3\n";
        assert_eq!(
            parse_general(text).unwrap().value["l"][2],
            json!({"x": 1, "w": 2})
        );
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
