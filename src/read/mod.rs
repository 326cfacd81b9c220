//! Reading inputs: which files a set of paths names, their text, their documents, and the
//! Kubernetes objects inside each document (`kind: List` items included).
//!
//! This file names the parts and reads one source (`load`); the input, its documents and
//! bytes made into one are `input.rs`, the error of reading `error.rs`. The parts import each
//! other, never this file.

mod decode;
mod error;
mod files;
mod input;
mod objects;
mod split;
mod template;
mod window;

use std::io::Read;

pub(crate) use decode::Encoding;
pub(crate) use error::InputError;
pub(crate) use files::until_binary;
pub(crate) use files::{Intent, discover};
pub use input::Source;
pub(crate) use input::{Document, Input, Stamp};
pub(crate) use input::{from_bytes_unparsed, read_document};
pub(crate) use objects::namespace_labels;
pub use objects::objects;
pub(crate) use split::documents;
pub(crate) use template::{chart_template, is_template_file};
pub(crate) use window::Windows;

/// Reads, splits and parses one source; `stdin` is read when the source is standard input.
pub(crate) fn load(source: &Source, stdin: &mut dyn Read) -> Result<Input, InputError> {
    let mut input = load_unparsed(source, stdin)?;
    input.parse_all();
    Ok(input)
}

/// Reads and splits one source, leaving its documents to be parsed when they are needed.
pub(crate) fn load_unparsed(source: &Source, stdin: &mut dyn Read) -> Result<Input, InputError> {
    let io = |error| InputError::Io {
        name: source.name.clone(),
        error,
    };
    let Some(path) = &source.path else {
        let mut bytes = Vec::new();
        files::until_binary(stdin, &mut bytes).map_err(io)?;
        return input::from_bytes_unparsed(source.clone(), bytes);
    };
    let (bytes, stamp) = files::read(path).map_err(io)?;
    let mut input = input::from_bytes_unparsed(source.clone(), bytes)?;
    input.stamp = Some(stamp);
    Ok(input)
}

/// Decodes, splits and parses bytes read from `source`.
pub fn from_bytes(source: Source, bytes: &[u8]) -> Result<Input, InputError> {
    let mut input = from_bytes_unparsed(source, bytes.to_vec())?;
    input.parse_all();
    Ok(input)
}

#[cfg(test)]
mod tests {
    use super::decode::{DecodeError, Undecodable, decode};
    use super::*;
    use crate::diagnostic::lines::line_col;
    use serde_json::json;

    #[test]
    fn lists_expand_to_items() {
        let v = json!({"kind": "List", "items": [{"kind": "Pod"}, {"kind": "ConfigMapList", "items": [{"kind": "ConfigMap"}]}]});
        let objs: Vec<String> = objects(&v).into_iter().map(|(p, _)| p).collect();
        assert_eq!(objs, vec!["/items/0", "/items/1/items/0"]);
        let empty = json!({"kind": "ConfigMapList", "items": null});
        assert_eq!(objects(&empty), vec![(String::new(), &empty)]);
        assert_eq!(objects(&json!({"kind": "Service"})).len(), 1);
        assert!(objects(&json!("scalar")).is_empty());
    }

    #[test]
    fn decodes_utf16_and_reports_bad_bytes() {
        let mut bytes = vec![0xFF, 0xFE];
        for u in "a: 1\n".encode_utf16() {
            bytes.extend(u.to_le_bytes());
        }
        let input = from_bytes(Source::stdin(), &bytes).unwrap();
        assert_eq!(&*input.text, "a: 1\n");
        assert_eq!(input.encoding, Encoding::Utf16Le);
        let refused = |bytes: &[u8]| match from_bytes(Source::stdin(), bytes).unwrap_err() {
            InputError::Encoding {
                line,
                column,
                problem,
                ..
            } => (line, column, problem),
            e => panic!("{e:?}"),
        };
        assert_eq!(refused(b"a: 1\nb: \xff\n"), (2, 4, Undecodable::Utf8(0xFF)));
        assert_eq!(refused(b"a: 1\nb: \"\0\"\n"), (2, 5, Undecodable::Nul));
        assert_eq!(refused(b"\x7fELF\x02\0\xff"), (1, 6, Undecodable::Nul));
        assert_eq!(refused(b"\x7fELF\x02\0\xd0\x8f"), (1, 6, Undecodable::Nul));
        assert_eq!(
            refused("a: é\u{7}".as_bytes()),
            (1, 5, Undecodable::Unprintable(7))
        );
        assert_eq!(
            refused("# \u{9b}\n".as_bytes()),
            (1, 3, Undecodable::Unprintable(0x9B))
        );
        assert_eq!(
            refused(b"\xff\xfea\0\n\0b"),
            (2, 1, Undecodable::Utf16OddLength)
        );
        assert_eq!(
            refused(b"\xfe\xff\0a\xd8\0"),
            (1, 2, Undecodable::Utf16Surrogate(0xD800))
        );
        // A control character found in a block that starts inside a character.
        let late = format!("{}é\u{1}", "x".repeat(63));
        assert_eq!(
            refused(late.as_bytes()),
            (1, 65, Undecodable::Unprintable(1))
        );
        assert_eq!(
            refused("a: \u{ffff}".as_bytes()),
            (1, 4, Undecodable::Unprintable(0xFFFF))
        );
        // A byte-order mark is read at the start, refused anywhere else (found by fuzzing).
        assert_eq!(
            refused("a: \u{feff}b".as_bytes()),
            (1, 4, Undecodable::Unprintable(0xFEFF))
        );
        assert!(from_bytes(Source::stdin(), "\u{feff}a: b\n".as_bytes()).is_ok());
        // A second one after UTF-16's is not at the start (found by fuzzing: the two readers
        // read it differently).
        for bytes in [
            &[0xFE, 0xFF, 0xFE, 0xFF, 0x0A, 0x41][..],
            &[0xFF, 0xFE, 0xFF, 0xFE, 0x61, 0x00],
        ] {
            assert!(matches!(
                decode(bytes.to_vec()),
                Err(DecodeError {
                    problem: Undecodable::Unprintable(0xFEFF),
                    ..
                })
            ));
        }
        // YAML 1.1's extra line breaks, raw: kubectl would read another text than kinject
        // (in a comment, a quoted or a plain scalar alike).
        for (text, at, c) in [
            ("a: 'x\u{85}  y'\n", (1, 6), 0x85),
            ("# c\u{2028}hostNetwork: true\n", (1, 4), 0x2028),
            ("a: –b\u{2029}c\n", (1, 6), 0x2029),
        ] {
            assert_eq!(
                refused(text.as_bytes()),
                (at.0, at.1, Undecodable::LineBreak(c)),
                "{text:?}"
            );
        }
        // A CR alone is a line break kinject does not edit: in a file written so (classic Mac
        // OS), or among LF or CR LF line breaks, in content or comments.
        for (text, at) in [
            ("apiVersion: v1\rkind: Pod\r", (1, 15)),
            ("a: 1\r\nb: 2\rc: 3\r\n", (2, 5)),
            ("a: 1\nb: \"x\ry\"\n", (2, 6)),
            ("a: 1 # c\r\n# d\r", (2, 4)),
        ] {
            assert_eq!(
                refused(text.as_bytes()),
                (at.0, at.1, Undecodable::LoneCarriageReturn),
                "{text:?}"
            );
        }
        // Allowed: tab, line breaks, and every character that is not a control; escaped line
        // breaks read alike everywhere.
        let fine = "a:\t\"\\u2028\\N\u{a0}é\u{7e}\u{fffd}\u{ff21}–\u{2027}\"\r\n".repeat(40);
        assert!(from_bytes(Source::stdin(), fine.as_bytes()).is_ok());
    }

    #[test]
    fn line_numbers_from_the_index_agree() {
        // Short texts, and lines on both sides of the index's marks.
        let long: String = (0..200)
            .map(|i| format!("k{i}: {}\n", "é".repeat(i % 7)).repeat(1 + i % 2))
            .collect();
        for text in ["a: 1\n---\nb: é\n\nc: 3", "\n\n\n", "", &long] {
            let input = from_bytes(Source::stdin(), text.as_bytes()).unwrap();
            for offset in 0..=text.len() {
                if text.is_char_boundary(offset) {
                    assert_eq!(input.line_col(offset), line_col(text, offset), "{offset}");
                }
            }
        }
    }

    #[test]
    fn line_numbers_from_a_document_agree() {
        let many: String = (0..40).map(|i| format!("# {i}\n---\nk: {i}\n\n")).collect();
        for text in [
            "\u{feff}a: 1\n---\n\nb: é\n--- \nc: 3\n",
            "\n\n---\n\n",
            &many,
        ] {
            let input = from_bytes(Source::stdin(), text.as_bytes()).unwrap();
            assert!(!input.documents.is_empty());
            for doc in &input.documents {
                for offset in doc.range.clone().filter(|&o| text.is_char_boundary(o)) {
                    assert_eq!(
                        input.line_in(doc, offset),
                        line_col(text, offset).0,
                        "{offset}"
                    );
                }
            }
        }
    }

    #[test]
    fn bom_stays_outside_documents() {
        let input = from_bytes(Source::stdin(), "\u{FEFF}a: 1\n---\nb: 2\n".as_bytes()).unwrap();
        assert_eq!(input.documents[0].range, 3..8);
        assert_eq!(input.documents[0].value().unwrap().value, json!({"a": 1}));
    }
}
