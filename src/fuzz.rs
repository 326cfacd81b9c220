//! Entry points for fuzzing (the targets in `fuzz/` are one call each). Each takes arbitrary
//! bytes, runs one boundary of kinject on them, and panics only where an invariant breaks:
//! a panic inside kinject, or an oracle below. `tests/fuzz.rs` runs every input of
//! `fuzz/seeds/` and `fuzz/regressions/` through them, so a crash found once stays found.
//!
//! Inputs that hold two texts (a configuration and a manifest) separate them with a NUL
//! byte, which no YAML text holds.
//!
//! Test support: built with the `oracles` feature only, which the tests and `fuzz/` turn on.

#![cfg(feature = "oracles")]

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};

use crate::config::{Config, load_texts};
use crate::diagnostic::codes;
use crate::inject::{Mode, Settings};
use crate::pipeline::process;
use crate::read::{Source, from_bytes};

/// The reader: decoding, document splitting and both YAML parsers. Where the fast reader
/// reads a document, it must read what the general parser reads (value, spans, duplicate
/// keys), and a shallow read must agree with a full one.
pub fn read(data: &[u8]) {
    let Ok(input) = from_bytes(Source::stdin(), data) else {
        return;
    };
    for doc in &input.documents {
        let text = input.doc_text(doc);
        crate::yaml::agrees(text);
        crate::yaml::shallow_agrees(text);
    }
}

/// The configuration loader, on every format it reads (kinject's own, Kruise SidecarSets,
/// salesforce, tumblr, Expedia): a configuration, or located errors.
pub fn config(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = load_texts(&[("fuzz.yaml".to_owned(), Arc::from(text))], &[]);
    }
}

/// Templates: the input's first line is an annotation value a manifest controls, the rest
/// a template, used both as a whole template and as a field template; the workload is
/// injected and its output checked as `inject` checks it.
pub fn template(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (annotation, template) = text.split_once('\n').unwrap_or((text, ""));
    let config = json!({
        "apiVersion": "kinject.dev/v1alpha1",
        "kind": "InjectionConfig",
        "sidecars": [
            {"name": "whole", "template": template},
            {"name": "field", "containers": [{"name": "field", "image": "example.com/f:1", "args": [template]}]},
        ],
        "rules": [{"name": "all", "inject": ["whole", "field"]}],
    });
    let Ok(config) = load_texts(
        &[("fuzz.json".to_owned(), Arc::from(config.to_string()))],
        &[],
    ) else {
        return;
    };
    let manifest = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "annotations": {"example.com/value": annotation}},
        "spec": {"template": {
            "metadata": {"annotations": {"example.com/value": annotation}},
            "spec": {"containers": [{"name": "app", "image": "example.com/app:1"}]},
        }},
    });
    // Escaped as a JSON writer for YAML readers escapes them (raw, the reader refuses them).
    let manifest = manifest
        .to_string()
        .replace('\u{85}', "\\u0085")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029");
    inject_checked(&config, manifest.as_bytes());
    one_scalar(&config, template, annotation);
}

/// Functions and filters whose result's shape may depend on the value they are given (a list
/// as long as the text has commas, a value parsed from it): a template using them may change
/// shape with the annotation by design.
const SHAPING: &[&str] = &[
    "{%",
    "from_",
    "annotation_list",
    "split",
    "list",
    "lines",
    "items",
    "safe",
    "tojson",
    "if",
    "default",
    "batch",
    "slice",
    "unique",
    "map",
    "select",
    "reject",
    "groupby",
    "dictsort",
    "sort",
    "reverse",
    "go_range",
    "go_volume_mounts",
    "yaml_scalar",
    "int",
    "float",
    "bool",
];

/// Whatever the annotation holds, a whole template without control flow gives the same
/// shape (each mapping's number of entries, each list's length, nested alike) as for a plain
/// word: a value ends as the one scalar its placeholder stands for, in block or flow context,
/// quoted or not, and never adds a field, an item or a level.
fn one_scalar(config: &Config, template: &str, annotation: &str) {
    if SHAPING.iter().any(|w| template.contains(w)) {
        return;
    }
    let render = |value: &str| {
        let pod = json!({"metadata": {"annotations": {"example.com/value": value}}, "spec": {}});
        let workload =
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}});
        let ctx = crate::template::context(&pod, &workload, "", &config.values);
        config.templates.render_whole("whole", &ctx)?.ok()
    };
    if let (Some(hostile), Some(plain)) = (render(annotation), render("x")) {
        assert_eq!(
            shape(&hostile),
            shape(&plain),
            "the annotation {annotation:?} changed the shape of {template:?}: {hostile}"
        );
    }
}

/// A value's shape: scalars alike, lists by their items' shapes, mappings by their values'
/// shapes (keys may hold a printed value).
fn shape(v: &Value) -> String {
    match v {
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(shape).collect::<Vec<_>>().join(",")
        ),
        Value::Object(m) => {
            let mut inner: Vec<String> = m.values().map(shape).collect();
            inner.sort();
            format!("{{{}}}", inner.join(","))
        }
        _ => "s".to_owned(),
    }
}

/// Injection: a configuration, a NUL, then a manifest stream.
pub fn inject(data: &[u8]) {
    let Some(split) = data.iter().position(|&b| b == 0) else {
        return;
    };
    let Ok(text) = std::str::from_utf8(&data[..split]) else {
        return;
    };
    if let Ok(config) = load_texts(&[("fuzz.yaml".to_owned(), Arc::from(text))], &[]) {
        inject_checked(&config, &data[split + 1..]);
    }
}

/// An AdmissionReview (JSON or YAML) answered with a fixed configuration: every request
/// gets a response, with the request's uid when it has one.
pub fn admission(data: &[u8]) {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    let config = CONFIG.get_or_init(|| {
        let text = include_str!("../testdata/cases/hostile-alias-bomb/config.yaml");
        load_texts(&[("config.yaml".to_owned(), Arc::from(text))], &[])
            .unwrap_or_else(|_| panic!("the fuzz configuration loads"))
    });
    let labels = HashMap::new();
    let policy = crate::integrations::admission::Policy::new(config, &labels);
    let answer = crate::integrations::admission::review(data, &policy);
    let response = answer.response.get("response").expect("a response");
    assert!(response.get("allowed").is_some_and(Value::is_boolean));
}

/// The server's request handler (`kinject serve`, `POST /mutate` once the body is read),
/// under `--on-error` deny and allow: whatever the body, HTTP 200 and a JSON AdmissionReview
/// with a boolean `allowed` (the API server reads a review's verdict from the body).
#[cfg(feature = "serve")]
pub fn serve(data: &[u8]) {
    static SHARED: OnceLock<crate::serve::Shared> = OnceLock::new();
    let shared = SHARED.get_or_init(|| {
        let text = include_str!("../testdata/cases/hostile-alias-bomb/config.yaml");
        let config = load_texts(&[("config.yaml".to_owned(), Arc::from(text))], &[])
            .unwrap_or_else(|_| panic!("the fuzz configuration loads"));
        crate::serve::Shared::of_config(config)
            .unwrap_or_else(|_| panic!("the fuzz configuration is one the server decides"))
    });
    use crate::diagnostic::codes::SERVE_TOO_LARGE;
    use crate::integrations::admission::{Limits, OnError};
    use crate::integrations::review_cost::{SERVE_MAX_CONTAINERS, SERVE_MAX_VALUES};
    let json = serde_json::from_slice::<serde::de::IgnoredAny>(data).is_ok();
    // The server's default limits, and small ones the fuzzer's inputs reach.
    let defaults = Limits {
        max_values: Some(SERVE_MAX_VALUES),
        max_containers: Some(SERVE_MAX_CONTAINERS),
    };
    let small = Limits {
        max_values: Some(64),
        max_containers: Some(2),
    };
    for limits in [defaults, small] {
        for on_error in [OnError::Deny, OnError::Allow] {
            let terms = crate::serve::Terms {
                on_error,
                limits,
                deadline: None,
            };
            let handled = crate::serve::answer(shared, data, &terms).expect("no deadline");
            assert_eq!(handled.status, 200);
            let review: Value = serde_json::from_slice(&handled.body).expect("a JSON body");
            assert_eq!(review["kind"], "AdmissionReview", "{review}");
            let response = &review["response"];
            assert!(response["allowed"].is_boolean(), "{review}");
            // What is not JSON (YAML, whose aliases expand) is refused, saying where (or, when
            // it opens as JSON would, for the values it holds).
            if !json {
                assert_eq!(response["allowed"], false, "{review}");
                let message = response["status"]["message"].as_str().unwrap_or_default();
                assert!(
                    ["not JSON", "not UTF-8", SERVE_TOO_LARGE]
                        .iter()
                        .any(|said| message.contains(said)),
                    "{review}"
                );
            }
            // A review beyond the limits is refused or (allowed on error) left unchanged.
            if handled
                .message
                .as_deref()
                .is_some_and(|m| m.contains(SERVE_TOO_LARGE))
                || response["warnings"].to_string().contains(SERVE_TOO_LARGE)
            {
                assert!(response.get("patch").is_none(), "{review}");
            }
        }
    }
}

/// Injects `manifests` with `config`; where that succeeds, the output must be YAML the
/// reader reads, with as many documents, and injecting it again must change nothing. Neither
/// injecting nor uninjecting may lose anything of the input that the configuration's sidecars
/// do not add, whatever the input's status annotations say (they are the manifest's).
fn inject_checked(config: &Config, manifests: &[u8]) {
    let addable = Addable::of(config);
    if let (Some(addable), Some(before)) = (&addable, objects_of(manifests))
        && let Some(back) = inject_once(config, manifests, Mode::Uninject)
    {
        let after = objects_of(back.as_bytes()).expect("uninject's output reads");
        addable.nothing_lost(config, &before, &after, "uninject");
    }
    let Some(output) = inject_once(config, manifests, Mode::Inject) else {
        return;
    };
    if let (Some(addable), Some(before)) = (&addable, objects_of(manifests)) {
        let after = objects_of(output.as_bytes()).expect("inject's output reads");
        addable.nothing_lost(config, &before, &after, "inject");
    }
    let again = inject_once(config, output.as_bytes(), Mode::Inject)
        .unwrap_or_else(|| panic!("the output of inject is refused by inject: {output:?}"));
    assert_eq!(again, output, "inject is not idempotent");
    json_comes_back(config, manifests, &output);
}

/// A JSON input that held no status comes back from `uninject` byte for byte (JSON is edited
/// as text: every member injection leaves keeps its bytes), except an empty collection written
/// with whitespace inside, which comes back as `[]`/`{}` (docs/fidelity.md).
fn json_comes_back(config: &Config, manifests: &[u8], output: &str) {
    let Ok(text) = std::str::from_utf8(manifests) else {
        return;
    };
    let json = text.trim_start().starts_with('{')
        && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok();
    let spaced_empty = text
        .as_bytes()
        .windows(2)
        .any(|w| matches!(w, [b'[' | b'{', b' ' | b'\t' | b'\n' | b'\r']))
        && text.split(['[', '{']).skip(1).any(|rest| {
            rest.trim_start().starts_with([']', '}']) && rest.starts_with(char::is_whitespace)
        });
    if !json || spaced_empty || text.contains("kinject.dev/status") || output == text {
        return;
    }
    let back = inject_once(config, output.as_bytes(), Mode::Uninject)
        .unwrap_or_else(|| panic!("uninject refuses inject's output: {output:?}"));
    assert_eq!(
        back, text,
        "uninject does not give the JSON back: {output:?}"
    );
}

/// The objects of a stream, as the reader reads them (Lists' items included).
fn objects_of(bytes: &[u8]) -> Option<Vec<Value>> {
    let input = from_bytes(Source::stdin(), bytes).ok()?;
    let mut out = Vec::new();
    for doc in &input.documents {
        let parsed = crate::yaml::parse_document(input.doc_text(doc)).ok()?;
        out.extend(
            crate::read::objects(&parsed.value)
                .into_iter()
                .map(|(_, v)| v.clone()),
        );
    }
    Some(out)
}

/// Every name a configuration's sidecars can add to a pod, when they are all written out
/// (no template: a templated name could be anything).
struct Addable {
    containers: BTreeSet<String>,
    volumes: BTreeSet<String>,
    env: BTreeSet<String>,
    mounts: BTreeSet<String>,
    words: BTreeSet<String>,
}

impl Addable {
    fn of(config: &Config) -> Option<Self> {
        let mut a = Addable {
            containers: BTreeSet::new(),
            volumes: BTreeSet::new(),
            env: BTreeSet::new(),
            mounts: BTreeSet::new(),
            words: BTreeSet::new(),
        };
        for def in &config.sidecars {
            if !config.templates.is_static(&def.spec.name) {
                return None;
            }
            let d = &def.definition;
            let list = |f: &str| {
                d.get(f)
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            };
            let name = |v: &Value| v.get("name").and_then(Value::as_str).map(str::to_owned);
            a.containers.extend(
                list("containers")
                    .iter()
                    .chain(&list("initContainers"))
                    .filter_map(name),
            );
            a.volumes.extend(list("volumes").iter().filter_map(name));
            a.env.extend(list("env").iter().filter_map(name));
            a.mounts.extend(list("volumeMounts").iter().filter_map(|m| {
                m.get("mountPath")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            }));
            a.words.extend(
                list("appendArgs")
                    .iter()
                    .chain(&list("appendCommand"))
                    .filter_map(|w| w.as_str().map(str::to_owned)),
            );
            if d.get("serviceAccountName").is_some() {
                // Token mounts may go, for the new service account's.
                a.mounts
                    .insert("/var/run/secrets/kubernetes.io/serviceaccount".to_owned());
            }
        }
        Some(a)
    }

    /// Panics when `after` lacks a container, volume, env entry, mount or argument of
    /// `before` that no sidecar adds.
    fn nothing_lost(&self, config: &Config, before: &[Value], after: &[Value], what: &str) {
        assert_eq!(before.len(), after.len(), "{what}: objects lost");
        let names = |pod: &Value, list: &str| -> Vec<(String, Value)> {
            pod.pointer(list)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|c| {
                    (
                        c.get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                        c.clone(),
                    )
                })
                .collect()
        };
        for (b, a) in before.iter().zip(after) {
            let Some(wk) = crate::kinds::workload_kind(b, &config.kinds) else {
                continue;
            };
            let (Some(pb), Some(pa)) = (b.pointer(&wk.pod_template), a.pointer(&wk.pod_template))
            else {
                continue;
            };
            let containers_after: Vec<(String, Value)> = names(pa, "/spec/containers")
                .into_iter()
                .chain(names(pa, "/spec/initContainers"))
                .collect();
            for list in ["/spec/containers", "/spec/initContainers"] {
                for (n, c) in names(pb, list) {
                    if self.containers.contains(&n) {
                        continue;
                    }
                    let Some((_, now)) = containers_after.iter().find(|(m, _)| *m == n) else {
                        panic!("{what} lost container `{n}` of the pod");
                    };
                    for (field, key, known) in [
                        ("env", "name", &self.env),
                        ("volumeMounts", "mountPath", &self.mounts),
                    ] {
                        let had = |c: &Value| -> Vec<String> {
                            c.get(field)
                                .and_then(Value::as_array)
                                .into_iter()
                                .flatten()
                                .filter_map(|e| {
                                    e.get(key).and_then(Value::as_str).map(str::to_owned)
                                })
                                .collect()
                        };
                        let kept = had(now);
                        for k in had(&c) {
                            assert!(
                                known.contains(&k) || kept.contains(&k),
                                "{what} lost {field} `{k}` of container `{n}`"
                            );
                        }
                    }
                    for field in ["args", "command"] {
                        let words = |c: &Value| -> Vec<String> {
                            c.get(field)
                                .and_then(Value::as_array)
                                .into_iter()
                                .flatten()
                                .filter_map(|w| w.as_str().map(str::to_owned))
                                .collect()
                        };
                        let kept = words(now);
                        for w in words(&c) {
                            assert!(
                                self.words.contains(&w) || kept.contains(&w),
                                "{what} lost {field} word `{w}` of container `{n}`"
                            );
                        }
                    }
                }
            }
            let volumes_after = names(pa, "/spec/volumes");
            for (n, _) in names(pb, "/spec/volumes") {
                assert!(
                    self.volumes.contains(&n) || volumes_after.iter().any(|(m, _)| *m == n),
                    "{what} lost volume `{n}` of the pod"
                );
            }
        }
    }
}

/// The YAML output of `inject` (or `uninject`), when it succeeds.
fn inject_once(config: &Config, manifests: &[u8], mode: Mode) -> Option<String> {
    let input = from_bytes(Source::stdin(), manifests).ok()?;
    let documents = input.documents.len();
    let settings = Settings::new(config, None, mode);
    let (file, output) = process(input, &settings, crate::render::yaml::YamlStream::new());
    for e in &file.errors {
        assert_ne!(e.code, codes::INTERNAL, "{e:?}");
    }
    if !file.errors.is_empty() {
        return None;
    }
    // Every error of rendering is an internal one (an edit that does not read back as the
    // object it was made for): a CR-only file once got here after being reported injected.
    let output = output
        .unwrap_or_else(|e| panic!("{e}"))
        .into_text(&file.input);
    // Kubernetes' reader (go-yaml) takes YAML 1.1's extra line breaks for line breaks, where
    // kinject's reader does not: written raw, a value could become fields for the cluster.
    if let Some(c) = output
        .chars()
        .find(|c| matches!(c, '\u{85}' | '\u{2028}' | '\u{2029}'))
    {
        panic!(
            "output holds a raw U+{:04X}, a line break to go-yaml: {output:?}",
            u32::from(c)
        );
    }
    let reread = from_bytes(Source::stdin(), output.as_bytes())
        .unwrap_or_else(|e| panic!("output the reader refuses: {e}: {output:?}"));
    assert_eq!(reread.documents.len(), documents, "{output:?}");
    Some(output)
}
