//! Entry points for fuzzing (the targets in `fuzz/` are one call each). Each takes arbitrary
//! bytes, runs one boundary of kinject on them, and panics only where an invariant breaks:
//! a panic inside kinject, or an oracle below. `tests/fuzz.rs` runs every input of
//! `fuzz/seeds/` and `fuzz/regressions/` through them, so a crash found once stays found.
//!
//! Inputs that hold two texts (a configuration and a manifest) separate them with a NUL
//! byte, which no YAML text holds.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};

use crate::config::{Config, load_texts};
use crate::inject::{Mode, Settings};
use crate::pipeline::{Keep, process};
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
    inject_checked(&config, manifest.to_string().as_bytes());
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
    let answer = crate::admission::review(data, config, &HashMap::new());
    let response = answer.response.get("response").expect("a response");
    assert!(response.get("allowed").is_some_and(Value::is_boolean));
}

/// Injects `manifests` with `config`; where that succeeds, the output must be YAML the
/// reader reads, with as many documents, and injecting it again must change nothing.
fn inject_checked(config: &Config, manifests: &[u8]) {
    let Some(output) = inject_once(config, manifests) else {
        return;
    };
    let again = inject_once(config, output.as_bytes())
        .unwrap_or_else(|| panic!("the output of inject is refused by inject: {output:?}"));
    assert_eq!(again, output, "inject is not idempotent");
}

/// The YAML output of `inject`, when it succeeds.
fn inject_once(config: &Config, manifests: &[u8]) -> Option<String> {
    let input = from_bytes(Source::stdin(), manifests).ok()?;
    let documents = input.documents.len();
    let settings = Settings::new(config, None, Mode::Inject);
    let file = process(input, &settings, Keep::YamlText);
    for e in &file.errors {
        assert_ne!(e.code, "kinject::internal", "{e:?}");
    }
    if !file.errors.is_empty() {
        return None;
    }
    let output = crate::render::yaml::render(&file)
        .ok()?
        .into_text(&file.input);
    let reread = from_bytes(Source::stdin(), output.as_bytes())
        .unwrap_or_else(|e| panic!("output the reader refuses: {e}: {output:?}"));
    assert_eq!(reread.documents.len(), documents, "{output:?}");
    Some(output)
}
