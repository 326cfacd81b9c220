//! A trial render of every template when the configuration loads, for a typical object. What
//! fails there whatever the object — an unknown filter, test or function, an undefined
//! `values.x` — is a fault of the configuration, reported once at the template instead of
//! once per object. What depends on the object (an annotation a template reads without a
//! default) is left to the render of each object.

use std::ops::Range;

use serde_json::{Map, Value, json};

use super::compiled::Templates;
use super::context::context;
use crate::diagnostic::suggest;

/// The filters a native template can use: minijinja's and kinject's own
/// (`tests::every_name_is_known` checks that each is registered). Those only translated
/// templates use are not offered.
const FILTERS: &[&str] = &[
    "abs",
    "attr",
    "batch",
    "bool",
    "capitalize",
    "chain",
    "count",
    "d",
    "default",
    "dictsort",
    "e",
    "escape",
    "first",
    "float",
    "format",
    "groupby",
    "indent",
    "int",
    "items",
    "join",
    "last",
    "length",
    "lines",
    "list",
    "lower",
    "map",
    "max",
    "min",
    "pprint",
    "reject",
    "rejectattr",
    "replace",
    "reverse",
    "round",
    "safe",
    "select",
    "selectattr",
    "slice",
    "sort",
    "split",
    "string",
    "sum",
    "title",
    "tojson",
    "trim",
    "unique",
    "upper",
    "zip",
    "b64encode",
    "b64decode",
    "from_json",
    "from_yaml",
    "yaml_scalar",
];

/// The tests a template can use (`is defined`).
const TESTS: &[&str] = &[
    "boolean",
    "defined",
    "divisibleby",
    "endingwith",
    "eq",
    "equalto",
    "escaped",
    "even",
    "false",
    "filter",
    "float",
    "ge",
    "greaterthan",
    "gt",
    "in",
    "integer",
    "iterable",
    "le",
    "lessthan",
    "lower",
    "lt",
    "mapping",
    "ne",
    "none",
    "number",
    "odd",
    "safe",
    "sameas",
    "sequence",
    "startingwith",
    "string",
    "test",
    "true",
    "undefined",
    "upper",
];

/// The functions a template can call.
const FUNCTIONS: &[&str] = &[
    "range",
    "dict",
    "debug",
    "namespace",
    "annotation",
    "annotation_list",
    "service_account",
];

/// A fault of a template that no object can make right.
#[derive(Debug, Clone)]
pub struct Fault {
    /// The template: a JSON pointer inside the sidecar definition, or `/template`.
    pub pointer: String,
    /// Where in the template's text, when known.
    pub range: Option<Range<usize>>,
    pub message: String,
    pub help: String,
}

impl Templates {
    /// Renders every template of sidecar `name` for a typical object, with `values`, and
    /// returns what fails whatever the object (each template's first such fault).
    pub fn trial(&self, name: &str, values: &Map<String, Value>) -> Vec<Fault> {
        let Some(compiled) = self.sidecars.get(name) else {
            return Vec::new();
        };
        let ctx = typical(values);
        let fields = compiled.fields.iter().filter_map(|f| {
            let (e, source) = self.render_error(&f.name, &ctx)?;
            let mut fault = classify(&e, values, &source)?;
            fault.pointer.clone_from(&f.pointer);
            fault.range = f.typed.clone().or(fault.range);
            Some(fault)
        });
        let whole = compiled.whole.as_ref().and_then(|w| {
            let (e, source) = self.render_error(w, &ctx)?;
            let mut fault = classify(&e, values, &source)?;
            fault.pointer = "/template".to_owned();
            Some(fault)
        });
        fields.chain(whole).collect()
    }

    /// The error of rendering the template `template_name` for `ctx`, with its source.
    fn render_error(
        &self,
        template_name: &str,
        ctx: &minijinja::Value,
    ) -> Option<(minijinja::Error, String)> {
        let template = self.env.get_template(template_name).ok()?;
        let e = template.render(ctx).err()?;
        Some((e, template.source().to_owned()))
    }
}

/// A typical object: a Deployment `example` in `default`, one app container, no annotations.
fn typical(values: &Map<String, Value>) -> minijinja::Value {
    let metadata = json!({"name": "example", "namespace": "default", "labels": {"app": "example"}});
    let pod = json!({
        "metadata": {"labels": {"app": "example"}},
        "spec": {"containers": [{"name": "app", "image": "example:1"}]},
    });
    let workload = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata});
    context(&pod, &workload, "default", values)
}

/// The names a render's context holds (`template::context`).
const CONTEXT: [&str; 7] = [
    "pod",
    "workload",
    "namespace",
    "name",
    "labels",
    "annotations",
    "values",
];

/// The fault `e` is, when it does not depend on the object; `pointer` left to fill. `source`
/// is the template's text.
fn classify(e: &minijinja::Error, values: &Map<String, Value>, source: &str) -> Option<Fault> {
    use minijinja::ErrorKind;
    let detail = e.detail().unwrap_or_default();
    let (message, help) = match e.kind() {
        ErrorKind::UnknownFilter => unknown("filter", detail, FILTERS)?,
        ErrorKind::UnknownTest => unknown("test", detail, TESTS)?,
        ErrorKind::UnknownFunction => unknown("function", detail, FUNCTIONS)?,
        ErrorKind::UndefinedError => {
            undefined_value(detail, values).or_else(|| undefined_name(detail, values, source))?
        }
        _ => return None,
    };
    Some(Fault {
        pointer: String::new(),
        range: e.range(),
        message,
        help,
    })
}

/// `filter defualt is unknown`: the message and a did-you-mean from `known`.
fn unknown(what: &str, detail: &str, known: &[&str]) -> Option<(String, String)> {
    let name = detail
        .strip_suffix(" is unknown")?
        .strip_prefix(&format!("{what} "))
        .unwrap_or_else(|| detail.trim_end_matches(" is unknown"));
    let help = suggest(name, known.iter().copied()).unwrap_or_else(|| match what {
        "filter" => "the filters a template can use are listed in docs/templates.md".to_owned(),
        _ => format!("the {what}s a template can use: {}", known.join(", ")),
    });
    Some((format!("unknown {what} `{name}`"), help))
}

/// `` `values.verison` is undefined ``, for a path written with dots only (`values[k]` may
/// depend on the object): the message and a did-you-mean from the values defined.
fn undefined_value(detail: &str, values: &Map<String, Value>) -> Option<(String, String)> {
    let path = detail.strip_prefix('`')?.strip_suffix("` is undefined")?;
    let key = path.strip_prefix("values.")?;
    let plain = |p: &str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    if !key.split('.').all(plain) {
        return None;
    }
    let help = suggest_value(key, &defined_paths(values))
        .map(|h| h.replacen('`', "`values.", 1))
        .unwrap_or_else(|| {
            "define it under `values:`, pass it with `--set`, or give a fallback with `| default(…)`"
                .to_owned()
        });
    Some((format!("`{path}` is not defined in `values`"), help))
}

/// `` `version` is undefined ``, a name the context does not hold and the template never
/// sets (`set`, `for`, `with`, a macro's parameter): undefined for every object, so a fault of
/// the configuration, said once at the template (it was said per workload). A value of that
/// name is suggested (`values.version`, the name a Helm user leaves out), else the names a
/// template reads.
fn undefined_name(
    detail: &str,
    values: &Map<String, Value>,
    source: &str,
) -> Option<(String, String)> {
    let path = detail.strip_prefix('`')?.strip_suffix("` is undefined")?;
    let name = path.split(['.', '[']).next()?;
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if name.is_empty() || !name.chars().all(word) || CONTEXT.contains(&name) {
        return None;
    }
    if assigned(source, name) {
        return None;
    }
    let help = if defined_paths(values).iter().any(|p| p == path) {
        format!("did you mean `values.{path}`? (a template reads values under `values.`)")
    } else {
        let in_values =
            suggest_value(path, &defined_paths(values)).map(|h| h.replacen('`', "`values.", 1));
        in_values.unwrap_or_else(|| {
            format!(
                "a template reads {}, and functions (docs/templates.md)",
                CONTEXT.map(|n| format!("`{n}`")).join(", ")
            )
        })
    };
    Some((format!("`{path}` is undefined for every object"), help))
}

/// Whether the template's `source` gives `name` a value of its own somewhere: `set name`,
/// a `for … name … in` loop, a `with`, a macro's or call block's parameters.
fn assigned(source: &str, name: &str) -> bool {
    source.split("{%").skip(1).any(|tag| {
        let tag = tag.split("%}").next().unwrap_or_default();
        let words: Vec<&str> = tag
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        let first = words.iter().find(|w| **w != "-" && **w != "+").copied();
        match first {
            Some("set" | "with" | "macro" | "call" | "for") => words.contains(&name),
            _ => false,
        }
    })
}

/// "did you mean" for the dotted `key` among the dotted `paths`: its last part among the
/// paths beside it (`image.port` is not `image.repository`), or the whole key when nothing is
/// beside it.
pub(crate) fn suggest_value(key: &str, paths: &[String]) -> Option<String> {
    let (parent, last) = key.rsplit_once('.').unwrap_or(("", key));
    let beside: Vec<&str> = paths
        .iter()
        .filter_map(|p| {
            let (pp, pl) = p.rsplit_once('.').unwrap_or(("", p));
            (pp == parent).then_some(pl)
        })
        .collect();
    if beside.is_empty() {
        return suggest(key, paths.iter().map(String::as_str));
    }
    let found = suggest(last, beside)?;
    Some(if parent.is_empty() {
        found
    } else {
        found.replacen('`', &format!("`{parent}."), 1)
    })
}

/// Every path defined in `values`, dotted (`image`, `image.tag`).
fn defined_paths(values: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in values {
        out.push(k.clone());
        if let Value::Object(inner) = v {
            out.extend(defined_paths(inner).into_iter().map(|p| format!("{k}.{p}")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::Dialect;

    fn faults(def: Value, whole: Option<&str>) -> Vec<Fault> {
        let mut t = Templates::new();
        t.add_sidecar("s", &def, whole, Dialect::Native).unwrap();
        let values = json!({"version": "1", "image": {"tag": "2"}});
        t.trial("s", values.as_object().unwrap())
    }

    /// A name no context holds and the template never sets is undefined for every object:
    /// a fault, with `values.` suggested; one the template sets, or that a branch the typical
    /// object skips reads, is not.
    #[test]
    fn names_undefined_for_every_object() {
        let f = faults(
            json!({"containers": [{"name": "c", "image": "x:{{ version }}",
                "args": ["{% set level = 'x' %}{{ level }}",
                         "{% for item in pod.spec.containers %}{{ item.name }}{% endfor %}",
                         "{{ imagee }}",
                         "{% if annotations.x %}{{ never }}{% endif %}"]}]}),
            None,
        );
        let said: Vec<(&str, &str)> = f
            .iter()
            .map(|f| (f.pointer.as_str(), f.help.as_str()))
            .collect();
        assert_eq!(
            said,
            [
                (
                    "/containers/0/image",
                    "did you mean `values.version`? (a template reads values under `values.`)"
                ),
                ("/containers/0/args/2", "did you mean `values.image`?"),
            ]
        );
        assert!(assigned("{%- set level = 1 -%}{{ level }}", "level"));
        assert!(assigned("{% for a, b in x %}{% endfor %}", "b"));
        assert!(!assigned("{% if level %}{% endif %}", "level"));
    }

    #[test]
    fn faults_that_do_not_depend_on_the_object() {
        let f = faults(
            json!({"containers": [{"name": "c", "image": "x:{{ values.verison }}",
                "args": ["{{ values.image.tags }}", "{{ 'a' | defualt('b') }}",
                         "{% if 1 is defiend %}{% endif %}", "{{ anotation('x') }}"]}]}),
            None,
        );
        let said: Vec<(&str, &str, &str)> = f
            .iter()
            .map(|f| (f.pointer.as_str(), f.message.as_str(), f.help.as_str()))
            .collect();
        assert_eq!(
            said,
            [
                (
                    "/containers/0/image",
                    "`values.verison` is not defined in `values`",
                    "did you mean `values.version`?"
                ),
                (
                    "/containers/0/args/0",
                    "`values.image.tags` is not defined in `values`",
                    "did you mean `values.image.tag`?"
                ),
                (
                    "/containers/0/args/1",
                    "unknown filter `defualt`",
                    "did you mean `default`?"
                ),
                (
                    "/containers/0/args/2",
                    "unknown test `defiend`",
                    "did you mean `defined`?"
                ),
                (
                    "/containers/0/args/3",
                    "unknown function `anotation`",
                    "did you mean `annotation`?"
                ),
            ]
        );
        // The typed field points at its whole expression; the other at what failed.
        assert_eq!(f[1].range, Some(3..20));
        assert_eq!(f[0].range.as_ref().map(|r| r.start), Some(5));
    }

    #[test]
    fn what_depends_on_the_object_is_no_fault() {
        let f = faults(
            json!({"a": "{{ annotations['x'] }}", "b": "{{ pod.metadata.annotations.y | default('z') }}",
                   "c": "{{ values[name] }}", "d": "{% if annotations.q %}{{ values.nope }}{% endif %}",
                   "e": "{{ values.nope | default('1') }}", "f": "{{ values.nope is defined }}"}),
            Some("containers:\n- name: c\n  image: {{ annotations.img }}\n"),
        );
        assert!(f.is_empty(), "{f:?}");
        let f = faults(
            json!({}),
            Some("containers:\n- name: c\n  image: {{ values.imgae.tag }}\n"),
        );
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].pointer, "/template");
        assert_eq!(f[0].help, "did you mean `values.image`?");
    }

    #[test]
    fn every_name_is_known() {
        let mut env = Templates::new().env;
        for (kind, names) in [
            ("filter", FILTERS),
            ("test", TESTS),
            ("function", FUNCTIONS),
        ] {
            for name in names {
                let text = match kind {
                    "filter" => format!("{{{{ 1 | {name} }}}}"),
                    "test" => format!("{{{{ 1 is {name} }}}}"),
                    _ => format!("{{{{ {name}() }}}}"),
                };
                env.add_template_owned("t", text).unwrap();
                let kind_of = env
                    .get_template("t")
                    .unwrap()
                    .render(())
                    .err()
                    .map(|e| e.kind());
                assert!(
                    !matches!(
                        kind_of,
                        Some(
                            minijinja::ErrorKind::UnknownFilter
                                | minijinja::ErrorKind::UnknownTest
                                | minijinja::ErrorKind::UnknownFunction
                        )
                    ),
                    "{kind} {name}"
                );
            }
        }
    }
}
