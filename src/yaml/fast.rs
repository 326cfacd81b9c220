//! A fast reader for the YAML that manifests are written in: block mappings and sequences,
//! one-line plain and quoted scalars, literal block scalars, one-line flow collections and
//! comments. It builds exactly what `parse::parse_document` builds (the same value, span tree
//! and duplicate keys; `tests` and the corpus test compare them) and gives up (`None`) on anything
//! else — anchors, tags, tabs, CRLF, multi-line plain scalars, folded scalars, complex keys,
//! merge keys, directives, errors — which the general parser then reads.

use serde_json::{Map, Value};

use super::node::{Entry, Node, NodeKind, Parsed, ScalarKind};
use super::scalar::{key_text, resolve_plain};

/// Gives up: the general parser reads this document.
struct GiveUp;

type R<T> = Result<T, GiveUp>;

/// The document `text` read the fast way, or `None` when it uses YAML this reader leaves to
/// the general parser.
pub(crate) fn parse(text: &str) -> Option<Parsed> {
    read(text, None, true)
}

/// Only the value of `text` as `parse` reads it, without the span tree (for reading back
/// an edited document, where only the value is compared).
pub(crate) fn parse_value(text: &str) -> Option<Value> {
    read(text, None, false).map(|p| p.value)
}

/// Whether `parse` reads `text` (does not give up), found without building anything.
pub(crate) fn reads(text: &str) -> bool {
    if !plain_layout(text) {
        return false;
    }
    let mut r = Reader::new(text, false);
    r.build = false;
    r.document().is_ok()
}

/// Whether `text`, read as `parse_value` reads it, is `value` — found without building
/// anything (for checking an edited document against the object it should hold). `false`
/// means "not found equal here": the text differs, holds the same keys in another order, or
/// is YAML this reader leaves to the general parser.
pub(crate) fn matches(text: &str, value: &Value) -> bool {
    if !plain_layout(text) {
        return false;
    }
    let mut r = Reader::new(text, false);
    r.build = false;
    r.compare = true;
    r.expect = Some(value);
    r.document().is_ok()
}

/// `text` read by a reader keeping `keep` of the root mapping (all of it when `None`), and
/// the spans of what it keeps when `spans` (without them, the root node's spans mean nothing).
fn read(text: &str, keep: Option<&'static [&'static str]>, spans: bool) -> Option<Parsed> {
    if !plain_layout(text) {
        return None;
    }
    let mut r = Reader::new(text, spans);
    r.keep = keep;
    r.document().ok()
}

/// The top-level keys a shallow read keeps: what says which object a document is.
const IDENTITY: &[&str] = &["apiVersion", "kind", "metadata"];

/// The document `text` checked as `parse` checks it, keeping only `apiVersion`, `kind` and
/// `metadata` of its root mapping (for documents no rule can touch, which are only reported).
/// Duplicate keys are found by their text as written. `None` when `parse` would give up, or
/// when the root is not a block mapping.
pub(crate) fn parse_shallow(text: &str) -> Option<Parsed> {
    // Keys are remembered by 32-bit offsets (`KeySet`).
    u32::try_from(text.len()).ok()?;
    let parsed = read(text, Some(IDENTITY), true)?;
    let block_map = matches!(
        parsed.root.as_ref().map(|n| &n.kind),
        Some(NodeKind::Map { flow: false, .. })
    );
    block_map.then_some(parsed)
}

/// The value of the first `kind:` at the start of a line, as written (no quotes, no comment).
pub(crate) fn top_level_kind(text: &str) -> Option<&str> {
    let at = if text.starts_with("kind:") {
        0
    } else {
        text.find("\nkind:")? + 1
    };
    let line = &text[at + 5..];
    let line = &line[..line.find('\n').unwrap_or(line.len())];
    let value = line.split(" #").next().unwrap_or("").trim();
    (!value.is_empty() && value.bytes().all(|b| b.is_ascii_alphanumeric())).then_some(value)
}

struct Reader<'a> {
    text: &'a str,
    b: &'a [u8],
    duplicates: Vec<(usize, String)>,
    /// Build values and span trees; when off, the text is only checked.
    build: bool,
    /// Whether nodes (spans) are built with the values.
    spans: bool,
    /// Reading shallowly: the root mapping keeps only these keys' values.
    keep: Option<&'static [&'static str]>,
    /// Block collections open around the current one (deeper is left to the general
    /// parser, which refuses it).
    depth: usize,
    /// Comparing (`matches`): nothing is built; each node read takes `expect`, the value it
    /// must be, and gives up where it is not.
    compare: bool,
    expect: Option<&'a Value>,
}

/// A line of content: where it starts, its first non-blank byte, and its end (before `\n`).
#[derive(Clone, Copy)]
struct Line {
    start: usize,
    content: usize,
    end: usize,
}

impl Line {
    fn indent(&self) -> usize {
        self.content - self.start
    }
}

impl<'a> Reader<'a> {
    fn new(text: &'a str, spans: bool) -> Self {
        Reader {
            text,
            b: text.as_bytes(),
            duplicates: Vec::new(),
            build: true,
            spans,
            keep: None,
            depth: 0,
            compare: false,
            expect: None,
        }
    }

    /// When comparing, the value the node being read must be (taken: each node takes its
    /// own once); `None` when not comparing.
    fn expected(&mut self) -> R<Option<&'a Value>> {
        if !self.compare {
            return Ok(None);
        }
        self.expect.take().map(Some).ok_or(GiveUp)
    }

    /// When comparing, sets what the next node read must be: `expected` (its parent's
    /// expectation) must hold `child`.
    fn expect_child(&mut self, child: Option<&'a Value>) -> R<()> {
        if self.compare {
            debug_assert!(self.expect.is_none(), "an expectation nothing took");
            self.expect = Some(child.ok_or(GiveUp)?);
        }
        Ok(())
    }

    /// When comparing, the scalar just read must be the expected value: `read` gives it
    /// (called only when comparing, and only where the value is not the plain text itself).
    fn check_scalar(&mut self, read: impl FnOnce() -> Value) -> R<()> {
        match self.expected()? {
            Some(e) if read() != *e => Err(GiveUp),
            _ => Ok(()),
        }
    }

    /// `check_scalar` for a scalar that reads as the string `s` (quoted, block).
    fn check_string(&mut self, s: &str) -> R<()> {
        match self.expected()? {
            Some(Value::String(e)) if e != s => Err(GiveUp),
            Some(Value::String(_)) | None => Ok(()),
            Some(_) => Err(GiveUp),
        }
    }

    /// `check_scalar` for a plain scalar written `raw`: most are strings read as written,
    /// compared without being resolved.
    fn check_plain(&mut self, raw: &str) -> R<()> {
        if !self.compare {
            return Ok(());
        }
        if let Some(Value::String(s)) = self.expect
            && s == raw
            && plain_reads_as_written(raw)
        {
            self.expect = None;
            return Ok(());
        }
        self.check_scalar(|| resolve_plain(raw))
    }

    fn line_end(&self, pos: usize) -> usize {
        memchr(b'\n', &self.b[pos..]).map_or(self.b.len(), |i| pos + i)
    }

    /// The start of the line after the one ending at `end` (its `\n`, or the end of the text).
    fn after_line(&self, end: usize) -> usize {
        (end + 1).min(self.b.len())
    }

    /// The first line at or after the line start `pos` that holds content (not blank, not
    /// only a comment).
    fn content_line(&self, mut pos: usize) -> Option<Line> {
        while pos < self.b.len() {
            let end = self.line_end(pos);
            let c = self.skip_blanks(pos, end);
            if c < end && self.b[c] != b'#' {
                return Some(Line {
                    start: pos,
                    content: c,
                    end,
                });
            }
            pos = end + 1;
        }
        None
    }

    fn document(&mut self) -> R<Parsed> {
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

    /// `-` followed by a blank or the end of the line.
    fn is_dash(&self, pos: usize, end: usize) -> bool {
        self.b[pos] == b'-' && (pos + 1 == end || self.b[pos + 1] == b' ')
    }

    /// A block sequence whose dashes are at column `col` of their lines, the first on `l` at
    /// byte `dash`.
    fn block_seq(&mut self, dash: usize, l: Line) -> R<(Node, Value, Option<Line>)> {
        self.nested(|r| r.block_seq_items(dash, l))
    }

    /// Runs `read` one collection deeper.
    fn nested<T>(&mut self, read: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        if self.depth >= super::MAX_DEPTH {
            return Err(GiveUp);
        }
        self.depth += 1;
        let out = read(self);
        self.depth -= 1;
        out
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

    /// The key of a `key: value` entry starting at `pos`: its text as written (quotes
    /// included) and the offset of its `:`; `None` when the line is not an entry.
    fn key_at(&self, pos: usize, end: usize) -> R<Option<(&'a str, usize)>> {
        match self.b[pos] {
            b'\'' | b'"' => {
                let (_, after) = self.quoted(pos, end)?;
                let at = self.skip_blanks(after, end);
                if at < end && self.b[at] == b':' && (at + 1 == end || self.b[at + 1] == b' ') {
                    long_key(pos, at)?;
                    return Ok(Some((&self.text[pos..after], at)));
                }
                Ok(None)
            }
            b'?' | b'&' | b'*' | b'!' | b'|' | b'>' | b'%' | b'@' | b'`' => {
                if self.b[pos] == b'?' && (pos + 1 == end || self.b[pos + 1] == b' ') {
                    return Err(GiveUp);
                }
                Ok(None)
            }
            b']' | b'}' | b',' => Err(GiveUp),
            b'[' | b'{' | b'#' => Ok(None),
            _ => {
                let mut i = pos;
                loop {
                    i = find_either(self.b, i, end, b':', b'#');
                    if i == end {
                        return Ok(None);
                    }
                    match self.b[i] {
                        b':' if i + 1 == end || self.b[i + 1] == b' ' => {
                            let raw = self.text[pos..i].trim_end_matches(' ');
                            if raw.is_empty() {
                                return Err(GiveUp);
                            }
                            long_key(pos, i)?;
                            return Ok(Some((raw, i)));
                        }
                        b'#' if self.b[i - 1] == b' ' => return Ok(None),
                        _ => {}
                    }
                    i += 1;
                }
            }
        }
    }

    /// The key as Kubernetes reads it, from its text as written at `pos`.
    fn key_text(&self, raw: &str, pos: usize) -> String {
        match raw.as_bytes()[0] {
            b'\'' | b'"' => self
                .quoted(pos, pos + raw.len())
                .map(|(s, _)| s)
                .unwrap_or_default(),
            _ => match resolve_plain(raw) {
                Value::String(s) => s,
                other => key_text(&other),
            },
        }
    }

    /// A value written after `key: ` or `- ` on its line (from `pos` to the line's `end`):
    /// scalar, flow collection or block scalar. `indent` is the column of the collection
    /// holding it.
    fn inline_value(&mut self, pos: usize, end: usize, indent: usize) -> R<(Node, Value, usize)> {
        match self.b[pos] {
            b'\'' | b'"' => {
                let (s, after) = self.quoted(pos, end)?;
                self.rest_is_comment(after, end)?;
                self.check_string(&s)?;
                let kind = if self.b[pos] == b'\'' {
                    ScalarKind::SingleQuoted
                } else {
                    ScalarKind::DoubleQuoted
                };
                Ok((
                    scalar(pos, after, kind),
                    Value::String(s),
                    self.after_line(end),
                ))
            }
            b'[' | b'{' => {
                let (node, value, after) = self.flow(pos, end, 0)?;
                self.rest_is_comment(after, end)?;
                Ok((node, value, self.after_line(end)))
            }
            b'|' => self.literal(pos, end, indent),
            // Indicators no plain scalar starts with (flow indicators included, found by
            // fuzzing: `name: ]x` is not YAML).
            b'>' | b'&' | b'*' | b'!' | b'%' | b'@' | b'`' | b'?' | b']' | b'}' | b',' => {
                Err(GiveUp)
            }
            b'-' if self.is_dash(pos, end) => Err(GiveUp),
            _ => {
                let mut i = pos;
                let mut stop = end;
                loop {
                    i = find_either(self.b, i, end, b'#', b':');
                    if i == end {
                        break;
                    }
                    match self.b[i] {
                        b'#' if self.b[i - 1] == b' ' => {
                            stop = i;
                            break;
                        }
                        // `a: b: c` is not YAML.
                        b':' if i + 1 == end || self.b[i + 1] == b' ' => return Err(GiveUp),
                        _ => {}
                    }
                    i += 1;
                }
                let raw = self.text[pos..stop].trim_end_matches(' ');
                let e = pos + raw.len();
                self.check_plain(raw)?;
                let value = if self.build {
                    resolve_plain(raw)
                } else {
                    Value::Null
                };
                Ok((
                    scalar(pos, e, ScalarKind::Plain),
                    value,
                    self.after_line(end),
                ))
            }
        }
    }

    /// After a value on its line: nothing but blanks and a comment.
    fn rest_is_comment(&self, at: usize, end: usize) -> R<()> {
        let had_blank = at < end && self.b[at] == b' ';
        let at = self.skip_blanks(at, end);
        if at == end || (had_blank && self.b[at] == b'#') {
            Ok(())
        } else {
            Err(GiveUp)
        }
    }

    /// A quoted scalar on one line from `pos`: its value and the offset after the closing
    /// quote.
    fn quoted(&self, pos: usize, end: usize) -> R<(String, usize)> {
        let q = self.b[pos];
        let mut out = String::new();
        let mut i = pos + 1;
        let mut run = i;
        while i < end {
            let c = self.b[i];
            if q == b'\'' && c == b'\'' {
                out.push_str(&self.text[run..i]);
                if i + 1 < end && self.b[i + 1] == b'\'' {
                    out.push('\'');
                    i += 2;
                    run = i;
                    continue;
                }
                return Ok((out, i + 1));
            }
            if q == b'"' && c == b'"' {
                out.push_str(&self.text[run..i]);
                return Ok((out, i + 1));
            }
            if q == b'"' && c == b'\\' {
                out.push_str(&self.text[run..i]);
                let (ch, used) = self.escape(i + 1, end)?;
                out.push(ch);
                i += 1 + used;
                run = i;
                continue;
            }
            i += 1;
        }
        // Runs past the line: a multi-line quoted scalar.
        Err(GiveUp)
    }

    /// The character a `\` escape stands for, and how many bytes after the `\` it takes.
    fn escape(&self, at: usize, end: usize) -> R<(char, usize)> {
        let Some(&c) = self.b.get(at).filter(|_| at < end) else {
            return Err(GiveUp);
        };
        let simple = match c {
            b'0' => '\0',
            b'a' => '\u{7}',
            b'b' => '\u{8}',
            b't' => '\t',
            b'n' => '\n',
            b'v' => '\u{b}',
            b'f' => '\u{c}',
            b'r' => '\r',
            b'e' => '\u{1b}',
            b' ' => ' ',
            b'"' => '"',
            b'/' => '/',
            b'\\' => '\\',
            b'N' => '\u{85}',
            b'_' => '\u{a0}',
            b'L' => '\u{2028}',
            b'P' => '\u{2029}',
            b'x' | b'u' | b'U' => {
                let digits = match c {
                    b'x' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                let hex = self.text.get(at + 1..at + 1 + digits).ok_or(GiveUp)?;
                if at + 1 + digits > end {
                    return Err(GiveUp);
                }
                let n = u32::from_str_radix(hex, 16).map_err(|_| GiveUp)?;
                return char::from_u32(n).map(|ch| (ch, 1 + digits)).ok_or(GiveUp);
            }
            _ => return Err(GiveUp),
        };
        Ok((simple, 1))
    }

    /// A literal block scalar (`|`, `|-`, `|+`, `|2`) whose header is at `pos`; `indent` is
    /// the column of the collection holding it.
    fn literal(&mut self, pos: usize, end: usize, indent: usize) -> R<(Node, Value, usize)> {
        let mut chomp = b' ';
        let mut explicit = None;
        let mut i = pos + 1;
        while i < end && matches!(self.b[i], b'+' | b'-' | b'1'..=b'9') {
            match self.b[i] {
                b'+' | b'-' if chomp == b' ' => chomp = self.b[i],
                d @ b'1'..=b'9' if explicit.is_none() => explicit = Some(usize::from(d - b'0')),
                _ => return Err(GiveUp),
            }
            i += 1;
        }
        self.rest_is_comment(i, end)?;
        let mut block_indent = explicit.map(|e| indent + e);
        // The block's lines: `Some(text)` for content, `None` for a blank line (only when
        // the value is built: a large block only checked is not listed).
        let mut lines: Vec<Option<&str>> = Vec::new();
        let build = self.build || self.compare;
        let mut line = self.after_line(end);
        let mut block_end = line;
        while line < self.b.len() {
            let le = self.line_end(line);
            let spaces = self.b[line..le].iter().take_while(|&&c| c == b' ').count();
            if line + spaces == le {
                // A blank line; one with spaces where they could be content is left to the
                // general parser.
                if spaces > 0 && block_indent.is_none_or(|bi| spaces > bi) {
                    return Err(GiveUp);
                }
                // Spaces ending the text, no line break after them: whether the block's span
                // takes them is the general parser's to say (found by fuzzing).
                if spaces > 0 && le == self.b.len() {
                    return Err(GiveUp);
                }
                if build {
                    lines.push(None);
                }
            } else {
                let bi = *block_indent.get_or_insert(spaces);
                if bi <= indent || spaces < bi {
                    break;
                }
                if build {
                    lines.push(Some(&self.text[line + bi..le]));
                }
            }
            block_end = (le + 1).min(self.b.len());
            line = block_end;
        }
        if !build {
            return Ok((
                scalar(pos, block_end, ScalarKind::Block),
                Value::Null,
                block_end,
            ));
        }
        let trailing = lines.iter().rev().take_while(|l| l.is_none()).count();
        let body = &lines[..lines.len() - trailing];
        if body.is_empty() && chomp == b'+' {
            return Err(GiveUp);
        }
        let mut out = String::new();
        for (n, l) in body.iter().enumerate() {
            if n > 0 {
                out.push('\n');
            }
            if let Some(text) = l {
                out.push_str(text);
            }
        }
        // The end of the text counts as a line break, as in the general parser.
        if !body.is_empty() {
            match chomp {
                b'-' => {}
                b'+' => out.push_str(&"\n".repeat(trailing + 1)),
                _ => out.push('\n'),
            }
        }
        self.check_string(&out)?;
        Ok((
            scalar(pos, block_end, ScalarKind::Block),
            Value::String(out),
            block_end,
        ))
    }

    /// A flow collection on one line from `pos` (`[` or `{`): node, value and the offset after
    /// it.
    fn flow(&mut self, pos: usize, end: usize, depth: usize) -> R<(Node, Value, usize)> {
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

    /// The first byte from `i` that is not a space (`end` when there is none). Eight bytes
    /// at a time: indentation is most of what a manifest's lines begin with.
    fn skip_blanks(&self, mut i: usize, end: usize) -> usize {
        while let Some(chunk) = self.b[i..end].first_chunk::<8>() {
            let other = u64::from_le_bytes(*chunk) ^ (EACH * u64::from(b' '));
            if other != 0 {
                return i + (other.trailing_zeros() / 8) as usize;
            }
            i += 8;
        }
        while i < end && self.b[i] == b' ' {
            i += 1;
        }
        i
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

fn scalar(start: usize, end: usize, kind: ScalarKind) -> Node {
    Node {
        start,
        end,
        decorated: false,
        kind: NodeKind::Scalar(kind),
    }
}

/// The value left out after `key:` or `-`: an empty scalar where the general parser puts
/// it (on the `:` of a key, right after the `-` of an item).
fn empty(at: usize) -> Node {
    scalar(at, at, ScalarKind::Empty)
}

/// A word with every byte 1: `EACH * c` is `c` in every byte.
const EACH: u64 = u64::from_le_bytes([1; 8]);

/// The first `a` or `b` in `bytes[i..end]` (`end` when neither is there), eight bytes at a
/// time: most keys and values are short, too short for `memchr`'s vectors to pay off.
fn find_either(bytes: &[u8], mut i: usize, end: usize, a: u8, b: u8) -> usize {
    // A byte of `x` is zero where `x - EACH` borrowed into its high bit and `x`'s was clear;
    // the lowest such byte is the first zero (borrows only flag bytes above it).
    let zeros = |x: u64| x.wrapping_sub(EACH) & !x & (EACH << 7);
    while let Some(chunk) = bytes[i..end].first_chunk::<8>() {
        let word = u64::from_le_bytes(*chunk);
        let found = zeros(word ^ (EACH * u64::from(a))) | zeros(word ^ (EACH * u64::from(b)));
        if found != 0 {
            return i + (found.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    bytes[i..end]
        .iter()
        .position(|&c| c == a || c == b)
        .map_or(end, |p| i + p)
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    memchr::memchr(needle, haystack)
}

/// No tabs, no carriage returns, no directives: the layout this reader reads.
fn plain_layout(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memchr2(b'\t', b'\r', b).is_none() && !text.starts_with('%')
}

/// An implicit key is at most 1024 characters to its colon (YAML 1.2, 7.4.2); a longer
/// one is left to the general parser, which says so (found by fuzzing). Counted in bytes,
/// so a key of fewer characters may be left too.
fn long_key(start: usize, colon: usize) -> R<()> {
    if colon - start > 1024 {
        return Err(GiveUp);
    }
    Ok(())
}

/// Whether a plain key reads as its own text (a string, as written): most keys, found without
/// resolving them.
fn plain_reads_as_written(raw: &str) -> bool {
    match raw.as_bytes().first() {
        Some(b'\'' | b'"') | None => false,
        // What may be a number: resolved to be sure.
        Some(b'0'..=b'9' | b'+' | b'-' | b'.') => {
            matches!(resolve_plain(raw), Value::String(ref s) if s == raw)
        }
        Some(_) => super::scalar::word(raw).is_none(),
    }
}

/// What follows a `---` or `...` on its line leaves it a marker alone: nothing, or spaces
/// and maybe a comment. (`...#` is no marker: a comment needs a space before it.)
fn marker_alone(rest: &str) -> bool {
    let trimmed = rest.trim_start_matches(' ');
    trimmed.is_empty() || (trimmed.starts_with('#') && trimmed.len() < rest.len())
}

// Checks the tests and the fuzzer (`crate::fuzz`) make: each panics where the readers
// disagree. Test support, built for the unit tests and with the `oracles` feature.

/// The fast reader, where it reads `text`, gives what the general parser gives.
#[cfg(any(test, feature = "oracles"))]
pub(crate) fn agrees(text: &str) -> bool {
    // The checks that build nothing (how large documents are read) agree with the reads.
    assert_eq!(reads(text), parse(text).is_some(), "{text:?}");
    let general = super::parse::parse_general(text);
    let checked = super::parse::check_general(text);
    match &general {
        Ok(_) => assert_eq!(checked, Ok(()), "{text:?}"),
        // A merge key's value is looked at only when building.
        Err(e) if e.message.contains("merge key") => {}
        Err(e) => assert_eq!(checked.as_ref(), Err(e), "{text:?}"),
    }
    match parse(text) {
        Some(fast) => {
            let general = super::parse::parse_general(text)
                .unwrap_or_else(|e| panic!("fast read what is not YAML: {text:?}: {e:?}"));
            assert_eq!(fast, general, "{text:?}");
            // Without spans, the same value.
            assert_eq!(parse_value(text).as_ref(), Some(&general.value), "{text:?}");
            // Compared without being built: found to be its value (unless a duplicate key
            // left the value with fewer keys than the text), and not any other.
            assert!(
                matches(text, &general.value) || !general.duplicates.is_empty(),
                "not found to read as its value: {text:?}"
            );
            for other in variants(&general.value) {
                assert!(
                    !matches(text, &other),
                    "found to read as {other:?}: {text:?}"
                );
            }
            true
        }
        None => false,
    }
}

/// Values that differ from `value` in one place each (a scalar changed, a collection given
/// an item or a key more or less), for the first 64 nodes.
#[cfg(any(test, feature = "oracles"))]
fn variants(value: &Value) -> Vec<Value> {
    fn paths(v: &Value, path: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if out.len() >= 64 {
            return;
        }
        out.push(path.clone());
        let children: Vec<&Value> = match v {
            Value::Array(a) => a.iter().collect(),
            Value::Object(m) => m.values().collect(),
            _ => Vec::new(),
        };
        for (i, child) in children.into_iter().enumerate() {
            path.push(i);
            paths(child, path, out);
            path.pop();
        }
    }
    let mut all = Vec::new();
    paths(value, &mut Vec::new(), &mut all);
    let mut out = Vec::new();
    for path in all {
        for shorter in [false, true] {
            let mut changed = value.clone();
            let mut node = &mut changed;
            for &i in &path {
                node = match node {
                    Value::Array(a) => &mut a[i],
                    Value::Object(m) => m.values_mut().nth(i).expect("a path into the value"),
                    _ => unreachable!("paths lead through collections"),
                };
            }
            // A key no text holds: the reader refuses NUL.
            *node = match (node.take(), shorter) {
                (Value::Array(mut a), true) if !a.is_empty() => {
                    a.pop();
                    Value::Array(a)
                }
                (Value::Object(mut m), true) if !m.is_empty() => {
                    let last = m.keys().next_back().cloned().unwrap_or_default();
                    m.shift_remove(&last);
                    Value::Object(m)
                }
                (_, true) => continue,
                (Value::Array(mut a), false) => {
                    a.push(Value::Null);
                    Value::Array(a)
                }
                (Value::Object(mut m), false) => {
                    m.insert("\0".to_owned(), Value::Null);
                    Value::Object(m)
                }
                (Value::String(s), false) => Value::String(s + "x"),
                (Value::Null, false) => Value::String(String::new()),
                (Value::Bool(b), false) => Value::Bool(!b),
                (Value::Number(n), false) => Value::String(n.to_string()),
            };
            out.push(changed);
        }
    }
    out
}

/// A shallow read keeps what a full read gives for `apiVersion`, `kind` and `metadata`.
#[cfg(any(test, feature = "oracles"))]
pub(crate) fn shallow_agrees(text: &str) -> bool {
    let Some(shallow) = parse_shallow(text) else {
        return false;
    };
    let full = parse(text).expect("read in full where read shallowly");
    let keep = |v: &Value| -> Value {
        let mut m = v.as_object().cloned().unwrap_or_default();
        m.retain(|k, _| IDENTITY.contains(&k.as_str()));
        Value::Object(m)
    };
    assert_eq!(shallow.value, keep(&full.value), "{text:?}");
    let (Some(NodeKind::Map { entries: a, .. }), Some(NodeKind::Map { entries: b, .. })) = (
        shallow.root.as_ref().map(|n| &n.kind),
        full.root.as_ref().map(|n| &n.kind),
    ) else {
        panic!("not mappings: {text:?}");
    };
    let b: Vec<&Entry> = b
        .iter()
        .filter(|e| IDENTITY.contains(&e.key.as_str()))
        .collect();
    assert_eq!(a.iter().collect::<Vec<_>>(), b, "{text:?}");
    assert_eq!(shallow.duplicates.len(), full.duplicates.len(), "{text:?}");
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_the_general_parser_reads() {
        let read = [
            "a: 1\nb: two\n",
            "a:\nb: 1\n",
            "a: \n  b: x  # c\n  c:\n",
            "---\nk: v\n...\n",
            "--- # c\nk: v\n",
            "l:\n- a\n-\n- b: 1\n  c: 2\n- - x\n  - y\n",
            "x: |\n  hi\n\n  there\n\ny: 2\n",
            "x: |\n  hi\n# c\ny: 2\n",
            "x: |-\n  hi\n\n",
            "x: |+\n  hi\n\n\nz: 1\n",
            "x: |2\n    indented\n  base\n",
            "a:\n  x: |\n    hi\n\n  y: 1\n",
            "x: |\n  hi",
            "x: |\ny: 1\n",
            "f: {a: 1, b: [x, 'y'], \"c\": \"d\"}\ng: []\nh: {}\n",
            "# only\n",
            "",
            "s: 'it''s'\nd: \"a\\tb\\u00e9\\\\\"\n",
            "- a\n",
            "k: v # c\n# trailing\n",
            "a:\n  - x\n  # c\n  - y\nb: 1",
            "on: yes\nmode: 0644\nq: \"on\"\nn: ~\ne: ''\n",
            "k: v\nk: w\n",
            "url: http://x:8080/a#frag\nt: a #b\n",
            "spec:\n  containers:\n  - name: app\n    image: x:1\n    args: [--a, \"b c\"]\n    env:\n    - {name: A, value: \"1\"}\n",
            "k: v\n...\n# after\n",
            "hello\n",
        ];
        for text in read {
            assert!(agrees(text), "left to the general parser: {text:?}");
        }
    }

    #[test]
    fn compares_without_building() {
        use serde_json::json;
        let text = "a: 1\n\"b c\": [x, {k: 'z'}]\nd:\n- |\n  lit\n-\ne: {}\nf: \"on\"\n";
        let value =
            json!({"a": 1, "b c": ["x", {"k": "z"}], "d": ["lit\n", null], "e": {}, "f": "on"});
        assert!(matches(text, &value));
        assert!(variants(&value).iter().all(|v| !matches(text, v)));
        // The same keys in another order: not found here (a full comparison finds them
        // equal).
        let reordered =
            json!({"b c": ["x", {"k": "z"}], "a": 1, "d": ["lit\n", null], "e": {}, "f": "on"});
        assert!(!matches(text, &reordered));
        // Scalars compared by what they read as.
        for v in [json!({"a": "on"}), json!({"a": true})] {
            assert_eq!(matches("a: on\n", &v), parse_value("a: on\n") == Some(v));
        }
        assert!(matches(
            "a: '1'\nb: 1.5\nc: ~\n",
            &json!({"a": "1", "b": 1.5, "c": null})
        ));
        assert!(!matches("a: '1'\n", &json!({"a": 1})));
        assert!(!matches("a: 1\n", &json!({"a": "1"})));
        // Duplicate keys and what the fast reader leaves alone: not found.
        assert!(!matches("a: 1\na: 1\n", &json!({"a": 1})));
        assert!(!matches("a: &x 1\n", &json!({"a": 1})));
        assert!(matches("", &json!(null)));
        assert!(!matches("", &json!({})));
    }

    #[test]
    fn leaves_the_rest_to_the_general_parser() {
        let left = [
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "a:\tb\n",
            "a: b\r\n",
            "a: multi\n  line\n",
            "a: 'multi\n  line'\n",
            "a: >\n  folded\n",
            "? complex\n: key\n",
            "<<: {a: 1}\n",
            "%YAML 1.1\n---\na: 1\n",
            "a: [1,\n  2]\n",
            "a: b: c\n",
            "a: 1\n b: 2\n",
            "- a\nb: 1\n",
            "--- x\n",
            // A flow mapping cut after a colon at the end of the text (found by fuzzing: an
            // index past the end).
            "a: {b: ",
            "a: {b:",
            // Flow indicators do not start a plain scalar (found by fuzzing).
            "a: ]b\n",
            "- }b\n",
            "a: ,b\n",
            "]a: b\n",
            // A flow key starting with a reserved indicator (found by fuzzing).
            "a: {`b: c}\n",
            // An item on a later line, after a comment (found by fuzzing).
            "a:\n-\n# c\n  x\n",
            // A block scalar, then spaces ending the text (found by fuzzing).
            "a: |\n  x\n ",
            "a: |\n  x\n\n  ",
            // An empty sequence item with spaces after its dash (found by fuzzing).
            "a:\n- ",
            "a:\n- x\n-  ",
            "a:\n  - x\n  - \nb: 1\n",
            "a:\n- \n- x\n",
            // An empty sequence item with a comment (found by fuzzing).
            "a:\n- #c\n",
            "a:\n- x\n- # c\nb: 1\n",
            // A marker followed by `#` without a space is no marker (found by fuzzing).
            "a\n...#\n",
            "---#\na: 1\n",
            // An implicit key longer than 1024 characters (found by fuzzing).
            &format!("{}: b\n", "k".repeat(1025)),
            &format!("a: {{{}: b}}\n", "k".repeat(1025)),
        ];
        for text in left {
            assert!(!agrees(text), "read fast: {text:?}");
        }
    }

    #[test]
    fn shallow_reads_keep_the_identity() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: {a: b}\ndata:\n  k: |\n    v\n  l: [1, 2]\n  k: again\n";
        assert!(shallow_agrees(text));
        assert_eq!(top_level_kind(text), Some("ConfigMap"));
        assert_eq!(
            top_level_kind("a: 1\nkind: Service # svc\n"),
            Some("Service")
        );
        assert_eq!(top_level_kind("spec:\n  kind: X\n"), None);
        assert!(parse_shallow("- a\n").is_none());
    }

    /// Duplicates among many keys of a mapping that is not built (they are hashed).
    #[test]
    fn shallow_reads_find_duplicates_among_many_keys() {
        let mut text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n".to_owned();
        for i in 0..40 {
            text.push_str(&format!("  k{i}: v\n"));
        }
        text.push_str("  k3: again\n  k33: again\n");
        assert!(shallow_agrees(&text));
        let shallow = parse_shallow(&text).unwrap();
        assert_eq!(shallow.duplicates.len(), 2);
    }

    #[test]
    fn shallow_reads_compare_keys_by_what_they_read_as() {
        // Found by fuzzing: `true` and `TRUE` are one key to a full read.
        for keys in [
            "  true: a\n  TRUE: b\n",
            "  \"a\": 1\n  a: 2\n",
            "  'a': 1\n  a: 2\n",
            "  1: a\n  0x1: b\n",
            "  ~: a\n  null: b\n",
        ] {
            let text =
                format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n{keys}");
            assert!(shallow_agrees(&text), "{text}");
            assert_eq!(parse_shallow(&text).unwrap().duplicates.len(), 1, "{text}");
        }
    }

    /// Every document of the test data, the corpus of real manifests (`testdata/corpus/`)
    /// included.
    #[test]
    fn agrees_on_every_document_of_the_corpus() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut read = 0;
        let mut total = 0;
        for entry in walkdir::WalkDir::new(root.join("testdata"))
            .into_iter()
            .filter_map(Result::ok)
        {
            let path = entry.path();
            if !path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
            {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            // Text the reader refuses (control characters) reaches neither parser.
            let source = crate::read::Source::stdin();
            if crate::read::from_bytes_unparsed(source, text.clone().into_bytes()).is_err() {
                continue;
            }
            for range in crate::read::documents(&text) {
                let doc = &text[range];
                total += 1;
                if std::env::var_os("KINJECT_FAST_STATS").is_some() && parse(doc).is_none() {
                    let why = ["\t", "\r", "&", "*", "!", ">", "<<"]
                        .iter()
                        .filter(|m| doc.contains(*m))
                        .copied()
                        .collect::<Vec<_>>();
                    eprintln!("slow: {} {why:?}", path.display());
                }
                if parse(doc).is_some() && parse_shallow(doc).is_some() {
                    shallow_agrees(doc);
                }
                if let Some(fast) = parse(doc) {
                    read += 1;
                    let general = super::super::parse::parse_general(doc);
                    assert_eq!(Ok(fast), general, "{}: document {doc:?}", path.display());
                }
            }
        }
        if std::env::var_os("KINJECT_FAST_STATS").is_some() {
            eprintln!("{read} of {total} documents read fast");
        }
        // Most real manifests are read the fast way.
        assert!(
            read * 10 > total * 7,
            "{read} of {total} documents read fast"
        );
    }
}

/// Keys of a mapping that is not built (a shallow read's), to find duplicates. Kept as
/// offsets into the text, 12 bytes a key (a 550,000-key ConfigMap's cost 7 MB, where a hash
/// set of them cost 25), and compared when the mapping ends: one by one when few, sorted
/// when many. Shallow reads are of texts with 32-bit offsets.
#[derive(Default)]
struct KeySet {
    /// (where the key starts, where its text starts, its text's length)
    keys: Vec<(u32, u32, u32)>,
    /// Keys that read as something else than their text: where each starts, what it reads as.
    resolved: Vec<(usize, String)>,
}

impl KeySet {
    fn insert(&mut self, key: usize, raw: &str, text: &str, resolved: Option<String>) {
        if let Some(r) = resolved {
            self.resolved.push((key, r));
            return;
        }
        let at = raw.as_ptr() as usize - text.as_ptr() as usize;
        let offset = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        self.keys.push((offset(key), offset(at), offset(raw.len())));
    }

    /// Every key that repeats one before it: (where it starts, its text), in text order.
    fn duplicates(mut self, text: &str) -> Vec<(usize, String)> {
        let raw = |&(_, at, len): &(u32, u32, u32)| &text[at as usize..(at + len) as usize];
        let mut found = Vec::new();
        if !self.resolved.is_empty() {
            // Rare (quoted or special keys): every key by what it reads as.
            let mut all: Vec<(usize, &str)> = self
                .keys
                .iter()
                .map(|k| (k.0 as usize, raw(k)))
                .chain(self.resolved.iter().map(|(at, s)| (*at, s.as_str())))
                .collect();
            all.sort_unstable_by(|a, b| a.1.cmp(b.1).then(a.0.cmp(&b.0)));
            for pair in all.windows(2) {
                if pair[0].1 == pair[1].1 {
                    found.push((pair[1].0, pair[1].1.to_owned()));
                }
            }
            found.sort_unstable_by_key(|(at, _)| *at);
            return found;
        }
        if self.keys.len() <= 16 {
            for (i, k) in self.keys.iter().enumerate() {
                if self.keys[..i].iter().any(|e| raw(e) == raw(k)) {
                    found.push((k.0 as usize, raw(k).to_owned()));
                }
            }
            return found;
        }
        // Equal keys side by side, in text order among themselves: all but the first repeat.
        self.keys
            .sort_unstable_by(|a, b| raw(a).cmp(raw(b)).then(a.0.cmp(&b.0)));
        for pair in self.keys.windows(2) {
            if raw(&pair[0]) == raw(&pair[1]) {
                found.push((pair[1].0 as usize, raw(&pair[1]).to_owned()));
            }
        }
        found.sort_unstable_by_key(|(at, _)| *at);
        found
    }
}
