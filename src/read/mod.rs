//! Reading inputs: which files a set of paths names, their text, their documents, and the
//! Kubernetes objects inside each document (`kind: List` items included).

mod decode;
mod files;
mod objects;
mod split;
mod template;
mod window;

use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use miette::Diagnostic;
use thiserror::Error;

use crate::diagnostic::codes;
use crate::diagnostic::lines::{LineIndex, breaks, char_start};
use crate::yaml::{ParseError, Parsed, parse_document};

pub(crate) use decode::Undecodable;
use decode::decode;
pub(crate) use files::until_binary;
pub(crate) use files::{Intent, Stamp, discover};
pub(crate) use objects::namespace_labels;
pub use objects::objects;
pub(crate) use split::documents;
pub(crate) use window::Windows;

/// Where an input comes from: a file, or standard input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// How the input is named to the user: the path as given, or `<stdin>`.
    pub name: String,
    pub path: Option<PathBuf>,
    /// The directory (canonical) the file was found in: it is not rewritten through a
    /// symlink that leads out of it.
    pub within: Option<PathBuf>,
}

impl Source {
    pub fn stdin() -> Self {
        Source {
            name: "<stdin>".to_owned(),
            path: None,
            within: None,
        }
    }

    pub fn file(path: &Path) -> Self {
        Source {
            name: crate::diagnostic::printable_name(&path.display().to_string()).into_owned(),
            path: Some(path.to_owned()),
            within: None,
        }
    }

    /// The name as given, unescaped, for output that escapes it its own way (JSON): `name`
    /// holds `\u{a}` escapes meant for a terminal.
    pub fn raw_name(&self) -> String {
        self.path
            .as_ref()
            .map_or_else(|| self.name.clone(), |p| p.display().to_string())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf8Bom,
    Utf16Le,
    Utf16Be,
}

/// An input's text and its documents.
#[derive(Debug)]
pub struct Input {
    pub source: Source,
    /// Shared with the diagnostics that point into it.
    pub text: Arc<String>,
    pub encoding: Encoding,
    pub documents: Vec<Document>,
    /// Lines of the source before this text (a window of standard input starts further on).
    pub first_line: usize,
    /// What the file was when it was read (`None` for standard input).
    pub stamp: Option<Stamp>,
    /// Where lines start, built when a line number is first asked for; shared with the
    /// diagnostics that point into the text.
    lines: Arc<LineIndex>,
}

/// One document of an input: its exact bytes and what they parse to.
#[derive(Debug)]
pub struct Document {
    pub index: usize,
    pub range: Range<usize>,
    /// Line breaks in the input's text before the document (its line is this + 1 in the
    /// input, `Input::first_line` more in the source).
    pub line: usize,
    /// What the text parses to: `None` until it is read (inputs loaded with
    /// `load_unparsed` are read document by document as they are processed, and let go of
    /// each once its output is made).
    /// (Boxed: a document's entry stays in memory while the input is processed.)
    pub parsed: Option<Box<Result<Parsed, ParseError>>>,
}

impl Document {
    /// The parsed document, when it has been read and is YAML.
    pub fn value(&self) -> Option<&Parsed> {
        self.parsed.as_deref()?.as_ref().ok()
    }
}

impl Input {
    pub fn doc_text(&self, doc: &Document) -> &str {
        &self.text[doc.range.clone()]
    }

    /// Parses every document not read yet.
    pub fn parse_all(&mut self) {
        let json = self.is_json();
        for doc in &mut self.documents {
            if doc.parsed.is_none() {
                let text = &self.text[doc.range.clone()];
                doc.parsed = Some(Box::new(read_document(text, json)));
            }
        }
    }

    /// Whether Kubernetes reads this input as JSON: its text starts with `{` (kubectl looks
    /// at the start of a stream, then reads all of it with one reader).
    pub fn is_json(&self) -> bool {
        self.text
            .trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n'])
            .starts_with('{')
    }

    /// 1-based line and column (in characters) of a byte offset of the text (in the
    /// source), from the index (`lines::LineIndex`), not by counting from the start.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let (line, column) = self.lines.line_col(&self.text, offset);
        (line + self.first_line, column)
    }

    /// 1-based line (in the source) of a byte offset of document `doc`'s text: counted
    /// from the document's start when that is near, else found from the index (a List of
    /// many objects in one document once counted from its start for each of them).
    pub fn line_in(&self, doc: &Document, offset: usize) -> usize {
        let offset = char_start(&self.text, offset);
        if offset - doc.range.start.min(offset) > NEAR {
            return self.lines.line(&self.text, offset) + self.first_line;
        }
        doc.line + breaks(&self.text.as_bytes()[doc.range.start..offset]) + 1 + self.first_line
    }

    /// The text, for diagnostics that point into it (with its line numbers in the source).
    pub fn shared_text(&self) -> crate::diagnostic::SharedText {
        crate::diagnostic::SharedText::from(&self.text)
            .starting_at_line(self.first_line)
            .with_lines(&self.lines)
    }
}

#[derive(Debug, Error)]
pub enum InputError {
    #[error("cannot read {name}: {error}")]
    Io {
        name: String,
        // Not a `source`: its text is already in the message.
        error: std::io::Error,
    },

    #[error(
        "cannot read {name}: no such file (after `--`, every name is a file, even one that looks like an option)"
    )]
    OptionAfterSeparator { name: String },

    #[error(
        "{name}:{line}:{column}: looks like a Helm/Go template ({why}): render it first (`helm template`) or exclude `charts/` (pre-commit `exclude:`)"
    )]
    Template {
        name: String,
        line: usize,
        column: usize,
        /// What makes it one (`template::Why`).
        why: String,
    },

    #[error(
        "{name}: no manifest here (a directory's .yaml, .yml and .json files are read, hidden ones skipped), so nothing would be injected"
    )]
    EmptyDirectory { name: String },

    #[error(
        "{name}: no configuration: no {} {looked}",
        crate::tree::CONFIG_NAMES_SAID
    )]
    NoConfiguration { name: String, looked: String },

    /// Its nearest configuration is not read (`tree::NotFound::Refused`): `why`.
    #[error("{name}: no configuration: {why}")]
    ConfigurationRefused { name: String, why: String },

    #[error("{name}:{line}:{column}: {problem}")]
    Encoding {
        name: String,
        line: usize,
        column: usize,
        problem: Undecodable,
    },
}

impl Diagnostic for InputError {
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        Some(Box::new(match self {
            InputError::Io { .. }
            | InputError::OptionAfterSeparator { .. }
            | InputError::EmptyDirectory { .. } => codes::INPUT_IO,
            InputError::Encoding { .. } => codes::INPUT_ENCODING,
            InputError::NoConfiguration { .. } | InputError::ConfigurationRefused { .. } => {
                codes::INPUT_NO_CONFIGURATION
            }
            InputError::Template { .. } => codes::INPUT_TEMPLATE,
        }))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        let help = match self {
            InputError::Io { name, error } if error.kind() == std::io::ErrorKind::NotFound => {
                if name.contains("://") {
                    "kinject reads files and standard input, not URLs: download it first (`curl -fsSL URL | kinject inject -c CONFIG -`)"
                } else {
                    let similar = crate::diagnostic::similar_file(std::path::Path::new(name));
                    return similar.map(|s| Box::new(s) as Box<dyn std::fmt::Display>);
                }
            }
            InputError::Io { .. } => return None,
            InputError::Template { .. } => {
                "kinject reads manifests; a template's text is not what Kubernetes will read, and injecting into it would write into the chart"
            }
            InputError::EmptyDirectory { .. } => {
                "name the directory that holds the manifests, or the files themselves"
            }
            InputError::OptionAfterSeparator { .. } => {
                "options go before `--`. The pre-commit hooks end their `entry:` with `--`, so their `args:` are file names: to pass options, override the hook's `entry:` in .pre-commit-config.yaml (`entry: kinject inject --in-place -c sidecars.yaml --`)"
            }
            InputError::Encoding { .. } => {
                "kinject reads YAML and JSON text: UTF-8 (with or without BOM) or UTF-16 with a BOM"
            }
            InputError::NoConfiguration { .. } => {
                "pass -c FILE, or add a .kinject.yaml beside the file or in a directory above it (each file uses the nearest one)"
            }
            InputError::ConfigurationRefused { .. } => {
                "a configuration found beside the manifests is read only when it is a regular file inside the repository; pass -c FILE to name one (docs/security.md)"
            }
        };
        Some(Box::new(help))
    }
}

/// One document's text read as Kubernetes reads it: YAML, or, in a JSON input, JSON (which
/// refuses numbers YAML reads as text).
pub(crate) fn read_document(text: &str, json: bool) -> Result<Parsed, ParseError> {
    let parsed = parse_document(text)?;
    if json {
        crate::yaml::check_json_numbers(text, &parsed)?;
    }
    Ok(parsed)
}

/// How far from its document's start a line number is counted rather than found from the
/// index (`Input::line_in`).
const NEAR: usize = 64 << 10;

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
        return from_bytes_unparsed(source.clone(), bytes);
    };
    let (bytes, stamp) = files::read(path).map_err(io)?;
    let mut input = from_bytes_unparsed(source.clone(), bytes)?;
    input.stamp = Some(stamp);
    Ok(input)
}

/// Decodes, splits and parses bytes read from `source`.
pub fn from_bytes(source: Source, bytes: &[u8]) -> Result<Input, InputError> {
    let mut input = from_bytes_unparsed(source, bytes.to_vec())?;
    input.parse_all();
    Ok(input)
}

/// Decodes and splits bytes read from `source`; documents are parsed when needed.
pub(crate) fn from_bytes_unparsed(source: Source, bytes: Vec<u8>) -> Result<Input, InputError> {
    split_text(source, bytes, 0, 0)
}

/// A window of standard input that starts at line `first_line` + 1 and document
/// `first_doc` of the stream.
fn from_window(bytes: Vec<u8>, first_line: usize, first_doc: usize) -> Result<Input, InputError> {
    split_text(Source::stdin(), bytes, first_line, first_doc)
}

fn split_text(
    source: Source,
    bytes: Vec<u8>,
    first_line: usize,
    first_doc: usize,
) -> Result<Input, InputError> {
    let (text, encoding) = decode(bytes).map_err(|e| InputError::Encoding {
        name: source.name.clone(),
        line: e.line + first_line,
        column: e.column,
        problem: e.problem,
    })?;
    if let Some((at, why)) = template::directive(&text, source.path.as_deref()) {
        let (line, column) = crate::diagnostic::lines::line_col(&text, at);
        return Err(InputError::Template {
            name: source.name.clone(),
            line: line + first_line,
            column,
            why,
        });
    }
    // The decoded text itself, not a copy: inputs can be large.
    let text = Arc::new(text);
    let body_start = if encoding == Encoding::Utf8Bom { 3 } else { 0 };
    // Lines counted once here, for every document (a count is a vector loop; the line of
    // each object in a document is then counted from the document's start).
    let mut line = 0;
    let mut counted = 0;
    let documents = documents(&text[body_start..])
        .into_iter()
        .enumerate()
        .map(|(index, r)| {
            // A byte-order mark stays outside every document (renderers write it first).
            let range = r.start + body_start..r.end + body_start;
            line += breaks(&text.as_bytes()[counted..range.start]);
            counted = range.start;
            Document {
                index: first_doc + index,
                parsed: None,
                range,
                line,
            }
        })
        .collect();
    Ok(Input {
        source,
        text,
        encoding,
        documents,
        first_line,
        stamp: None,
        lines: Arc::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::decode::DecodeError;
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
