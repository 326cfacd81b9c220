//! YAML as kinject sees it: one document's text, the value Kubernetes would read from it, and a
//! tree of byte spans so edits can be spliced into the original text.

pub(crate) mod edit;
pub(crate) mod emit;
mod parse;
pub(crate) mod scalar;
pub(crate) mod style;

pub use parse::ParseError;
pub(crate) use parse::parse_document;

/// A node of a parsed document: where it sits in the text and what it is.
#[derive(Debug, Clone)]
pub struct Node {
    /// Byte offset of the first character of the node's content (for a block sequence: its
    /// first `-`; for a block mapping: its first key; for a block scalar: its `|`/`>` header).
    pub start: usize,
    /// Byte offset just past the node's content.
    pub end: usize,
    /// The node carries an anchor or a tag: edits must not split it from its properties.
    pub decorated: bool,
    pub kind: NodeKind,
}

#[derive(Debug, Clone)]
pub enum NodeKind {
    Scalar(ScalarKind),
    Seq { flow: bool, items: Vec<Node> },
    Map { flow: bool, entries: Vec<Entry> },
    Alias,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarKind {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Block,
    /// An implicit null: nothing at all was written (`key:` at the end of a line).
    Empty,
}

#[derive(Debug, Clone)]
pub struct Entry {
    /// The key as Kubernetes reads it (non-string keys are stringified).
    pub key: String,
    pub key_start: usize,
    pub value: Node,
}

impl Node {
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            // The last duplicate wins, as in the value.
            NodeKind::Map { entries, .. } => {
                entries.iter().rev().find(|e| e.key == key).map(|e| &e.value)
            }
            _ => None,
        }
    }
}

/// A parsed document: its value and, when it has content, the node tree.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub value: serde_json::Value,
    pub root: Option<Node>,
    /// Non-fatal findings (duplicate keys), each with the byte offset it concerns.
    pub warnings: Vec<(usize, String)>,
}
