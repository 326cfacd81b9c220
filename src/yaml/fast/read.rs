//! The ways into the fast reader: a document read in full, as a value only, shallowly (its
//! identity), checked or compared without building anything; and the first `kind:` of a text.

use serde_json::Value;

use super::reader::Reader;
use crate::yaml::node::{NodeKind, Parsed};

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
pub(super) const IDENTITY: &[&str] = &["apiVersion", "kind", "metadata"];

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

/// No tabs, no carriage returns, no directives: the layout this reader reads.
fn plain_layout(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memchr2(b'\t', b'\r', b).is_none() && !text.starts_with('%')
}
