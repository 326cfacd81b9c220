//! Patch output: for each object, who it is, where it came from, and the RFC 6902 operations
//! that turn the input object into the output object; made document by document as the
//! pipeline processes them (`PatchStream`), the entries of one JSON array.

use std::io::Write;

use serde::Serialize;
use serde_json::Value;

use super::json::{Framed, Framing};
use crate::diagnostic::Located;
use crate::json::patch::Op;
use crate::pipeline::{Changed, Done, Identity, Sink};
use crate::read::{Document, Input};

/// The patches of inputs, as the pipeline's sink: each document's entries (one per object
/// that could be planned, with its operations; none for a document without objects) are made
/// on the worker that processed it and written into `out` (framed as an array) in document
/// order. A changed document's operations are checked against its value after them, as the
/// other outputs check theirs. Documents no rule can touch are only identified, not read in
/// full, as for the YAML output.
pub(crate) struct PatchStream<'a, W> {
    out: &'a mut Framed<W>,
}

impl<'a, W> PatchStream<'a, W> {
    pub(crate) fn new(out: &'a mut Framed<W>) -> Self {
        PatchStream { out }
    }
}

impl<W: Write + Send + Sync> Sink for PatchStream<'_, W> {
    /// The document's entries, as items of the array.
    type Made = String;
    type Output = ();
    const KEEPS_VALUES: bool = false;
    const EVERY_DOCUMENT: bool = true;

    fn make(
        &self,
        changed: Changed<'_>,
        target: Box<Value>,
        errors: &mut Vec<Located>,
    ) -> (Option<String>, Option<Box<Value>>) {
        // The check only: the entries are made from the objects' operations.
        crate::pipeline::checked(&changed, target, errors);
        (None, None)
    }

    fn document(&self, done: Done<'_>, _: Option<String>) -> Option<String> {
        items(entries(&done))
    }

    fn push(&mut self, _: &Input, _: &Document, made: Option<String>) {
        if let Some(items) = made {
            self.out.push(&items);
        }
    }

    fn finish(self, _: &Input) {}
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ObjectPatch<'a> {
    #[serde(flatten)]
    pub identity: &'a Identity,
    pub source: Source<'a>,
    pub patch: &'a [Op],
}

#[derive(Debug, Serialize)]
pub(crate) struct Source<'a> {
    pub file: &'a str,
    /// Index of the document in the file (from 0).
    pub document: usize,
    /// JSON pointer of the object in its document (empty unless in a List).
    #[serde(skip_serializing_if = "str::is_empty")]
    pub path: &'a str,
}

/// `entries` as items of the array, joined; `None` when there are none.
fn items<'a>(mut entries: impl Iterator<Item = ObjectPatch<'a>>) -> Option<String> {
    let mut items = Framing::Array.item(&entries.next()?);
    for entry in entries {
        items.push_str(",\n");
        items.push_str(&Framing::Array.item(&entry));
    }
    Some(items)
}

/// One entry per object of the document that could be planned.
fn entries<'a>(done: &Done<'a>) -> impl Iterator<Item = ObjectPatch<'a>> {
    let (file, document) = (&done.input.source.name, done.doc.index);
    done.objects
        .iter()
        .filter(|o| o.outcome.is_ok())
        .map(move |o| ObjectPatch {
            identity: &o.identity,
            source: Source {
                file,
                document,
                path: &o.pointer,
            },
            patch: &o.ops,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_written_in_pieces_are_the_pretty_array() {
        let identity = Identity {
            kind: "Deployment".into(),
            name: "web".into(),
            ..Identity::default()
        };
        let ops = vec![Op::Add {
            path: "/a".into(),
            value: serde_json::json!({"x": ["y\nz"]}),
        }];
        let entry = |document| ObjectPatch {
            identity: &identity,
            source: Source {
                file: "f",
                document,
                path: "",
            },
            patch: &ops,
        };
        let all = [entry(0), entry(0), entry(1), entry(3)];
        // Documents 0 (a List of two objects), 1, 2 (no object) and 3, in parts.
        let documents = [&all[..2], &all[2..3], &[], &all[3..]];
        let expected = format!("{}\n", serde_json::to_string_pretty(&all).unwrap());
        for split in 0..=documents.len() {
            let mut whole = Framed::new(Framing::Array, Vec::new());
            let mut part = Framed::part(Framing::Array);
            for (i, entries) in documents.iter().enumerate() {
                let out = if i < split { &mut whole } else { &mut part };
                if let Some(items) = items(entries.iter().map(|e| entry(e.source.document))) {
                    out.push(&items);
                }
            }
            whole.append(part);
            let out = whole.finish().unwrap();
            assert_eq!(
                String::from_utf8(out).unwrap(),
                expected,
                "split at {split}"
            );
        }
        let none = Framed::new(Framing::Array, Vec::new()).finish().unwrap();
        assert_eq!(
            String::from_utf8(none).unwrap(),
            format!("{}\n", serde_json::to_string_pretty(&[0; 0]).unwrap())
        );
    }
}
