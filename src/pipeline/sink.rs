//! What `process` hands each document to, ripgrep's `Sink` shape: a sink makes the output of
//! a document that changed (or of every document) on the worker that processed it, checking
//! it against the document the operations must give, and takes the outputs in document order.
//! The renderers implement it (`render::yaml::YamlStream`, `render::json::JsonStream`,
//! `render::patch::PatchStream`); the pipeline never calls a renderer.

use std::collections::BTreeMap;

use serde_json::Value;

use super::result::{ObjectResult, null_as};
use crate::diagnostic::Located;
use crate::diagnostic::codes;
use crate::json::patch::{self, Op};
use crate::read::{Document, Input};
use crate::yaml::Parsed;

/// Where `process` sends each document.
pub trait Sink: Sync {
    /// What the sink makes of a document that changed (of every document: `EVERY_DOCUMENT`),
    /// on a worker.
    type Made: Send;
    /// What the sink makes of the whole input, once every document was pushed.
    type Output;

    /// Whether the results keep every document parsed and each object's operations (for
    /// outputs made from the results: KRM, overlays, `explain`). When not, a document is let
    /// go of as soon as the sink has made its part, so that memory stays near the input's
    /// size.
    const KEEPS_VALUES: bool;

    /// Whether the sink needs every document's whole value. When not (and when injecting),
    /// documents no rule can touch are only checked and identified, not read in full.
    const READS_VALUES: bool = Self::KEEPS_VALUES;

    /// Whether the sink makes the output of every document (`document`), not only of those
    /// that changed (`make`). Each document's value after the operations and its objects'
    /// operations are then kept until the sink has had it, and let go of after unless the
    /// results keep values.
    const EVERY_DOCUMENT: bool = false;

    /// How much text is processed at a time: what the sink makes of it is held until it is
    /// pushed, in document order, once the whole chunk is made (4 MiB by default).
    const CHUNK: usize = 4 << 20;

    /// Whether each object's result keeps every rule's verdict (`kinject explain`).
    fn verdicts(&self) -> bool {
        false
    }

    /// Makes the output of a document that changed into `target`. Returns what it made, and
    /// `target` when the results keep it. A check that fails either is what is made or is
    /// located in `errors`.
    fn make(
        &self,
        changed: Changed<'_>,
        target: Box<Value>,
        errors: &mut Vec<Located>,
    ) -> (Option<Self::Made>, Option<Box<Value>>);

    /// Makes the output of a document with content once it was processed, on a worker, when
    /// the sink makes every document's (`EVERY_DOCUMENT`); `made` is what `make` made of it
    /// when it changed.
    fn document(&self, _: Done<'_>, made: Option<Self::Made>) -> Option<Self::Made> {
        made
    }

    /// Takes what was made of `doc` (`None`: it did not change, or the sink made nothing of
    /// it), in document order.
    fn push(&mut self, input: &Input, doc: &Document, made: Option<Self::Made>);

    fn finish(self, input: &Input) -> Self::Output;
}

/// A document that changed, as a sink sees it.
pub struct Changed<'a> {
    pub input: &'a Input,
    pub doc: &'a Document,
    pub parsed: &'a Parsed,
    /// The document's operations (object operations with their pointer in front).
    pub ops: &'a [Op],
    pub(super) objects: &'a [ObjectResult],
}

impl Changed<'_> {
    /// How the nulls the operations write were written before kinject filled them, where
    /// not empty, by pointer of the document.
    pub fn null_as(&self) -> BTreeMap<String, String> {
        null_as(self.objects)
    }
}

/// A document once processed, as a sink that makes every document's output sees it.
pub struct Done<'a> {
    pub input: &'a Input,
    pub doc: &'a Document,
    /// Its value after the operations (as read when none changed it; only what identifies
    /// it when the sink does not read values and no rule could touch it).
    pub value: &'a Value,
    /// Its objects, each with its operations.
    pub objects: &'a [ObjectResult],
}

/// The document's `target` when the operations give it applied to the document as read (the
/// check every output makes of them); else `None`, and the error located in `errors`.
pub(crate) fn checked(
    changed: &Changed<'_>,
    target: Box<Value>,
    errors: &mut Vec<Located>,
) -> Option<Box<Value>> {
    let mut applied = changed.parsed.value.clone();
    match patch::apply(&mut applied, changed.ops) {
        Ok(()) if patch::equal(&applied, &target) => Some(target),
        result => {
            let why = result
                .err()
                .unwrap_or_else(|| "they give a different document".to_owned());
            let (input, at) = (changed.input, changed.doc.range.start);
            errors.push(Located::new(
                codes::INTERNAL,
                &input.source.name,
                input.shared_text(),
                (at, at),
                format!("internal error: the edit operations do not reproduce the injected objects: {why}"),
            ));
            None
        }
    }
}

/// The sink of outputs made from the results' values (KRM, overlays, `explain`): it keeps
/// every document's target, checked to be what the operations give when applied to the input.
#[derive(Debug, Clone, Copy, Default)]
pub struct Values {
    /// Keep every rule's verdict on each object (`kinject explain`).
    pub verdicts: bool,
}

impl Sink for Values {
    type Made = ();
    type Output = ();
    const KEEPS_VALUES: bool = true;

    fn verdicts(&self) -> bool {
        self.verdicts
    }

    fn make(
        &self,
        changed: Changed<'_>,
        target: Box<Value>,
        errors: &mut Vec<Located>,
    ) -> (Option<()>, Option<Box<Value>>) {
        (None, checked(&changed, target, errors))
    }

    fn push(&mut self, _: &Input, _: &Document, _: Option<()>) {}

    fn finish(self, _: &Input) {}
}
