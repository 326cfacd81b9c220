//! An input and its documents: where it comes from (`Source`), what the file was when read
//! (`Stamp`), its text and where each document lies in it; and bytes made into one (decoded,
//! refused when a template, split into documents, not parsed yet).

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::decode::{Encoding, decode};
use super::error::InputError;
use super::split::documents;
use super::template;
use crate::diagnostic::lines::{LineIndex, breaks, char_start};
use crate::yaml::{ParseError, Parsed, parse_document};

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

/// What a file was when it was read: which file (device and inode) and what every write to it
/// changes (size, modification and status-change times).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// Device and inode.
    pub(crate) id: (u64, u64),
    size: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl Stamp {
    #[cfg(unix)]
    pub(crate) fn of(meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            id: (meta.dev(), meta.ino()),
            size: meta.size(),
            modified: (meta.mtime(), meta.mtime_nsec()),
            changed: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    #[cfg(not(unix))]
    pub(crate) fn of(meta: &std::fs::Metadata) -> Self {
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or((0, 0), |d| {
                (d.as_secs() as i64, i64::from(d.subsec_nanos()))
            });
        Stamp {
            id: (0, 0),
            size: meta.len(),
            modified,
            changed: modified,
        }
    }
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

/// Decodes and splits bytes read from `source`; documents are parsed when needed.
pub(crate) fn from_bytes_unparsed(source: Source, bytes: Vec<u8>) -> Result<Input, InputError> {
    split_text(source, bytes, 0, 0)
}

/// A window of standard input that starts at line `first_line` + 1 and document
/// `first_doc` of the stream.
pub(crate) fn from_window(
    bytes: Vec<u8>,
    first_line: usize,
    first_doc: usize,
) -> Result<Input, InputError> {
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
