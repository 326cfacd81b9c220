//! Whether an input is a Helm (Go) template rather than a manifest: a `{{` directive where
//! YAML structure stands (a line of its own, a key, the start of an unquoted value), or, inside
//! a value, one that reads Helm's objects (`.Values`, `include`, …) or sits in a chart's
//! `templates/` (beside a `Chart.yaml`). Block scalars and comments are data: a ConfigMap's
//! `|` block holding a template, an annotation holding another tool's template, stay
//! manifests. A template that happens to parse as YAML would otherwise be injected as
//! `deployment/<unnamed>` and written back into the chart.

use std::path::Path;

/// What Helm's templates read, and no other tool's: a directive in a value that names one is
/// Helm's.
const HELM_WORDS: [&str; 8] = [
    ".Values",
    ".Release",
    ".Chart",
    ".Capabilities",
    ".Files",
    ".Template",
    "include ",
    "toYaml",
];

/// The byte offset of the first template directive of `text` (read from `path`, when a file)
/// that makes it a template, if any. Inputs without `{{` (nearly all) cost one `memchr` scan.
pub(crate) fn directive(text: &str, path: Option<&Path>) -> Option<usize> {
    let bytes = text.as_bytes();
    // A one-byte search: cheaper than `memmem` where flow mappings (`{}`) are common.
    let first = memchr::memchr_iter(b'{', bytes).find(|&i| bytes.get(i + 1) == Some(&b'{'))?;
    // Lines from the one holding the first `{{`, and those before it only for whether they
    // open a block scalar that goes on there.
    let mut in_chart = None;
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
        let code = without_comment(content);
        if opens_block(code) {
            block = Some(indent);
        }
        if offset <= first {
            continue;
        }
        for (at, _) in code.match_indices("{{") {
            let before = code[..at].trim_end();
            let after = &code[at..];
            // A `:` ends a key only before a space: `x:{{ y }}` is text (an image tag in a
            // quoted value, a kinject template's own `"repo:{{ values.tag }}"`).
            let spaced = before.len() < at;
            let structural = before.is_empty()
                || (before.ends_with(':') && spaced)
                || before.ends_with(['[', '{'])
                || before.chars().all(|c| c == '-' || c == ' ');
            let helm = || HELM_WORDS.iter().any(|w| directive_text(after).contains(w));
            if structural
                || helm()
                || *in_chart.get_or_insert_with(|| path.is_some_and(chart_template))
            {
                return Some(start + indent + at);
            }
        }
    }
    None
}

/// The text of the directive `text` starts with, to its `}}` (or the line's end).
fn directive_text(text: &str) -> &str {
    match text.find("}}") {
        Some(end) => &text[..end],
        None => text,
    }
}

/// `code` (a line's content) without a trailing comment: from a `#` after a space on. (A `#`
/// inside quotes is taken for one: what is cut off is then only not looked at.)
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

/// Whether `path` lies in a Helm chart's `templates/` directory (one beside a `Chart.yaml`).
fn chart_template(path: &Path) -> bool {
    let absolute = std::env::current_dir().map_or_else(|_| path.to_owned(), |d| d.join(path));
    absolute
        .ancestors()
        .skip(1)
        .filter(|d| d.file_name().is_some_and(|n| n == "templates"))
        .any(|d| d.parent().is_some_and(|p| p.join("Chart.yaml").is_file()))
}

#[cfg(test)]
mod tests {
    use super::directive;

    #[test]
    fn directives_where_yaml_structure_stands_make_a_template() {
        let at = |text: &str| directive(text, None);
        for text in [
            "{{- if .Values.enabled }}\napiVersion: v1\n",
            "metadata:\n  name: {{ .Values.name }}\n",
            "metadata:\n  name: \"{{ .Values.name }}\"\n",
            "spec:\n  containers:\n  - image: '{{ .Values.image }}'\n",
            "metadata:\n  labels:\n    {{- include \"x.labels\" . | nindent 4 }}\n",
            "spec:\n  {{ .Values.key }}: 1\n",
            "a: [{{ x }}]\n",
            "- {{ x }}\n",
            "spec:\n  replicas: {{x}}\n",
        ] {
            assert!(at(text).is_some(), "{text:?}");
        }
        assert_eq!(at("a: 1\nb: {{ x }}\n"), Some(8));
        for text in [
            "a: 1\n",
            "data:\n  t: |\n    {{- if .Values.x }}\n    name: {{ .Values.name }}\n  b: 2\n",
            "data:\n  t: >-\n\n    {{ x }}\n",
            "metadata:\n  annotations:\n    tool/template: \"{{ .Name }}\"\n",
            "metadata:\n  name: vttablet-{{uid}}\n",
            "# {{ .Values.x }}\na: 1 # {{ y }}\n",
            "spec:\n  containers:\n  - args:\n    - |\n      {{ x }}\n",
            // kinject's own templates, in a configuration given as an input (pre-commit
            // passes .kinject.yaml) or a ResourceList's functionConfig.
            "  - image: \"example.com/shipper:{{ values.version }}\"\n",
            "    args: [\"--port={{ values.port }}\", 'x:{{ name }}']\n",
        ] {
            assert_eq!(at(text), None, "{text:?}");
        }
    }

    #[test]
    fn in_a_charts_templates_any_directive_counts() {
        let dir = tempfile::tempdir().unwrap();
        let templates = dir.path().join("chart/templates");
        std::fs::create_dir_all(&templates).unwrap();
        let file = templates.join("cm.yaml");
        let text = "metadata:\n  annotations:\n    a: \"{{ .Name }}\"\n";
        assert_eq!(directive(text, Some(&file)), None);
        std::fs::write(dir.path().join("chart/Chart.yaml"), "name: c\n").unwrap();
        assert!(directive(text, Some(&file)).is_some());
    }
}
