//! The configuration's JSON Schema (derived from the config types with schemars, Kubernetes
//! parts from k8s-openapi) and a validator that reports every violation with its path, so
//! each can be pointed at in the file. Template strings are accepted wherever a value is.

use std::sync::OnceLock;

use serde_json::Value;

use super::ConfigFile;
use crate::diagnostic::codes;
use crate::diagnostic::suggest;
use crate::json::Pointer;

/// The JSON Schema of a configuration file, as `kinject schema` prints it (with every
/// field's description).
pub fn document() -> Value {
    serde_json::to_value(schemars::schema_for!(ConfigFile)).unwrap_or(Value::Null)
}

/// The schema configurations are checked against: `document()` without descriptions and
/// titles, made when kinject is built (`embedded_schemas_are_current` keeps the file current).
/// Deriving it from the types at every start took ~3 ms, most of a small run. Its `$defs` are
/// left out: they are the embedded definitions, parsed when first referred to.
pub(crate) fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| parse_embedded(split::CONFIG_TOP))
}

/// The schema of what a sidecar adds (checked again after templates are rendered), made as
/// `schema()` is.
pub(crate) fn body_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| parse_embedded(split::BODY_TOP))
}

/// The embedded schemas split by `build.rs`: the top level of each, without `$defs`, and the
/// definitions of both by name (a name both hold means the same in both; the build checks).
mod split {
    include!(concat!(env!("OUT_DIR"), "/schemas.rs"));
}

fn parse_embedded(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("an embedded schema is not JSON: {e}"))
}

/// What `#<pointer>` refers to in the schema `root`, or else among the embedded definitions.
fn lookup<'a>(root: &'a Value, pointer: &str) -> Option<&'a Value> {
    root.at_pointer(pointer)
        .or_else(|| embedded_definition(pointer))
}

/// What `#<pointer>` refers to among the embedded definitions (`/$defs/<name>...`), each
/// parsed when first referred to: a configuration refers to a few of the hundred, and parsing
/// them all was most of the instructions of a one-document run.
fn embedded_definition(pointer: &str) -> Option<&'static Value> {
    static PARSED: [OnceLock<Value>; split::DEFINITIONS.len()] =
        [const { OnceLock::new() }; split::DEFINITIONS.len()];
    let rest = pointer.strip_prefix("/$defs/")?;
    let (name, within) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
    let name = name.replace("~1", "/").replace("~0", "~");
    let i = split::DEFINITIONS
        .binary_search_by(|(n, _)| (*n).cmp(name.as_str()))
        .ok()?;
    PARSED[i]
        .get_or_init(|| parse_embedded(split::DEFINITIONS[i].1))
        .at_pointer(within)
}

/// One way a value breaks the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Violation {
    /// Path to the offending value (or to the mapping that misses a field).
    pub path: Vec<String>,
    pub kind: ViolationKind,
}

impl Violation {
    /// Its diagnostic code.
    pub(crate) fn code(&self) -> &'static str {
        match self.kind {
            ViolationKind::UnknownField { .. } => codes::CONFIG_UNKNOWN_FIELD,
            ViolationKind::WrongType { .. } => codes::CONFIG_WRONG_TYPE,
            ViolationKind::Missing { .. } => codes::CONFIG_MISSING_FIELD,
            ViolationKind::NotAllowed { .. } => codes::CONFIG_INVALID_VALUE,
        }
    }

    /// What is wrong, in words: the one wording of a violation, for the configuration, the
    /// documents other injectors embed in it, and a sidecar as rendered.
    pub(crate) fn message(&self, wording: Wording<'_>) -> String {
        let place = match wording.whole {
            Some(whole) if self.path.is_empty() => whole.to_owned(),
            _ => format!("`{}`", self.path.join(".")),
        };
        let within = wording
            .within
            .map(|w| format!(" in `{w}`"))
            .unwrap_or_default();
        match &self.kind {
            ViolationKind::UnknownField { field, .. } => {
                match self.suggestion().filter(|_| wording.suggest) {
                    Some(h) => format!("unknown field `{field}`{within} ({h})"),
                    None => format!("unknown field `{field}`{within}"),
                }
            }
            ViolationKind::WrongType { expected, found } => {
                format!("{place}{within} must be {expected}, found {found}")
            }
            ViolationKind::Missing { field } => {
                let container = wording.within.map_or(place, |w| format!("`{w}`"));
                format!("missing field `{field}` in {container}")
            }
            ViolationKind::NotAllowed { allowed } => {
                format!("{place} must be one of {}", allowed.join(", "))
            }
        }
    }

    /// The words beside the offending text, where the message says more than "here".
    pub(crate) fn label(&self) -> Option<String> {
        match &self.kind {
            ViolationKind::UnknownField { .. } => Some("not a known field".to_owned()),
            ViolationKind::WrongType { expected, .. } => Some(format!("expected {expected}")),
            ViolationKind::Missing { .. } | ViolationKind::NotAllowed { .. } => None,
        }
    }

    /// What to write instead of an unknown field: the known field it may be a misspelling of,
    /// or else the known fields.
    pub(crate) fn help(&self) -> Option<String> {
        let ViolationKind::UnknownField { expected, .. } = &self.kind else {
            return None;
        };
        self.suggestion().or_else(|| {
            (!expected.is_empty()).then(|| format!("known fields: {}", expected.join(", ")))
        })
    }

    /// `did you mean …?` for an unknown field close to a known one.
    fn suggestion(&self) -> Option<String> {
        let ViolationKind::UnknownField { field, expected } = &self.kind else {
            return None;
        };
        suggest(field, expected.iter().map(String::as_str))
    }
}

/// How a violation's message names where it is. The default quotes the path, even the empty
/// one of the whole document, and names nothing else.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Wording<'a> {
    /// What the whole document is called when the path is empty (`the file`).
    pub whole: Option<&'a str>,
    /// The document the path is in, when it is embedded in a string of another (`sidecars.yaml`
    /// of an Expedia ConfigMap): named after the path, and for a missing field instead of it.
    pub within: Option<&'a str>,
    /// Whether an unknown field's message ends with the known field it may be a misspelling
    /// of (`(did you mean `image`?)`), where no help line says so.
    pub suggest: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ViolationKind {
    UnknownField {
        field: String,
        expected: Vec<String>,
    },
    WrongType {
        expected: String,
        found: &'static str,
    },
    Missing {
        field: String,
    },
    NotAllowed {
        allowed: Vec<String>,
    },
}

/// Checks `value` against the schema at `pointer` (`""` for the whole file) of `root`.
pub(crate) fn validate(root: &Value, pointer: &str, value: &Value) -> Vec<Violation> {
    let mut v = Validator {
        root,
        out: Vec::new(),
    };
    let schema = if pointer.is_empty() {
        root
    } else {
        lookup(root, pointer).unwrap_or(&Value::Null)
    };
    v.check(schema, value, &mut Vec::new());
    v.out
}

/// Reads `value` the way Go's ghodss/yaml decodes a file into the typed structs of `root`'s
/// schema: a field set to null is as absent, and booleans and numbers where a string is
/// wanted become strings (`args: [--x, true]` gives `"true"`). For other injectors' files,
/// which were written for that reader.
pub(crate) fn coerce_scalars(root: &Value, value: &mut Value) {
    let v = Validator {
        root,
        out: Vec::new(),
    };
    v.coerce(root, value, 0);
}

pub(crate) fn is_template(s: &str) -> bool {
    s.contains("{{") || s.contains("{%")
}

struct Validator<'a> {
    root: &'a Value,
    out: Vec<Violation>,
}

impl<'a> Validator<'a> {
    fn resolve(&self, mut schema: &'a Value) -> &'a Value {
        for _ in 0..32 {
            match schema.get("$ref").and_then(Value::as_str) {
                Some(r) => {
                    schema = r
                        .strip_prefix('#')
                        .and_then(|p| lookup(self.root, p))
                        .unwrap_or(&Value::Null);
                }
                None => break,
            }
        }
        schema
    }

    fn coerce(&self, schema: &'a Value, value: &mut Value, depth: usize) {
        let schema = self.resolve(schema);
        if depth > 64 {
            return;
        }
        let wants_string = match schema.get("type") {
            Some(Value::String(t)) => t == "string",
            Some(Value::Array(ts)) => {
                ts.iter().any(|t| t == "string")
                    && !ts
                        .iter()
                        .any(|t| t == "boolean" || t == "integer" || t == "number")
            }
            _ => false,
        };
        match value {
            Value::Bool(_) | Value::Number(_) if wants_string => {
                *value = Value::String(value.to_string());
            }
            Value::Object(map) => {
                map.retain(|_, v| !v.is_null());
                let props = schema.get("properties").and_then(Value::as_object);
                let additional = schema.get("additionalProperties").filter(|a| a.is_object());
                for (k, v) in map.iter_mut() {
                    if let Some(s) = props.and_then(|p| p.get(k)).or(additional) {
                        self.coerce(s, v, depth + 1);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item_schema) = schema.get("items") {
                    for item in items {
                        self.coerce(item_schema, item, depth + 1);
                    }
                }
            }
            _ => {}
        }
    }

    /// Violations of `schema` by `value`, without recording them.
    fn trial(&self, schema: &'a Value, value: &Value, path: &mut Vec<String>) -> Vec<Violation> {
        let mut sub = Validator {
            root: self.root,
            out: Vec::new(),
        };
        sub.check(schema, value, path);
        sub.out
    }

    fn check(&mut self, schema: &'a Value, value: &Value, path: &mut Vec<String>) {
        let schema = self.resolve(schema);
        if !schema.is_object() {
            return;
        }
        if let Value::String(s) = value
            && is_template(s)
        {
            return; // checked once rendered
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(options) = schema.get(key).and_then(Value::as_array) {
                let trials: Vec<Vec<Violation>> =
                    options.iter().map(|o| self.trial(o, value, path)).collect();
                if trials.iter().any(Vec::is_empty) {
                    return;
                }
                // Report the option that got furthest (fewest complaints).
                if let Some(best) = trials.into_iter().min_by_key(Vec::len) {
                    self.out.extend(best);
                }
                return;
            }
        }
        if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
            for s in all {
                self.check(s, value, path);
            }
        }
        if schema.get("x-kubernetes-int-or-string").is_some() {
            if !matches!(value, Value::String(_) | Value::Number(_)) {
                self.wrong_type(path, "integer or string", value);
            }
            return;
        }
        if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
            if !allowed.contains(value) {
                self.out.push(Violation {
                    path: path.clone(),
                    kind: ViolationKind::NotAllowed {
                        allowed: allowed.iter().map(ToString::to_string).collect(),
                    },
                });
            }
            return;
        }
        if let Some(c) = schema.get("const") {
            if c != value {
                self.out.push(Violation {
                    path: path.clone(),
                    kind: ViolationKind::NotAllowed {
                        allowed: vec![c.to_string()],
                    },
                });
            }
            return;
        }
        if let Some(expected) = schema.get("type") {
            let types: Vec<&str> = match expected {
                Value::String(t) => vec![t.as_str()],
                Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            if !types.is_empty() && !types.iter().any(|t| type_matches(t, value)) {
                self.wrong_type(path, &types.join(" or "), value);
                return;
            }
        }
        match value {
            Value::Object(map) => self.object(schema, map, path),
            Value::Array(items) => {
                if let Some(item_schema) = schema.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        path.push(i.to_string());
                        self.check(item_schema, item, path);
                        path.pop();
                    }
                }
            }
            _ => {}
        }
    }

    fn object(
        &mut self,
        schema: &'a Value,
        map: &serde_json::Map<String, Value>,
        path: &mut Vec<String>,
    ) {
        let props = schema.get("properties").and_then(Value::as_object);
        let additional = schema.get("additionalProperties");
        for (k, v) in map {
            path.push(k.clone());
            match props.and_then(|p| p.get(k)) {
                Some(s) => self.check(s, v, path),
                None => match additional {
                    Some(Value::Bool(true)) => {}
                    Some(s @ Value::Object(_)) => self.check(s, v, path),
                    // Kubernetes objects list their fields; anything else is unknown.
                    _ if props.is_some() || matches!(additional, Some(Value::Bool(false))) => {
                        path.pop();
                        let expected = props
                            .map(|p| p.keys().cloned().collect())
                            .unwrap_or_default();
                        self.out.push(Violation {
                            path: {
                                let mut p = path.clone();
                                p.push(k.clone());
                                p
                            },
                            kind: ViolationKind::UnknownField {
                                field: k.clone(),
                                expected,
                            },
                        });
                        continue;
                    }
                    _ => {}
                },
            }
            path.pop();
        }
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for r in required.iter().filter_map(Value::as_str) {
                if !map.contains_key(r) {
                    self.out.push(Violation {
                        path: path.clone(),
                        kind: ViolationKind::Missing {
                            field: r.to_owned(),
                        },
                    });
                }
            }
        }
    }

    fn wrong_type(&mut self, path: &[String], expected: &str, value: &Value) {
        self.out.push(Violation {
            path: path.to_vec(),
            kind: ViolationKind::WrongType {
                expected: expected.to_owned(),
                found: type_name(value),
            },
        });
    }
}

fn type_matches(t: &str, value: &Value) -> bool {
    match t {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        _ => true,
    }
}

pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SidecarBody;
    use serde_json::json;

    const CONFIG_SCHEMA: &str = include_str!("config.validation.json");
    const BODY_SCHEMA: &str = include_str!("body.validation.json");

    /// `schema` without what only people read: descriptions and titles (not fields of those
    /// names, which are keys of `properties`).
    fn for_validation(schema: Value) -> Value {
        match schema {
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .filter(|(k, _)| k != "description" && k != "title")
                    .map(|(k, v)| {
                        let v = match (k.as_str(), v) {
                            ("properties" | "$defs" | "patternProperties", Value::Object(m)) => {
                                Value::Object(
                                    m.into_iter().map(|(n, s)| (n, for_validation(s))).collect(),
                                )
                            }
                            (_, v) => for_validation(v),
                        };
                        (k, v)
                    })
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.into_iter().map(for_validation).collect()),
            other => other,
        }
    }

    /// The embedded schemas are the types' schemas (`KINJECT_BLESS=1` rewrites them).
    #[test]
    fn embedded_schemas_are_current() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/model");
        let mut stale = Vec::new();
        for (file, generated, embedded) in [
            ("config.validation.json", document(), CONFIG_SCHEMA),
            (
                "body.validation.json",
                serde_json::to_value(schemars::schema_for!(SidecarBody)).unwrap_or(Value::Null),
                BODY_SCHEMA,
            ),
        ] {
            let generated = for_validation(generated);
            if generated == serde_json::from_str::<Value>(embedded).expect("JSON") {
                continue;
            }
            if std::env::var_os("KINJECT_BLESS").is_some() {
                let text = serde_json::to_string_pretty(&generated).expect("JSON") + "\n";
                std::fs::write(dir.join(file), text).expect("write schema");
            } else {
                stale.push(file);
            }
        }
        assert!(
            stale.is_empty(),
            "stale: {stale:?}; run `KINJECT_BLESS=1 cargo test --lib embedded_schemas` and commit them"
        );
        // Fields named like the keywords taken out stay.
        let sidecar = embedded_definition("/$defs/Sidecar").expect("Sidecar");
        assert!(sidecar["properties"]["description"].is_object());
        assert!(schema().get("description").is_none());
    }

    /// The schemas as used (top level, definitions parsed on first use) are the files.
    #[test]
    fn embedded_definitions_agree() {
        for (text, top) in [(CONFIG_SCHEMA, schema()), (BODY_SCHEMA, body_schema())] {
            let mut whole: Value = serde_json::from_str(text).expect("JSON");
            let defs = whole
                .as_object_mut()
                .and_then(|m| m.shift_remove("$defs"))
                .expect("$defs");
            assert_eq!(&whole, top);
            for (name, def) in defs.as_object().expect("object") {
                let pointer = format!("/$defs/{}", name.replace('~', "~0").replace('/', "~1"));
                assert_eq!(embedded_definition(&pointer), Some(def), "{name}");
            }
        }
        let sidecar = embedded_definition("/$defs/Sidecar/properties/containers");
        assert_eq!(sidecar.and_then(|c| c.get("type")), Some(&json!("array")));
        assert_eq!(embedded_definition("/$defs/NoSuchThing"), None);
        assert_eq!(embedded_definition("/properties"), None);
    }

    fn violations(value: Value) -> Vec<Violation> {
        validate(schema(), "", &value)
    }

    #[test]
    fn scalars_become_strings_where_kubernetes_wants_strings() {
        let mut v = json!({"containers": [{"name": "c", "args": ["--x", true, 3], "command": null,
            "ports": [{"containerPort": 80}], "env": [{"name": "N", "value": 1.5}]}]});
        coerce_scalars(body_schema(), &mut v);
        assert_eq!(
            v,
            json!({"containers": [{"name": "c", "args": ["--x", "true", "3"],
            "ports": [{"containerPort": 80}], "env": [{"name": "N", "value": "1.5"}]}]})
        );
    }

    #[test]
    fn valid_config_passes() {
        let v = violations(json!({
            "apiVersion": "kinject.dev/v1alpha1",
            "kind": "InjectionConfig",
            "sidecars": [{
                "name": "proxy",
                "containers": [{"name": "p", "image": "{{ values.image }}", "ports": [{"containerPort": "{{ values.port }}"}],
                                "resources": {"limits": {"cpu": 1, "memory": "1Gi"}}}],
                "volumes": [{"name": "v", "emptyDir": {}}],
                "native": true,
                "annotations": {"a": "b"},
            }],
            "rules": [{"name": "r", "match": {"kinds": ["Deployment"], "labelSelector": {"matchExpressions": [{"key": "a", "operator": "In", "values": ["x"]}]}}, "inject": ["proxy"]}],
        }));
        assert!(v.is_empty(), "{v:#?}");
    }

    #[test]
    fn one_wording_for_every_place() {
        let at = |path: &[&str], kind| Violation {
            path: path.iter().map(|&p| p.to_owned()).collect(),
            kind,
        };
        let unknown = at(
            &["containers", "0", "imagee"],
            ViolationKind::UnknownField {
                field: "imagee".to_owned(),
                expected: vec!["image".to_owned(), "name".to_owned()],
            },
        );
        let wrong = at(
            &[],
            ViolationKind::WrongType {
                expected: "object".to_owned(),
                found: "a list",
            },
        );
        let missing = at(
            &[],
            ViolationKind::Missing {
                field: "name".to_owned(),
            },
        );
        let file = Wording {
            whole: Some("the file"),
            ..Wording::default()
        };
        let embedded = Wording {
            within: Some("sidecars.yaml"),
            suggest: true,
            ..Wording::default()
        };
        assert_eq!(unknown.message(file), "unknown field `imagee`");
        assert_eq!(
            unknown.message(embedded),
            "unknown field `imagee` in `sidecars.yaml` (did you mean `image`?)"
        );
        assert_eq!(unknown.label().as_deref(), Some("not a known field"));
        assert_eq!(unknown.help().as_deref(), Some("did you mean `image`?"));
        assert_eq!(wrong.message(file), "the file must be object, found a list");
        assert_eq!(
            wrong.message(Wording::default()),
            "`` must be object, found a list"
        );
        assert_eq!(missing.message(file), "missing field `name` in the file");
        assert_eq!(
            missing.message(embedded),
            "missing field `name` in `sidecars.yaml`"
        );
        assert_eq!(missing.label(), None);
    }

    #[test]
    fn reports_every_violation_with_its_path() {
        let v = violations(json!({
            "apiVersion": "kinject.dev/v1alpha1",
            "kind": "InjectionConfig",
            "sidecars": [{"name": "p", "containers": [{"name": "c", "imagee": "x", "ports": [{"containerPort": "80x"}]}], "position": "middle"}],
            "rules": [{"name": "r", "inject": "p"}],
            "extra": 1,
        }));
        let paths: Vec<String> = v.iter().map(|x| x.path.join(".")).collect();
        assert!(
            paths.contains(&"sidecars.0.containers.0.imagee".to_owned()),
            "{v:#?}"
        );
        assert!(
            paths.contains(&"sidecars.0.containers.0.ports.0.containerPort".to_owned()),
            "{v:#?}"
        );
        assert!(paths.contains(&"sidecars.0.position".to_owned()), "{v:#?}");
        assert!(paths.contains(&"rules.0.inject".to_owned()), "{v:#?}");
        assert!(paths.contains(&"extra".to_owned()), "{v:#?}");
    }
}
