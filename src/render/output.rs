//! The run's output, chosen once from `-o` (`Format::output`): the manifests edited in
//! place, or the documents' values (JSON documents, one `List`, patches) each written as its
//! document is processed. For whole inputs, the YAML stream is joined at the end from the
//! pieces each input's output is made of (of its text, and of what the edits wrote), with
//! nothing copied (`yaml_all`, `yaml_slices`).

use std::io::Write;

use crate::inject::Settings;
use crate::pipeline::{self, FileResult};
use crate::read::Input;

use super::RenderError;
use super::json::{Framed, Framing, JsonStream};
use super::patch::PatchStream;
use super::yaml::YamlOutput;

/// `-o`: what a run writes on its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The manifests, edited in place: comments, order, quoting and indentation kept.
    Yaml,
    /// One JSON document per input document.
    Json,
    /// Per object: identity, source, and RFC 6902 operations.
    Patch,
    /// One JSON value: a kubectl `List` of every input document, in order.
    JsonList,
}

impl Format {
    /// The output of this format, into `out`: the one place the format is looked at.
    pub(crate) fn output<W: Write>(self, out: W) -> Output<W> {
        match self {
            Format::Yaml => Output::Yaml(Framed::new(Framing::Documents, out)),
            Format::Json => Output::Values(Framed::new(Framing::Documents, out)),
            Format::JsonList => Output::Values(Framed::new(Framing::List, out)),
            Format::Patch => Output::Values(Framed::new(Framing::Array, out)),
        }
    }
}

/// A run's output.
pub(crate) enum Output<W> {
    /// The manifests edited in place (`YamlStream`): whole inputs are joined at the end
    /// (`yaml_slices`), standard input's windows written into this as they come.
    Yaml(Framed<W>),
    /// The documents' values, each document's part written into this as it is made (its
    /// framing says which output: patches for an array, JSON documents otherwise).
    Values(Framed<W>),
}

impl<W: Write> Output<W> {
    /// Whether this is the manifests edited in place (which `--in-place`, `--check` and
    /// `--diff` need).
    pub(crate) fn is_yaml(&self) -> bool {
        matches!(self, Output::Yaml(_))
    }

    /// The output, closed; or the first error writing it.
    pub(crate) fn finish(self) -> std::io::Result<W> {
        match self {
            Output::Yaml(out) | Output::Values(out) => out.finish(),
        }
    }
}

/// Processes `input` with `settings`, its documents' values written into `out` as they are
/// made (patches for an array, JSON documents otherwise); its result.
pub(crate) fn process_values<W: Write + Send + Sync>(
    input: Input,
    settings: &Settings<'_>,
    out: &mut Framed<W>,
) -> FileResult {
    if out.framing() == Framing::Array {
        pipeline::process(input, settings, PatchStream::new(out)).0
    } else {
        pipeline::process(input, settings, JsonStream::new(out)).0
    }
}

/// Each input's YAML output, in order, for one stream.
pub(crate) type Yaml<'a> = Vec<(&'a Input, YamlOutput)>;

/// Every file's YAML output, made while processing: (outputs, notes, errors). No input's
/// text is copied: the stream is written from the inputs and their edited documents.
pub(crate) fn yaml_all(
    files: &[FileResult],
    made: Vec<Result<YamlOutput, RenderError>>,
) -> (Yaml<'_>, Vec<String>, Vec<RenderError>) {
    let mut notes = Vec::new();
    let mut errors = Vec::new();
    let mut yaml = Vec::with_capacity(files.len());
    for (f, y) in files.iter().zip(made) {
        match y {
            Ok(mut y) => {
                notes.append(&mut y.notes);
                yaml.push((&f.input, y));
            }
            Err(e) => errors.push(e),
        }
    }
    (yaml, notes, errors)
}

/// The inputs' YAML as one stream, in the pieces it is written in (of the inputs' texts and
/// of what the edits wrote), holding the documents the inputs hold, no more: between two
/// inputs a line break, then a `---` where the next starts with content, nothing where it
/// starts with either marker or holds only comments (a `---` before it would add an empty
/// document); an input with nothing but blanks adds nothing. (No input starts with a
/// directive: they are refused, as Kubernetes refuses them.)
pub(crate) fn yaml_slices<'a>(yaml: &'a Yaml<'_>) -> Vec<&'a [u8]> {
    let mut slices = Vec::new();
    // Whether anything was written, and whether it ended a line.
    let (mut any, mut line_ended) = (false, false);
    for (input, y) in yaml {
        if any {
            let start = first_line(y.pieces(input));
            if start == Start::Blank {
                continue;
            }
            if !line_ended {
                slices.push(&b"\n"[..]);
            }
            if start == Start::Content {
                slices.push(&b"---\n"[..]);
            }
        }
        for p in y.pieces(input).filter(|p| !p.is_empty()) {
            slices.push(p.as_bytes());
            any = true;
            line_ended = p.ends_with('\n');
        }
    }
    slices
}

/// What the first line of a text that is neither blank nor a comment is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// There is none, nor any comment.
    Blank,
    /// There is none: only comments (and blanks).
    Comment,
    /// A document marker: `---` (a start) or `...` (an end).
    Marker,
    Content,
}

/// What the first line of `text` (in pieces) that is neither blank nor a comment is.
fn first_line<'a>(text: impl Iterator<Item = &'a str>) -> Start {
    let mut comment = false;
    let mut kind = |l: &str| {
        let t = l.trim();
        if t.is_empty() {
            return None;
        }
        if t.starts_with('#') {
            comment = true;
            return None;
        }
        Some(if l.starts_with("---") || l.starts_with("...") {
            Start::Marker
        } else {
            Start::Content
        })
    };
    // The line read so far (a line may go on in the next piece).
    let mut line = String::new();
    for piece in text {
        let mut parts = piece.split('\n').peekable();
        while let Some(part) = parts.next() {
            line.push_str(part);
            if parts.peek().is_none() {
                break;
            }
            if let Some(start) = kind(&line) {
                return start;
            }
            line.clear();
        }
    }
    match kind(&line) {
        Some(start) => start,
        None if comment => Start::Comment,
        None => Start::Blank,
    }
}

#[cfg(test)]
mod tests {
    use super::{Start, first_line};

    #[test]
    fn the_first_content_line_decides_whatever_the_pieces() {
        let cases: [(&[&str], Start); 10] = [
            (&["---\na: 1\n"], Start::Marker),
            (&["a: 1\n"], Start::Content),
            (&["# c\n\n", "--- # x\n"], Start::Marker),
            (&["  # c\n-", "--\n"], Start::Marker),
            (&["#", " c\n", "-", "-", "-"], Start::Marker),
            (&["\n", "", "a: 1\n---\n"], Start::Content),
            (&["", "# only a comment\n"], Start::Comment),
            (&["...\n"], Start::Marker),
            (&["\n", "  \n"], Start::Blank),
            (&[], Start::Blank),
        ];
        for (pieces, start) in cases {
            assert_eq!(first_line(pieces.iter().copied()), start, "{pieces:?}");
        }
    }
}
