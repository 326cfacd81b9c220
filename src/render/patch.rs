//! Patch output: for each object, who it is, where it came from, and the RFC 6902 operations
//! that turn the input object into the output object.

use serde::Serialize;

use crate::patch::Op;
use crate::pipeline::{FileResult, Identity};

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectPatch<'a> {
    #[serde(flatten)]
    pub identity: &'a Identity,
    pub source: Source<'a>,
    pub patch: &'a [Op],
}

#[derive(Debug, Serialize)]
pub struct Source<'a> {
    pub file: &'a str,
    /// Index of the document in the file (from 0).
    pub document: usize,
    /// JSON pointer of the object in its document (empty unless in a List).
    #[serde(skip_serializing_if = "str::is_empty")]
    pub path: &'a str,
}

/// One entry per object of the file.
pub fn entries(file: &FileResult) -> Vec<ObjectPatch<'_>> {
    file.docs
        .iter()
        .flat_map(|d| {
            d.objects
                .iter()
                .filter(|o| o.outcome.is_ok())
                .map(move |o| ObjectPatch {
                    identity: &o.identity,
                    source: Source {
                        file: &file.input.source.name,
                        document: d.index,
                        path: &o.pointer,
                    },
                    patch: &o.ops,
                })
        })
        .collect()
}
