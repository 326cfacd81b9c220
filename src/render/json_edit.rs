//! JSON documents edited as text: every member and item the injection leaves as it was keeps
//! its bytes (spacing, one line or several, number spellings such as `1e400` or a 30-digit
//! integer), and what is added is written in the layout of its neighbours. `uninject` of an
//! injected document therefore gives it back byte for byte, in any layout (pretty, compact,
//! one line, tabs), as for YAML.
//!
//! The walk compares the document's value with the target: an equal node is copied; a
//! changed mapping keeps each remaining member's text and the whitespace around it; a
//! changed list keeps its common first and last items, pairs the items between by `name`
//! (then by position), and writes new ones afresh.
//!
//! Each edit costs what it touches, not the document: a line's indentation is found in the
//! text just before the edit, or past that in an index of line starts; members are found by key
//! and items by name through maps (members beyond a few). One
//! line holding a pod of N containers made each edit search back to the line's start, and
//! each pairing shift the list of unpaired items (40,000 containers: 2 s to inject, 13 s to
//! uninject, growing with N²).

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::json::patch::equal;
use crate::yaml::{Entry, Node, NodeKind};

/// `raw` with its root JSON value (`root`, which reads as `original`) made to read as
/// `target`.
pub(crate) fn edit(raw: &str, root: &Node, original: &Value, target: &Value) -> String {
    let layout = Layout::detect(&raw[root.start..root.end]);
    let mut out = String::with_capacity(raw.len() + 256);
    out.push_str(&raw[..root.start]);
    let editor = Editor {
        raw,
        layout,
        root_end: root.end,
        line_starts: std::cell::OnceCell::new(),
    };
    editor.node(&mut out, root, original, target, Parent::Multiline);
    out.push_str(&raw[root.end..]);
    out
}

/// How the document writes what it writes more than once.
struct Layout {
    /// One level of indentation (`"  "`, `"    "`, `"\t"`).
    unit: String,
    newline: &'static str,
    /// Between a key and its value (`": "`, `":"`).
    colon: String,
    /// Between the items of a one-line collection (`", "`, `","`).
    comma: String,
}

impl Layout {
    fn detect(body: &str) -> Layout {
        let newline = if body.contains("\r\n") { "\r\n" } else { "\n" };
        let unit = body
            .lines()
            .skip(1)
            .map(|l| &l[..l.len() - l.trim_start_matches([' ', '\t']).len()])
            .find(|indent| !indent.is_empty())
            .unwrap_or("  ")
            .to_owned();
        let colon = if body.contains("\":") && !body.contains("\": ") {
            ":"
        } else {
            ": "
        };
        let comma = if body.contains(", ") || body.contains(",\n") || !body.contains(',') {
            ", "
        } else {
            ","
        };
        Layout {
            unit,
            newline,
            colon: colon.to_owned(),
            comma: comma.to_owned(),
        }
    }
}

/// Whether the collection a new value goes into is written on several lines.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Parent {
    Multiline,
    OneLine,
}

struct Editor<'a> {
    raw: &'a str,
    layout: Layout,
    /// Where the edited value ends in `raw`.
    root_end: usize,
    /// Where each line of `raw` (up to `root_end`) starts, in order: made the first time a
    /// line's start is further back than `NEAR`.
    line_starts: std::cell::OnceCell<Vec<usize>>,
}

/// How far back a line's start is searched for before the index of line starts is used:
/// pretty JSON's lines are shorter, and never need the index.
const NEAR: usize = 256;

/// Where each line of `text` starts: 0 and after every line break.
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1))
        .collect()
}

/// The text around a collection's members or items, read from the original.
struct Gaps<'a> {
    /// Before the first member, after the bracket.
    first: &'a str,
    /// Before each later member: from the end of the one before to its start (the comma and
    /// the whitespace around it).
    between: Vec<&'a str>,
    /// After the last member, before the bracket.
    last: &'a str,
    /// Whether it had members at all.
    had: bool,
    /// Written on several lines.
    multiline: bool,
    /// The indentation of the collection's first line.
    indent: &'a str,
}

/// A collection being written: its gaps, whether its members go on lines of their own (the
/// style of what goes into it), and their indentation.
struct Frame<'a> {
    gaps: Gaps<'a>,
    lines: bool,
    style: Parent,
    member_indent: String,
}

impl Editor<'_> {
    /// `node` (reading as `original`) written to read as `target`; `parent` is the style of
    /// the collection it is in.
    fn node(
        &self,
        out: &mut String,
        node: &Node,
        original: &Value,
        target: &Value,
        parent: Parent,
    ) {
        if equal(original, target) {
            out.push_str(&self.raw[node.start..node.end]);
            return;
        }
        match (&node.kind, original, target) {
            (NodeKind::Map { entries, .. }, Value::Object(o), Value::Object(t)) => {
                self.object(out, node, entries, o, t, parent);
            }
            (NodeKind::Seq { items, .. }, Value::Array(o), Value::Array(t)) => {
                self.array(out, node, items, o, t, parent);
            }
            _ => {
                let indent = self.indent_of(node.start);
                self.fresh(out, target, indent, parent);
            }
        }
    }

    /// The whitespace a line starts with, for the line holding byte `at`.
    fn indent_of(&self, at: usize) -> &str {
        let near = at.saturating_sub(NEAR);
        let start = match memchr::memrchr(b'\n', &self.raw.as_bytes()[near..at]) {
            Some(i) => near + i + 1,
            None if near == 0 => 0,
            None => {
                let starts = self
                    .line_starts
                    .get_or_init(|| line_starts(&self.raw[..self.root_end]));
                starts[starts.partition_point(|&s| s <= at).saturating_sub(1)]
            }
        };
        let line = &self.raw[start..];
        &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
    }

    /// The gaps of a collection whose members span `spans` (start, end) inside `node`.
    fn gaps(&self, node: &Node, spans: &[(usize, usize)]) -> Gaps<'_> {
        let inner = (node.start + 1, node.end - 1);
        let text = &self.raw[node.start..node.end];
        match (spans.first(), spans.last()) {
            (Some(first), Some(last)) => Gaps {
                first: &self.raw[inner.0..first.0],
                between: spans
                    .windows(2)
                    .map(|w| &self.raw[w[0].1..w[1].0])
                    .collect(),
                last: &self.raw[last.1..inner.1],
                had: true,
                multiline: text.contains('\n'),
                indent: self.indent_of(node.start),
            },
            _ => Gaps {
                first: "",
                between: Vec::new(),
                last: "",
                had: false,
                multiline: false,
                indent: self.indent_of(node.start),
            },
        }
    }

    /// Where a member or item at position `at` of the output starts: its own text before it
    /// when it had this place, else the collection's habit.
    fn lead(&self, gaps: &Gaps<'_>, original_at: Option<usize>, at: usize, lines: bool) -> String {
        if at == 0 {
            return if gaps.had {
                gaps.first.to_owned()
            } else if lines {
                self.member_break(gaps)
            } else {
                String::new()
            };
        }
        match (original_at, gaps.between.first()) {
            (Some(j), _) if j > 0 => gaps.between[j - 1].to_owned(),
            (_, Some(between)) => (*between).to_owned(),
            (_, None) if lines => format!(",{}", self.member_break(gaps)),
            (_, None) => self.layout.comma.clone(),
        }
    }

    /// Whether the members of a collection go on lines of their own: as they do, or, in one
    /// that had none, as in the collection around it.
    fn lines(gaps: &Gaps<'_>, parent: Parent) -> bool {
        if gaps.had {
            gaps.multiline
        } else {
            parent == Parent::Multiline
        }
    }

    /// The line break and indentation before a member of a multi-line collection.
    fn member_break(&self, gaps: &Gaps<'_>) -> String {
        if gaps.first.contains('\n') {
            gaps.first.to_owned()
        } else {
            format!("{}{}{}", self.layout.newline, gaps.indent, self.layout.unit)
        }
    }

    /// After the last of `members` members.
    fn close(&self, gaps: &Gaps<'_>, members: usize, lines: bool) -> String {
        match members {
            0 => String::new(),
            _ if gaps.had => gaps.last.to_owned(),
            _ if lines => format!("{}{}", self.layout.newline, gaps.indent),
            _ => String::new(),
        }
    }

    fn object(
        &self,
        out: &mut String,
        node: &Node,
        entries: &[Entry],
        original: &Map<String, Value>,
        target: &Map<String, Value>,
        parent: Parent,
    ) {
        let spans: Vec<(usize, usize)> =
            entries.iter().map(|e| (e.key_start, e.value.end)).collect();
        let Frame {
            gaps,
            lines,
            style,
            member_indent,
        } = self.frame(node, &spans, parent);
        let keys = Keys::of(entries);
        out.push('{');
        for (at, (key, value)) in target.iter().enumerate() {
            let found = keys.find(entries, key);
            out.push_str(&self.lead(&gaps, found, at, lines));
            match found {
                Some(j) => {
                    let e = &entries[j];
                    // The key and the colon as written.
                    out.push_str(&self.raw[e.key_start..e.value.start]);
                    let before = original.get(key).unwrap_or(&Value::Null);
                    self.node(out, &e.value, before, value, style);
                }
                None => {
                    out.push_str(&super::json::pretty(&Value::String(key.clone()), ""));
                    out.push_str(&self.colon(entries));
                    self.fresh(out, value, &member_indent, style);
                }
            }
        }
        out.push_str(&self.close(&gaps, target.len(), lines));
        out.push('}');
    }

    fn array(
        &self,
        out: &mut String,
        node: &Node,
        items: &[Node],
        original: &[Value],
        target: &[Value],
        parent: Parent,
    ) {
        let spans: Vec<(usize, usize)> = items.iter().map(|i| (i.start, i.end)).collect();
        let Frame {
            gaps,
            lines,
            style,
            member_indent,
        } = self.frame(node, &spans, parent);
        out.push('[');
        for (at, (value, found)) in target.iter().zip(pair(original, target)).enumerate() {
            out.push_str(&self.lead(&gaps, found, at, lines));
            match found {
                Some(j) => self.node(out, &items[j], &original[j], value, style),
                None => self.fresh(out, value, &member_indent, style),
            }
        }
        out.push_str(&self.close(&gaps, target.len(), lines));
        out.push(']');
    }

    /// What a collection (members at `spans`, in a collection of style `parent`) writes
    /// its members with.
    fn frame(&self, node: &Node, spans: &[(usize, usize)], parent: Parent) -> Frame<'_> {
        let gaps = self.gaps(node, spans);
        let lines = Self::lines(&gaps, parent);
        let member_indent = self.member_indent(&gaps);
        Frame {
            gaps,
            lines,
            style: if lines {
                Parent::Multiline
            } else {
                Parent::OneLine
            },
            member_indent,
        }
    }

    /// The indentation of a collection's members (of the lines they start on).
    fn member_indent(&self, gaps: &Gaps<'_>) -> String {
        match gaps.first.rfind('\n') {
            Some(i) => gaps.first[i + 1..].to_owned(),
            None => format!("{}{}", gaps.indent, self.layout.unit),
        }
    }

    /// Between a key and its value: as the mapping's first member has it, else the
    /// document's habit.
    fn colon(&self, entries: &[Entry]) -> String {
        entries
            .first()
            .map(|e| {
                let between = &self.raw[e.key_start..e.value.start];
                // After the key's closing quote.
                let key_end = json_string_end(between);
                between[key_end..].to_owned()
            })
            .filter(|c| c.trim() == ":" && !c.contains('\n'))
            .unwrap_or_else(|| self.layout.colon.clone())
    }

    /// `value` written afresh, its lines (when the collection around it has several) indented
    /// from `indent`, the indentation of the line it starts on.
    fn fresh(&self, out: &mut String, value: &Value, indent: &str, parent: Parent) {
        match value {
            Value::Object(m) if !m.is_empty() => {
                out.push('{');
                for (i, (k, v)) in m.iter().enumerate() {
                    self.fresh_separator(out, i, indent, parent);
                    out.push_str(&super::json::pretty(&Value::String(k.clone()), ""));
                    out.push_str(&self.layout.colon);
                    self.fresh(out, v, &format!("{indent}{}", self.layout.unit), parent);
                }
                self.fresh_close(out, indent, parent);
                out.push('}');
            }
            Value::Array(a) if !a.is_empty() => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    self.fresh_separator(out, i, indent, parent);
                    self.fresh(out, v, &format!("{indent}{}", self.layout.unit), parent);
                }
                self.fresh_close(out, indent, parent);
                out.push(']');
            }
            scalar => out.push_str(&super::json::pretty(scalar, "")),
        }
    }

    fn fresh_separator(&self, out: &mut String, i: usize, indent: &str, parent: Parent) {
        match parent {
            Parent::Multiline => {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(self.layout.newline);
                out.push_str(indent);
                out.push_str(&self.layout.unit);
            }
            Parent::OneLine if i > 0 => out.push_str(&self.layout.comma),
            Parent::OneLine => {}
        }
    }

    fn fresh_close(&self, out: &mut String, indent: &str, parent: Parent) {
        if parent == Parent::Multiline {
            out.push_str(self.layout.newline);
            out.push_str(indent);
        }
    }
}

/// The members of a mapping by key, the first of each key: searched in a mapping of a few,
/// through a map beyond (a search per member made a mapping of many keys, such as
/// annotations, quadratic to edit).
struct Keys<'a>(Option<HashMap<&'a str, usize>>);

/// Up to this many members, a search costs less than making a map.
const FEW: usize = 16;

impl<'a> Keys<'a> {
    fn of(entries: &'a [Entry]) -> Self {
        Keys((entries.len() > FEW).then(|| {
            let mut at = HashMap::with_capacity(entries.len());
            for (i, e) in entries.iter().enumerate() {
                at.entry(e.key.as_str()).or_insert(i);
            }
            at
        }))
    }

    /// The index of the first of `entries` (those this was made of) whose key is `key`.
    fn find(&self, entries: &[Entry], key: &str) -> Option<usize> {
        match &self.0 {
            Some(at) => at.get(key).copied(),
            None => entries.iter().position(|e| e.key == key),
        }
    }
}

/// For each target item, the original item it continues, if any: equal items at the start
/// and at the end are the same items; between them, items with the same `name` are (the
/// first one left of that name), then each item without a name takes the first original
/// left.
fn pair(original: &[Value], target: &[Value]) -> Vec<Option<usize>> {
    let mut found = vec![None; target.len()];
    let head = original
        .iter()
        .zip(target)
        .take_while(|(o, t)| equal(o, t))
        .count();
    let tail = original[head..]
        .iter()
        .rev()
        .zip(target[head..].iter().rev())
        .take_while(|(o, t)| equal(o, t))
        .count();
    for (i, slot) in found.iter_mut().enumerate().take(head) {
        *slot = Some(i);
    }
    for k in 0..tail {
        found[target.len() - 1 - k] = Some(original.len() - 1 - k);
    }
    let middle = head..target.len() - tail;
    let free = head..original.len() - tail;
    let mut by_name = Named::of(original, free.clone());
    let mut taken = vec![false; free.len()];
    for t in middle.clone() {
        if let Some(o) = name(&target[t]).and_then(|n| by_name.take(n)) {
            found[t] = Some(o);
            taken[o - free.start] = true;
        }
    }
    let mut left = free.clone().filter(|o| !taken[o - free.start]);
    for t in middle {
        if found[t].is_none() && name(&target[t]).is_none() {
            found[t] = left.next();
        }
    }
    // Kept in their order: a pairing that would move an item is written afresh instead.
    let mut last = None;
    for slot in &mut found {
        if let Some(j) = *slot {
            if last.is_some_and(|l| j <= l) {
                *slot = None;
            } else {
                last = Some(j);
            }
        }
    }
    found
}

/// An item's `name`, when it is a mapping with a string one.
fn name(v: &Value) -> Option<&str> {
    v.get("name").and_then(Value::as_str)
}

/// The items of a range of a list by name, each name's in order, taken one at a time: the
/// first of each name, and after each item the next of its name.
struct Named<'a> {
    first: HashMap<&'a str, usize>,
    /// For each item of the range (from its start), the next of its name.
    next: Vec<Option<usize>>,
    start: usize,
}

impl<'a> Named<'a> {
    fn of(list: &'a [Value], range: std::ops::Range<usize>) -> Self {
        let mut first = HashMap::new();
        let mut next = vec![None; range.len()];
        for i in range.clone().rev() {
            if let Some(n) = name(&list[i]) {
                next[i - range.start] = first.insert(n, i);
            }
        }
        Named {
            first,
            next,
            start: range.start,
        }
    }

    /// The first item left named `n`, taken.
    fn take(&mut self, n: &str) -> Option<usize> {
        let slot = self.first.get_mut(n)?;
        let at = *slot;
        match self.next[at - self.start] {
            Some(next) => *slot = next,
            None => {
                self.first.remove(n);
            }
        }
        Some(at)
    }
}

/// The end of the JSON string at the start of `text` (just past its closing quote).
fn json_string_end(text: &str) -> usize {
    let mut escaped = false;
    for (i, c) in text.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return i + 1,
            _ => {}
        }
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    /// `text` (one JSON document) edited to read as `target`.
    fn edited(text: &str, target: &Value) -> String {
        let parsed = crate::yaml::parse_document(text).expect("JSON is YAML");
        let root = parsed.root.as_ref().expect("a root");
        super::edit(text, root, &parsed.value, target)
    }

    /// One object written in the layouts JSON comes in: pretty with two or four spaces or
    /// tabs, CRLF, compact, one line with spaces, Python's `json.dumps`, mixed.
    fn layouts(value: &Value) -> Vec<String> {
        let pretty = |indent: &str| crate::render::json::pretty(value, indent);
        let compact = serde_json::to_string(value).expect("json");
        let spaced = compact
            .replace("\":", "\": ")
            .replace(",\"", ", \"")
            .replace(",{", ", {")
            .replace(",[", ", [");
        vec![
            pretty("  "),
            pretty("    "),
            pretty("\t"),
            pretty("  ").replace('\n', "\r\n"),
            compact,
            spaced.clone(),
            format!("{spaced}\n"),
            "{\n  \"apiVersion\": \"v1\", \"kind\": \"Pod\",\n  \"metadata\": {\"name\": \"p\", \"labels\": {}},\n  \"spec\": {\n    \"containers\": [{\"name\": \"app\", \"image\": \"a\", \"args\": []}],\n    \"volumes\": []\n  }\n}\n".to_owned(),
        ]
    }

    fn pod() -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "labels": {}},
            "spec": {
                "containers": [{"name": "app", "image": "a", "args": []}],
                "volumes": []
            }
        })
    }

    /// What injection does to a pod, and more: keys added at every depth, items appended,
    /// prepended and inserted, empty collections filled, scalars replaced, keys removed.
    fn changes() -> Vec<Value> {
        let mut out = Vec::new();
        let mut v = pod();
        v["metadata"]["annotations"] = json!({"kinject.dev/status": "{\"version\":1}"});
        v["spec"]["containers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "s", "image": "example.com/s:1", "env": [{"name": "A", "value": "x\u{2028}\"y"}]}));
        out.push(v.clone());
        v["spec"]["containers"]
            .as_array_mut()
            .unwrap()
            .insert(0, json!({"name": "first", "image": "f"}));
        v["spec"]["containers"][1]["args"] = json!(["--x", 1, true, null]);
        v["spec"]["volumes"] = json!([{"name": "v", "emptyDir": {}}]);
        v["metadata"]["labels"] = json!({"a": "b"});
        out.push(v.clone());
        let mut w = pod();
        w["metadata"]["name"] = json!("renamed");
        w["spec"].as_object_mut().unwrap().remove("volumes");
        w["spec"]["serviceAccountName"] = json!("sa");
        out.push(w);
        out
    }

    #[test]
    fn every_layout_reads_as_the_target_and_comes_back_byte_for_byte() {
        for text in layouts(&pod()) {
            for target in changes() {
                let out = edited(&text, &target);
                let read = crate::yaml::parse_value(&out)
                    .unwrap_or_else(|e| panic!("not YAML: {e:?}\n{text}\n->\n{out}"));
                assert!(
                    crate::json::patch::equal(&read, &target),
                    "reads otherwise:\n{text}\n->\n{out}"
                );
                let back = edited(&out, &pod());
                assert_eq!(back, text, "not back:\n{text}\n->\n{out}");
            }
        }
    }

    /// What is not edited keeps its spelling, which a re-print would change: numbers Go
    /// reads as text or as a float (`1e400`, a 30-digit integer), escapes, spacing.
    #[test]
    fn untouched_values_keep_their_text() {
        let text = "{\"kind\":\"Pod\",\"spec\":{\"t\":1e400,\"p\":123456789012345678901234567890,\"s\":\"\\u00e9\\/\",\"containers\":[]}}";
        let parsed = crate::yaml::parse_document(text).unwrap();
        let mut target = parsed.value.clone();
        target["spec"]["containers"] = json!([{"name": "s"}]);
        let out = edited(text, &target);
        assert_eq!(
            out,
            "{\"kind\":\"Pod\",\"spec\":{\"t\":1e400,\"p\":123456789012345678901234567890,\"s\":\"\\u00e9\\/\",\"containers\":[{\"name\":\"s\"}]}}"
        );
    }

    /// The one layout that does not come back: an empty collection written with whitespace
    /// inside (`[ ]`, `[\n    ]`), which, filled and emptied again, is written `[]`.
    #[test]
    fn an_empty_collection_with_whitespace_inside_comes_back_tight() {
        let text = "{\"volumes\": [ ]}";
        let out = edited(text, &json!({"volumes": [{"name": "v"}]}));
        assert_eq!(out, "{\"volumes\": [{\"name\": \"v\"}]}");
        assert_eq!(edited(&out, &json!({"volumes": []})), "{\"volumes\": []}");
    }

    /// New items are written as their neighbours are: on their own lines, indented as they
    /// are, in a collection written on several lines.
    #[test]
    fn new_members_follow_their_neighbours() {
        let text = "{\n\t\"kind\": \"Pod\",\n\t\"spec\": {\n\t\t\"containers\": [\n\t\t\t{\"name\": \"app\"}\n\t\t]\n\t}\n}";
        let mut target: Value = serde_json::from_str(text).unwrap();
        target["spec"]["containers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "s", "args": ["a"]}));
        target["spec"]["volumes"] = json!([{"name": "v"}]);
        assert_eq!(
            edited(text, &target),
            "{\n\t\"kind\": \"Pod\",\n\t\"spec\": {\n\t\t\"containers\": [\n\t\t\t{\"name\": \"app\"},\n\t\t\t{\n\t\t\t\t\"name\": \"s\",\n\t\t\t\t\"args\": [\n\t\t\t\t\t\"a\"\n\t\t\t\t]\n\t\t\t}\n\t\t],\n\t\t\"volumes\": [\n\t\t\t{\n\t\t\t\t\"name\": \"v\"\n\t\t\t}\n\t\t]\n\t}\n}"
        );
    }

    /// The pairing as it was first written, a search of the unpaired items per item (which
    /// made it quadratic): the linear one must pair every list as it did.
    fn pair_by_search(original: &[Value], target: &[Value]) -> Vec<Option<usize>> {
        let mut found = vec![None; target.len()];
        let head = original
            .iter()
            .zip(target)
            .take_while(|(o, t)| o == t)
            .count();
        let tail = original[head..]
            .iter()
            .rev()
            .zip(target[head..].iter().rev())
            .take_while(|(o, t)| o == t)
            .count();
        for (i, slot) in found.iter_mut().enumerate().take(head) {
            *slot = Some(i);
        }
        for k in 0..tail {
            found[target.len() - 1 - k] = Some(original.len() - 1 - k);
        }
        let middle = head..target.len() - tail;
        let mut free: Vec<usize> = (head..original.len() - tail).collect();
        let name = |v: &Value| v.get("name").and_then(Value::as_str).map(str::to_owned);
        for t in middle.clone() {
            let Some(n) = name(&target[t]) else { continue };
            if let Some(at) = free
                .iter()
                .position(|&o| name(&original[o]).as_deref() == Some(&n))
            {
                found[t] = Some(free.remove(at));
            }
        }
        for t in middle {
            if found[t].is_none() && name(&target[t]).is_none() && !free.is_empty() {
                found[t] = Some(free.remove(0));
            }
        }
        let mut last = None;
        for slot in &mut found {
            if let Some(j) = *slot {
                if last.is_some_and(|l| j <= l) {
                    *slot = None;
                } else {
                    last = Some(j);
                }
            }
        }
        found
    }

    #[test]
    fn items_are_paired_as_the_search_paired_them() {
        // Lists of up to 7 items from a few kinds: named (names repeat), unnamed mappings,
        // scalars; every pair of such lists from a fixed pseudo-random sequence.
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let list = |next: &mut dyn FnMut(u64) -> u64| -> Vec<Value> {
            (0..next(8))
                .map(|_| match next(5) {
                    0 => json!(next(3)),
                    1 => json!({"image": format!("i{}", next(2))}),
                    2 => json!({"name": 7}),
                    _ => json!({"name": format!("n{}", next(4)), "v": next(2)}),
                })
                .collect()
        };
        for _ in 0..20_000 {
            let original = list(&mut next);
            let target = list(&mut next);
            assert_eq!(
                super::pair(&original, &target),
                pair_by_search(&original, &target),
                "{original:?} -> {target:?}"
            );
        }
    }

    /// A mapping of many keys (found through a map) edited as one of a few (searched): keys
    /// added, removed, replaced.
    #[test]
    fn a_mapping_of_many_keys_is_edited_as_one_of_a_few() {
        for n in [3, 40] {
            let members: Vec<String> = (0..n).map(|i| format!("\"k{i}\": {i}")).collect();
            let text = format!("{{{}}}", members.join(", "));
            let parsed = crate::yaml::parse_document(&text).unwrap();
            let mut target = parsed.value.clone();
            let m = target.as_object_mut().unwrap();
            m.insert("k1".to_owned(), json!("one"));
            m.shift_remove("k0");
            m.insert("new".to_owned(), json!(true));
            let out = edited(&text, &target);
            let want = text
                .replace("{\"k0\": 0, ", "{")
                .replace("\"k1\": 1,", "\"k1\": \"one\",")
                .replace(
                    &format!("{}}}", n - 1),
                    &format!("{}, \"new\": true}}", n - 1),
                );
            assert_eq!(out, want, "{n} keys");
        }
    }

    /// The indentation of the line holding each byte, found near or through the index, is
    /// the one a search back to the line's start finds.
    #[test]
    fn the_indentation_is_the_lines() {
        let long = format!("{{\"a\": [{}]}}", "1, ".repeat(200) + "1");
        let text = format!(
            "{{\n  \"k\": {long},\n\t\t\"l\": [\n    {long}, 2\n  ],\n{}\"m\": 1\n}}",
            " ".repeat(300)
        );
        let parsed = crate::yaml::parse_document(&text).unwrap();
        let root = parsed.root.as_ref().unwrap();
        let editor = super::Editor {
            raw: &text,
            layout: super::Layout::detect(&text),
            root_end: root.end,
            line_starts: std::cell::OnceCell::new(),
        };
        for at in 0..=text.len() {
            let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let line = &text[start..];
            let want = &line[..line.len() - line.trim_start_matches([' ', '\t']).len()];
            assert_eq!(editor.indent_of(at), want, "at {at}");
        }
    }
}
