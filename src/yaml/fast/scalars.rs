//! Scalars: a value on the rest of a line (plain, quoted, or a flow collection's start),
//! quoted scalars with their escapes, and literal block scalars over the lines below.

use serde_json::Value;

use super::reader::{GiveUp, R, Reader, scalar};
use super::text::find_either;
use crate::yaml::node::{Node, ScalarKind};
use crate::yaml::scalar::resolve_plain;

impl<'a> Reader<'a> {
    /// A value written after `key: ` or `- ` on its line (from `pos` to the line's `end`):
    /// scalar, flow collection or block scalar. `indent` is the column of the collection
    /// holding it.
    pub(super) fn inline_value(
        &mut self,
        pos: usize,
        end: usize,
        indent: usize,
    ) -> R<(Node, Value, usize)> {
        match self.b[pos] {
            b'\'' | b'"' => {
                let (s, after) = self.quoted(pos, end)?;
                self.rest_is_comment(after, end)?;
                self.check_string(&s)?;
                let kind = if self.b[pos] == b'\'' {
                    ScalarKind::SingleQuoted
                } else {
                    ScalarKind::DoubleQuoted
                };
                Ok((
                    scalar(pos, after, kind),
                    Value::String(s),
                    self.after_line(end),
                ))
            }
            b'[' | b'{' => {
                let (node, value, after) = self.flow(pos, end, 0)?;
                self.rest_is_comment(after, end)?;
                Ok((node, value, self.after_line(end)))
            }
            b'|' => self.literal(pos, end, indent),
            // Indicators no plain scalar starts with (flow indicators included, found by
            // fuzzing: `name: ]x` is not YAML).
            b'>' | b'&' | b'*' | b'!' | b'%' | b'@' | b'`' | b'?' | b']' | b'}' | b',' => {
                Err(GiveUp)
            }
            b'-' if self.is_dash(pos, end) => Err(GiveUp),
            _ => {
                let mut i = pos;
                let mut stop = end;
                loop {
                    i = find_either(self.b, i, end, b'#', b':');
                    if i == end {
                        break;
                    }
                    match self.b[i] {
                        b'#' if self.b[i - 1] == b' ' => {
                            stop = i;
                            break;
                        }
                        // `a: b: c` is not YAML.
                        b':' if i + 1 == end || self.b[i + 1] == b' ' => return Err(GiveUp),
                        _ => {}
                    }
                    i += 1;
                }
                let raw = self.text[pos..stop].trim_end_matches(' ');
                let e = pos + raw.len();
                self.check_plain(raw)?;
                let value = if self.build {
                    resolve_plain(raw)
                } else {
                    Value::Null
                };
                Ok((
                    scalar(pos, e, ScalarKind::Plain),
                    value,
                    self.after_line(end),
                ))
            }
        }
    }

    /// A quoted scalar on one line from `pos`: its value and the offset after the closing
    /// quote.
    pub(super) fn quoted(&self, pos: usize, end: usize) -> R<(String, usize)> {
        let q = self.b[pos];
        let mut out = String::new();
        let mut i = pos + 1;
        let mut run = i;
        while i < end {
            let c = self.b[i];
            if q == b'\'' && c == b'\'' {
                out.push_str(&self.text[run..i]);
                if i + 1 < end && self.b[i + 1] == b'\'' {
                    out.push('\'');
                    i += 2;
                    run = i;
                    continue;
                }
                return Ok((out, i + 1));
            }
            if q == b'"' && c == b'"' {
                out.push_str(&self.text[run..i]);
                return Ok((out, i + 1));
            }
            if q == b'"' && c == b'\\' {
                out.push_str(&self.text[run..i]);
                let (ch, used) = self.escape(i + 1, end)?;
                out.push(ch);
                i += 1 + used;
                run = i;
                continue;
            }
            i += 1;
        }
        // Runs past the line: a multi-line quoted scalar.
        Err(GiveUp)
    }

    /// The character a `\` escape stands for, and how many bytes after the `\` it takes.
    fn escape(&self, at: usize, end: usize) -> R<(char, usize)> {
        let Some(&c) = self.b.get(at).filter(|_| at < end) else {
            return Err(GiveUp);
        };
        let simple = match c {
            b'0' => '\0',
            b'a' => '\u{7}',
            b'b' => '\u{8}',
            b't' => '\t',
            b'n' => '\n',
            b'v' => '\u{b}',
            b'f' => '\u{c}',
            b'r' => '\r',
            b'e' => '\u{1b}',
            b' ' => ' ',
            b'"' => '"',
            b'/' => '/',
            b'\\' => '\\',
            b'N' => '\u{85}',
            b'_' => '\u{a0}',
            b'L' => '\u{2028}',
            b'P' => '\u{2029}',
            b'x' | b'u' | b'U' => {
                let digits = match c {
                    b'x' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                let hex = self.text.get(at + 1..at + 1 + digits).ok_or(GiveUp)?;
                if at + 1 + digits > end {
                    return Err(GiveUp);
                }
                let n = u32::from_str_radix(hex, 16).map_err(|_| GiveUp)?;
                return char::from_u32(n).map(|ch| (ch, 1 + digits)).ok_or(GiveUp);
            }
            _ => return Err(GiveUp),
        };
        Ok((simple, 1))
    }

    /// A literal block scalar (`|`, `|-`, `|+`, `|2`) whose header is at `pos`; `indent` is
    /// the column of the collection holding it.
    fn literal(&mut self, pos: usize, end: usize, indent: usize) -> R<(Node, Value, usize)> {
        let mut chomp = b' ';
        let mut explicit = None;
        let mut i = pos + 1;
        while i < end && matches!(self.b[i], b'+' | b'-' | b'1'..=b'9') {
            match self.b[i] {
                b'+' | b'-' if chomp == b' ' => chomp = self.b[i],
                d @ b'1'..=b'9' if explicit.is_none() => explicit = Some(usize::from(d - b'0')),
                _ => return Err(GiveUp),
            }
            i += 1;
        }
        self.rest_is_comment(i, end)?;
        let mut block_indent = explicit.map(|e| indent + e);
        // The block's lines: `Some(text)` for content, `None` for a blank line (only when
        // the value is built: a large block only checked is not listed).
        let mut lines: Vec<Option<&str>> = Vec::new();
        let build = self.build || self.compare;
        let mut line = self.after_line(end);
        let mut block_end = line;
        while line < self.b.len() {
            let le = self.line_end(line);
            let spaces = self.b[line..le].iter().take_while(|&&c| c == b' ').count();
            if line + spaces == le {
                // A blank line; one with spaces where they could be content is left to the
                // general parser.
                if spaces > 0 && block_indent.is_none_or(|bi| spaces > bi) {
                    return Err(GiveUp);
                }
                // Spaces ending the text, no line break after them: whether the block's span
                // takes them is the general parser's to say (found by fuzzing).
                if spaces > 0 && le == self.b.len() {
                    return Err(GiveUp);
                }
                if build {
                    lines.push(None);
                }
            } else {
                let bi = *block_indent.get_or_insert(spaces);
                if bi <= indent || spaces < bi {
                    break;
                }
                if build {
                    lines.push(Some(&self.text[line + bi..le]));
                }
            }
            block_end = (le + 1).min(self.b.len());
            line = block_end;
        }
        if !build {
            return Ok((
                scalar(pos, block_end, ScalarKind::Block),
                Value::Null,
                block_end,
            ));
        }
        let trailing = lines.iter().rev().take_while(|l| l.is_none()).count();
        let body = &lines[..lines.len() - trailing];
        if body.is_empty() && chomp == b'+' {
            return Err(GiveUp);
        }
        let mut out = String::new();
        for (n, l) in body.iter().enumerate() {
            if n > 0 {
                out.push('\n');
            }
            if let Some(text) = l {
                out.push_str(text);
            }
        }
        // The end of the text counts as a line break, as in the general parser.
        if !body.is_empty() {
            match chomp {
                b'-' => {}
                b'+' => out.push_str(&"\n".repeat(trailing + 1)),
                _ => out.push('\n'),
            }
        }
        self.check_string(&out)?;
        Ok((
            scalar(pos, block_end, ScalarKind::Block),
            Value::String(out),
            block_end,
        ))
    }
}
