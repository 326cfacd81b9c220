//! What `process` hands each document to, ripgrep's `Sink` shape: a sink makes the output of
//! a document that changed on the worker that processed it, checking it against the document
//! the operations must give, and takes the outputs in document order. The renderers implement
//! it (`render::yaml::YamlStream`); the pipeline never calls a renderer.

use std::collections::BTreeMap;

use serde_json::Value;

use super::ObjectResult;
use crate::diagnostic::Located;
use crate::diagnostic::codes;
use crate::json::patch::{self, Op};
use crate::read::{Document, Input};
use crate::yaml::Parsed;

/// Where `process` sends each document.
pub trait Sink: Sync {
    /// What the sink makes of a document that changed, on a worker.
    type Made: Send;
    /// What the sink makes of the whole input, once every document was pushed.
    type Output;

    /// Whether the results keep every document parsed and each object's operations (for
    /// outputs made from values). When not, a document is let go of as soon as the sink has
    /// made its part, so that memory stays near the input's size, and documents no rule can
    /// touch are only checked and identified, not read in full.
    const KEEPS_VALUES: bool;

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

    /// Takes what was made of `doc` (`None`: it did not change), in document order.
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
        super::null_as(self.objects)
    }
}

/// The sink of outputs made from values (JSON, patches, KRM, overlays, `explain`): it keeps
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
        let mut applied = changed.parsed.value.clone();
        match patch::apply(&mut applied, changed.ops) {
            Ok(()) if patch::equal(&applied, &target) => (None, Some(target)),
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
                (None, None)
            }
        }
    }

    fn push(&mut self, _: &Input, _: &Document, _: Option<()>) {}

    fn finish(self, _: &Input) {}
}
