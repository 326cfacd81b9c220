//! A parsed document: its value, the tree of byte spans under it (`Node`), and how deep and
//! how large the readers let that tree grow.

/// How deeply collections may nest in a document. Kubernetes objects nest a few dozen
/// levels (a CRD's schema the deepest); a document nested deeper is refused before anything
/// recursive (reading, injecting, editing, freeing) could run out of stack.
pub(crate) const MAX_DEPTH: usize = 256;

/// How many values the anchors and aliases of a document may copy in all (each alias copies
/// its anchor's value, each anchor keeps a copy for its aliases): a small text can expand
/// exponentially ("billion laughs"), or nested anchors copy the same values once per level;
/// real manifests stay far below.
pub(crate) const MAX_ALIAS_EXPANSION: usize = 1_000_000;

/// How many bytes of text (strings and keys) the anchors and aliases of a document may copy in
/// all: a long string aliased many times is a small text too.
pub(crate) const MAX_ALIAS_TEXT: usize = 64 << 20;

/// A node of a parsed document: where it sits in the text and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
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

#[derive(Debug, Clone, PartialEq, Eq)]
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

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The key as Kubernetes reads it (non-string keys are stringified).
    pub key: String,
    pub key_start: usize,
    pub value: Node,
}

impl Node {
    /// The node at `path` (mapping keys and sequence indices), if the text has it.
    pub(crate) fn at<S: AsRef<str>>(&self, path: &[S]) -> Option<&Node> {
        let mut node = self;
        for token in path {
            let token = token.as_ref();
            node = match &node.kind {
                NodeKind::Map { .. } => node.get(token)?,
                NodeKind::Seq { items, .. } => items.get(token.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(node)
    }

    /// Byte span of the key of the entry at `path` (its last token is the key).
    pub(crate) fn key_span<S: AsRef<str>>(&self, path: &[S]) -> Option<(usize, usize)> {
        let (last, parent) = path.split_last()?;
        let NodeKind::Map { entries, .. } = &self.at(parent)?.kind else {
            return None;
        };
        let e = entries.iter().rev().find(|e| e.key == last.as_ref())?;
        Some((e.key_start, e.key_start + e.key.len()))
    }

    /// The path (mapping keys and sequence indices) of the mapping entry whose key starts at
    /// `offset`, its key last. Entries and items are in the text's order: each level looks
    /// only into the one that starts last at or before `offset` (a search through the whole
    /// tree for each of 200,000 duplicate keys took minutes).
    pub(crate) fn key_path(&self, offset: usize) -> Option<Vec<String>> {
        let mut path = Vec::new();
        let mut node = self;
        loop {
            if offset < node.start || offset >= node.end.max(node.start + 1) {
                return None;
            }
            match &node.kind {
                NodeKind::Map { entries, .. } => {
                    let i = entries.partition_point(|e| e.key_start <= offset);
                    let entry = &entries[i.checked_sub(1)?];
                    path.push(entry.key.clone());
                    if entry.key_start == offset {
                        return Some(path);
                    }
                    node = &entry.value;
                }
                NodeKind::Seq { items, .. } => {
                    let i = items
                        .partition_point(|n| n.start <= offset)
                        .checked_sub(1)?;
                    path.push(i.to_string());
                    node = &items[i];
                }
                _ => return None,
            }
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            // The last duplicate wins, as in the value.
            NodeKind::Map { entries, .. } => entries
                .iter()
                .rev()
                .find(|e| e.key == key)
                .map(|e| &e.value),
            _ => None,
        }
    }
}

/// A parsed document: its value and, when it has content, the node tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub value: serde_json::Value,
    pub root: Option<Node>,
    pub duplicates: Vec<(usize, String)>,
}
