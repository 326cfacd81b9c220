//! Bytes → text: UTF-8 or UTF-16 (by its byte-order mark), and the characters YAML forbids or
//! Kubernetes' reader would read otherwise (controls, raw NEL/LS/PS, a CR without LF), each
//! refused with its line and column.

use thiserror::Error;

use crate::diagnostic::lines::line_col;

/// How an input's text was encoded (a UTF-8 byte-order mark is kept, and written back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf8Bom,
    Utf16Le,
    Utf16Be,
}

/// Why bytes are not YAML text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum Undecodable {
    #[error("not UTF-8 text (byte {0:#04x})")]
    Utf8(u8),
    #[error("UTF-16 text with an odd number of bytes")]
    Utf16OddLength,
    #[error("UTF-16 text with an unpaired surrogate ({0:#06x})")]
    Utf16Surrogate(u16),
    #[error("a NUL byte, not allowed in YAML (is this a binary file?)")]
    Nul,
    #[error(
        "{what} U+{code:04X} is not allowed in YAML (in a double-quoted string, write it as an escape)",
        what = if char::from_u32(*.0).is_some_and(char::is_control) { "control character" } else { "character" },
        code = .0
    )]
    Unprintable(u32),
    #[error(
        "{what} (U+{code:04X}) written raw: Kubernetes' YAML reader takes it for a line break, YAML 1.2 readers for a \
            character, so the two would read this text differently (write it as an escape, `\\u{code:04X}`, in a \
            double-quoted string)",
        what = line_break_name(*.0),
        code = .0
    )]
    LineBreak(u32),
    #[error(
        "a carriage return without a line feed after it: YAML reads it as a line break, and kinject edits text whose \
            line breaks are LF or CR LF only (write them so)"
    )]
    LoneCarriageReturn,
}

/// The name of a character YAML 1.1 reads as a line break and YAML 1.2 does not.
fn line_break_name(code: u32) -> &'static str {
    match code {
        0x85 => "a next-line character",
        0x2028 => "a line separator",
        _ => "a paragraph separator",
    }
}

/// Where and why bytes could not be decoded.
#[derive(Debug)]
pub(super) struct DecodeError {
    pub(super) line: usize,
    pub(super) column: usize,
    pub(super) problem: Undecodable,
}

impl DecodeError {
    /// At the end of `before`, the text decoded up to the problem.
    fn after(before: &str, problem: Undecodable) -> Self {
        let (line, column) = line_col(before, before.len());
        DecodeError {
            line,
            column,
            problem,
        }
    }
}

/// The text of the bytes and its encoding. Text YAML does not allow is refused, as Go's
/// YAML reader (kubectl's) refuses it: control characters other than tab and line breaks,
/// in content and comments alike.
pub(super) fn decode(bytes: Vec<u8>) -> Result<(String, Encoding), DecodeError> {
    let (text, encoding) = match bytes.as_slice() {
        [0xFF, 0xFE, rest @ ..] => (utf16(rest, u16::from_le_bytes)?, Encoding::Utf16Le),
        [0xFE, 0xFF, rest @ ..] => (utf16(rest, u16::from_be_bytes)?, Encoding::Utf16Be),
        _ => {
            let text = String::from_utf8(bytes).map_err(|e| {
                let at = e.utf8_error().valid_up_to();
                let bytes = e.as_bytes();
                // A binary file is named as one, by its first NUL.
                let (at, problem) = match bytes[..at].iter().position(|&b| b == 0) {
                    Some(nul) => (nul, Undecodable::Nul),
                    None => (at, Undecodable::Utf8(bytes[at])),
                };
                let before = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
                DecodeError::after(before, problem)
            })?;
            let encoding = if text.starts_with('\u{FEFF}') {
                Encoding::Utf8Bom
            } else {
                Encoding::Utf8
            };
            (text, encoding)
        }
    };
    // UTF-16 text is decoded after its byte-order mark: one more at its start is a second.
    let utf16 = matches!(encoding, Encoding::Utf16Le | Encoding::Utf16Be);
    if utf16 && text.starts_with('\u{FEFF}') {
        return Err(DecodeError::after("", Undecodable::Unprintable(0xFEFF)));
    }
    if let Some((at, c)) = forbidden_control(&text) {
        // A binary file is named as one, by its first NUL, whatever comes before.
        let (at, problem) = match text.bytes().position(|b| b == 0) {
            Some(nul) => (nul, Undecodable::Nul),
            None if matches!(c, '\u{85}' | '\u{2028}' | '\u{2029}') => {
                (at, Undecodable::LineBreak(c.into()))
            }
            None => (at, Undecodable::Unprintable(c.into())),
        };
        return Err(DecodeError::after(&text[..at], problem));
    }
    if let Some(at) = lone_carriage_return(&text) {
        return Err(DecodeError::after(
            &text[..at],
            Undecodable::LoneCarriageReturn,
        ));
    }
    Ok((text, encoding))
}

/// The first CR not followed by LF. YAML reads a CR alone as a line break (as Kubernetes
/// does), but kinject's reader, editor and line numbers know LF and CR LF only: such a file
/// was injected, reported so, and then failed as "internal error: the edited document is not
/// valid YAML". Refused, located, before anything reads it.
fn lone_carriage_return(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'\r', bytes).find(|&i| bytes.get(i + 1) != Some(&b'\n'))
}

fn utf16(bytes: &[u8], unit: fn([u8; 2]) -> u16) -> Result<String, DecodeError> {
    let units = bytes.chunks_exact(2).map(|c| unit([c[0], c[1]]));
    let mut text = String::with_capacity(bytes.len());
    for c in char::decode_utf16(units) {
        match c {
            Ok(c) => text.push(c),
            Err(e) => {
                let problem = Undecodable::Utf16Surrogate(e.unpaired_surrogate());
                return Err(DecodeError::after(&text, problem));
            }
        }
    }
    if bytes.len() % 2 == 1 {
        return Err(DecodeError::after(&text, Undecodable::Utf16OddLength));
    }
    Ok(text)
}

/// The first character kinject does not read in a stream: what YAML does not allow
/// (outside c-printable: C0 controls but tab, line feed and carriage return; DEL; C1 controls
/// but NEL; U+FFFE and U+FFFF; a byte-order mark anywhere but at the start, as Go's YAML
/// reader refuses it), and the three line breaks YAML 1.1 has and YAML 1.2 has not (NEL,
/// U+2028, U+2029): kubectl's reader ends a line, a comment or a plain scalar at them, folds
/// them in quoted scalars, and kinject's reader would not, so what kinject decided about a
/// manifest would not be what Kubernetes reads. Looked for a block at a time, as there
/// usually is none.
fn forbidden_control(text: &str) -> Option<(usize, char)> {
    const BLOCK: usize = 64;
    // 0xC2 starts every C1 control, 0xE2 U+2028 and U+2029, 0xEF U+FFFE and U+FFFF (and
    // other characters, checked below).
    let suspect = |b: u8| {
        (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r'))
            || b == 0x7F
            || b == 0xC2
            || b == 0xE2
            || b == 0xEF
    };
    for (n, block) in text.as_bytes().chunks(BLOCK).enumerate() {
        if !block.iter().fold(false, |any, &b| any | suspect(b)) {
            continue;
        }
        // A block can start inside a character: back up to its start.
        let mut start = n * BLOCK;
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let end = (n + 1) * BLOCK;
        let found = text[start..]
            .char_indices()
            .take_while(|&(i, _)| start + i < end)
            .find(|&(i, c)| {
                (c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
                    || matches!(c, '\u{2028}' | '\u{2029}' | '\u{FFFE}' | '\u{FFFF}')
                    || (c == '\u{FEFF}' && start + i > 0)
            });
        if let Some((i, c)) = found {
            return Some((start + i, c));
        }
    }
    None
}
