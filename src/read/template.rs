//! Whether an input is a Helm (Go) template rather than a manifest, decided on the YAML
//! tokens, never on the text of a line. Other tools write `{{ }}` as data — Argo Workflows
//! (`"{{workflow.name}}"`), Prometheus and Alertmanager rules (`"{{ $labels.instance }} down"`),
//! Grafana, Tekton — and a file Kubernetes' reader reads that reads none of Helm's objects is
//! a manifest. A template that happens to parse would otherwise be injected as
//! `deployment/<unnamed>` and written back into the chart.
//!
//! A document that parses is a template when a `{{` in one of its scalars (quoted, plain, or a
//! key) reads Helm's objects (`.Values`, `include`, …); when, in a workload (an object with
//! containers, which injection edits), it calls a named template (`{{ template "x" . }}`; as
//! data in an Alertmanager configuration, which is never edited, it passes); or, in a chart's
//! `templates/` (beside a `Chart.yaml`), wherever a `{{` is outside a block scalar or a
//! comment. Block scalars and comments are data (a ConfigMap's `|` block holding a template).
//! A document that does not parse is a template when a `{{` stands where YAML structure does
//! (a line of its own, a key, the start of an unquoted value): its error is then that, not the
//! YAML error the directive caused.

use std::path::Path;

use super::split::documents;

use crate::yaml::{Node, NodeKind, ScalarKind};

/// What only Helm's templates read: a directive naming one is Helm's, wherever it is.
const HELM_WORDS: [&str; 11] = [
    ".Values",
    ".Release",
    ".Chart",
    ".Capabilities",
    ".Files",
    ".Template",
    ".Subcharts",
    "include",
    "tpl",
    "required",
    "toYaml",
];

/// Why a directive makes a text a template, as a message says it.
pub(crate) type Why = String;

/// The byte offset of the first template directive of `text` (read from `path`, when a file)
/// that makes it a template, and why, if any. Inputs without `{{` (nearly all) cost one
/// `memchr` scan; a document holding one is parsed here (and again when it is processed).
pub(crate) fn directive(text: &str, path: Option<&Path>) -> Option<(usize, Why)> {
    first_directive(text)?;
    let mut in_chart = None;
    let mut chart = || *in_chart.get_or_insert_with(|| path.is_some_and(chart_template));
    for range in documents(text) {
        let doc = &text[range.clone()];
        if first_directive(doc).is_none() {
            continue;
        }
        let found = match crate::yaml::parse_document(doc) {
            Ok(parsed) => in_document(doc, parsed.root.as_ref(), &parsed.value, &mut chart),
            Err(_) => structural(doc),
        };
        if let Some((at, why)) = found {
            return Some((range.start + at, why));
        }
    }
    None
}

/// Whether the file at `path` is a template the reader refuses (`directive`): what a
/// configuration's widening leaves out of a chart's `templates/`, where a file with no
/// directive is a manifest as any other. A file that cannot be read as text is not one (the
/// reader says why).
pub(crate) fn is_template_file(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|text| directive(&text, Some(path)).is_some())
}

/// The offset of the first `{{` of `text`.
fn first_directive(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    // A one-byte search: cheaper than `memmem` where flow mappings (`{}`) are common.
    memchr::memchr_iter(b'{', bytes).find(|&i| bytes.get(i + 1) == Some(&b'{'))
}

/// The first directive of a document that parses (`doc`, its span tree `root`, its `value`)
/// that makes it a template.
fn in_document(
    doc: &str,
    root: Option<&Node>,
    value: &serde_json::Value,
    chart: &mut impl FnMut() -> bool,
) -> Option<(usize, Why)> {
    let mut scalars = Vec::new();
    if let Some(root) = root {
        collect_scalars(root, &mut scalars);
    }
    scalars.sort_unstable_by_key(|s| s.0);
    let workload = has_containers(value);
    let bytes = doc.as_bytes();
    let directives = memchr::memmem::find_iter(bytes, b"{{");
    for at in directives {
        // The innermost scalar holding it: the last to start at or before it.
        let holder = scalars
            .iter()
            .take_while(|s| s.0 <= at)
            .filter(|s| at < s.1)
            .last();
        match holder {
            Some((_, _, ScalarKind::Block)) => continue,
            // Outside every scalar: a comment, or a key (checked as a scalar).
            None if in_comment(doc, at, &scalars) => continue,
            _ => {}
        }
        let said = directive_text(&doc[at..]);
        if let Some(word) = helm_word(said) {
            return Some((at, format!("a directive reading Helm's `{word}`")));
        }
        if workload && calls_template(said) {
            return Some((at, "a named template called in a workload".to_owned()));
        }
        if chart() {
            return Some((at, "a directive in a Helm chart's templates/".to_owned()));
        }
    }
    None
}

/// Every scalar of `node` with its span and style (keys are not nodes: a `{{` outside every
/// scalar and comment is a key's, checked as a scalar's).
fn collect_scalars(node: &Node, out: &mut Vec<(usize, usize, ScalarKind)>) {
    match &node.kind {
        NodeKind::Scalar(kind) => out.push((node.start, node.end, *kind)),
        NodeKind::Seq { items, .. } => items.iter().for_each(|n| collect_scalars(n, out)),
        NodeKind::Map { entries, .. } => {
            entries.iter().for_each(|e| collect_scalars(&e.value, out));
        }
        NodeKind::Alias => {}
    }
}

/// Whether offset `at` of `doc`, in no scalar, is in a comment: a `#` at the start of its line
/// or after a blank, outside every scalar, comes before it on its line.
fn in_comment(doc: &str, at: usize, scalars: &[(usize, usize, ScalarKind)]) -> bool {
    let line_start = doc[..at].rfind('\n').map_or(0, |i| i + 1);
    doc[line_start..at].match_indices('#').any(|(i, _)| {
        let hash = line_start + i;
        let after_blank = hash == line_start || matches!(doc.as_bytes()[hash - 1], b' ' | b'\t');
        after_blank && !scalars.iter().any(|s| s.0 <= hash && hash < s.1)
    })
}

/// Whether an object has containers where a workload's pod template holds them (a Pod, a
/// Deployment or any kind with `spec.template`, a CronJob): injection would edit it.
fn has_containers(value: &serde_json::Value) -> bool {
    [
        "/spec/containers",
        "/spec/template/spec/containers",
        "/spec/jobTemplate/spec/template/spec/containers",
        "/template/spec/containers",
    ]
    .iter()
    .any(|p| value.pointer(p).is_some())
}

/// The first of Helm's objects or functions a directive's text reads (as a word: `.Value`,
/// Prometheus's, is not `.Values`).
fn helm_word(said: &str) -> Option<&'static str> {
    HELM_WORDS.iter().copied().find(|word| has_word(said, word))
}

/// Whether a directive calls a named template (`{{ template "x" . }}`): Helm's
/// `"chart.fullname"` in a workload, where injecting would half-process the template.
fn calls_template(said: &str) -> bool {
    has_word(said, "template")
}

/// Whether `word` occurs in `text` as a word: not inside a longer name.
fn has_word(text: &str, word: &str) -> bool {
    let name = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        let starts = word.starts_with('.') || !before.is_some_and(|c| name(c) || c == '.');
        starts && !after.is_some_and(name)
    })
}

/// The text of the directive `text` starts with, to its `}}` (or the line's end).
fn directive_text(text: &str) -> &str {
    let end = text.find("}}").or_else(|| text.find('\n'));
    end.map_or(text, |end| &text[..end])
}

/// In a document that does not parse: the first `{{` where YAML structure stands — a line of
/// its own, a key, the start of an unquoted value, a flow collection's item — outside block
/// scalars, comments and quoted text; or one anywhere that reads Helm's objects.
fn structural(text: &str) -> Option<(usize, Why)> {
    let mut block: Option<usize> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let content = line.trim_start_matches(' ');
        let indent = line.len() - content.len();
        let content = content.trim_end();
        if let Some(parent) = block {
            if content.is_empty() || indent > parent {
                continue;
            }
            block = None;
        }
        if content.starts_with('#') {
            continue;
        }
        let written = without_comment(content);
        let code = unquoted(written);
        if opens_block(&code) {
            block = Some(indent);
        }
        for (at, _) in code.match_indices("{{") {
            let before = code[..at].trim_end();
            // A `:` ends a key only before a space: `x:{{ y }}` is text.
            let spaced = before.len() < at;
            let structural = before.is_empty()
                || (before.ends_with(':') && spaced)
                || before.ends_with(['[', '{', ','])
                || before.chars().all(|c| c == '-' || c == ' ');
            if structural {
                let why = "a `{{` directive where YAML is expected".to_owned();
                return Some((start + indent + at, why));
            }
        }
        for (at, _) in written.match_indices("{{") {
            if let Some(word) = helm_word(directive_text(&written[at..])) {
                let why = format!("a directive reading Helm's `{word}`");
                return Some((start + indent + at, why));
            }
        }
    }
    None
}

/// `code` with its quoted text blanked (each character of it a space, the quotes kept), so
/// that a `{{` inside quotes is not taken for structure.
fn unquoted(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut quote = None;
    let mut previous = ' ';
    for c in code.chars() {
        match quote {
            Some(q) if c == q => {
                quote = None;
                out.push(c);
            }
            Some(_) => out.extend(std::iter::repeat_n(' ', c.len_utf8())),
            None if (c == '"' || c == '\'') && matches!(previous, ' ' | '[' | '{' | ',' | ':') => {
                quote = Some(c);
                out.push(c);
            }
            None => out.push(c),
        }
        previous = c;
    }
    out
}

/// `code` (a line's content) without a trailing comment: from a `#` after a space on.
fn without_comment(code: &str) -> &str {
    match code.find(" #") {
        Some(at) => code[..at].trim_end(),
        None => code,
    }
}

/// Whether a line's `code` ends with a block scalar's header (`key: |`, `- >-`, `|2+`): the
/// lines indented more than it are the scalar's text.
fn opens_block(code: &str) -> bool {
    let (rest, last) = match code.rsplit_once(' ') {
        Some((rest, last)) => (rest.trim_end(), last),
        None => ("", code),
    };
    let header = last.starts_with(['|', '>'])
        && last[1..]
            .chars()
            .all(|c| c == '-' || c == '+' || c.is_ascii_digit());
    header && (rest.is_empty() || rest.ends_with(':') || rest.chars().all(|c| c == '-' || c == ' '))
}

/// Whether `path` lies in a Helm chart's `templates/` directory (one beside a `Chart.yaml`), by
/// its name or where it really is (a committed link to a chart's template is one). Only there:
/// a `Chart.yaml` a pull request plants beside manifests does not make them templates.
pub(crate) fn chart_template(path: &Path) -> bool {
    let absolute = std::env::current_dir().map_or_else(|_| path.to_owned(), |d| d.join(path));
    let in_templates = |path: &Path| {
        path.ancestors()
            .skip(1)
            .filter(|d| d.file_name().is_some_and(|n| n == "templates"))
            .any(|d| d.parent().is_some_and(|p| p.join("Chart.yaml").is_file()))
    };
    // Resolved only when the name is not one: most files are neither.
    in_templates(&absolute) || in_templates(&crate::tree::resolved(&absolute))
}

#[cfg(test)]
mod tests;
