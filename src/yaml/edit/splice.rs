//! What an edit gives: splices of the original text, in order and none overlapping, or why
//! the editor leaves the document to be emitted again.

/// The document's layout is one the editor does not change in place (an anchor, an alias, a
/// merge key, a first key sharing its line with a `-`…). The caller re-emits the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unsupported(pub String);

pub(super) type Res<T> = Result<T, Unsupported>;

pub(super) fn unsupported<T>(why: impl Into<String>) -> Res<T> {
    Err(Unsupported(why.into()))
}

/// `start..end` of a text replaced by `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Splice {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// `splices` in order, back-to-back deletions joined; an error when two overlap.
pub(super) fn arrange(text: &str, mut splices: Vec<Splice>) -> Res<Vec<Splice>> {
    // Stable: insertions at one spot keep their order, and come before a deletion there.
    splices.sort_by_key(|s| (s.start, s.end));
    let splices = merge_deletions(text, splices);
    if splices.windows(2).any(|w| w[1].start < w[0].end) {
        return unsupported("two edits overlap");
    }
    Ok(splices)
}

/// `text` with `splices` (as `arrange` leaves them) applied.
pub(crate) fn spliced(text: &str, splices: &[Splice]) -> String {
    let extra: usize = splices.iter().map(|s| s.text.len()).sum();
    let mut out = String::with_capacity(text.len() + extra);
    let mut pos = 0;
    for s in splices {
        out.push_str(&text[pos..s.start]);
        out.push_str(&s.text);
        pos = s.end;
    }
    out.push_str(&text[pos..]);
    out
}

/// Joins back-to-back deletions. A deletion that reaches the end of a text without a final
/// line break takes the break before it instead, so the text still ends the way it did.
fn merge_deletions(text: &str, splices: Vec<Splice>) -> Vec<Splice> {
    let mut out: Vec<Splice> = Vec::with_capacity(splices.len());
    for s in splices {
        match out.last_mut() {
            Some(prev) if prev.text.is_empty() && s.text.is_empty() && s.start <= prev.end => {
                prev.end = prev.end.max(s.end);
            }
            _ => out.push(s),
        }
    }
    if let Some(last) = out.last_mut() {
        let at_end = last.text.is_empty() && last.end == text.len() && last.start > 0;
        if at_end && !text.ends_with('\n') && text[..last.start].ends_with('\n') {
            last.start -= if text[..last.start].ends_with("\r\n") {
                2
            } else {
                1
            };
        }
    }
    out
}

/// In a document whose lines end both ways, each inserted text's line breaks as the line it
/// goes into ends: the style's CRLF was written into the part of a file that ends lines
/// with LF alone.
pub(super) fn match_line_endings(text: &str, splices: &mut [Splice]) {
    let bytes = text.as_bytes();
    let bare_lf = memchr::memchr_iter(b'\n', bytes).any(|i| i == 0 || bytes[i - 1] != b'\r');
    if !bare_lf {
        return;
    }
    for s in splices.iter_mut().filter(|s| s.text.contains("\r\n")) {
        // The break of the line the text goes into: the one before it when it starts a line.
        let at_line_start = s.start > 0 && bytes[s.start - 1] == b'\n';
        let lf = if at_line_start {
            s.start < 2 || bytes[s.start - 2] != b'\r'
        } else {
            memchr::memchr(b'\n', &bytes[s.start..])
                .map(|i| s.start + i)
                .is_some_and(|i| i == 0 || bytes[i - 1] != b'\r')
        };
        if lf {
            s.text = s.text.replace("\r\n", "\n");
        }
    }
}
