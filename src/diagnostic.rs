//! A diagnostic that points into a file: code, message, the labelled span, and help. Every
//! boundary (input, config, template, inject) reports located problems with it.

use std::sync::Arc;

use miette::{Diagnostic, LabeledSpan, NamedSource, SourceCode, SourceSpan};

use crate::read::line_col;

/// `text` safe to print on a terminal: control characters (but line feed and tab), the
/// bidirectional overrides and the characters that print nothing (zero-width spaces and
/// joiners, the word joiner, a byte-order mark) are written as `\u{..}` escapes. Names and
/// values in messages come from manifests, where YAML's escapes (`"\e[2J"`) can put anything,
/// and a name that differs from another by an invisible character must not look the same.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    escaped(text, |c| c != '\n' && unsafe_char(c))
}

/// `text` as `printable` makes it, on one line: line feeds, and every other line break,
/// escaped too. For what a line of a report holds: a value with a line break in it (an
/// annotation, a file name) would otherwise print lines of its own, which a reader or a
/// script takes for the report's.
pub fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
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
pub fn printable_name(name: &str) -> std::borrow::Cow<'_, str> {
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
    pub src: NamedSource<SharedText>,
    pub span: SourceSpan,
    /// Worth knowing, but nothing fails because of it.
    pub warning: bool,
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
        let start = crate::read::char_start(text, span.0);
        let end = crate::read::char_end(text, span.1).max(start);
        let (line, column) = line_col(text, start);
        let line = line + shared.first_line;
        Located {
            code,
            location: printable(&format!("{name}:{line}:{column}")).into_owned(),
            message: one_line(&message.into()).into_owned(),
            label: "here".to_owned(),
            help: None,
            src: NamedSource::new(name, shared).with_language("yaml"),
            span: SourceSpan::from(start..end),
            warning: false,
        }
    }

    pub(crate) fn warning(mut self) -> Self {
        self.warning = true;
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
        self.warning.then_some(miette::Severity::Warning)
    }

    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn std::fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.src)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(std::iter::once(LabeledSpan::new_with_span(
            Some(self.label.clone()),
            self.span,
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

/// The text a diagnostic points into, shared with whoever else holds it: a configuration
/// file's (`Arc<str>`) or an input's (`Arc<String>`, read without a copy), and the number of
/// lines of its file before it (a window of standard input starts further on).
#[derive(Debug, Clone)]
pub struct SharedText {
    text: Text,
    first_line: usize,
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
}

impl From<&Arc<str>> for SharedText {
    fn from(text: &Arc<str>) -> Self {
        SharedText {
            text: Text::Str(Arc::clone(text)),
            first_line: 0,
        }
    }
}

impl From<&Arc<String>> for SharedText {
    fn from(text: &Arc<String>) -> Self {
        SharedText {
            text: Text::String(Arc::clone(text)),
            first_line: 0,
        }
    }
}

impl SourceCode for SharedText {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let contents = self
            .as_str()
            .read_span(span, context_lines_before, context_lines_after)?;
        if self.first_line == 0 {
            return Ok(contents);
        }
        Ok(Box::new(miette::MietteSpanContents::new(
            contents.data(),
            *contents.span(),
            contents.line() + self.first_line,
            contents.column(),
            contents.line_count(),
        )))
    }
}
