//! JSON output: one JSON document per input document (the objects after the operations), or
//! all of them as the items of one kubectl `List`; made document by document as the pipeline
//! processes them (`JsonStream`), and written in order into a `Framed` output.

use std::io::{self, Write};

use serde_json::Value;

use crate::diagnostic::Located;
use crate::pipeline::{Changed, Done, Sink};
use crate::read::{Document, Input};

/// The JSON output of inputs, as the pipeline's sink: each document with content is made on
/// the worker that processed it (`-o json`: a pretty JSON document; `-o json-list`: an item of
/// the `List`) and written into `out` in document order; nothing else is kept of it. A changed
/// document's operations are checked against its value after them, as the YAML output checks
/// its edited text.
pub(crate) struct JsonStream<'a, W> {
    out: &'a mut Framed<W>,
}

impl<'a, W> JsonStream<'a, W> {
    /// A stream into `out`, whose framing says which output it is (`Framing::Documents`
    /// or `Framing::List`).
    pub(crate) fn new(out: &'a mut Framed<W>) -> Self {
        JsonStream { out }
    }
}

impl<W: Write + Send + Sync> Sink for JsonStream<'_, W> {
    /// The document's text, as an item of the output.
    type Made = String;
    type Output = ();
    const KEEPS_VALUES: bool = false;
    const READS_VALUES: bool = true;
    const EVERY_DOCUMENT: bool = true;
    /// A quarter of the default: the JSON made of a chunk is held until the chunk is done,
    /// and is about one and a half times its text (10k documents: 7 MB less at the peak).
    const CHUNK: usize = 1 << 20;

    fn make(
        &self,
        changed: Changed<'_>,
        target: Box<Value>,
        errors: &mut Vec<Located>,
    ) -> (Option<String>, Option<Box<Value>>) {
        (None, crate::pipeline::checked(&changed, target, errors))
    }

    fn document(&self, done: Done<'_>, _: Option<String>) -> Option<String> {
        let framing = self.out.framing;
        // An empty document (`---` with nothing after it) is no object: kubectl skips it too.
        let skipped = framing == Framing::List && done.value.is_null();
        (!skipped).then(|| framing.item(done.value))
    }

    fn push(&mut self, _: &Input, _: &Document, made: Option<String>) {
        if let Some(text) = made {
            self.out.push(&text);
        }
    }

    fn finish(self, _: &Input) {}
}

/// How the items of a JSON output are put together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// Pretty JSON documents one after the other (`-o json`).
    Documents,
    /// The items of one kubectl `List` (`-o json-list`), as `kubectl get -o json` prints
    /// several objects: `{"apiVersion": "v1", "items": […], "kind": "List", "metadata":
    /// {"resourceVersion": ""}}`, keys in its order.
    List,
    /// The items of one pretty JSON array (`-o patch`).
    Array,
}

/// What comes before the first item of a `List`.
const LIST_OPENING: &str = "{\n  \"apiVersion\": \"v1\",\n  \"items\": [\n";

/// What comes after the last item of a `List`.
const LIST_CLOSING: &str =
    "\n  ],\n  \"kind\": \"List\",\n  \"metadata\": {\n    \"resourceVersion\": \"\"\n  }\n}\n";

/// A `List` without items.
const LIST_EMPTY: &str = "{\n  \"apiVersion\": \"v1\",\n  \"items\": [],\n  \"kind\": \"List\",\n  \"metadata\": {\n    \"resourceVersion\": \"\"\n  }\n}\n";

impl Framing {
    /// `item` as an item of this output: pretty JSON, indented as the output's items are.
    /// Made in a buffer of the thread's and copied at its size: an output is held until the
    /// documents around it are made, and the text of a growing buffer would keep up to twice
    /// its room (and leave the allocator the blocks it grew through).
    pub(crate) fn item<T: serde::Serialize + ?Sized>(self, item: &T) -> String {
        thread_local! {
            static JSON: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        JSON.with_borrow_mut(|json| {
            json.clear();
            write_pretty(item, "  ", json);
            let text = std::str::from_utf8(json).unwrap_or_default();
            let made = match self {
                Framing::Documents => {
                    let mut made = String::with_capacity(text.len() + 1);
                    made.push_str(text);
                    made.push('\n');
                    made
                }
                Framing::List => indented(text, "    "),
                Framing::Array => indented(text, "  "),
            };
            // The buffer of a very large document is not kept for the rest of the run.
            if json.capacity() > KEPT_BUFFER {
                *json = Vec::new();
            }
            made
        })
    }

    /// What comes before the first item.
    fn opening(self) -> &'static str {
        match self {
            Framing::Documents => "",
            Framing::List => LIST_OPENING,
            Framing::Array => "[\n",
        }
    }

    /// What comes between two items.
    fn separator(self) -> &'static str {
        match self {
            Framing::Documents => "",
            Framing::List | Framing::Array => ",\n",
        }
    }

    /// What comes after the items (`started`: there were any).
    fn closing(self, started: bool) -> &'static str {
        match (self, started) {
            (Framing::Documents, _) => "",
            (Framing::List, true) => LIST_CLOSING,
            (Framing::List, false) => LIST_EMPTY,
            (Framing::Array, true) => "\n]\n",
            (Framing::Array, false) => "[]\n",
        }
    }
}

/// An output of several items written an item at a time into `out` (as
/// `serde_json::to_string_pretty` writes them all at once): each after the separator, or the
/// opening; `finish` closes it. A part (`Framed::part`) holds items made apart, to be
/// appended to the whole (`append`) once those before it are: it has no opening. The first
/// error writing to `out` is kept, and nothing is written after it.
pub(crate) struct Framed<W> {
    framing: Framing,
    out: W,
    /// Whether an item was written.
    started: bool,
    /// Whether the first item comes after the opening (not in a part).
    whole: bool,
    error: Option<io::Error>,
}

impl<W: Write> Framed<W> {
    /// A whole output into `out`.
    pub(crate) fn new(framing: Framing, out: W) -> Self {
        Framed {
            framing,
            out,
            started: false,
            whole: true,
            error: None,
        }
    }

    pub(crate) fn framing(&self) -> Framing {
        self.framing
    }

    /// Writes `item` (one, or several joined by the separator).
    pub(crate) fn push(&mut self, item: &str) {
        self.push_bytes(item.as_bytes());
    }

    /// Appends the items of `part`, in order after those written.
    pub(crate) fn append(&mut self, part: Framed<Vec<u8>>) {
        if let Some(e) = part.error {
            self.error.get_or_insert(e);
        }
        if part.started {
            self.push_bytes(&part.out);
        }
    }

    /// The output, closed; or the first error writing it.
    pub(crate) fn finish(mut self) -> io::Result<W> {
        self.write(self.framing.closing(self.started).as_bytes());
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.out),
        }
    }

    fn push_bytes(&mut self, item: &[u8]) {
        let before = match (self.started, self.whole) {
            (true, _) => self.framing.separator(),
            (false, true) => self.framing.opening(),
            (false, false) => "",
        };
        self.started = true;
        self.write(before.as_bytes());
        self.write(item);
    }

    fn write(&mut self, bytes: &[u8]) {
        if self.error.is_none()
            && !bytes.is_empty()
            && let Err(e) = self.out.write_all(bytes)
        {
            self.error = Some(e);
        }
    }
}

impl Framed<Vec<u8>> {
    /// A part of an output, in memory.
    pub(crate) fn part(framing: Framing) -> Self {
        Framed {
            whole: false,
            ..Framed::new(framing, Vec::new())
        }
    }
}

/// `value` as pretty JSON indented by `indent`, that YAML readers read as the same value:
/// besides what JSON escapes, the characters YAML does not allow raw (DEL, C1 controls,
/// U+FEFF, U+FFFE, U+FFFF) and those YAML 1.1 readers such as kubectl's take for line
/// breaks (NEL, U+2028, U+2029) are written as `\u` escapes.
pub(crate) fn pretty<T: serde::Serialize + ?Sized>(value: &T, indent: &str) -> String {
    let mut out = Vec::new();
    write_pretty(value, indent, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// `pretty`, appended to `out`.
fn write_pretty<T: serde::Serialize + ?Sized>(value: &T, indent: &str, out: &mut Vec<u8>) {
    let fmt = YamlSafe(serde_json::ser::PrettyFormatter::with_indent(
        indent.as_bytes(),
    ));
    let mut ser = serde_json::Serializer::with_formatter(out, fmt);
    let _ = serde::Serialize::serialize(value, &mut ser);
}

struct YamlSafe<'a>(serde_json::ser::PrettyFormatter<'a>);

fn yaml_unsafe(c: char) -> bool {
    matches!(
        c,
        '\u{7F}'..='\u{9F}' | '\u{2028}' | '\u{2029}' | '\u{FEFF}' | '\u{FFFE}' | '\u{FFFF}'
    )
}

impl serde_json::ser::Formatter for YamlSafe<'_> {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut rest = fragment;
        while let Some(i) = rest.find(yaml_unsafe) {
            let c = rest[i..].chars().next().unwrap_or_default();
            writer.write_all(&rest.as_bytes()[..i])?;
            write!(writer, "\\u{:04x}", u32::from(c))?;
            rest = &rest[i + c.len_utf8()..];
        }
        writer.write_all(rest.as_bytes())
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// The largest buffer `Framing::item` keeps for the next item.
const KEPT_BUFFER: usize = 1 << 20;

/// Each line of `json` after `indent` (none after the last line).
fn indented(json: &str, indent: &str) -> String {
    let lines = json.bytes().filter(|&b| b == b'\n').count() + 1;
    let mut out = String::with_capacity(json.len() + lines * indent.len());
    for (i, line) in json.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(indent);
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{Framed, Framing};

    /// `items` written into a whole output of `framing`: those before `a` into it, those
    /// from `a` to `b` into a part appended to it, and the rest into it again.
    fn in_parts(framing: Framing, items: &[serde_json::Value], a: usize, b: usize) -> String {
        let mut whole = Framed::new(framing, Vec::new());
        let mut part = Framed::part(framing);
        for item in &items[..a] {
            whole.push(&framing.item(item));
        }
        for item in &items[a..b] {
            part.push(&framing.item(item));
        }
        whole.append(part);
        // An empty part adds nothing.
        whole.append(Framed::part(framing));
        for item in &items[b..] {
            whole.push(&framing.item(item));
        }
        String::from_utf8(whole.finish().expect("in memory")).expect("UTF-8")
    }

    /// Every way of cutting `items` into three pieces, the middle one a part.
    fn splits(n: usize) -> impl Iterator<Item = (usize, usize)> {
        (0..=n).flat_map(move |a| (a..=n).map(move |b| (a, b)))
    }

    #[test]
    fn a_list_printed_in_parts_is_kubectls_list_printed_whole() {
        let items: Vec<serde_json::Value> = (0..4)
            .map(|i| serde_json::json!({"kind": "Deployment", "n": i, "spec": {"a": [i, {}]}}))
            .collect();
        let whole = serde_json::json!({
            "apiVersion": "v1",
            "items": items,
            "kind": "List",
            "metadata": {"resourceVersion": ""},
        });
        let whole = serde_json::to_string_pretty(&whole).expect("JSON");
        for (a, b) in splits(items.len()) {
            let out = in_parts(Framing::List, &items, a, b);
            assert_eq!(out, format!("{whole}\n"), "parts at {a} and {b}");
        }
        let empty = serde_json::json!({"apiVersion": "v1", "items": [], "kind": "List", "metadata": {"resourceVersion": ""}});
        let empty = serde_json::to_string_pretty(&empty).expect("JSON");
        assert_eq!(in_parts(Framing::List, &[], 0, 0), format!("{empty}\n"));
    }

    #[test]
    fn an_array_printed_in_parts_is_the_array_printed_whole() {
        let items: Vec<serde_json::Value> = (0..5)
            .map(|i| serde_json::json!({"n": i, "list": [i, "x"], "empty": {}}))
            .collect();
        let whole = serde_json::to_string_pretty(&items).expect("JSON");
        for (a, b) in splits(items.len()) {
            let out = in_parts(Framing::Array, &items, a, b);
            assert_eq!(out, format!("{whole}\n"), "parts at {a} and {b}");
        }
        assert_eq!(in_parts(Framing::Array, &[], 0, 0), "[]\n");
    }

    #[test]
    fn documents_printed_in_parts_are_each_pretty_json() {
        let items: Vec<serde_json::Value> = (0..3)
            .map(|i| serde_json::json!({"n": i, "a": [i]}))
            .collect();
        let whole: String = items
            .iter()
            .map(|i| format!("{}\n", serde_json::to_string_pretty(i).expect("JSON")))
            .collect();
        for (a, b) in splits(items.len()) {
            assert_eq!(in_parts(Framing::Documents, &items, a, b), whole);
        }
    }

    #[test]
    fn the_first_error_writing_is_kept() {
        let mut out = Framed::new(Framing::Array, Full);
        out.push("x");
        out.push("y");
        assert_eq!(
            out.finish().err().map(|e| e.kind()),
            Some(std::io::ErrorKind::StorageFull)
        );
    }

    /// A writer that is always full.
    struct Full;

    impl std::io::Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::StorageFull.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn pretty_json_reads_back_as_yaml() {
        let value = serde_json::json!({"a": "x\u{7f}\u{85}\u{2028}\u{2029}\u{feff}\u{fffe}\u{ffff}é\u{1b}"});
        let text = super::pretty(&value, "  ");
        assert!(
            text.contains(r"\u007f\u0085\u2028\u2029\ufeff\ufffe\uffffé\u001b"),
            "{text}"
        );
        let input = crate::read::from_bytes(crate::read::Source::stdin(), text.as_bytes())
            .expect("YAML readers read it");
        assert_eq!(input.documents[0].value().expect("parsed").value, value);
    }
}
