//! Splits a YAML stream into documents at `---` and `...` lines, by text alone. YAML forbids
//! those markers at column 0 inside content, so this never cuts through a value, and the
//! concatenated pieces are always the exact input.

use std::ops::Range;

/// Byte ranges of the documents of `text`; they cover the text end to end.
pub(crate) fn documents(text: &str) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut starts = vec![0];
    // Only lines starting with `---` or `...` can be markers: found by substring search,
    // which skips the rest of the text much faster than visiting every line.
    let after_break = |marker: &[u8]| {
        memchr::memmem::find_iter(bytes, marker)
            .map(|i| i + 1)
            .collect::<Vec<_>>()
    };
    let mut candidates = after_break(b"\n---");
    candidates.extend(after_break(b"\n..."));
    if bytes.starts_with(b"---") || bytes.starts_with(b"...") {
        candidates.push(0);
    }
    candidates.sort_unstable();
    for pos in candidates {
        let end = memchr::memchr(b'\n', &bytes[pos..]).map_or(text.len(), |i| pos + i + 1);
        let line = &text[pos..end];
        if pos > 0 && is_marker(line, "---") && starts.last() != Some(&pos) {
            starts.push(pos);
        } else if is_marker(line, "...") && end < text.len() {
            starts.push(end);
        }
    }
    let mut ranges: Vec<Range<usize>> = starts
        .windows(2)
        .map(|w| w[0]..w[1])
        .chain(std::iter::once(*starts.last().unwrap_or(&0)..text.len()))
        .collect();
    merge_directive_only(text, &mut ranges);
    merge_leading_comments(text, &mut ranges);
    ranges
}

fn is_marker(line: &str, marker: &str) -> bool {
    line.starts_with(marker)
        && line[marker.len()..]
            .chars()
            .next()
            .is_none_or(|c| matches!(c, ' ' | '\t' | '\r' | '\n'))
}

/// `%YAML`/`%TAG` directives belong to the document after them.
fn merge_directive_only(text: &str, ranges: &mut Vec<Range<usize>>) {
    let mut i = 0;
    while i + 1 < ranges.len() {
        let body = &text[ranges[i].clone()];
        // Read up to the first line that is neither a directive nor a comment.
        let mut directive = false;
        let only_directives = body
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .all(|l| {
                directive |= l.starts_with('%');
                l.starts_with('%') || l.starts_with('#')
            })
            && directive;
        if only_directives {
            ranges[i + 1].start = ranges[i].start;
            ranges.remove(i);
        } else {
            i += 1;
        }
    }
}

/// Comments and blank lines before a `---` that no marker opened (at the stream's start, or
/// after a `...`) are no document: YAML starts the next document at its marker. They belong to
/// the document after them, so that documents are numbered alike in every output (a licence
/// header made `-o patch` and the report count one document more than `-o json` wrote).
fn merge_leading_comments(text: &str, ranges: &mut Vec<Range<usize>>) {
    let mut i = 0;
    while i + 1 < ranges.len() {
        let body = &text[ranges[i].clone()];
        let only_comments = body
            .lines()
            .map(str::trim)
            .all(|l| l.is_empty() || l.starts_with('#'));
        if only_comments && !body.starts_with("---") {
            ranges[i + 1].start = ranges[i].start;
            ranges.remove(i);
        } else {
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<&str> {
        documents(text).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn splits_and_covers_everything() {
        let text =
            "# head\na: 1\n---\nb: 2\n...\n# after end\n--- !x\nc: |\n  ---not a marker\n---\n";
        let p = pieces(text);
        assert_eq!(
            p,
            vec![
                "# head\na: 1\n",
                "---\nb: 2\n...\n",
                "# after end\n--- !x\nc: |\n  ---not a marker\n",
                "---\n"
            ]
        );
        assert_eq!(p.concat(), text);
    }

    #[test]
    fn leading_marker_and_crlf_and_directives() {
        assert_eq!(
            pieces("---\r\na: 1\r\n---\r\nb: 2"),
            vec!["---\r\na: 1\r\n", "---\r\nb: 2"]
        );
        assert_eq!(
            pieces("%YAML 1.1\n---\na: 1\n"),
            vec!["%YAML 1.1\n---\na: 1\n"]
        );
        assert_eq!(pieces("----\na: ---\n"), vec!["----\na: ---\n"]);
        assert_eq!(pieces(""), vec![""]);
    }

    /// Comments before a first `---` are no document: one document here, as YAML reads it.
    /// Between two markers, the same comments are an (empty) document.
    #[test]
    fn comments_before_a_marker_belong_to_its_document() {
        assert_eq!(
            pieces("# licence\n\n---\na: 1\n"),
            vec!["# licence\n\n---\na: 1\n"]
        );
        assert_eq!(
            pieces("a: 1\n---\n# only\n---\nb: 2\n"),
            vec!["a: 1\n", "---\n# only\n", "---\nb: 2\n"]
        );
        assert_eq!(pieces("# only\n"), vec!["# only\n"]);
    }
}
