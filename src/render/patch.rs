//! Patch output: for each object, who it is, where it came from, and the RFC 6902 operations
//! that turn the input object into the output object.

use serde::Serialize;

use crate::json::patch::Op;
use crate::pipeline::{FileResult, Identity};

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

/// One entry per object of the file.
pub(crate) fn entries(file: &FileResult) -> Vec<ObjectPatch<'_>> {
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
        let all = [entry(0), entry(1), entry(2)];
        for split in 0..=3 {
            let mut array = crate::render::json::PrettyArray::default();
            let mut out = String::new();
            array.push(&all[..split], &mut out);
            array.push::<ObjectPatch<'_>>(&[], &mut out);
            array.push(&all[split..], &mut out);
            array.finish(&mut out);
            let expected = format!("{}\n", serde_json::to_string_pretty(&all).unwrap());
            assert_eq!(out, expected);
        }
        let mut out = String::new();
        crate::render::json::PrettyArray::default().finish(&mut out);
        assert_eq!(
            out,
            format!("{}\n", serde_json::to_string_pretty(&[0; 0]).unwrap())
        );
    }
}
