//! The fast reader: the text it reads, the modes it reads in, and what it has read so far.
//! Its reading is in the files beside this one, by what each reads: `text` (lines and bytes),
//! `block` (the document and its block collections), `keys` (a mapping's keys), `scalars`,
//! `flow` (one-line flow collections) and `compare` (the value a node must be, when
//! comparing).

use serde_json::Value;

use crate::yaml::node::{Node, NodeKind, ScalarKind};

/// Gives up: the general parser reads this document.
pub(super) struct GiveUp;

pub(super) type R<T> = Result<T, GiveUp>;

/// Reads one document's text. Four modes, set by the way in (`read`): building values
/// (`build`) with or without their spans (`spans`), keeping only some keys of the root
/// (`keep`), or comparing against a value without building anything (`compare`, `expect`).
pub(super) struct Reader<'a> {
    pub(super) text: &'a str,
    pub(super) b: &'a [u8],
    pub(super) duplicates: Vec<(usize, String)>,
    /// Build values and span trees; when off, the text is only checked.
    pub(super) build: bool,
    /// Whether nodes (spans) are built with the values.
    pub(super) spans: bool,
    /// Reading shallowly: the root mapping keeps only these keys' values.
    pub(super) keep: Option<&'static [&'static str]>,
    /// Block collections open around the current one (deeper is left to the general
    /// parser, which refuses it).
    pub(super) depth: usize,
    /// Comparing (`matches`): nothing is built; each node read takes `expect`, the value it
    /// must be, and gives up where it is not.
    pub(super) compare: bool,
    pub(super) expect: Option<&'a Value>,
}

/// A line of content: where it starts, its first non-blank byte, and its end (before `\n`).
#[derive(Clone, Copy)]
pub(super) struct Line {
    pub(super) start: usize,
    pub(super) content: usize,
    pub(super) end: usize,
}

impl Line {
    pub(super) fn indent(&self) -> usize {
        self.content - self.start
    }
}

impl<'a> Reader<'a> {
    pub(super) fn new(text: &'a str, spans: bool) -> Self {
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

    /// Runs `read` one collection deeper.
    pub(super) fn nested<T>(&mut self, read: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        if self.depth >= crate::yaml::node::MAX_DEPTH {
            return Err(GiveUp);
        }
        self.depth += 1;
        let out = read(self);
        self.depth -= 1;
        out
    }
}

pub(super) fn scalar(start: usize, end: usize, kind: ScalarKind) -> Node {
    Node {
        start,
        end,
        decorated: false,
        kind: NodeKind::Scalar(kind),
    }
}

/// The value left out after `key:` or `-`: an empty scalar where the general parser puts
/// it (on the `:` of a key, right after the `-` of an item).
pub(super) fn empty(at: usize) -> Node {
    scalar(at, at, ScalarKind::Empty)
}
