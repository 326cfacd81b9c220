//! YAML as kinject sees it: one document's text, the value Kubernetes would read from it, and a
//! tree of byte spans so edits can be spliced into the original text.
//!
//! This file reads a document with the fast reader or the general parser (`parse_document`);
//! the tree it gives is `node.rs`. The parts import each other, never this file.

pub(crate) mod edit;
pub(crate) mod emit;
mod fast;
mod node;
mod parse;
pub(crate) mod scalar;
pub(crate) mod style;

pub(crate) use node::{Entry, Node, NodeKind, Parsed, ScalarKind};
pub(crate) use parse::ParseError;

pub(crate) use fast::top_level_kind;
#[cfg(feature = "oracles")]
pub(crate) use fast::{agrees, shallow_agrees};

/// For a document whose top-level `kind` is written plainly at the start of a line and
/// satisfies `skip(kind)`: the document checked as `parse_document` checks it, but with only
/// `apiVersion`, `kind` and `metadata` read — how documents no rule can touch are read.
/// `None` when the document is not such a one, or is not written in the YAML the fast reader
/// reads.
pub(crate) fn parse_identity(text: &str, skip: impl Fn(&str) -> bool) -> Option<Parsed> {
    let kind = fast::top_level_kind(text).filter(|k| skip(k))?;
    let parsed = fast::parse_shallow(text)?;
    (parsed.value.get("kind").and_then(serde_json::Value::as_str) == Some(kind)).then_some(parsed)
}

/// Parses the text of exactly one document (it may start with `---` and end with `...`):
/// with the fast reader when the document is written in the YAML it reads (most manifests),
/// else with the general parser. Text holding only comments yields `Value::Null` and no root.
///
/// A document larger than `CHECK_FIRST` is checked before anything is built for it: the fast
/// reader's check builds nothing, and a document it leaves to the general parser is checked
/// by that parser without building first, so an error found at its end costs no tree (a
/// 20 MB flow sequence with a stray `]` at its end took 1.9 GB before the error was found).
pub(crate) fn parse_document(text: &str) -> Result<Parsed, ParseError> {
    if text.len() > CHECK_FIRST && !fast::reads(text) {
        no_directive(text)?;
        parse::check_general(text)?;
        return parse::parse_general(text);
    }
    match fast::parse(text) {
        Some(parsed) => Ok(parsed),
        None => {
            no_directive(text)?;
            parse::parse_general(text)
        }
    }
}

/// Refuses a directive (`%YAML 1.1`, `%TAG …`): Kubernetes' reader cuts a file into
/// documents at its `---` lines before reading them, which leaves the directive a document of
/// its own that it refuses ("did not find expected <document start>"; `%YAML 1.2`: "found
/// incompatible YAML document"), and so does kustomize. kinject would otherwise read a file
/// the cluster never gets. (The fast reader takes no directives.)
fn no_directive(text: &str) -> Result<(), ParseError> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let content = line.trim_start();
        if content.is_empty() || content.starts_with('#') {
            offset += line.len();
            continue;
        }
        if !line.starts_with('%') {
            return Ok(());
        }
        let directive = line.split('#').next().unwrap_or_default().trim();
        return Err(ParseError {
            offset,
            message: format!(
                "the directive `{directive}`: Kubernetes' YAML reader (kubectl, kustomize) refuses a file with \
                    directives; remove it"
            ),
        });
    }
    Ok(())
}

/// For a document of a JSON stream (an input whose text starts with `{`, which Kubernetes
/// reads with its JSON reader, not go-yaml): refused when a number in it is beyond a 64-bit
/// float (`1e400`), which that reader refuses (YAML reads it as the text).
pub(crate) fn check_json_numbers(text: &str, parsed: &Parsed) -> Result<(), ParseError> {
    fn walk(text: &str, node: &Node) -> Result<(), ParseError> {
        match &node.kind {
            NodeKind::Scalar(ScalarKind::Plain) => {
                let number = &text[node.start..node.end];
                let numeric = number.starts_with(|c: char| c == '-' || c.is_ascii_digit());
                if numeric && number.parse::<f64>().is_ok_and(f64::is_infinite) {
                    return Err(ParseError {
                        offset: node.start,
                        message: format!(
                            "the number {number} is beyond a 64-bit float, which Kubernetes' JSON reader refuses"
                        ),
                    });
                }
                Ok(())
            }
            NodeKind::Seq { items, .. } => items.iter().try_for_each(|i| walk(text, i)),
            NodeKind::Map { entries, .. } => entries.iter().try_for_each(|e| walk(text, &e.value)),
            _ => Ok(()),
        }
    }
    parsed.root.as_ref().map_or(Ok(()), |root| walk(text, root))
}

/// Above this many bytes a document is checked before it is read (`parse_document`).
const CHECK_FIRST: usize = 1 << 20;

/// Whether one document's text reads as `value`, found the fast way: `true` only when it
/// does; `false` when it does not or when this could not tell (keys in another order, YAML
/// the fast reader leaves to the general parser), where `parse_value` and a comparison tell.
pub(crate) fn reads_as(text: &str, value: &serde_json::Value) -> bool {
    fast::matches(text, value)
}

/// A hint for a syntax error people make by hand, when the line holding byte `at` of `text`
/// or the error's `message` shows one: a tab in its indentation (YAML indents with spaces only,
/// and the snippet shows a tab as spaces), or a block ended early by a line indented unlike
/// its siblings.
pub(crate) fn syntax_help(text: &str, at: usize, message: &str) -> Option<&'static str> {
    let at = crate::diagnostic::lines::char_start(text, at.min(text.len()));
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].split('\n').next().unwrap_or_default();
    let indent = &line[..line.len() - line.trim_start_matches([' ', '\t']).len()];
    if indent.contains('\t') {
        return Some(
            "this line is indented with a tab: YAML indents with spaces only (the excerpt shows the tab as spaces); \
                replace it with spaces",
        );
    }
    // The reader stops at the first line that cannot belong where it stands; the line that
    // ended its block early is often the one above it.
    if message.contains("did not find expected key") {
        return Some(
            "a line is indented unlike its neighbours: check this line and the ones above it (a \
             key indented less than its siblings ends their block early, and the next line is \
             then where the error shows)",
        );
    }
    message
        .contains("mapping values are not allowed")
        .then_some(
            "YAML reads this line as the value above it going on: check its indentation and the \
         line above's (a key indented less than its siblings ends their block early); or a `: ` \
         inside an unquoted value: quote the value",
        )
}

/// Only the value of one document, as `parse_document` reads it.
pub(crate) fn parse_value(text: &str) -> Result<serde_json::Value, ParseError> {
    match fast::parse_value(text) {
        Some(value) => Ok(value),
        None => {
            no_directive(text)?;
            parse::parse_general(text).map(|p| p.value)
        }
    }
}

/// The offset in the document of byte `offset` of the string value of scalar `node` (plain,
/// quoted or block): where an error inside a template or an embedded document is.
pub(crate) fn offset_in_scalar(doc: &str, node: &Node, offset: usize) -> usize {
    match node.kind {
        NodeKind::Scalar(ScalarKind::Plain) => node.start + offset,
        NodeKind::Scalar(ScalarKind::SingleQuoted | ScalarKind::DoubleQuoted) => {
            node.start + 1 + offset
        }
        NodeKind::Scalar(ScalarKind::Block) => {
            // Lines of a block scalar sit under its header, indented.
            let body_start = doc[node.start..]
                .find('\n')
                .map_or(node.start, |i| node.start + i + 1);
            let body = &doc[body_start..node.end];
            let indent = body.len() - body.trim_start_matches(' ').len();
            let mut remaining = offset;
            let mut pos = body_start;
            for line in body.split_inclusive('\n') {
                let content = line.get(indent.min(line.len())..).unwrap_or("");
                if remaining < content.len() {
                    return pos + indent + remaining;
                }
                remaining -= content.len();
                pos += line.len();
            }
            node.start
        }
        _ => node.start,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry of `node` with its path, found by visiting the whole tree.
    fn entries(node: &Node, path: &mut Vec<String>, out: &mut Vec<(usize, Vec<String>)>) {
        match &node.kind {
            NodeKind::Map { entries: es, .. } => {
                for e in es {
                    path.push(e.key.clone());
                    out.push((e.key_start, path.clone()));
                    entries(&e.value, path, out);
                    path.pop();
                }
            }
            NodeKind::Seq { items, .. } => {
                for (i, n) in items.iter().enumerate() {
                    path.push(i.to_string());
                    entries(n, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }

    #[test]
    fn key_paths_of_every_entry() {
        for text in [
            "a: 1\nb:\n  - c: 2\n    d: [x, {e: 3, f: 4}]\n  - {g: 5}\n  -\nh: {i: {j: 6}}\n",
            "- - a: 1\n    b: 2\n- c:\n    d: 3\n  e: 4\n",
            "a: &x {b: 1}\nc: *x\nd:\n  <<: *x\n  e: 2\n",
            "a: 1\na: 2\nk: |\n  t\nz: ''\n",
        ] {
            let root = parse_document(text).unwrap().root.unwrap();
            let mut all = Vec::new();
            entries(&root, &mut Vec::new(), &mut all);
            assert!(!all.is_empty());
            for offset in 0..text.len() {
                let want = all
                    .iter()
                    .find(|(at, _)| *at == offset)
                    .map(|(_, p)| p.clone());
                assert_eq!(root.key_path(offset), want, "{text:?} at {offset}");
            }
        }
    }
}
