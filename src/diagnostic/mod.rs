//! A diagnostic that points into a file: code, message, the labelled span, and help. Every
//! boundary (input, config, template, inject) reports located problems with it.

pub mod codes;
pub(crate) mod lines;
mod snippet;

use std::sync::{Arc, OnceLock};

use miette::{Diagnostic, LabeledSpan, NamedSource, SourceCode, SourceSpan};

use lines::{LineIndex, char_end, char_start, line_col};
pub(crate) use snippet::Snippet;

/// `text` safe to print on a terminal: control characters (but line feed and tab), the
/// bidirectional overrides and the characters that print nothing (zero-width spaces and
/// joiners, the word joiner, a byte-order mark) are written as `\u{..}` escapes. Names and
/// values in messages come from manifests, where YAML's escapes (`"\e[2J"`) can put anything,
/// and a name that differs from another by an invisible character must not look the same.
pub(crate) fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    escaped(text, |c| c != '\n' && unsafe_char(c))
}

/// `text` as `printable` makes it, on one line: line feeds, and every other line break,
/// escaped too. For what a line of a report holds: a value with a line break in it (an
/// annotation, a file name) would otherwise print lines of its own, which a reader or a
/// script takes for the report's.
pub(crate) fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    escaped(text, unsafe_char)
}

/// Characters written as escapes: controls but tab, and the invisible ones.
fn unsafe_char(c: char) -> bool {
    (c.is_control() && c != '\t')
        || matches!(
            c,
            '\u{AD}'
                | '\u{61C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206F}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
        )
}

fn escaped(text: &str, escape: impl Fn(char) -> bool) -> std::borrow::Cow<'_, str> {
    if !text.contains(&escape) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escape(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out.into()
}

/// A file name safe to print on one line: as `one_line`, with tabs escaped too. A name
/// holding a line break would otherwise read as two lines of a report, or as two names in
/// `--check`'s list.
pub(crate) fn printable_name(name: &str) -> std::borrow::Cow<'_, str> {
    escaped(name, |c| c == '\t' || unsafe_char(c))
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{location}: {message}")]
pub struct Located {
    /// Stable code (`kinject::config::unknown_field`): API, never renamed.
    pub code: &'static str,
    /// `file:line:column`.
    pub location: String,
    pub message: String,
    pub label: String,
    pub help: Option<String>,
    /// Worth knowing, but nothing fails because of it.
    pub warning: bool,
    /// Says where something else is (a first definition): shown beneath another diagnostic.
    note: bool,
    /// Whether an excerpt of the text is shown (not of a file that is not what it was read
    /// as: a credential file given or linked as the configuration).
    excerpt: bool,
    /// Such notes, each with its own place (possibly in another file).
    related: Vec<Located>,
    name: String,
    text: SharedText,
    /// The span in `text`, on character boundaries, and its 0-based line and column.
    span: (usize, usize),
    line: usize,
    column: usize,
    /// What is shown of the text (`snippet`), made when the diagnostic is printed (boxed:
    /// a diagnostic is kept for every error until the run ends).
    shown: OnceLock<Box<(NamedSource<Snippet>, SourceSpan)>>,
}

impl Located {
    /// A diagnostic at byte range `start..end` of `text`, the text of the file `name`.
    pub(crate) fn new(
        code: &'static str,
        name: &str,
        text: impl Into<SharedText>,
        span: (usize, usize),
        message: impl Into<String>,
    ) -> Self {
        let shared: SharedText = text.into();
        let text = shared.as_str();
        // Within the text, on character boundaries.
        let start = char_start(text, span.0);
        let end = char_end(text, span.1).max(start);
        let (line, column) = shared.line_col(start);
        Located {
            code,
            location: printable(&format!("{name}:{line}:{column}")).into_owned(),
            message: one_line(&message.into()).into_owned(),
            label: "here".to_owned(),
            help: None,
            warning: false,
            note: false,
            excerpt: true,
            related: Vec::new(),
            name: name.to_owned(),
            text: shared,
            span: (start, end),
            line: line - 1,
            column: column - 1,
            shown: OnceLock::new(),
        }
    }

    /// The diagnostic on one line: `file:line:column: message (code): help`, for a log or a
    /// message that holds no snippet.
    pub(crate) fn one_line(&self) -> String {
        let help = self
            .help
            .as_ref()
            .map(|h| format!(": {h}"))
            .unwrap_or_default();
        format!("{}: {} ({}){help}", self.location, self.message, self.code)
    }

    /// The excerpt of the text miette shows, and the span in it.
    fn shown(&self) -> &(NamedSource<Snippet>, SourceSpan) {
        self.shown.get_or_init(|| {
            let (snippet, span) =
                snippet::snippet(self.text.as_str(), self.span, self.line, self.column);
            let named = NamedSource::new(printable(&self.name), snippet).with_language("yaml");
            Box::new((named, span))
        })
    }

    /// The file it points into, and the line and column (from 1).
    pub(crate) fn position(&self) -> (&str, usize, usize) {
        (&self.name, self.line + 1, self.column + 1)
    }

    pub(crate) fn warning(mut self) -> Self {
        self.warning = true;
        self
    }

    /// The diagnostic without an excerpt of its text: for a file that is not what kinject
    /// read it as, whose lines may be anything (a token, a job's environment).
    pub(crate) fn without_excerpt(mut self) -> Self {
        self.excerpt = false;
        self
    }

    /// A note shown beneath this diagnostic: `other`, as a note, with its place.
    pub(crate) fn related(mut self, mut other: Located) -> Self {
        other.note = true;
        self.related.push(other);
        self
    }

    pub(crate) fn label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    pub(crate) fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(printable(&help.into()).into_owned());
        self
    }
}

impl Diagnostic for Located {
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        Some(Box::new(self.code))
    }

    fn severity(&self) -> Option<miette::Severity> {
        if self.note {
            Some(miette::Severity::Advice)
        } else {
            self.warning.then_some(miette::Severity::Warning)
        }
    }

    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn Diagnostic> + 'a>> {
        (!self.related.is_empty())
            .then(|| Box::new(self.related.iter().map(|r| r as &dyn Diagnostic)) as Box<_>)
    }

    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn std::fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        // No text (a file that cannot be read): no empty box.
        (self.excerpt && !self.text.as_str().is_empty()).then(|| &self.shown().0 as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        if !self.excerpt || self.text.as_str().is_empty() {
            return None;
        }
        Some(Box::new(std::iter::once(LabeledSpan::new_with_span(
            Some(self.label.clone()),
            self.shown().1,
        ))))
    }
}

/// "did you mean `image`?" when a close candidate exists.
pub(crate) fn suggest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| format!("did you mean `{c}`?"))
}

/// "did you mean" a file beside `path` of a close name.
pub(crate) fn similar_file(path: &std::path::Path) -> Option<String> {
    let wanted = path.file_name()?.to_str()?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let entries = std::fs::read_dir(dir.unwrap_or(std::path::Path::new("."))).ok()?;
    let names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    let found = suggest(wanted, names.iter().map(String::as_str))?;
    let prefix = dir.map(|d| format!("{}/", d.display())).unwrap_or_default();
    Some(found.replacen('`', &format!("`{prefix}"), 1))
}

/// The text a diagnostic points into, shared with whoever else holds it: a configuration
/// file's (`Arc<str>`) or an input's (`Arc<String>`, read without a copy), and the number of
/// lines of its file before it (a window of standard input starts further on).
#[derive(Debug, Clone)]
pub struct SharedText {
    text: Text,
    first_line: usize,
    /// The index of its lines, when it has one (an input's): line numbers are found, not
    /// counted from the start for each diagnostic.
    lines: Option<Arc<LineIndex>>,
}

#[derive(Debug, Clone)]
enum Text {
    Str(Arc<str>),
    String(Arc<String>),
}

impl SharedText {
    pub fn as_str(&self) -> &str {
        match &self.text {
            Text::Str(s) => s,
            Text::String(s) => s,
        }
    }

    /// The same text, as the part of its file after `lines` lines.
    pub fn starting_at_line(mut self, lines: usize) -> Self {
        self.first_line = lines;
        self
    }

    /// The same text, its line numbers found with `lines`, the index of its lines.
    pub(crate) fn with_lines(mut self, lines: &Arc<LineIndex>) -> Self {
        self.lines = Some(Arc::clone(lines));
        self
    }

    /// 1-based line (in the file) and column (in characters) of byte `offset`.
    fn line_col(&self, offset: usize) -> (usize, usize) {
        let (line, column) = match &self.lines {
            Some(index) => index.line_col(self.as_str(), offset),
            None => line_col(self.as_str(), offset),
        };
        (line + self.first_line, column)
    }
}

impl From<&Arc<str>> for SharedText {
    fn from(text: &Arc<str>) -> Self {
        SharedText {
            text: Text::Str(Arc::clone(text)),
            first_line: 0,
            lines: None,
        }
    }
}

impl From<&Arc<String>> for SharedText {
    fn from(text: &Arc<String>) -> Self {
        SharedText {
            text: Text::String(Arc::clone(text)),
            first_line: 0,
            lines: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The diagnostic as the command line prints it.
    fn rendered(located: &Located) -> String {
        let mut out = String::new();
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
            .with_width(100)
            .render_report(&mut out, located)
            .expect("renders");
        out
    }

    #[test]
    fn any_span_of_any_text_renders() {
        let long = format!("a: {}\nb: 1\n", "é".repeat(40_000));
        for text in [
            "",
            "a",
            "a: 1\r\nb: [x\r\n\r\n",
            "a:\r  b: 1\r",
            "\n\n\n",
            "é\nà: \u{1F600}\n",
            &long,
        ] {
            let text: Arc<str> = Arc::from(text);
            let offsets: Vec<usize> = (0..=text.len()).step_by(1 + text.len() / 40).collect();
            for &start in &offsets {
                for &end in offsets.iter().filter(|&&e| e >= start) {
                    let located = Located::new("kinject::test", "f.yaml", &text, (start, end), "m");
                    let out = rendered(&located);
                    assert!(out.len() < 8192, "{} bytes", out.len());
                    assert!(!out.contains('\r'), "{out}");
                }
            }
        }
    }

    #[test]
    fn the_header_has_the_files_line_and_column() {
        let line = format!("k: [{}]", "aé, ".repeat(30_000));
        let text: Arc<str> = Arc::from(format!("a: 1\n{line}\nz: 2\n"));
        let at = text.rfind(']').expect("]");
        let column = text[5..at].chars().count() + 1;
        let located = Located::new("kinject::test", "f.yaml", &text, (at, at + 1), "m");
        assert_eq!(located.location, format!("f.yaml:2:{column}"));
        let out = rendered(&located);
        assert!(out.contains(&format!("[f.yaml:2:{column}]")), "{out}");
        assert!(out.contains("…aé, aé, "), "{out}");
    }
}
