//! A mapping's keys: where a `key: value` entry's key is, what it reads as, and the set that
//! finds duplicates among the keys of a mapping that is not built.

use serde_json::Value;

use super::reader::{GiveUp, R, Reader};
use super::text::find_either;
use crate::yaml::scalar::{key_text, resolve_plain};

impl<'a> Reader<'a> {
    /// The key of a `key: value` entry starting at `pos`: its text as written (quotes
    /// included) and the offset of its `:`; `None` when the line is not an entry.
    pub(super) fn key_at(&self, pos: usize, end: usize) -> R<Option<(&'a str, usize)>> {
        match self.b[pos] {
            b'\'' | b'"' => {
                let (_, after) = self.quoted(pos, end)?;
                let at = self.skip_blanks(after, end);
                if at < end && self.b[at] == b':' && (at + 1 == end || self.b[at + 1] == b' ') {
                    long_key(pos, at)?;
                    return Ok(Some((&self.text[pos..after], at)));
                }
                Ok(None)
            }
            b'?' | b'&' | b'*' | b'!' | b'|' | b'>' | b'%' | b'@' | b'`' => {
                if self.b[pos] == b'?' && (pos + 1 == end || self.b[pos + 1] == b' ') {
                    return Err(GiveUp);
                }
                Ok(None)
            }
            b']' | b'}' | b',' => Err(GiveUp),
            b'[' | b'{' | b'#' => Ok(None),
            _ => {
                let mut i = pos;
                loop {
                    i = find_either(self.b, i, end, b':', b'#');
                    if i == end {
                        return Ok(None);
                    }
                    match self.b[i] {
                        b':' if i + 1 == end || self.b[i + 1] == b' ' => {
                            let raw = self.text[pos..i].trim_end_matches(' ');
                            if raw.is_empty() {
                                return Err(GiveUp);
                            }
                            long_key(pos, i)?;
                            return Ok(Some((raw, i)));
                        }
                        b'#' if self.b[i - 1] == b' ' => return Ok(None),
                        _ => {}
                    }
                    i += 1;
                }
            }
        }
    }

    /// The key as Kubernetes reads it, from its text as written at `pos`.
    pub(super) fn key_text(&self, raw: &str, pos: usize) -> String {
        match raw.as_bytes()[0] {
            b'\'' | b'"' => self
                .quoted(pos, pos + raw.len())
                .map(|(s, _)| s)
                .unwrap_or_default(),
            _ => match resolve_plain(raw) {
                Value::String(s) => s,
                other => key_text(&other),
            },
        }
    }
}

/// An implicit key is at most 1024 characters to its colon (YAML 1.2, 7.4.2); a longer
/// one is left to the general parser, which says so (found by fuzzing). Counted in bytes,
/// so a key of fewer characters may be left too.
pub(super) fn long_key(start: usize, colon: usize) -> R<()> {
    if colon - start > 1024 {
        return Err(GiveUp);
    }
    Ok(())
}

/// Keys of a mapping that is not built (a shallow read's), to find duplicates. Kept as
/// offsets into the text, 12 bytes a key (a 550,000-key ConfigMap's cost 7 MB, where a hash
/// set of them cost 25), and compared when the mapping ends: one by one when few, sorted
/// when many. Shallow reads are of texts with 32-bit offsets.
#[derive(Default)]
pub(super) struct KeySet {
    /// (where the key starts, where its text starts, its text's length)
    keys: Vec<(u32, u32, u32)>,
    /// Keys that read as something else than their text: where each starts, what it reads as.
    resolved: Vec<(usize, String)>,
}

impl KeySet {
    pub(super) fn insert(&mut self, key: usize, raw: &str, text: &str, resolved: Option<String>) {
        if let Some(r) = resolved {
            self.resolved.push((key, r));
            return;
        }
        let at = raw.as_ptr() as usize - text.as_ptr() as usize;
        let offset = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        self.keys.push((offset(key), offset(at), offset(raw.len())));
    }

    /// Every key that repeats one before it: (where it starts, its text), in text order.
    pub(super) fn duplicates(mut self, text: &str) -> Vec<(usize, String)> {
        let raw = |&(_, at, len): &(u32, u32, u32)| &text[at as usize..(at + len) as usize];
        let mut found = Vec::new();
        if !self.resolved.is_empty() {
            // Rare (quoted or special keys): every key by what it reads as.
            let mut all: Vec<(usize, &str)> = self
                .keys
                .iter()
                .map(|k| (k.0 as usize, raw(k)))
                .chain(self.resolved.iter().map(|(at, s)| (*at, s.as_str())))
                .collect();
            all.sort_unstable_by(|a, b| a.1.cmp(b.1).then(a.0.cmp(&b.0)));
            for pair in all.windows(2) {
                if pair[0].1 == pair[1].1 {
                    found.push((pair[1].0, pair[1].1.to_owned()));
                }
            }
            found.sort_unstable_by_key(|(at, _)| *at);
            return found;
        }
        if self.keys.len() <= 16 {
            for (i, k) in self.keys.iter().enumerate() {
                if self.keys[..i].iter().any(|e| raw(e) == raw(k)) {
                    found.push((k.0 as usize, raw(k).to_owned()));
                }
            }
            return found;
        }
        // Equal keys side by side, in text order among themselves: all but the first repeat.
        self.keys
            .sort_unstable_by(|a, b| raw(a).cmp(raw(b)).then(a.0.cmp(&b.0)));
        for pair in self.keys.windows(2) {
            if raw(&pair[0]) == raw(&pair[1]) {
                found.push((pair[1].0 as usize, raw(&pair[1]).to_owned()));
            }
        }
        found.sort_unstable_by_key(|(at, _)| *at);
        found
    }
}
