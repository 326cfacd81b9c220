//! What a diagnostic shows of its file: the line its span starts on, one line either side,
//! and at most `SPAN_LINES` lines of the span, each cut to about `WINDOW` bytes around where
//! the span starts (a cut is marked `…`). miette is given this excerpt, never the file: it
//! panicked on a column past 65,535 (one-line JSON), and printed a 100 MB line whole; a
//! snippet now holds at most `MAX_BYTES`, whatever the file and the span.

use std::ops::Range;

use miette::{MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};

use super::lines::char_start;

/// About how many bytes of a line are shown.
const WINDOW: usize = 240;

/// How far before the span the start of its line is looked for: the line is shown from its
/// start when that is nearer, else from here (and at least `WINDOW - LOOK_BACK` bytes of what
/// follows the span's start are shown).
const LOOK_BACK: usize = WINDOW * 3 / 4;

/// How far a line's end is looked for.
const LINE_SEARCH: usize = 4096;

/// How many lines of a span that runs over lines are shown.
const SPAN_LINES: usize = 12;

/// The most a snippet's text holds: its lines, their cut marks and line breaks.
pub(crate) const MAX_BYTES: usize = (SPAN_LINES + 2) * (WINDOW + 2 * CUT.len() + 4);

/// Where a line is cut.
const CUT: &str = "…";

/// The excerpt of a file a diagnostic shows, as miette reads it.
#[derive(Debug, Clone)]
pub(crate) struct Snippet {
    text: String,
    /// 0-based line of the file where the excerpt starts.
    first_line: usize,
    /// Where the span starts in `text`, and its 0-based column in the file (the excerpt's
    /// own column would be counted from a cut).
    span_start: usize,
    column: usize,
}

/// One line of the excerpt: the part of the file it shows, where that line ends in the file
/// (its line break, or the end of the text; `None` when not looked that far), and whether it
/// was cut before or after.
#[derive(Debug, Clone)]
struct Piece {
    shown: Range<usize>,
    line_end: Option<usize>,
    cut_before: bool,
    cut_after: bool,
}

/// The snippet of `text` for the span `start..end` (within the text, on character
/// boundaries), which starts at 0-based `line` and `column` of the file; and the span in the
/// snippet's text.
pub(crate) fn snippet(
    text: &str,
    (start, end): (usize, usize),
    line: usize,
    column: usize,
) -> (Snippet, SourceSpan) {
    let pieces = pieces(text, start, end);
    let first_span_piece = pieces
        .iter()
        .position(|p| p.shown.start <= start && start <= p.line_end.unwrap_or(p.shown.end))
        .unwrap_or(0);
    let mut out = String::new();
    let mut starts = Vec::with_capacity(pieces.len());
    for (i, p) in pieces.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if p.cut_before {
            out.push_str(CUT);
        }
        starts.push(out.len());
        // A CR that does not end a line would move the terminal's cursor: a space (of the
        // same length, so that offsets stay).
        out.extend(
            text[p.shown.clone()]
                .chars()
                .map(|c| if c == '\r' { ' ' } else { c }),
        );
        if p.cut_after {
            out.push_str(CUT);
        }
    }
    let place = |i: usize, offset: usize| {
        let p = &pieces[i];
        starts[i] + offset.clamp(p.shown.start, p.shown.end) - p.shown.start
    };
    let span_start = place(first_span_piece, start);
    let span_end = (first_span_piece..pieces.len())
        .take(SPAN_LINES)
        .rfind(|&i| pieces[i].shown.start <= end)
        .map_or(span_start, |i| place(i, end))
        .max(span_start);
    debug_assert!(out.len() <= MAX_BYTES, "{}", out.len());
    let snippet = Snippet {
        text: out,
        first_line: line - first_span_piece,
        span_start,
        column,
    };
    (snippet, SourceSpan::from(span_start..span_end))
}

/// The lines of the excerpt: the line before the span's (when shown from its start), the
/// span's lines (at most `SPAN_LINES`), the line after.
fn pieces(text: &str, start: usize, end: usize) -> Vec<Piece> {
    let b = text.as_bytes();
    let back = start.saturating_sub(LOOK_BACK);
    let line_start = match memchr::memrchr(b'\n', &b[back..start]) {
        Some(i) => Some(back + i + 1),
        None if back == 0 => Some(0),
        None => None,
    };
    let Some(line_start) = line_start else {
        // The span's line is long: only the window around the span.
        return vec![piece(text, char_start(text, back), true)];
    };
    let mut pieces = Vec::new();
    if let Some(before) = line_before(text, line_start) {
        pieces.push(piece(text, before, false));
    }
    // The span's lines, then the line after, as long as where a line ends is known.
    let next_line = |p: &Piece| p.line_end.map(|e| e + 1).filter(|&n| n < text.len());
    let mut current = piece(text, line_start, false);
    for _ in 1..SPAN_LINES {
        match next_line(&current) {
            Some(next) if next <= end => {
                let next = piece(text, next, false);
                pieces.push(std::mem::replace(&mut current, next));
            }
            _ => break,
        }
    }
    let after = next_line(&current);
    pieces.push(current);
    if let Some(after) = after {
        pieces.push(piece(text, after, false));
    }
    pieces
}

/// The start of the line before the one starting at `line_start`, when there is one and it
/// is not longer than a window (a longer one is left out, not searched for its start).
fn line_before(text: &str, line_start: usize) -> Option<usize> {
    let line_break = line_start.checked_sub(1)?;
    let back = line_break.saturating_sub(WINDOW);
    match memchr::memrchr(b'\n', &text.as_bytes()[back..line_break]) {
        Some(i) => Some(back + i + 1),
        None if back == 0 => Some(0),
        None => None,
    }
}

/// The line part shown from `from` (a line's start, or a cut inside a line): up to its line
/// break, or cut after a window. Where the line ends is looked for up to `LINE_SEARCH` bytes
/// on (a longer line may be 100 MB long).
fn piece(text: &str, from: usize, cut_before: bool) -> Piece {
    let search = (from + LINE_SEARCH).min(text.len());
    let line_end = match memchr::memchr(b'\n', &text.as_bytes()[from..search]) {
        Some(i) => Some(from + i),
        None => (search == text.len()).then_some(search),
    };
    let window = if from + WINDOW < text.len() {
        char_start(text, from + WINDOW)
    } else {
        text.len()
    };
    let shown_end = line_end.map_or(window, |e| e.min(window));
    let cut_after = line_end.is_none_or(|e| shown_end < e);
    // A line break written CR LF shows without its CR.
    let shown_end = if !cut_after && text[from..shown_end].ends_with('\r') {
        shown_end - 1
    } else {
        shown_end
    };
    Piece {
        shown: from..shown_end,
        line_end,
        cut_before,
        cut_after,
    }
}

impl SourceCode for Snippet {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let contents =
            self.text
                .as_str()
                .read_span(span, context_lines_before, context_lines_after)?;
        // The header's `file:line:column` is read with no context lines at the span's start:
        // its column is the file's.
        let column = if span.offset() == self.span_start && context_lines_before == 0 {
            self.column
        } else {
            contents.column()
        };
        Ok(Box::new(MietteSpanContents::new(
            contents.data(),
            *contents.span(),
            contents.line() + self.first_line,
            column,
            contents.line_count(),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::lines::char_end;

    /// The snippet's text, and what its span covers.
    fn show(text: &str, start: usize, end: usize) -> (String, String) {
        let (line, column) = crate::diagnostic::lines::line_col(text, start);
        let (s, span) = snippet(text, (start, end), line - 1, column - 1);
        let covered = s.text[span.offset()..span.offset() + span.len()].to_owned();
        assert!(s.text.len() <= MAX_BYTES, "{}", s.text.len());
        (s.text, covered)
    }

    #[test]
    fn short_lines_are_shown_whole_with_one_line_either_side() {
        let text = "a: 1\nb: [x\nc: 3\nd: 4\n";
        let at = text.find("[x").unwrap();
        assert_eq!(
            show(text, at, at + 2),
            ("a: 1\nb: [x\nc: 3".to_owned(), "[x".to_owned())
        );
        // A span over lines: its lines, then the one after.
        let at = text.find("b:").unwrap();
        let (shown, covered) = show(text, at, text.find("c: 3").unwrap() + 4);
        assert_eq!(shown, "a: 1\nb: [x\nc: 3\nd: 4");
        assert_eq!(covered, "b: [x\nc: 3");
        // CR LF line breaks, the text's start and end.
        assert_eq!(show("a\r\nb\r\n", 3, 4).0, "a\nb");
        assert_eq!(show("", 0, 0), (String::new(), String::new()));
        assert_eq!(show("x", 1, 1).1, "");
    }

    #[test]
    fn long_lines_are_cut_around_the_span() {
        let line = format!("k: [{}]", "abcdé, ".repeat(20_000));
        let text = format!("first\n{line}\nlast\n");
        let at = 6 + line.len() / 2;
        let at = char_start(&text, at);
        let (shown, covered) = show(&text, at, at + 3);
        assert!(shown.starts_with(CUT) && shown.ends_with(CUT), "{shown}");
        assert!(!shown.contains('\n'), "{shown}");
        assert_eq!(covered, text[at..char_end(&text, at + 3)]);
        // The span's start near the line's start: the line before is shown, the rest cut.
        let (shown, covered) = show(&text, 7, text.len() - 6);
        assert!(shown.starts_with("first\nk: [abcdé"), "{shown}");
        assert!(shown.ends_with(CUT), "{shown}");
        assert!(covered.starts_with(": [abcdé") && !covered.contains('\n'));
    }

    #[test]
    fn long_spans_show_their_first_lines() {
        let text = "k:\n".to_owned() + &"  - x\n".repeat(10_000);
        let (shown, covered) = show(&text, 3, text.len());
        assert_eq!(shown.lines().count(), SPAN_LINES + 2, "{shown}");
        assert!(
            covered.starts_with("  - x\n") && covered.ends_with("  - x"),
            "{covered}"
        );
    }
}
