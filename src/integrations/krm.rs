//! KRM functions (the KRM Functions Specification, as kustomize and kpt run them): a
//! `ResourceList` comes in, its `functionConfig` is the kinject configuration, its `items` are
//! injected in place (comments, order and `config.kubernetes.io/*` annotations kept), and it
//! goes out with `results`: one per object, errors with `resourceRef` and `field`.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::config::{self, Config};
use crate::diagnostic::Located;
use crate::diagnostic::codes;
use crate::inject::{Action, Mode, NamespaceLabels, Settings};
use crate::json::Pointer;
use crate::json::patch::{self};
use crate::pipeline::{self, FileResult, ObjectResult};
use crate::read::{self, Input, Source};
use crate::render;

/// The ResourceList to write, and whether any result is an error (the exit code).
pub(crate) struct KrmOutput {
    pub text: String,
    pub failed: bool,
    /// The errors again, located, for stderr.
    pub errors: Vec<Located>,
}

/// Whether `input` is a single `ResourceList` document.
pub(crate) fn is_resource_list(input: &Input) -> bool {
    let docs: Vec<&Value> = input
        .documents
        .iter()
        .filter_map(|d| d.value())
        .filter(|p| p.root.is_some())
        .map(|p| &p.value)
        .collect();
    matches!(docs.as_slice(), [v] if v.get("kind").and_then(Value::as_str) == Some("ResourceList"))
}

/// Whether the first document with content of `input` is a `ResourceList`. Documents are
/// only read when their text does not say (a `kind:` line of a block mapping does).
pub(crate) fn starts_with_resource_list(input: &mut Input) -> bool {
    for doc in &mut input.documents {
        let text = &input.text[doc.range.clone()];
        if let Some(kind) = crate::yaml::top_level_kind(text) {
            return kind == "ResourceList";
        }
        let blank = text.lines().all(|l| {
            let l = l.trim();
            l.is_empty() || l.starts_with('#') || l == "---" || l == "..."
        });
        if blank {
            continue;
        }
        if !text.contains("ResourceList") {
            return false;
        }
        let parsed = doc
            .parsed
            .get_or_insert_with(|| Box::new(crate::yaml::parse_document(text)));
        match &**parsed {
            Ok(p) if p.root.is_none() => continue,
            Ok(p) => return p.value.get("kind").and_then(Value::as_str) == Some("ResourceList"),
            Err(_) => return false,
        }
    }
    false
}

/// What the command line adds to the `functionConfig` (or the configuration given instead),
/// as it adds them to `inject`'s.
#[derive(Debug, Default)]
pub(crate) struct Options<'a> {
    /// `-n`: the namespace of objects that name none.
    pub namespace: Option<String>,
    /// `--set`: values over the `functionConfig`'s (a configuration given instead was loaded
    /// with them).
    pub sets: &'a [config::Set],
    /// `--namespace-labels`.
    pub namespace_labels: NamespaceLabels,
}

/// Runs kinject as a KRM function over `input`. `config` overrides the `functionConfig`.
/// Input that is not one `ResourceList` gives nothing to write, only the error: written back
/// with results in it, it would reach the next command of a pipe as if it were manifests
/// (`… | kinject | kubectl apply -f -`, where `inject` was forgotten).
pub(crate) fn run(input: Input, config: Option<&Config>, options: Options<'_>) -> KrmOutput {
    if !is_resource_list(&input) {
        // Not YAML: its syntax errors say why; else what it is instead.
        let syntax: Vec<Located> = input
            .documents
            .iter()
            .filter_map(|d| match d.parsed.as_deref() {
                Some(Err(e)) => Some(pipeline::located_syntax(&input, d, e)),
                _ => None,
            })
            .collect();
        return KrmOutput {
            text: String::new(),
            failed: true,
            errors: if syntax.is_empty() {
                vec![not_a_resource_list(&input)]
            } else {
                syntax
            },
        };
    }
    let loaded;
    // What loading the functionConfig found that fails nothing, as warning results.
    let mut results: Vec<Value> = Vec::new();
    let config = match config {
        Some(c) => c,
        None => match function_config(&input, options.sets) {
            Ok(mut c) => {
                results.extend(std::mem::take(&mut c.warnings).iter().map(config_result));
                loaded = c;
                &loaded
            }
            Err(errors) => {
                let results = errors.iter().map(config_result).collect();
                let mut out = finish(pipeline_without_changes(input), results, true);
                out.errors = errors;
                return out;
            }
        },
    };
    let settings = Settings::new(config, options.namespace, Mode::Inject)
        .with_namespace_labels([&input], options.namespace_labels);
    let (file, ()) = pipeline::process(input, &settings, pipeline::Values::default());
    let mut failed = false;
    for d in &file.docs {
        let parsed = file
            .input
            .documents
            .iter()
            .find(|doc| doc.index == d.index)
            .and_then(|doc| doc.value());
        for o in &d.objects {
            let original = parsed.and_then(|p| p.value.at_pointer(&o.pointer));
            let r = object_result(o, original);
            failed |= r["severity"] == "error";
            results.push(r);
        }
    }
    for w in &file.warnings {
        results.push(json!({"message": w, "severity": "warning"}));
    }
    let errors = file.errors.clone();
    let mut out = finish(file, results, failed || !errors.is_empty());
    out.errors = errors;
    out
}

/// The error for input that is not one `ResourceList`, at its first document's `kind`.
fn not_a_resource_list(input: &Input) -> Located {
    let first = input
        .documents
        .iter()
        .find_map(|d| Some((d, d.value().filter(|p| p.root.is_some())?)));
    let (span, what) = match first {
        Some((doc, parsed)) => {
            let root = parsed.root.as_ref().expect("checked above");
            let node = root.get("kind").unwrap_or(root);
            let kind = parsed.value.get("kind").and_then(Value::as_str);
            let what = match kind {
                Some(k) => format!("a `{}`", crate::diagnostic::printable(k)),
                None => "not a Kubernetes object".to_owned(),
            };
            (
                (doc.range.start + node.start, doc.range.start + node.end),
                what,
            )
        }
        None => ((0, 0), "empty".to_owned()),
    };
    let several = input
        .documents
        .iter()
        .filter(|d| d.value().is_some_and(|p| p.root.is_some()))
        .count()
        > 1;
    let what = if several {
        format!("{what}, then more documents")
    } else {
        what
    };
    Located::new(
        codes::KRM_NOT_A_RESOURCE_LIST,
        &input.source.name,
        input.shared_text(),
        span,
        format!("the input is {what}, not a KRM ResourceList: nothing was written"),
    )
    .help("to inject manifests, run `kinject inject` (`kinject inject -c CONFIG FILE`, or with the manifests on \
        stdin); `kinject` without a subcommand, and `kinject krm`, run as a KRM function, which reads one ResourceList")
}

/// The configuration in the `functionConfig` (a kinject `InjectionConfig`), with `sets`.
fn function_config(input: &Input, sets: &[config::Set]) -> Result<Config, Vec<Located>> {
    let text = &input.text;
    let doc = input
        .documents
        .iter()
        .find(|d| d.value().is_some_and(|p| p.root.is_some()));
    let fc = doc.and_then(|d| {
        let p = d.value()?;
        let node = p.root.as_ref()?.get("functionConfig")?;
        Some((d, p, node))
    });
    let Some((doc, parsed, node)) = fc else {
        // A ResourceList that is not YAML: its error, not a missing functionConfig.
        let unreadable = input.documents.iter().find_map(|d| {
            let error = d.parsed.as_deref()?.as_ref().err()?;
            Some(crate::pipeline::located_syntax(input, d, error))
        });
        if let Some(error) = unreadable {
            return Err(vec![error]);
        }
        return Err(vec![Located::new(
            codes::KRM_NO_FUNCTION_CONFIG,
            &input.source.name,
            text,
            (0, 0),
            "the ResourceList has no functionConfig: it must hold a kinject InjectionConfig",
        )]);
    };
    // In block YAML, keep the functionConfig's lines where they are (other lines blanked), so
    // diagnostics point at the real line and column; flow (JSON) input is re-printed.
    let config_text = if matches!(node.kind, crate::yaml::NodeKind::Map { flow: false, .. }) {
        let start = doc.range.start + node.start;
        let first = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let end = doc.range.start + node.end;
        let mut s = "\n".repeat(text[..first].matches('\n').count());
        s.push_str(&text[first..end]);
        s
    } else {
        serde_json::to_string_pretty(&parsed.value["functionConfig"]).unwrap_or_default()
    };
    config::load_texts(&[(input.source.name.clone(), Arc::from(config_text))], sets)
}

/// A result for `input` that changes nothing.
fn pipeline_without_changes(input: Input) -> FileResult {
    FileResult {
        input,
        docs: Vec::new(),
        errors: Vec::new(),
        warnings: Vec::new(),
    }
}

/// Puts `results` into the ResourceList and renders it.
fn finish(mut file: FileResult, results: Vec<Value>, failed: bool) -> KrmOutput {
    if let Some(doc) = file
        .input
        .documents
        .iter()
        .find(|d| d.value().is_some_and(|p| p.root.is_some()))
    {
        let index = doc.index;
        let Some(parsed) = doc.value() else {
            unreachable!("checked above")
        };
        let mut target = file
            .docs
            .iter()
            .find(|d| d.index == index)
            .and_then(|d| d.target.as_deref().cloned())
            .unwrap_or_else(|| parsed.value.clone());
        if let Value::Object(m) = &mut target {
            m.insert("results".to_owned(), Value::Array(results));
        }
        let ops = patch::diff(&parsed.value, &target);
        match file.docs.iter_mut().find(|d| d.index == index) {
            Some(d) => {
                d.target = Some(Box::new(target));
                d.ops = ops;
            }
            None => file.docs.push(pipeline::DocResult {
                index,
                objects: Vec::new(),
                target: Some(Box::new(target)),
                ops,
            }),
        }
    }
    match render::yaml::render(&file) {
        Ok(y) => KrmOutput {
            text: y.into_text(&file.input),
            failed,
            errors: Vec::new(),
        },
        // An internal error: the input goes back unchanged, and the run fails.
        Err(e) => KrmOutput {
            text: file.input.text.to_string(),
            failed: true,
            errors: vec![Located::new(
                codes::INTERNAL,
                &e.file,
                &file.input.text,
                (0, 0),
                e.message,
            )],
        },
    }
}

fn resource_ref(o: &ObjectResult) -> Value {
    let mut r = Map::new();
    r.insert("apiVersion".to_owned(), json!(o.identity.api_version));
    r.insert("kind".to_owned(), json!(o.identity.kind));
    r.insert("name".to_owned(), json!(o.identity.name));
    if !o.identity.namespace.is_empty() {
        r.insert("namespace".to_owned(), json!(o.identity.namespace));
    }
    Value::Object(r)
}

/// `file: {path, index}` from the orchestrator's annotations, when present.
fn file_ref(annotations: Option<&Value>) -> Option<Value> {
    let a = annotations?;
    let get = |k: &str| {
        a.get(format!("internal.config.kubernetes.io/{k}"))
            .or_else(|| a.get(format!("config.kubernetes.io/{k}")))
    };
    let path = get("path")?.as_str()?;
    let mut f = json!({"path": path});
    if let Some(i) = get("index")
        .and_then(Value::as_str)
        .and_then(|i| i.parse::<u64>().ok())
    {
        f["index"] = json!(i);
    }
    Some(f)
}

fn object_result(o: &ObjectResult, original: Option<&Value>) -> Value {
    let mut r = Map::new();
    let (severity, message, tags) = match &o.outcome {
        Err(e) => ("error", e.message.clone(), json!({"code": e.code})),
        Ok(outcome) => {
            let action = &outcome.action;
            let message = match action {
                Action::Skipped(reason) => format!("skipped: {}", reason.code()),
                Action::NotInjected => "not injected".to_owned(),
                _ => format!("{}: {}", action.code(), action.sidecars().join(", ")),
            };
            let tags = match action.reason() {
                Some(reason) => json!({"action": action.code(), "reason": reason.code()}),
                None => json!({"action": action.code()}),
            };
            ("info", message, tags)
        }
    };
    r.insert("message".to_owned(), json!(message));
    r.insert("severity".to_owned(), json!(severity));
    r.insert("resourceRef".to_owned(), resource_ref(o));
    if let Err(e) = &o.outcome
        && let Some(at) = &e.at
    {
        r.insert("field".to_owned(), json!({"path": field_path(at)}));
    }
    if let Some(f) = file_ref(original.and_then(|v| v.at_pointer("/metadata/annotations"))) {
        r.insert("file".to_owned(), f);
    }
    r.insert("tags".to_owned(), tags);
    Value::Object(r)
}

/// `/spec/template/spec/volumes/0` → `spec.template.spec.volumes[0]`; keys with dots or
/// slashes in brackets: `metadata.annotations["kinject.dev/inject"]`.
fn field_path(pointer: &str) -> String {
    let mut out = String::new();
    for t in crate::json::tokens(pointer) {
        if t.parse::<usize>().is_ok() {
            out.push_str(&format!("[{t}]"));
        } else if t.contains(['.', '/', '[', ']', '"']) {
            out.push_str(&format!(
                "[{}]",
                serde_json::to_string(&t).unwrap_or_default()
            ));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&t);
        }
    }
    out
}

fn config_result(e: &Located) -> Value {
    json!({
        "message": format!("functionConfig: {}: {} ({})", e.location, e.message, e.code),
        "severity": if e.warning { "warning" } else { "error" },
        "tags": {"code": e.code},
    })
}

/// A ResourceList read from `bytes` (stdin), for callers that already hold them.
pub(crate) fn input(bytes: &[u8]) -> Result<Input, read::InputError> {
    read::from_bytes(Source::stdin(), bytes)
}
