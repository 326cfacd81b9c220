//! Other injectors' configuration files, read as they are and turned into the native model:
//! one engine, no second injection path. Each adapter validates its format's fields (unknown
//! ones are errors with their place) and says which fields it cannot honour.

mod expedia;
mod gotemplate;
mod kruise;
pub(crate) mod prepare;
mod salesforce;
mod tumblr;

use serde_json::Value;

use crate::diagnostic::Located;
use crate::diagnostic::codes;
use crate::json::Pointer;
use crate::model::Formats;
use crate::model::schema::{Violation, ViolationKind, Wording, validate};
use crate::yaml::{Node, Parsed, offset_in_scalar, parse_document};

/// A problem with a field of another format, at its path in the document.
#[derive(Debug, Clone)]
pub(crate) struct Problem {
    pub path: Vec<String>,
    pub code: &'static str,
    pub message: String,
    /// Byte span in the document, when the path cannot say (inside an embedded document).
    pub span: Option<(usize, usize)>,
}

/// The string at `path` of a document read as another injector's: `None` when absent or
/// null (Kubernetes' empty value), a problem when of another type. A field that limits where
/// a sidecar goes (a namespace, a name rules refer to) read as absent would widen it: an
/// unrendered Helm placeholder (`{{ .Release.Namespace }}`, a mapping to YAML) in an Expedia
/// ConfigMap's namespace sent its sidecar into every namespace.
pub(crate) fn string_field<'v>(
    value: &'v Value,
    path: &[&str],
) -> Result<Option<&'v str>, Problem> {
    let found = path.iter().try_fold(value, |v, key| v.get(key));
    match found {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(Problem {
            path: path.iter().map(|&k| k.to_owned()).collect(),
            code: codes::CONFIG_WRONG_TYPE,
            message: format!(
                "`{}` must be a string, found {}",
                path.join("."),
                crate::model::schema::type_name(other)
            ),
            span: None,
        }),
    }
}

/// Why a document could not be converted.
pub(crate) enum Failure {
    /// It breaks its format's schema.
    Schema(Vec<Violation>),
    /// It uses fields kinject refuses.
    Problems(Vec<Problem>),
    /// Problems located in other files (a tumblr configuration's parents, a salesforce
    /// sidecar file).
    Located(Vec<Located>),
}

/// What converting one document may read besides it.
pub(crate) struct Context<'a> {
    /// The configuration file's path as given (tumblr's `inherits` is relative to it).
    pub file: &'a str,
    /// The other injectors' flags, from native configurations' `formats`.
    pub options: &'a Formats,
    /// Every salesforce sidecar file given.
    pub catalogs: &'a salesforce::Catalogs,
    /// Findings that fail nothing (a name salesforce would skip), at paths of the document.
    pub warnings: std::cell::RefCell<Vec<Problem>>,
    /// Pod annotations the document's format reads into its sidecars, left unread because
    /// `options` does not turn that on.
    pub unread: std::cell::RefCell<Vec<crate::config::UnreadAnnotations>>,
    /// tumblr files `inherits` named, each with its whole chain merged in, by canonical path:
    /// read once per load (every file of a chain resolved its whole chain again, which made a
    /// chain of 1,000 files take half a minute).
    pub inherited:
        &'a std::cell::RefCell<std::collections::HashMap<std::path::PathBuf, serde_json::Value>>,
}

/// The native configuration for a document of another injector's format, `None` when the
/// document is not one.
pub(crate) fn to_native(
    value: &Value,
    root: &Node,
    doc: &str,
    ctx: &Context<'_>,
) -> Option<Result<Value, Failure>> {
    if salesforce::is_chart_config_map(value) {
        return Some(Err(Failure::Problems(vec![Problem {
            path: vec!["data".to_owned()],
            code: codes::CONFIG_UNSUPPORTED_FORMAT,
            message: "salesforce's Helm chart ConfigMap (`data` holds `mutationconfig.yaml` and \
                      `sidecarconfig.yaml`): kinject reads the two files it mounts for the \
                      webhook, not the ConfigMap: write each key to its own file and pass both with `-c`"
                .to_owned(),
            span: None,
        }])));
    }
    if expedia::is_sidecar_config_map(value) {
        return Some(expedia::to_native(value, root, doc, ctx));
    }
    if kruise::is_sidecar_set(value) {
        let violations = validate(kruise::schema(), "", value);
        if !violations.is_empty() {
            return Some(Err(Failure::Schema(violations)));
        }
        return Some(kruise::to_native(value, ctx).map_err(Failure::Problems));
    }
    if tumblr::is_config_map(value) {
        return Some(tumblr::config_map_to_native(value, root, doc, ctx));
    }
    if salesforce::is_mutation_config(value) {
        return Some(salesforce::to_native(value, ctx));
    }
    if tumblr::is_config(value) {
        return Some(tumblr::to_native(value, ctx));
    }
    if value.get("kind").and_then(Value::as_str) == Some("ConfigMap") {
        // Injectors pick their ConfigMaps by label; the others sit beside them in the same
        // files (the data a sidecar mounts).
        let name = value
            .at_pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        ctx.warnings.borrow_mut().push(Problem {
            path: Vec::new(),
            code: codes::CONFIG_NOT_A_SIDECAR_CONFIG,
            message: format!(
                "ConfigMap `{name}` holds no sidecar configuration (neither Expedia's `sidecars.yaml` nor tumblr \
                 configurations); skipped"
            ),
            span: None,
        });
        return Some(Ok(nothing()));
    }
    None
}

/// A document held in a string of another (a ConfigMap's data value), parsed, with the way
/// back from its offsets to the outer document.
pub(crate) struct Embedded<'a> {
    pub parsed: Parsed,
    node: &'a Node,
    doc: &'a str,
}

impl Embedded<'_> {
    /// The outer document's span for byte `inner` of the embedded text.
    pub(crate) fn span(&self, inner: usize) -> (usize, usize) {
        let pos = offset_in_scalar(self.doc, self.node, inner);
        (pos, pos + 1)
    }

    /// A problem at byte `inner` of the embedded text.
    fn problem(
        &self,
        path: &[String],
        inner: usize,
        code: &'static str,
        message: String,
    ) -> Problem {
        Problem {
            path: path.to_vec(),
            code,
            message,
            span: Some(self.span(inner)),
        }
    }

    /// A schema violation of the embedded document, as a problem of the outer one. `what`
    /// names the embedded document in messages.
    pub(crate) fn violation(&self, v: &Violation, path: &[String], what: &str) -> Problem {
        let (offset, message) = describe_violation(self.parsed.root.as_ref(), v, Some(what));
        self.problem(path, offset, v.code(), message)
    }
}

/// Where in its document (`root`) a schema violation is, and what it says: in the words of
/// the document itself, or, when `what` names it, of a document embedded in another.
pub(crate) fn describe_violation(
    root: Option<&Node>,
    v: &Violation,
    what: Option<&str>,
) -> (usize, String) {
    let node = root.map(|r| r.at(&v.path).unwrap_or(r));
    let mut offset = node.map_or(0, |n| n.start);
    // An unknown field is pointed at by its key.
    if let ViolationKind::UnknownField { .. } = v.kind
        && let Some((start, _)) = root.and_then(|r| r.key_span(&v.path))
    {
        offset = start;
    }
    let wording = Wording {
        within: what,
        suggest: true,
        ..Wording::default()
    };
    (offset, v.message(wording))
}

/// Parses the string at `path` of the document (`text`, its value) as YAML.
pub(crate) fn embedded<'a>(
    root: &'a Node,
    doc: &'a str,
    path: &[&str],
    text: &str,
) -> Result<Embedded<'a>, Problem> {
    let node = root.at(path).unwrap_or(root);
    match parse_document(text) {
        Ok(parsed) => Ok(Embedded { parsed, node, doc }),
        Err(e) => {
            let pos = offset_in_scalar(doc, node, e.offset);
            Err(Problem {
                path: path.iter().map(|s| (*s).to_owned()).collect(),
                code: codes::CONFIG_SYNTAX,
                message: format!("invalid YAML in `{}`: {}", path.join("."), e.message),
                span: Some((pos, pos + 1)),
            })
        }
    }
}

/// A native configuration of `sidecars` and `rules`, each rule with the skips the seed
/// injectors share (only `kube-system` and `kube-public`; pods on the host network are
/// injected too) rather than the run's defaults, which belong to native configurations.
pub(crate) fn native(sidecars: Vec<Value>, mut rules: Vec<Value>) -> Value {
    for rule in &mut rules {
        rule["skips"] = injector_skips();
    }
    serde_json::json!({
        "apiVersion": crate::config::API_VERSION,
        "kind": crate::config::KIND,
        "sidecars": sidecars,
        "rules": rules,
    })
}

/// What the seed injectors never inject: pods of `kube-system` and `kube-public`.
pub(crate) fn injector_skips() -> Value {
    serde_json::json!({"hostNetwork": false, "namespaces": ["kube-system", "kube-public"]})
}

/// A native configuration that defines nothing.
pub(crate) fn nothing() -> Value {
    serde_json::json!({"apiVersion": crate::config::API_VERSION, "kind": crate::config::KIND})
}
