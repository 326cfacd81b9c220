//! Line and column numbers of byte offsets of a text, found from an index instead of by
//! counting from the text's start: a mark at least every `LINES_PER_MARK` lines and every
//! `BYTES_PER_MARK` bytes (inside long lines too), so that finding one counts at most about
//! `2 × BYTES_PER_MARK` bytes, whatever the text's size and the length of its lines. Without
//! it, every located message or report line counted from the start: a List of 100,000 objects
//! (6 MB) took 6 s to report, one-line JSON with 200,000 duplicate keys 24 s.

use std::sync::OnceLock;

/// The start of the character at byte `offset` of `text` (its end, past the text).
pub(crate) fn char_start(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// The end of the character at byte `offset` of `text`, when it is inside one.
pub(crate) fn char_end(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset += 1;
    }
    offset
}

/// 1-based line and column (in characters) of a byte offset.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    // An offset inside a character is that character's.
    let offset = char_start(text, offset);
    let before = &text[..offset];
    let line = breaks(before.as_bytes()) + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// At most this many lines between two marks.
const LINES_PER_MARK: u32 = 32;

/// At most about this many bytes between two marks (a mark is at a line start, or at a
/// character boundary inside a longer line).
const BYTES_PER_MARK: usize = 4096;

/// The index of one text, built when first asked (the text is passed each time: the index
/// only holds offsets into it).
#[derive(Debug, Default)]
pub(crate) struct LineIndex {
    /// Sorted by offset; the first is the text's start. Empty for a text too long for 32-bit
    /// offsets, whose lines are then counted.
    marks: OnceLock<Vec<Mark>>,
}

/// A place in the text and its line (0-based) and column (characters from its line's start).
#[derive(Debug, Clone, Copy)]
struct Mark {
    offset: u32,
    line: u32,
    column: u32,
}

impl LineIndex {
    /// 1-based line and column (in characters) of byte `offset` of `text`, the text this
    /// index is of (an offset inside a character is that character's).
    pub(crate) fn line_col(&self, text: &str, offset: usize) -> (usize, usize) {
        let offset = char_start(text, offset);
        let Some(mark) = self.mark_before(text, offset) else {
            return line_col(text, offset);
        };
        let from = mark.offset as usize;
        let between = &text.as_bytes()[from..offset];
        match memchr::memrchr(b'\n', between) {
            None => (
                mark.line as usize + 1,
                mark.column as usize + text[from..offset].chars().count() + 1,
            ),
            Some(last) => (
                mark.line as usize + breaks(between) + 1,
                text[from + last + 1..offset].chars().count() + 1,
            ),
        }
    }

    /// 1-based line of byte `offset` of `text` (without counting its column).
    pub(crate) fn line(&self, text: &str, offset: usize) -> usize {
        let offset = char_start(text, offset);
        match self.mark_before(text, offset) {
            Some(mark) => {
                mark.line as usize + breaks(&text.as_bytes()[mark.offset as usize..offset]) + 1
            }
            None => breaks(&text.as_bytes()[..offset]) + 1,
        }
    }

    fn mark_before(&self, text: &str, offset: usize) -> Option<Mark> {
        let marks = self.marks.get_or_init(|| build(text));
        let i = marks.partition_point(|m| m.offset as usize <= offset);
        i.checked_sub(1).map(|i| marks[i])
    }
}

/// How many line breaks `bytes` holds.
pub(crate) fn breaks(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

fn build(text: &str) -> Vec<Mark> {
    if u32::try_from(text.len()).is_err() {
        return Vec::new();
    }
    let mut marks = vec![Mark {
        offset: 0,
        line: 0,
        column: 0,
    }];
    let mut last = 0;
    let mut lines_since = 0;
    let mut line = 0;
    let mut line_start = 0;
    let ends = memchr::memchr_iter(b'\n', text.as_bytes()).chain(std::iter::once(text.len()));
    for end in ends {
        if end - line_start > BYTES_PER_MARK {
            last = mark_inside(text, line_start, end, line, &mut marks);
        }
        if end == text.len() {
            break;
        }
        line += 1;
        lines_since += 1;
        line_start = end + 1;
        if lines_since >= LINES_PER_MARK || line_start - last >= BYTES_PER_MARK {
            marks.push(mark(line_start, line, 0));
            last = line_start;
            lines_since = 0;
        }
    }
    marks
}

/// Marks every `BYTES_PER_MARK` bytes inside the long line `start..end` (line `line`); the
/// offset of the last one.
fn mark_inside(text: &str, start: usize, end: usize, line: u32, marks: &mut Vec<Mark>) -> usize {
    let mut at = start;
    let mut column = 0;
    loop {
        let next = char_start(text, at + BYTES_PER_MARK);
        if next >= end {
            return at;
        }
        column += text[at..next].chars().count();
        marks.push(mark(next, line, column));
        at = next;
    }
}

/// A mark (offsets, lines and columns fit in 32 bits: the text's length does).
fn mark(offset: usize, line: u32, column: usize) -> Mark {
    Mark {
        offset: offset as u32,
        line,
        column: column as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_counting_from_the_start() {
        let long_line = format!("k: [{}]\n", "é, ab, ".repeat(3000));
        let long_lines = format!("a: 1\n{long_line}{long_line}b: 2\n{}", "x\n".repeat(70));
        let many: String = (0..200)
            .map(|i| format!("k{i}: {}\n", "é".repeat(i % 7)).repeat(1 + i % 2))
            .collect();
        let wide: String = (0..24)
            .map(|i| format!("{}\n", "y".repeat(i * 500)))
            .collect();
        for text in [
            "",
            "\n\n\n",
            "a: 1\n---\nb: é\n\nc: 3",
            &long_lines,
            &many,
            &wide,
        ] {
            let index = LineIndex::default();
            // Every offset of short texts; of long ones, a sample (the check counts from the
            // start), around every mark.
            let step = if text.len() > 1000 { 97 } else { 1 };
            let marks = build(text)
                .iter()
                .map(|m| m.offset as usize)
                .collect::<Vec<_>>();
            let near_marks = marks.iter().flat_map(|&m| m.saturating_sub(3)..m + 3);
            for offset in (0..=text.len() + 1).step_by(step).chain(near_marks) {
                let want = super::line_col(text, offset);
                assert_eq!(index.line_col(text, offset), want, "{offset}");
                assert_eq!(index.line(text, offset), want.0, "{offset}");
            }
        }
    }

    #[test]
    fn marks_are_close_together() {
        let text = format!("{}\n{}", "é".repeat(50_000), "a\n".repeat(10_000));
        let marks = build(&text);
        for pair in marks.windows(2) {
            let gap = (pair[1].offset - pair[0].offset) as usize;
            assert!(gap <= BYTES_PER_MARK + 3, "{gap}");
        }
    }
}
