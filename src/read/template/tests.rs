//! The Helm-template detector against Helm's templates and other tools' `{{ }}` as data.

use super::directive;

/// Helm templates, each refused (at the offset given, where it matters).
#[test]
fn helm_templates_are_templates() {
    let at = |text: &str| directive(text, None).map(|(at, _)| at);
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
        "a: 1\n{{ end }}\n",
        // Quoted, and reading Helm's objects or functions.
        "metadata:\n  annotations:\n    note: \"set {{ .Values.replicas }} in your chart\"\n",
        "data:\n  x: '{{ tpl $.Values.img $ }}'\n",
        "data:\n  x: \"{{ required \\\"img\\\" .Values.image }}\"\n",
        "data:\n  x: '{{ $.Release.Name }}-x'\n",
        // B2: a `#` inside the quotes is no comment.
        "spec:\n  template:\n    spec:\n      containers:\n      - name: a\n        image: \"repo/app #{{ .Values.tag }}\"\n",
        // A quoted key.
        "data:\n  \"{{ .Values.key }}\": v\n",
        // JSON.
        "{\"metadata\": {\"name\": \"{{ .Release.Name }}\"}}\n",
    ] {
        assert!(at(text).is_some(), "{text:?}");
    }
    assert_eq!(at("a: 1\nb: {{ x }}\n"), Some(8));
}

/// B1: a workload whose every directive is a named template (`"app.fullname"`) is Helm's; an
/// Alertmanager configuration calling its own named templates is data.
#[test]
fn named_templates_make_a_workload_a_template_and_nothing_else() {
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: '{{ template \"app.fullname\" . \
        }}'\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: '{{ template \
        \"app.image\" . }}'\n";
    assert!(directive(deployment, None).is_some());
    let alertmanager = "apiVersion: monitoring.coreos.com/v1alpha1\nkind: AlertmanagerConfig\nmetadata:\n  name: \
        slack\nspec:\n  receivers:\n  - name: slack\n    slackConfigs:\n    - title: '{{ template \
        \"slack.default.title\" . }}'\n      text: \"{{ template \\\"slack.myorg.text\\\" . }}\"\n";
    assert_eq!(directive(alertmanager, None), None);
}

/// Other tools' templates as data: in quoted scalars (single, double, multi-line, in flow
/// sequences, JSON), in plain scalars after their start, block scalars and comments. Each was
/// refused, or could have been (N1, B7, B8).
#[test]
fn other_tools_templates_are_data() {
    for text in [
        "a: 1\n",
        "data:\n  t: |\n    {{- if .Values.x }}\n    name: {{ .Values.name }}\n  b: 2\n",
        "data:\n  t: >-\n\n    {{ x }}\n",
        "metadata:\n  annotations:\n    tool/template: \"{{ .Name }}\"\n",
        "metadata:\n  name: vttablet-{{uid}}\n",
        "# {{ .Values.x }}\na: 1 # {{ y }}\n",
        "spec:\n  containers:\n  - args:\n    - |\n      {{ x }}\n",
        // kinject's own templates, in a configuration given as an input.
        "  - image: \"example.com/shipper:{{ values.version }}\"\n",
        "    args: [\"--port={{ values.port }}\", 'x:{{ name }}']\n",
        // N1: Argo Workflows.
        "data:\n  msg: \"Scheduled on: {{workflow.scheduledTime}}\"\n",
        "data:\n  msg: 'Scheduled on: {{x}}'\n",
        "spec:\n  args: [\"echo\", \"result: {{x}}\"]\n",
        "spec:\n  args: [\"🕓 hello world. Scheduled on: {{workflow.scheduledTime}}\"]\n",
        "data:\n  a: \"key: {{ .Data.password }}\"\n",
        "data:\n  a: '.[{{x}}]'\n",
        "spec:\n  arguments:\n    parameters:\n    - name: m\n      value: \"{{inputs.parameters.message}}\"\n",
        "spec:\n  when: \"{{=sprig.trim(inputs.parameters.x)}} == true\"\n",
        // A double-quoted scalar spanning lines.
        "data:\n  d: \"first line\n    {{ $labels.instance }} continued\"\n",
        // Prometheus's alerting rule.
        "spec:\n  groups:\n  - name: example\n    rules:\n    - alert: HighRequestLatency\n      expr: \
            job:request_latency_seconds:mean5m{job=\"myjob\"} > 0.5\n      for: 10m\n      annotations:\n        \
            summary: \"Instance {{ $labels.instance }} down\"\n        description: \"{{ $labels.instance }} has a \
            median request latency above 1s (current value: {{ $value }}s)\"\n",
        "annotations:\n  v: '{{ .Value }} {{ .Labels.job }} {{ humanize $value }}'\n",
        // JSON.
        "{\"data\":{\"msg\":\"Scheduled on: {{x}}\"}}\n",
        // B7: a double-quoted annotation continued on a line starting with `{{`.
        "metadata:\n  annotations:\n    a: \"first\n      {{ .Name }} second\"\n",
        // B8: a plain multi-line annotation continued with `{{ example }}`.
        "metadata:\n  annotations:\n    a: first part\n      {{ example }} second\n",
        // Jinja (Ansible) in quotes.
        "data:\n  x: \"{{ ansible_hostname | default('x') }}\"\n",
        // Tekton.
        "spec:\n  steps:\n  - script: \"echo $(params.x) {{ not.helm }}\"\n",
    ] {
        assert_eq!(directive(text, None), None, "{text:?}");
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
    // Still not in a block scalar or a comment.
    let text = "data:\n  t: |\n    {{ .Name }}\n# {{ x }}\n";
    assert_eq!(directive(text, Some(&file)), None);
}

mod properties {
    use proptest::prelude::*;

    use super::directive;

    /// Other tools' directives: Argo, Prometheus, Go templates (not Helm's objects), Jinja,
    /// Tekton-like.
    fn spelling() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("{{workflow.name}}".to_owned()),
            Just("{{inputs.parameters.message}}".to_owned()),
            Just("{{=sprig.trim(x)}}".to_owned()),
            Just("{{ $labels.instance }}".to_owned()),
            Just("{{ $value | humanize }}".to_owned()),
            Just("{{ .Labels.job }}".to_owned()),
            Just("{{ .Name }}".to_owned()),
            Just("{{ range .Alerts }}{{ .Status }}{{ end }}".to_owned()),
            Just("{{ item }}".to_owned()),
            Just("{{ ansible_host | default('x') }}".to_owned()),
            Just("{{ not_helm }}".to_owned()),
            "[a-z]{1,8}".prop_map(|w| format!("{{{{ {w} }}}}")),
        ]
    }

    /// A value holding `directive`, written at a place where it is data, as YAML Kubernetes
    /// reads.
    fn placed(directive: &str, place: u8, before: &str) -> String {
        let single = directive.replace('\'', "''");
        let double = directive.replace('\\', "\\\\").replace('"', "\\\"");
        match place % 8 {
            0 => format!("data:\n  k: \"{before}{double}\"\n"),
            1 => format!("data:\n  k: '{before}{single}'\n"),
            2 => format!("data:\n  k: \"{before}\n    {double} more\"\n"),
            3 => format!("spec:\n  args: [\"x\", \"{before}{double}\"]\n"),
            4 => format!("data:\n  k: |\n    {directive}\n"),
            5 => format!("data:\n  k: x # {directive}\n"),
            6 => format!("# {directive}\ndata:\n  k: x\n"),
            _ => format!("{{\"data\": {{\"k\": \"{before}{double}\"}}}}\n"),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Never refused, wherever and however it is written as data.
        #[test]
        fn other_tools_directives_as_data_are_never_refused(
            d in spelling(),
            place in 0u8..8,
            before in prop_oneof![Just(""), Just("at: "), Just("x-"), Just("[a] "), Just("# ")],
        ) {
            let text = placed(&d, place, before);
            prop_assume!(kinject_reads(&text));
            prop_assert_eq!(directive(&text, None), None, "{}", text);
        }

        /// Helm's objects in the same places (but block scalars and comments) are refused.
        #[test]
        fn helm_objects_as_values_are_refused(
            word in prop_oneof![Just(".Values.x"), Just("$.Release.Name"), Just("include \"a\" ."), Just(".Chart.Version")],
            place in prop_oneof![Just(0u8), Just(1), Just(2), Just(3), Just(7)],
            before in prop_oneof![Just(""), Just("at: "), Just("x-")],
        ) {
            let text = placed(&format!("{{{{ {word} }}}}"), place, before);
            prop_assert!(directive(&text, None).is_some(), "{}", text);
        }
    }

    /// Whether kinject's reader reads the text (the generator's own check).
    fn kinject_reads(text: &str) -> bool {
        crate::yaml::parse_document(text).is_ok()
    }
}
