//! What every format's conversion reads and returns, below the formats so that they and the
//! dispatch in `compat` (the parent) import it rather than each other: the problems a document
//! has, why it failed, what converting it may read besides it (`Context`, salesforce's
//! `Catalogs`), documents embedded in strings, and the native configuration they make.

use std::cell::RefCell;
use std::sync::Arc;

use serde_json::Value;

use crate::diagnostic::Located;
use crate::diagnostic::codes;
use crate::model::Formats;
use crate::model::schema::{Violation, ViolationKind, Wording};
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
    pub catalogs: &'a Catalogs,
    /// Findings that fail nothing (a name salesforce would skip), at paths of the document.
    pub warnings: RefCell<Vec<Problem>>,
    /// Pod annotations the document's format reads into its sidecars, left unread because
    /// `options` does not turn that on.
    pub unread: RefCell<Vec<crate::config::UnreadAnnotations>>,
    /// tumblr files `inherits` named, each with its whole chain merged in, by canonical path:
    /// read once per load (every file of a chain resolved its whole chain again, which made a
    /// chain of 1,000 files take half a minute).
    pub inherited: &'a RefCell<std::collections::HashMap<std::path::PathBuf, serde_json::Value>>,
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
        // A rule's own skips (tumblr's `skips.injected`) beside the injectors' shared ones.
        let mut skips = injector_skips();
        if let (Some(Value::Object(own)), Value::Object(all)) = (rule.get("skips"), &mut skips) {
            all.extend(own.clone());
        }
        rule["skips"] = skips;
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

/// Every sidecar file given: their entries, translated, in file order.
#[derive(Default)]
pub(crate) struct Catalogs {
    /// `(list, entry)` with `list` one of `LISTS`.
    pub(super) entries: Vec<(&'static str, Value)>,
    /// Where the first one was read (for "no mutation file" errors).
    pub(super) first: Option<(String, Arc<str>, usize)>,
    /// A mutation file was given too.
    pub(super) used: RefCell<bool>,
    /// One could not be read (its errors are reported; the mutation files say no more).
    pub(super) failed: bool,
}

impl Catalogs {
    pub(crate) fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    /// The error for sidecar files given without a mutation file.
    pub(crate) fn unused(&self) -> Option<Located> {
        let (name, text, at) = self.first.as_ref()?;
        (!*self.used.borrow()).then(|| {
            Located::new(
                codes::CONFIG_MISSING_MUTATION_CONFIG,
                name,
                text,
                (*at, *at),
                "this reads as a salesforce sidecar file (lists of containers and volumes, no `name`), which needs its \
                 mutation file to say when to inject",
            )
            .help("pass the mutation file too (-c sidecarconfigs.yaml -c mutationconfigs.yaml); a tumblr sidecar \
                   configuration needs a `name`")
        })
    }
}
