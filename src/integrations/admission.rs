//! AdmissionReview mode: the same engine answering a mutating webhook's request, so CI and the
//! cluster agree. In: an `admission.k8s.io/v1` AdmissionReview with a request. Out: the
//! AdmissionReview response the API server expects — same `uid`, `allowed`, and, when the
//! object changes, `patchType: JSONPatch` with the base64 RFC 6902 patch.

use serde_json::{Value, json};

use crate::config::Config;
use crate::inject::{self, ActionKind, Mode, Settings};
use crate::integrations::review_cost;
pub(crate) use crate::integrations::review_cost::Limits;
use crate::json::Pointer;
use crate::json::patch::{self};

/// How to answer: the configuration and what the caller knows beyond the request.
pub(crate) struct Policy<'a> {
    pub config: &'a Config,
    /// Labels of namespaces (`--namespace-labels`), for rules' `namespaceSelector`.
    pub namespace_labels: &'a crate::inject::NamespaceLabels,
    /// What to answer for an object that cannot be injected correctly (`kinject serve
    /// --on-error`).
    pub on_error: OnError,
    /// Every rule's `namespaceSelector` holds: the webhook configuration selects the
    /// namespaces with it (`kinject serve`, `serve::decide`).
    pub namespace_selector_holds: bool,
    /// Read the review as JSON only, and refuse what is not, located (`kinject serve`: the API
    /// server sends JSON, and a YAML body's aliases can make it a thousand times larger);
    /// `kinject admission` reads YAML too.
    pub json_only: bool,
    /// What one review may cost (`kinject serve`): a review beyond is refused.
    pub limits: Limits,
    /// Past this, the review is abandoned (`kinject serve`: its answer would come after
    /// `--request-timeout`, which the client has been told).
    pub deadline: Option<std::time::Instant>,
}

impl<'a> Policy<'a> {
    pub(crate) fn new(
        config: &'a Config,
        namespace_labels: &'a crate::inject::NamespaceLabels,
    ) -> Self {
        Policy {
            config,
            namespace_labels,
            on_error: OnError::Deny,
            namespace_selector_holds: false,
            json_only: false,
            limits: Limits::default(),
            deadline: None,
        }
    }

    /// Whether the review's time has run out.
    fn late(&self) -> bool {
        self.deadline
            .is_some_and(|deadline| std::time::Instant::now() >= deadline)
    }
}

/// What to answer for an object that cannot be injected correctly (a conflict, an unknown
/// requested sidecar), or a review too costly to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnError {
    /// Refuse it, saying why (as `kinject admission` and `inject` do).
    Deny,
    /// Allow it unchanged, with the reason in the response's `warnings`.
    Allow,
}

/// The response to send, whether the request was well formed, the warnings it holds (also
/// for stderr), and what it was about and what became of it (for the server's log and
/// metrics).
pub(crate) struct Answer {
    pub response: Value,
    pub well_formed: bool,
    pub warnings: Vec<String>,
    #[cfg_attr(not(feature = "serve"), allow(dead_code))] // read by `kinject serve` alone
    pub facts: Facts,
    #[cfg_attr(not(feature = "serve"), allow(dead_code))] // read by `kinject serve` alone
    pub result: ReviewResult,
}

impl Answer {
    /// Why the request was refused (the response's `status.message`), if it was.
    pub(crate) fn message(&self) -> Option<&str> {
        self.response["response"]["status"]["message"].as_str()
    }
}

/// What became of a review: the word the server's log and metrics give it (`code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(feature = "serve"), allow(dead_code))] // read by `kinject serve` alone
pub(crate) enum ReviewResult {
    /// The object went through injection: `injected`, `unchanged`, `skipped`.
    Acted(ActionKind),
    /// Its status records sidecars no rule selects here, which admission does not remove.
    Kept,
    /// Not a CREATE.
    Ignored,
    /// It cannot be injected correctly, or the review is too costly: refused.
    Denied,
    /// The same, allowed by policy (`OnError::Allow`).
    AllowedOnError,
    /// Not an AdmissionReview kinject can read.
    Malformed,
    /// No answer within `--request-timeout`.
    Timeout,
    /// The review panicked.
    Panic,
}

impl ReviewResult {
    #[cfg_attr(not(feature = "serve"), allow(dead_code))] // read by `kinject serve` alone
    pub(crate) fn code(self) -> &'static str {
        match self {
            ReviewResult::Acted(action) => action.code(),
            ReviewResult::Kept => "kept",
            ReviewResult::Ignored => "ignored",
            ReviewResult::Denied => "denied",
            ReviewResult::AllowedOnError => "allowed_on_error",
            ReviewResult::Malformed => "malformed",
            ReviewResult::Timeout => "timeout",
            ReviewResult::Panic => "panic",
        }
    }
}

/// What a request was about, and the sidecars and the skip reason its result names: never
/// the object's content.
#[derive(Debug, Default, Clone)]
#[cfg_attr(not(feature = "serve"), allow(dead_code))] // read by `kinject serve` alone
pub(crate) struct Facts {
    pub uid: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub operation: String,
    /// The skip reason's code, for `skipped`.
    pub reason: Option<&'static str>,
    /// The sidecars injected (already there, for `unchanged`; kept, for `kept`).
    pub sidecars: Vec<String>,
}

/// Answers the AdmissionReview in `bytes` (JSON, or YAML unless the policy says JSON only).
pub(crate) fn review(bytes: &[u8], policy: &Policy<'_>) -> Answer {
    // Counted before the body is read into values, when it may hold more than one: a body
    // that starts otherwise is a scalar, or not JSON (refused as such, at its first byte).
    let opens = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if let Some(max) = policy.limits.max_values
        && matches!(opens, Some(b'{' | b'['))
        && let Some(offset) = review_cost::values_beyond(bytes, max)
    {
        let (line, column) =
            crate::diagnostic::lines::line_col(&String::from_utf8_lossy(bytes), offset);
        let message = format!(
            "the AdmissionReview holds more than {max} JSON values (the limit is passed at line {line} column \
                {column}): kinject serve does not review one this large (--max-request-values)"
        );
        return too_large(bytes, policy, message);
    }
    let request = match parse(bytes, policy.json_only) {
        Ok(r) => r,
        Err(BadRequest {
            api_version,
            uid,
            message,
        }) => {
            return Answer {
                response: respond(&api_version, &uid, false, None, Some((400, message))),
                well_formed: false,
                warnings: Vec::new(),
                facts: Facts {
                    uid,
                    ..Facts::default()
                },
                result: ReviewResult::Malformed,
            };
        }
    };
    let mut facts = request.facts();
    let Request {
        api_version,
        uid,
        operation,
        namespace,
        kind,
        mut object,
        json,
    } = request;
    if !creates(operation.as_deref()) {
        // Like the injectors it replaces, kinject mutates pods as they are created.
        return Answer {
            response: respond(&api_version, &uid, true, None, None),
            well_formed: true,
            warnings: Vec::new(),
            facts,
            result: ReviewResult::Ignored,
        };
    }
    let mut warnings: Vec<String> = with_type_meta(&mut object, kind.as_ref())
        .into_iter()
        .collect();
    if let Some(max) = policy.limits.max_containers
        && let Some(message) = review_cost::containers_beyond(&object, &policy.config.kinds, max)
    {
        return too_large(bytes, policy, message);
    }
    if policy.late() {
        return abandoned(&api_version, &uid, facts);
    }
    let mut settings = Settings::new(policy.config, namespace, Mode::Inject)
        .with_namespace_labels([], policy.namespace_labels.clone());
    if policy.namespace_selector_holds {
        settings = settings.with_namespace_selector_holding();
    }
    // How a null of the object is written, for the status to record as `inject` does from
    // the same text: in a JSON review (the API server's), always `null`.
    let spelled = |_: &str| json.then(|| "null".to_owned());
    // Shared with the template context, which reads the object in place.
    let object = std::sync::Arc::new(object);
    let planned = inject::plan_shared(&object, &settings, &spelled);
    if policy.late() {
        return abandoned(&api_version, &uid, facts);
    }
    // What injection says about the object (a request left out, an annotation not read) goes
    // back with the answer: the API server shows it to whoever created the object.
    if let Ok(outcome) = &planned {
        warnings.extend(outcome.warnings.iter().cloned());
    }
    let (response, result) = match planned {
        // The webhook adds and updates, never removes: sidecars the object's status records
        // and no rule selects here were put there on purpose — by CI, or on the workload whose
        // template made this pod (its rules name the workload's kind, not Pod) — and are kept.
        Ok(outcome) if !outcome.removed.is_empty() => {
            facts.sidecars = outcome.removed;
            let response = respond(&api_version, &uid, true, None, None);
            (response, ReviewResult::Kept)
        }
        Ok(mut outcome) => {
            let result = ReviewResult::Acted(outcome.action.kind());
            facts.reason = outcome.action.reason().map(crate::select::Reason::code);
            facts.sidecars = outcome.action.sidecars().to_vec();
            // Each copy dropped once the next is made: the object and its target, then the
            // operations, then their base64 text (a large answer is made of these).
            let ops = outcome
                .target
                .take()
                .map(|t| patch::diff(&object, &t))
                .unwrap_or_default();
            drop(object);
            let patch = (!ops.is_empty()).then(|| encoded(&ops));
            drop(ops);
            (respond(&api_version, &uid, true, patch, None), result)
        }
        Err(e) if policy.on_error == OnError::Allow => {
            warnings.push(format!(
                "kinject did not inject this object: {} ({})",
                e.message, e.code
            ));
            let response = respond(&api_version, &uid, true, None, None);
            (response, ReviewResult::AllowedOnError)
        }
        // Refuse what cannot be injected correctly, saying why (Istio does the same).
        Err(e) => {
            let message = format!("{} ({})", e.message, e.code);
            let response = respond(&api_version, &uid, false, None, Some((400, message)));
            (response, ReviewResult::Denied)
        }
    };
    let mut response = response;
    if !warnings.is_empty() {
        response["response"]["warnings"] = json!(warnings);
    }
    Answer {
        response,
        well_formed: true,
        warnings,
        facts,
        result,
    }
}

/// The RFC 6902 patch of `ops`, as base64 text (written as it is serialized: the JSON text
/// of the operations is never held whole).
fn encoded(ops: &[patch::Op]) -> String {
    let mut writer =
        base64::write::EncoderStringWriter::new(&base64::engine::general_purpose::STANDARD);
    // Serializing values to a String cannot fail.
    let _ = serde_json::to_writer(&mut writer, ops);
    writer.into_inner()
}

/// The answer to a review too costly to answer (`review_cost`): refused with `message` (413),
/// or allowed unchanged with it as a warning (`--on-error allow`).
fn too_large(bytes: &[u8], policy: &Policy<'_>, message: String) -> Answer {
    let facts = facts(bytes);
    let api_version = outline(bytes)
        .and_then(|o| o.api_version)
        .and_then(|v| v.as_str().map(str::to_owned))
        .filter(|v| v == "admission.k8s.io/v1beta1")
        .unwrap_or_else(|| "admission.k8s.io/v1".to_owned());
    let message = format!("{message} ({})", crate::diagnostic::codes::SERVE_TOO_LARGE);
    if facts.uid.is_empty() {
        return Answer {
            response: respond(&api_version, "", false, None, Some((400, message))),
            well_formed: false,
            warnings: Vec::new(),
            facts,
            result: ReviewResult::Malformed,
        };
    }
    let (response, result, warnings) = if policy.on_error == OnError::Allow {
        let mut response = respond(&api_version, &facts.uid, true, None, None);
        response["response"]["warnings"] =
            json!([format!("kinject did not inject this object: {message}")]);
        let warnings = vec![format!("kinject did not inject this object: {message}")];
        (response, ReviewResult::AllowedOnError, warnings)
    } else {
        let response = respond(&api_version, &facts.uid, false, None, Some((413, message)));
        (response, ReviewResult::Denied, Vec::new())
    };
    Answer {
        response,
        well_formed: true,
        warnings,
        facts,
        result,
    }
}

/// The answer to a review whose time ran out (`Policy::deadline`): none reaches the client,
/// who has had its timeout; this one says so for the log.
fn abandoned(api_version: &str, uid: &str, facts: Facts) -> Answer {
    Answer {
        response: respond(
            api_version,
            uid,
            false,
            None,
            Some((504, "abandoned".to_owned())),
        ),
        well_formed: true,
        warnings: Vec::new(),
        facts,
        result: ReviewResult::Timeout,
    }
}

/// What the AdmissionReview in `bytes` is about, without answering it (for the log of a
/// review that could not be answered): read from its outline, nothing else of it kept.
pub(crate) fn facts(bytes: &[u8]) -> Facts {
    let Some(outline) = outline(bytes) else {
        return Facts::default();
    };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_owned();
    let request = outline.request.unwrap_or_default();
    let object = request.object.unwrap_or_default();
    let metadata = object.metadata.unwrap_or_default();
    let first = |a: String, b: String| if a.is_empty() { b } else { a };
    Facts {
        uid: text(request.uid.as_ref()),
        kind: first(
            text(request.kind.as_ref().and_then(|k| k.get("kind"))),
            text(object.kind.as_ref()),
        ),
        namespace: first(
            text(request.namespace.as_ref()),
            text(metadata.namespace.as_ref()),
        ),
        name: first(
            text(metadata.name.as_ref()),
            text(metadata.generate_name.as_ref()),
        ),
        operation: text(request.operation.as_ref()),
        ..Facts::default()
    }
}

/// The fields of an AdmissionReview its facts are read from; the rest of the body is skipped
/// as it is read, never held.
#[derive(serde::Deserialize, Default)]
struct Outline {
    #[serde(rename = "apiVersion")]
    api_version: Option<Value>,
    request: Option<RequestOutline>,
}

#[derive(serde::Deserialize, Default)]
struct RequestOutline {
    uid: Option<Value>,
    kind: Option<Value>,
    namespace: Option<Value>,
    operation: Option<Value>,
    object: Option<ObjectOutline>,
}

#[derive(serde::Deserialize, Default)]
struct ObjectOutline {
    kind: Option<Value>,
    metadata: Option<MetadataOutline>,
}

#[derive(serde::Deserialize, Default)]
struct MetadataOutline {
    name: Option<Value>,
    #[serde(rename = "generateName")]
    generate_name: Option<Value>,
    namespace: Option<Value>,
}

/// The outline of the JSON in `bytes`, when it reads as one.
fn outline(bytes: &[u8]) -> Option<Outline> {
    serde_json::from_slice(bytes).ok()
}

/// The refusal of the AdmissionReview in `bytes` when kinject cannot answer it (its
/// configuration cannot be loaded): `allowed: false` with `code` and `message`, when the
/// request can be read far enough to know its `uid` (a response without it is no answer).
pub(crate) fn refusal(bytes: &[u8], code: u16, message: String) -> Option<Value> {
    let (api_version, uid) = match parse(bytes, false) {
        Ok(r) => (r.api_version, r.uid),
        Err(bad) => (bad.api_version, bad.uid),
    };
    (!uid.is_empty()).then(|| respond(&api_version, &uid, false, None, Some((code, message))))
}

/// Gives `object` the `apiVersion` and `kind` it lacks from the request's `kind` (group,
/// version, kind), as the API server and the injectors' webhooks take the object to be of the
/// kind the request says: a hand-made review often leaves them out of the object (tumblr's and
/// Expedia's own test requests do). A warning when the kind cannot be known at all: the
/// object is then passed through unchanged, which must not happen silently.
fn with_type_meta(object: &mut Value, kind: Option<&Value>) -> Option<String> {
    let text = |v: Option<&Value>, key: &str| {
        v.and_then(|v| v.get(key))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let fields = object.as_object_mut()?;
    if !fields.contains_key("kind")
        && let Some(k) = text(kind, "kind")
    {
        fields.insert("kind".to_owned(), json!(k));
    }
    if !fields.contains_key("apiVersion")
        && let Some(version) = text(kind, "version")
    {
        let api_version = match text(kind, "group") {
            Some(group) => format!("{group}/{version}"),
            None => version,
        };
        fields.insert("apiVersion".to_owned(), json!(api_version));
    }
    (!fields.contains_key("kind")).then(|| {
        "the request's object has no `kind` and the request no `kind` to take it from: \
         not injected (an AdmissionReview from the API server always has `request.kind`)"
            .to_owned()
    })
}

/// Whether a request's `operation` creates its object (a review without one is taken as a
/// CREATE): the only operation kinject mutates.
fn creates(operation: Option<&str>) -> bool {
    matches!(operation, None | Some("CREATE"))
}

struct Request {
    api_version: String,
    uid: String,
    operation: Option<String>,
    namespace: Option<String>,
    /// `request.kind`: the object's group, version and kind.
    kind: Option<Value>,
    object: Value,
    /// Written in JSON (not YAML).
    json: bool,
}

impl Request {
    fn facts(&self) -> Facts {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_owned();
        let metadata = self.object.get("metadata");
        let field = |key: &str| text(metadata.and_then(|m| m.get(key)));
        let first = |a: String, b: String| if a.is_empty() { b } else { a };
        Facts {
            uid: self.uid.clone(),
            kind: first(
                text(self.kind.as_ref().and_then(|k| k.get("kind"))),
                text(self.object.get("kind")),
            ),
            namespace: first(
                self.namespace.clone().unwrap_or_default(),
                field("namespace"),
            ),
            name: first(field("name"), field("generateName")),
            operation: self.operation.clone().unwrap_or_default(),
            ..Facts::default()
        }
    }
}

/// A request that is not an AdmissionReview kinject can answer: what the answer says it to,
/// and why.
struct BadRequest {
    /// The version to answer with (`admission.k8s.io/v1` when the request does not say).
    api_version: String,
    /// The request's `uid`, where it has one.
    uid: String,
    message: String,
}

fn parse(bytes: &[u8], json_only: bool) -> Result<Request, BadRequest> {
    const V1: &str = "admission.k8s.io/v1";
    let bad = |api: &str, uid: &str, message: String| BadRequest {
        api_version: api.to_owned(),
        uid: uid.to_owned(),
        message,
    };
    let text = std::str::from_utf8(bytes)
        .map_err(|_| bad(V1, "", "the AdmissionReview is not UTF-8 text".to_owned()))?;
    let json = serde_json::from_str::<Value>(text);
    let is_json = json.is_ok();
    let mut value: Value = match json {
        Ok(v) => v,
        Err(json_error) if json_only => {
            return Err(bad(
                V1,
                "",
                format!(
                    "the AdmissionReview is not JSON: {json_error} (kinject serve reads JSON only, as the API server \
                        sends)"
                ),
            ));
        }
        Err(json_error) => crate::yaml::parse_document(text)
            .map(|p| p.value)
            .map_err(|yaml_error| {
                let (line, column) = crate::diagnostic::lines::line_col(text, yaml_error.offset);
                bad(
                    V1,
                    "",
                    format!(
                        "the AdmissionReview is not valid JSON ({json_error}) nor YAML (line {line} column {column}: \
                            {})",
                        crate::diagnostic::printable(&yaml_error.message)
                    ),
                )
            })?,
    };
    let api_version = match value.get("apiVersion").and_then(Value::as_str) {
        Some(v @ ("admission.k8s.io/v1" | "admission.k8s.io/v1beta1")) => v.to_owned(),
        _ => V1.to_owned(),
    };
    let uid = value
        .at_pointer("/request/uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if value.is_null() {
        return Err(bad(
            &api_version,
            &uid,
            "the request is empty: no AdmissionReview".to_owned(),
        ));
    }
    if value.get("kind").and_then(Value::as_str) != Some("AdmissionReview") {
        return Err(bad(
            &api_version,
            &uid,
            "not an AdmissionReview (`kind` must be AdmissionReview)".to_owned(),
        ));
    }
    let Some(request) = value.get("request").filter(|r| r.is_object()) else {
        return Err(bad(
            &api_version,
            &uid,
            "the AdmissionReview has no `request`".to_owned(),
        ));
    };
    if uid.is_empty() {
        return Err(bad(
            &api_version,
            &uid,
            "the request has no `uid`".to_owned(),
        ));
    }
    let operation = request
        .get("operation")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let has_object = request.get("object").is_some_and(Value::is_object);
    let namespace = request
        .get("namespace")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let kind = request.get("kind").filter(|k| k.is_object()).cloned();
    let object = match has_object {
        // Taken out of the review, not copied: the review is dropped here.
        true => value
            .get_mut("request")
            .and_then(|r| r.get_mut("object"))
            .map(Value::take)
            .unwrap_or_default(),
        // Only a CREATE is read: another operation is allowed as it is, and a DELETE has no
        // `object` (only `oldObject`).
        false if !creates(operation.as_deref()) => Value::Null,
        false => {
            return Err(bad(
                &api_version,
                &uid,
                "the request has no `object`".to_owned(),
            ));
        }
    };
    Ok(Request {
        api_version,
        uid,
        operation,
        namespace,
        kind,
        object,
        json: is_json,
    })
}

/// An AdmissionReview response; `patch` is the base64 text of the JSON patch.
fn respond(
    api_version: &str,
    uid: &str,
    allowed: bool,
    patch: Option<String>,
    status: Option<(u16, String)>,
) -> Value {
    let mut response = json!({"uid": uid, "allowed": allowed});
    if let Some(p) = patch {
        response["patchType"] = json!("JSONPatch");
        response["patch"] = Value::String(p);
    }
    if let Some((code, message)) = status {
        response["status"] = json!({"code": code, "message": message});
    }
    json!({"apiVersion": api_version, "kind": "AdmissionReview", "response": response})
}

#[cfg(test)]
mod tests {
    use super::ReviewResult::*;
    use crate::inject::ActionKind::*;

    /// The words the log and the `result` label give (docs/serve.md lists them).
    #[test]
    fn a_review_result_keeps_its_word() {
        let words = [
            Acted(Injected),
            Acted(Unchanged),
            Acted(Skipped),
            Kept,
            Ignored,
            Denied,
            AllowedOnError,
            Malformed,
            Timeout,
            Panic,
        ]
        .map(super::ReviewResult::code);
        assert_eq!(
            words,
            [
                "injected",
                "unchanged",
                "skipped",
                "kept",
                "ignored",
                "denied",
                "allowed_on_error",
                "malformed",
                "timeout",
                "panic"
            ]
        );
    }
}
