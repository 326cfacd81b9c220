//! Lines and bytes: where lines end, which hold content, and the runs of bytes the reader
//! skips or looks for, eight bytes at a time where that pays.

use super::reader::{GiveUp, Line, R, Reader};

impl Reader<'_> {
    pub(super) fn line_end(&self, pos: usize) -> usize {
        memchr(b'\n', &self.b[pos..]).map_or(self.b.len(), |i| pos + i)
    }

    /// The start of the line after the one ending at `end` (its `\n`, or the end of the text).
    pub(super) fn after_line(&self, end: usize) -> usize {
        (end + 1).min(self.b.len())
    }

    /// The first line at or after the line start `pos` that holds content (not blank, not
    /// only a comment).
    pub(super) fn content_line(&self, mut pos: usize) -> Option<Line> {
        while pos < self.b.len() {
            let end = self.line_end(pos);
            let c = self.skip_blanks(pos, end);
            if c < end && self.b[c] != b'#' {
                return Some(Line {
                    start: pos,
                    content: c,
                    end,
                });
            }
            pos = end + 1;
        }
        None
    }

    /// The first byte from `i` that is not a space (`end` when there is none). Eight bytes
    /// at a time: indentation is most of what a manifest's lines begin with.
    pub(super) fn skip_blanks(&self, mut i: usize, end: usize) -> usize {
        while let Some(chunk) = self.b[i..end].first_chunk::<8>() {
            let other = u64::from_le_bytes(*chunk) ^ (EACH * u64::from(b' '));
            if other != 0 {
                return i + (other.trailing_zeros() / 8) as usize;
            }
            i += 8;
        }
        while i < end && self.b[i] == b' ' {
            i += 1;
        }
        i
    }

    /// `-` followed by a blank or the end of the line.
    pub(super) fn is_dash(&self, pos: usize, end: usize) -> bool {
        self.b[pos] == b'-' && (pos + 1 == end || self.b[pos + 1] == b' ')
    }

    /// After a value on its line: nothing but blanks and a comment.
    pub(super) fn rest_is_comment(&self, at: usize, end: usize) -> R<()> {
        let had_blank = at < end && self.b[at] == b' ';
        let at = self.skip_blanks(at, end);
        if at == end || (had_blank && self.b[at] == b'#') {
            Ok(())
        } else {
            Err(GiveUp)
        }
    }
}

/// A word with every byte 1: `EACH * c` is `c` in every byte.
const EACH: u64 = u64::from_le_bytes([1; 8]);

/// The first `a` or `b` in `bytes[i..end]` (`end` when neither is there), eight bytes at a
/// time: most keys and values are short, too short for `memchr`'s vectors to pay off.
pub(super) fn find_either(bytes: &[u8], mut i: usize, end: usize, a: u8, b: u8) -> usize {
    // A byte of `x` is zero where `x - EACH` borrowed into its high bit and `x`'s was clear;
    // the lowest such byte is the first zero (borrows only flag bytes above it).
    let zeros = |x: u64| x.wrapping_sub(EACH) & !x & (EACH << 7);
    while let Some(chunk) = bytes[i..end].first_chunk::<8>() {
        let word = u64::from_le_bytes(*chunk);
        let found = zeros(word ^ (EACH * u64::from(a))) | zeros(word ^ (EACH * u64::from(b)));
        if found != 0 {
            return i + (found.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    bytes[i..end]
        .iter()
        .position(|&c| c == a || c == b)
        .map_or(end, |p| i + p)
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    memchr::memchr(needle, haystack)
}

/// What follows a `---` or `...` on its line leaves it a marker alone: nothing, or spaces
/// and maybe a comment. (`...#` is no marker: a comment needs a space before it.)
pub(super) fn marker_alone(rest: &str) -> bool {
    let trimmed = rest.trim_start_matches(' ');
    trimmed.is_empty() || (trimmed.starts_with('#') && trimmed.len() < rest.len())
}
