//! Sidecar templates (minijinja): compiled once per configuration, rendered per object.
//!
//! Two forms. A *field template* is any string of a sidecar definition holding `{{ }}` or
//! `{% %}`; it renders to that one string (or, when the string is a single `{{ expr }}`, to the
//! expression's value with its type), so whatever a manifest contains cannot add a field. A
//! *whole template* (`template:`) renders YAML text with loops and conditionals; there every
//! value that comes from the object is printed JSON-quoted, so an annotation cannot break out
//! of its scalar (Istio's kube-inject shipped a fix for exactly that).

use std::collections::HashMap;

use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use serde_json::{Map, Value};

use crate::config::schema::is_template;
use crate::patch::{self, Pointer};

/// Upper bound on template work per render (minijinja fuel units).
const FUEL: u64 = 200_000;
/// Upper bound on one rendered text.
const MAX_OUTPUT: usize = 1 << 20;

/// A template that failed to compile: where (JSON pointer inside the sidecar definition, or
/// `/template`), and the byte range inside the template text when known.
#[derive(Debug, Clone)]
pub struct SyntaxError {
    pub pointer: String,
    pub message: String,
    pub range: Option<std::ops::Range<usize>>,
}

/// A template that failed to render for one object.
#[derive(Debug, Clone)]
pub struct RenderError {
    pub pointer: String,
    pub message: String,
}

#[derive(Default)]
struct SidecarTemplates {
    /// (pointer in the definition, template name, renders a typed value)
    fields: Vec<(String, String, bool)>,
    whole: Option<String>,
}

/// Every template of a configuration, compiled.
pub struct Templates {
    env: Environment<'static>,
    sidecars: HashMap<String, SidecarTemplates>,
}

impl Default for Templates {
    fn default() -> Self {
        Self::new()
    }
}

impl Templates {
    pub fn new() -> Self {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        // Errors say what was undefined (`values.tracerVersion` is undefined): minijinja
        // tracks it in debug mode, which is on by default only in debug builds (the release
        // binary said "undefined value (undefined value)").
        env.set_debug(true);
        env.set_fuel(Some(FUEL));
        // Python string methods (`startswith`, `split`…) as Jinja users expect them.
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        if let Ok(syntax) = minijinja::syntax::SyntaxConfig::builder()
            .keep_trailing_newline(true)
            .build()
        {
            env.set_syntax(syntax);
        }
        env.set_auto_escape_callback(|name| {
            if name.starts_with("whole:") {
                AutoEscape::Json
            } else {
                AutoEscape::None
            }
        });
        env.add_filter("b64encode", |s: String| {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.encode(s)
        });
        env.add_filter(
            "b64decode",
            |s: String| -> Result<String, minijinja::Error> {
                use base64::Engine;
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(s.trim())
                    .map_err(invalid)?;
                String::from_utf8(bytes).map_err(invalid)
            },
        );
        env.add_filter(
            "from_json",
            |s: String| -> Result<minijinja::Value, minijinja::Error> {
                let v: Value =
                    serde_json::from_str(&s).map_err(|e| invalid(format!("not JSON: {e}")))?;
                Ok(ser(v))
            },
        );
        env.add_filter(
            "from_yaml",
            |s: String| -> Result<minijinja::Value, minijinja::Error> {
                let parsed = crate::yaml::parse_document(&s)
                    .map_err(|e| invalid(format!("not YAML: {}", e.message)))?;
                Ok(ser(parsed.value))
            },
        );
        env.add_filter("yaml_scalar", |v: minijinja::Value| -> minijinja::Value {
            match v.as_str() {
                Some(s) => ser(crate::yaml::scalar::resolve_plain(s)),
                None => v,
            }
        });
        // Go's `range` (translated salesforce templates): (index, item) of a list, (key, value)
        // of a mapping in key order.
        env.add_filter(
            "go_range",
            |v: minijinja::Value| -> Result<minijinja::Value, minijinja::Error> {
                let pairs: Vec<minijinja::Value> = if v.kind() == minijinja::value::ValueKind::Map {
                    let mut keys: Vec<minijinja::Value> = v.try_iter()?.collect();
                    keys.sort();
                    keys.into_iter()
                        .map(|k| {
                            let item = v.get_item(&k).unwrap_or_default();
                            minijinja::Value::from(vec![k, item])
                        })
                        .collect()
                } else {
                    v.try_iter()?
                        .enumerate()
                        .map(|(i, item)| {
                            minijinja::Value::from(vec![minijinja::Value::from(i), item])
                        })
                        .collect()
                };
                Ok(minijinja::Value::from(pairs))
            },
        );
        env.add_function("annotation", annotation);
        env.add_function("service_account", service_account);
        env.add_function("annotation_list", annotation_list);
        Templates {
            env,
            sidecars: HashMap::new(),
        }
    }

    /// Compiles the templates of sidecar `name`: each template string in `definition` and
    /// the `whole` template text.
    pub fn add_sidecar(
        &mut self,
        name: &str,
        definition: &Value,
        whole: Option<&str>,
    ) -> Result<(), Vec<SyntaxError>> {
        let mut errors = Vec::new();
        let mut compiled = SidecarTemplates::default();
        let mut strings = Vec::new();
        template_strings(definition, String::new(), &mut strings);
        for (pointer, text) in strings {
            let template_name = format!("field:{name}:{pointer}");
            let (source, typed) = match single_expression(&text) {
                Some(expr) => (format!("{{{{ ({expr}) | tojson }}}}"), true),
                None => (text.clone(), false),
            };
            match self.env.add_template_owned(template_name.clone(), source) {
                Ok(()) => compiled.fields.push((pointer, template_name, typed)),
                Err(e) => {
                    // A typed expression re-wrapped: report against the original text.
                    let range = if typed { None } else { e.range() };
                    errors.push(SyntaxError {
                        pointer,
                        message: describe(&e),
                        range,
                    });
                }
            }
        }
        if let Some(text) = whole {
            let template_name = format!("whole:{name}");
            match self
                .env
                .add_template_owned(template_name.clone(), text.to_owned())
            {
                Ok(()) => compiled.whole = Some(template_name),
                Err(e) => errors.push(SyntaxError {
                    pointer: "/template".to_owned(),
                    message: describe(&e),
                    range: e.range(),
                }),
            }
        }
        self.sidecars.insert(name.to_owned(), compiled);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// Whether sidecar `name` renders the same for every object (it has no template).
    pub fn is_static(&self, name: &str) -> bool {
        self.sidecars
            .get(name)
            .is_none_or(|t| t.fields.is_empty() && t.whole.is_none())
    }

    /// Renders every field template of sidecar `name` into a copy of `definition`.
    pub fn render_fields(
        &self,
        name: &str,
        definition: &Value,
        ctx: &minijinja::Value,
    ) -> Result<Value, RenderError> {
        let mut out = definition.clone();
        let Some(compiled) = self.sidecars.get(name) else {
            return Ok(out);
        };
        // Last first, so removing a list item leaves the pointers still to fill valid.
        for (pointer, template_name, typed) in compiled.fields.iter().rev() {
            let text = self
                .render_named(template_name, ctx)
                .map_err(|message| RenderError {
                    pointer: pointer.clone(),
                    message,
                })?;
            let value = if *typed {
                serde_json::from_str(&text).map_err(|e| RenderError {
                    pointer: pointer.clone(),
                    message: format!("expression did not give a value: {e}"),
                })?
            } else {
                Value::String(text)
            };
            if value.is_null() {
                // A field whose expression gives nothing is left out. It is there to remove:
                // only fields after it (in the order they were found) were removed before.
                let remove = patch::Op::Remove {
                    path: pointer.clone(),
                };
                let _ = patch::apply(&mut out, std::slice::from_ref(&remove));
            } else if let Some(slot) = out.at_pointer_mut(pointer) {
                *slot = value;
            }
        }
        Ok(out)
    }

    /// Renders the whole template of sidecar `name`, if it has one, to YAML text.
    pub fn render_whole(
        &self,
        name: &str,
        ctx: &minijinja::Value,
    ) -> Option<Result<String, RenderError>> {
        let template_name = self.sidecars.get(name)?.whole.as_ref()?;
        Some(
            self.render_named(template_name, ctx)
                .map_err(|message| RenderError {
                    pointer: "/template".to_owned(),
                    message,
                }),
        )
    }

    fn render_named(&self, template_name: &str, ctx: &minijinja::Value) -> Result<String, String> {
        let template = self
            .env
            .get_template(template_name)
            .map_err(|e| describe(&e))?;
        // Written to a bounded buffer: a template that would print gigabytes stops at the
        // limit instead of first making them.
        let mut out = Bounded::default();
        let rendered = template.render_captured_to(ctx, &mut out);
        if out.full {
            return Err(format!("rendered text is larger than {MAX_OUTPUT} bytes"));
        }
        rendered.map_err(|e| describe(&e))?;
        String::from_utf8(out.text).map_err(|e| e.to_string())
    }
}

/// A buffer that refuses to grow past `MAX_OUTPUT`.
#[derive(Default)]
struct Bounded {
    text: Vec<u8>,
    full: bool,
}

impl std::io::Write for Bounded {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.text.len() + bytes.len() > MAX_OUTPUT {
            self.full = true;
            return Err(std::io::Error::other("rendered text too large"));
        }
        self.text.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `annotation(key, default="")`: the pod template's annotation `key`, or `default`.
fn annotation(
    state: &minijinja::State,
    key: &str,
    default: Option<minijinja::Value>,
) -> minijinja::Value {
    let found = state
        .lookup("pod")
        .and_then(|pod| pod.get_attr("metadata").ok())
        .and_then(|m| m.get_attr("annotations").ok())
        .and_then(|a| a.get_item(&minijinja::Value::from(key)).ok())
        .filter(|v| !v.is_undefined() && !v.is_none());
    found.unwrap_or_else(|| default.unwrap_or_else(|| minijinja::Value::from("")))
}

/// `annotation_list(key)`: the pod template's annotation `key` read as a JSON list (none when
/// the annotation is absent or empty).
fn annotation_list(
    state: &minijinja::State,
    key: &str,
) -> Result<minijinja::Value, minijinja::Error> {
    let text = annotation(state, key, None);
    let text = text.as_str().unwrap_or_default().trim();
    if text.is_empty() {
        return Ok(minijinja::Value::from(Vec::<minijinja::Value>::new()));
    }
    let fail = |why: String| invalid(format!("annotation `{key}` must hold a JSON list: {why}"));
    match serde_json::from_str::<Value>(text) {
        Ok(list @ Value::Array(_)) => Ok(ser(list)),
        Ok(other) => Err(fail(format!(
            "it holds {}",
            crate::config::schema::type_name(&other)
        ))),
        Err(e) => Err(fail(e.to_string())),
    }
}

/// `service_account()`: the pod's service account as admission sees it: `serviceAccountName`,
/// else the deprecated `serviceAccount`, else `default` (what the ServiceAccount admission
/// plugin sets before any webhook runs).
fn service_account(state: &minijinja::State) -> minijinja::Value {
    let spec = state
        .lookup("pod")
        .and_then(|pod| pod.get_attr("spec").ok());
    ["serviceAccountName", "serviceAccount"]
        .into_iter()
        .filter_map(|f| spec.as_ref()?.get_attr(f).ok())
        .find(|v| v.as_str().is_some_and(|s| !s.is_empty()))
        .unwrap_or_else(|| minijinja::Value::from("default"))
}

/// The template context for one object. `values` are the configuration's (trusted: printed
/// as they are in whole templates); everything read from the object is untrusted.
pub fn context(
    pod: &Value,
    workload: &Value,
    namespace: &str,
    values: &Map<String, Value>,
) -> minijinja::Value {
    let metadata = pod
        .get("metadata")
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    let workload_meta = workload.get("metadata");
    let merged = |field: &str| {
        let mut out = workload_meta
            .and_then(|m| m.get(field))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        if let Some(own) = metadata.get(field).and_then(Value::as_object) {
            for (k, v) in own {
                out.insert(k.clone(), v.clone());
            }
        }
        Value::Object(out)
    };
    let name = workload_meta
        .and_then(|m| m.get("name"))
        .cloned()
        .unwrap_or(Value::String(String::new()));
    let workload_view = serde_json::json!({
        "apiVersion": workload.get("apiVersion"),
        "kind": workload.get("kind"),
        "metadata": workload_meta,
    });
    minijinja::Value::from_pairs([
        ("pod", ser(pod)),
        ("workload", ser(&workload_view)),
        ("namespace", minijinja::Value::from(namespace)),
        ("name", ser(&name)),
        ("labels", ser(merged("labels"))),
        ("annotations", ser(merged("annotations"))),
        ("values", trusted(&Value::Object(values.clone()))),
    ])
}

/// A template error: an operation that cannot be done on its operand.
fn invalid(message: impl std::fmt::Display) -> minijinja::Error {
    minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, message.to_string())
}

fn ser<T: serde::Serialize>(value: T) -> minijinja::Value {
    minijinja::Value::from(minijinja::value::Serde(value))
}

/// Configuration values: strings marked safe so whole templates print them as written.
fn trusted(value: &Value) -> minijinja::Value {
    match value {
        Value::String(s) => minijinja::Value::from_safe_string(s.clone()),
        Value::Array(items) => {
            minijinja::Value::from(items.iter().map(trusted).collect::<Vec<_>>())
        }
        Value::Object(map) => {
            minijinja::Value::from_pairs(map.iter().map(|(k, v)| (k.clone(), trusted(v))))
        }
        other => ser(other),
    }
}

/// `{{ expr }}` and nothing else: the expression, to render with its type.
fn single_expression(text: &str) -> Option<&str> {
    let inner = text.trim().strip_prefix("{{")?.strip_suffix("}}")?;
    let inner = inner.strip_prefix('-').unwrap_or(inner);
    let inner = inner.strip_suffix('-').unwrap_or(inner);
    (!inner.contains("{{") && !inner.contains("}}") && !inner.contains("{%"))
        .then_some(inner.trim())
}

fn template_strings(value: &Value, pointer: String, out: &mut Vec<(String, String)>) {
    match value {
        Value::String(s) if is_template(s) => out.push((pointer, s.clone())),
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                template_strings(v, patch::push(&pointer, &i.to_string()), out);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                template_strings(v, patch::push(&pointer, k), out);
            }
        }
        _ => {}
    }
}

fn describe(e: &minijinja::Error) -> String {
    let mut msg = e
        .detail()
        .map_or_else(|| e.kind().to_string(), ToString::to_string);
    match e.kind() {
        minijinja::ErrorKind::UndefinedError => msg = format!("undefined value ({msg})"),
        minijinja::ErrorKind::OutOfFuel => {
            msg = format!(
                "the template did more than {FUEL} steps of work (a loop that does not end?)"
            );
        }
        _ => {}
    }
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        msg.push_str(&format!(": {s}"));
        source = s.source();
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> minijinja::Value {
        let pod = json!({
            "metadata": {"annotations": {"sidecar-injector.expedia.com/some-api-key": "6feab492", "evil": "x\"\n  privileged: true"}},
            "spec": {"serviceAccountName": "billing"},
        });
        let workload = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "prod"}});
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
        t.add_sidecar("p", &def, None).unwrap();
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
        let text = "containers:\n- name: agent\n  image: {{ values.registry }}/agent\n  env:\n{% for k, v in annotations|items if k.startswith('sidecar-injector.expedia.com/') %}  - name: {{ k.split('/')[1] }}\n    value: {{ v }}\n{% endfor %}  - name: EVIL\n    value: {{ annotations.evil }}\n";
        t.add_sidecar("agent", &json!({}), Some(text)).unwrap();
        let out = t.render_whole("agent", &ctx()).unwrap().unwrap();
        let parsed = crate::yaml::parse_document(&out).unwrap().value;
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
        t.add_sidecar("p", &def, None).unwrap();
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
        t.add_sidecar("q", &def, None).unwrap();
        let out = t.render_fields("q", &def, &bare).unwrap();
        assert_eq!(out, json!({"x": "default", "y": ""}));
    }

    #[test]
    fn strict_undefined_and_syntax_errors() {
        let mut t = Templates::new();
        let def = json!({"containers": [{"name": "{{ nope.x }}"}]});
        t.add_sidecar("a", &def, None).unwrap();
        let err = t.render_fields("a", &def, &ctx()).unwrap_err();
        assert_eq!(err.pointer, "/containers/0/name");
        assert!(err.message.contains("undefined"), "{}", err.message);
        let errs = Templates::new()
            .add_sidecar("b", &json!({"x": "{{ a + }}"}), Some("{% for %}"))
            .unwrap_err();
        assert_eq!(errs.len(), 2);
    }
}
