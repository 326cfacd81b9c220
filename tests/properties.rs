//! Properties over generated manifests and configurations (proptest, a fixed seed and a
//! bounded number of cases, so a CI run is repeatable):
//!
//! - idempotence: injecting the output again changes nothing, byte for byte;
//! - patch/YAML agreement: the operations `-o patch` prints, applied to the input objects,
//!   give the objects of the YAML output;
//! - reversibility: `uninject` of the output gives the input back, byte for byte;
//! - pass-through: a configuration that matches nothing gives the input back, byte for byte;
//! - nothing lost: the output parses and holds every input object, with every field it had.
//!
//! The manifests vary what users write: kinds, names, namespaces, labels, annotations with
//! characters YAML and templates care about, containers with env, mounts and ports, init
//! containers, volumes; and how they write it: indentation, sequence style, flow lists,
//! quoting, comments, document markers.

use std::sync::Arc;

use proptest::prelude::*;
use proptest::test_runner::{Config as Runner, RngSeed};
use serde_json::{Map, Value, json};

use kinject::{Config, load_texts};
use kinject::{Mode, Settings};
use kinject::{Source, from_bytes};
use kinject::{Values, process};

/// 96 cases from a fixed seed; `PROPTEST_CASES` and `PROPTEST_RNG_SEED` explore further.
fn settings() -> Runner {
    fn env<T: std::str::FromStr>(name: &str) -> Option<T> {
        std::env::var(name).ok()?.parse().ok()
    }
    Runner {
        cases: env("PROPTEST_CASES").unwrap_or(96),
        rng_seed: RngSeed::Fixed(env("PROPTEST_RNG_SEED").unwrap_or(0x006b_696e_6a65_6374)),
        failure_persistence: None,
        ..Runner::default()
    }
}

// ---- manifests -------------------------------------------------------------------------

/// How a manifest is written.
#[derive(Debug, Clone)]
struct Style {
    indent: usize,
    /// `- item` indented under its key (`key:\n  - item`), or level with it.
    seq_indented: bool,
    flow_scalar_lists: bool,
    /// 0: plain where possible, 1: double-quoted, 2: single-quoted.
    quoting: u8,
    comments: bool,
    start_marker: bool,
    /// How a null is written: empty (`key:`, as templates leave a field), `null` or `~`.
    null: &'static str,
}

fn style() -> impl Strategy<Value = Style> {
    (
        prop_oneof![Just(2usize), Just(4)],
        any::<bool>(),
        any::<bool>(),
        0u8..3,
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(""), Just("null"), Just("~")],
    )
        .prop_map(
            |(indent, seq_indented, flow_scalar_lists, quoting, comments, start_marker, null)| {
                Style {
                    indent,
                    seq_indented,
                    flow_scalar_lists,
                    quoting,
                    comments,
                    start_marker,
                    null,
                }
            },
        )
}

fn name() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9]{0,6}(-[a-z0-9]{1,4})?"
}

/// Annotation and env values: what YAML, JSON and templates treat specially.
fn tricky() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 ._/-]{0,12}",
        Just("true".to_owned()),
        Just("1.0".to_owned()),
        Just("null".to_owned()),
        Just(String::new()),
        Just("a: b".to_owned()),
        Just("- x".to_owned()),
        Just("# not a comment".to_owned()),
        Just("{{ annotations }}".to_owned()),
        Just("{% raw %}".to_owned()),
        Just("quote \" and ' and \\".to_owned()),
        Just("line\nbreak".to_owned()),
        Just(" leading and trailing ".to_owned()),
        Just("é ü 中文 🚀".to_owned()),
        Just("x\"\n  privileged: true".to_owned()),
    ]
}

fn pairs(
    keys: impl Strategy<Value = String>,
    n: usize,
) -> impl Strategy<Value = Vec<(String, String)>> {
    proptest::collection::vec((keys, tricky()), 0..n).prop_map(|v| {
        let mut seen = std::collections::HashSet::new();
        v.into_iter()
            .filter(|(k, _)| seen.insert(k.clone()))
            .collect()
    })
}

fn container() -> impl Strategy<Value = Value> {
    (
        name(),
        pairs("[A-Z][A-Z_]{0,6}".prop_map(String::from), 3),
        proptest::collection::vec(("[a-z]{1,6}", "/[a-z]{1,6}"), 0..2),
        proptest::collection::vec(1u16..9999, 0..2),
        proptest::collection::vec("[a-z-]{1,8}", 0..3),
    )
        .prop_map(|(name, env, mounts, ports, args)| {
            let mut c = Map::new();
            c.insert("name".into(), json!(name));
            c.insert("image".into(), json!(format!("example.com/{name}:1")));
            if !args.is_empty() {
                c.insert("args".into(), json!(args));
            }
            if !env.is_empty() {
                let env: Vec<Value> = env
                    .into_iter()
                    .map(|(k, v)| json!({"name": k, "value": v}))
                    .collect();
                c.insert("env".into(), json!(env));
            }
            if !mounts.is_empty() {
                let mut seen = std::collections::HashSet::new();
                let m: Vec<Value> = mounts
                    .into_iter()
                    .filter(|(n, p)| seen.insert(n.clone()) && seen.insert(p.clone()))
                    .map(|(n, p)| json!({"name": format!("v-{n}"), "mountPath": p}))
                    .collect();
                c.insert("volumeMounts".into(), json!(m));
            }
            if !ports.is_empty() {
                let p: Vec<Value> = ports.iter().map(|p| json!({"containerPort": p})).collect();
                c.insert("ports".into(), json!(p));
            }
            Value::Object(c)
        })
}

fn unique_by_name(items: Vec<Value>) -> Vec<Value> {
    let mut seen = std::collections::HashSet::new();
    items
        .into_iter()
        .filter(|c| seen.insert(c["name"].as_str().unwrap_or_default().to_owned()))
        .collect()
}

fn workload() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            Just("Deployment"),
            Just("StatefulSet"),
            Just("DaemonSet"),
            Just("CronJob"),
            Just("Pod"),
            Just("ReplicaSet"),
        ],
        name(),
        proptest::option::of(prop_oneof![
            3 => Just("default".to_owned()),
            3 => Just("prod".to_owned()),
            1 => Just("kube-system".to_owned())
        ]),
        pairs("[a-z]{1,5}(\\.example\\.com/[a-z]{1,5})?".prop_map(String::from), 3),
        pairs("app|tier|team".prop_map(String::from), 2),
        proptest::collection::vec(container(), 1..3),
        proptest::collection::vec(container(), 0..2),
        proptest::bool::weighted(0.1),
        proptest::bool::weighted(0.3),
    )
        .prop_map(
            |(kind, name, namespace, annotations, labels, containers, inits, host_network, nulls)| {
                let mut containers = unique_by_name(containers);
                // Fields written empty, as templates leave them: null.
                if nulls {
                    for c in &mut containers {
                        if c.get("env").is_none() {
                            c["env"] = Value::Null;
                        }
                    }
                }
                let names: Vec<&str> = containers.iter().filter_map(|c| c["name"].as_str()).collect();
                let inits: Vec<Value> = unique_by_name(inits)
                    .into_iter()
                    .filter(|c| !names.contains(&c["name"].as_str().unwrap_or_default()))
                    .collect();
                let mut volumes: Vec<Value> = containers
                    .iter()
                    .chain(&inits)
                    .flat_map(|c| c["volumeMounts"].as_array().cloned().unwrap_or_default())
                    .map(|m| json!({"name": m["name"], "emptyDir": {}}))
                    .collect();
                volumes = unique_by_name(volumes);
                let mut spec = Map::new();
                spec.insert("containers".into(), json!(containers));
                if !inits.is_empty() {
                    spec.insert("initContainers".into(), json!(inits));
                }
                if !volumes.is_empty() {
                    spec.insert("volumes".into(), json!(volumes));
                } else if nulls {
                    spec.insert("volumes".into(), Value::Null);
                }
                if host_network {
                    spec.insert("hostNetwork".into(), json!(true));
                }
                if kind == "CronJob" || kind == "Pod" {
                    spec.insert("restartPolicy".into(), json!("OnFailure"));
                }
                let mut pod_meta = Map::new();
                let labels: Map<String, Value> =
                    labels.into_iter().map(|(k, v)| (k, json!(v))).collect();
                if !labels.is_empty() {
                    pod_meta.insert("labels".into(), Value::Object(labels.clone()));
                }
                let annotations: Map<String, Value> =
                    annotations.into_iter().map(|(k, v)| (k, json!(v))).collect();
                if !annotations.is_empty() {
                    pod_meta.insert("annotations".into(), Value::Object(annotations));
                } else if nulls {
                    pod_meta.insert("annotations".into(), Value::Null);
                }
                let mut metadata = json!({"name": name});
                if let Some(ns) = namespace {
                    metadata["namespace"] = json!(ns);
                }
                let pod = json!({"metadata": pod_meta, "spec": spec});
                let api = match kind {
                    "Pod" => "v1",
                    "CronJob" => "batch/v1",
                    _ => "apps/v1",
                };
                let body = match kind {
                    "Pod" => return json!({"apiVersion": api, "kind": kind, "metadata": {"name": metadata["name"], "annotations": pod["metadata"]["annotations"].clone()}, "spec": pod["spec"]}).pipe(strip_nulls),
                    "CronJob" => json!({"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": pod}}}),
                    _ => json!({"selector": {"matchLabels": labels}, "template": pod}),
                };
                json!({"apiVersion": api, "kind": kind, "metadata": metadata, "spec": body})
            },
        )
}

trait Pipe: Sized {
    fn pipe(self, f: impl FnOnce(Self) -> Self) -> Self {
        f(self)
    }
}
impl Pipe for Value {}

fn strip_nulls(mut v: Value) -> Value {
    if let Value::Object(m) = &mut v {
        m.retain(|_, x| !x.is_null());
        for x in m.values_mut() {
            *x = strip_nulls(x.take());
        }
    }
    v
}

fn passive() -> impl Strategy<Value = Value> {
    prop_oneof![
        (name(), pairs("[a-z]{1,6}".prop_map(String::from), 4)).prop_map(|(n, data)| {
            let data: Map<String, Value> = data.into_iter().map(|(k, v)| (k, json!(v))).collect();
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n}, "data": data})
        }),
        name().prop_map(|n| json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": n}, "spec": {"ports": [{"port": 80}]}})),
    ]
}

fn manifests() -> impl Strategy<Value = (Vec<Value>, Style)> {
    (
        proptest::collection::vec(prop_oneof![3 => workload(), 1 => passive()], 1..5),
        style(),
    )
}

/// YAML text of `docs` written in `style`.
fn write(docs: &[Value], style: &Style) -> String {
    let mut out = String::new();
    for (i, doc) in docs.iter().enumerate() {
        if i > 0 || style.start_marker {
            out.push_str("---\n");
        }
        if style.comments {
            out.push_str("# generated\n");
        }
        block(doc, 0, style, &mut out);
    }
    out
}

fn scalar(v: &Value, style: &Style) -> String {
    match v {
        Value::String(s) => {
            let plain = !s.is_empty()
                && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
                && s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                // YAML 1.1's booleans, as Kubernetes reads them.
                && !matches!(
                    s.to_lowercase().as_str(),
                    "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n"
                );
            match style.quoting {
                0 if plain => s.clone(),
                2 if !s.contains(['\n', '\\']) => format!("'{}'", s.replace('\'', "''")),
                _ => serde_json::to_string(s).expect("string"),
            }
        }
        other => other.to_string(),
    }
}

fn block(v: &Value, level: usize, style: &Style, out: &mut String) {
    let pad = " ".repeat(level);
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if style.comments && k == "spec" {
                    out.push_str(&format!("{pad}# the spec\n"));
                }
                let key = scalar(
                    &json!(k),
                    &Style {
                        quoting: 0,
                        ..style.clone()
                    },
                );
                match x {
                    Value::Object(inner) if !inner.is_empty() => {
                        out.push_str(&format!("{pad}{key}:\n"));
                        block(x, level + style.indent, style, out);
                    }
                    Value::Array(items) if !items.is_empty() => {
                        if style.flow_scalar_lists
                            && items.iter().all(|i| !i.is_object() && !i.is_array())
                        {
                            let inner: Vec<String> = items
                                .iter()
                                .map(|i| {
                                    scalar(
                                        i,
                                        &Style {
                                            quoting: 1,
                                            ..style.clone()
                                        },
                                    )
                                })
                                .collect();
                            out.push_str(&format!("{pad}{key}: [{}]\n", inner.join(", ")));
                        } else {
                            out.push_str(&format!("{pad}{key}:\n"));
                            let l = if style.seq_indented {
                                level + style.indent
                            } else {
                                level
                            };
                            block(x, l, style, out);
                        }
                    }
                    Value::Object(_) => out.push_str(&format!("{pad}{key}: {{}}\n")),
                    Value::Null if style.null.is_empty() => out.push_str(&format!("{pad}{key}:\n")),
                    Value::Null => out.push_str(&format!("{pad}{key}: {}\n", style.null)),
                    Value::Array(_) => out.push_str(&format!("{pad}{key}: []\n")),
                    s => out.push_str(&format!("{pad}{key}: {}\n", scalar(s, style))),
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::Object(m) if !m.is_empty() => {
                        // The first entry on the dash's line, the rest under it.
                        let mut text = String::new();
                        block(item, level + 2, style, &mut text);
                        let text = text.trim_start();
                        out.push_str(&format!("{pad}- {text}"));
                    }
                    s => out.push_str(&format!("{pad}- {}\n", scalar(s, style))),
                }
            }
        }
        s => out.push_str(&format!("{pad}{}\n", scalar(s, style))),
    }
}

// ---- configurations --------------------------------------------------------------------

fn config_text() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(
            (
                any::<bool>(),
                any::<bool>(),
                any::<bool>(),
                prop_oneof![Just("after"), Just("before")],
                any::<bool>(),
            ),
            1..3,
        ),
        proptest::option::weighted(
            0.3,
            prop_oneof![
            Just("kinds: [Deployment, StatefulSet]"),
            Just("namespaces: [prod]"),
                Just("names: [\"a*\", \"b*\"]"),
            ],
        ),
        any::<bool>(),
    )
        .prop_map(|(sidecars, matcher, native_jobs)| {
            let mut text = String::from("apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n");
            let mut names = Vec::new();
            for (i, (volume, env, annotate, position, template)) in sidecars.into_iter().enumerate() {
                let n = format!("side{i}");
                text.push_str(&format!("- name: {n}\n  position: {position}\n  containers:\n  - name: {n}\n    image: example.com/{n}:1\n"));
                if template {
                    text.push_str("    args: ['--owner={{ name }}', '--ns={{ namespace }}']\n");
                }
                if volume {
                    text.push_str(&format!("    volumeMounts:\n    - name: {n}-data\n      mountPath: /var/{n}\n  volumes:\n  - name: {n}-data\n    emptyDir: {{}}\n"));
                }
                if env {
                    text.push_str(&format!("  env:\n  - name: {}_ON\n    value: \"yes\"\n", n.to_uppercase()));
                }
                if annotate {
                    text.push_str(&format!("  annotations:\n    {n}.example.com/injected: \"true\"\n"));
                }
                names.push(n);
            }
            text.push_str("rules:\n- name: r\n");
            if let Some(m) = matcher {
                text.push_str(&format!("  match:\n    {m}\n"));
            }
            text.push_str(&format!("  inject: [{}]\n", names.join(", ")));
            if native_jobs {
                // CronJobs get the sidecars as native sidecars (else they are skipped).
                text.push_str("defaults:\n  jobs: native\n");
            }
            text
        })
}

fn load(text: &str) -> Config {
    load_texts(&[("config.yaml".to_owned(), Arc::from(text))], &[])
        .unwrap_or_else(|e| panic!("generated config refused: {e:?}\n{text}"))
}

// ---- running ---------------------------------------------------------------------------

struct Run {
    output: String,
    /// Per document: its objects' values in the input and the operations on each.
    ops: Vec<Vec<kinject::Op>>,
}

fn run(config: &Config, text: &str, mode: Mode) -> Run {
    let input = from_bytes(Source::file("input.yaml".as_ref()), text.as_bytes())
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    let settings = Settings::new(config, None, mode);
    let (file, ()) = process(input, &settings, Values::default());
    assert!(file.errors.is_empty(), "{:?}\n{text}", file.errors);
    let output = kinject::render_yaml(&file)
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .into_text(&file.input);
    let ops = file
        .input
        .documents
        .iter()
        .map(|d| file.doc(d.index).map(|r| r.ops.clone()).unwrap_or_default())
        .collect();
    Run { output, ops }
}

fn values(text: &str) -> Vec<Value> {
    let input =
        from_bytes(Source::stdin(), text.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    input
        .documents
        .iter()
        .map(|d| {
            d.value()
                .map(|p| p.value.clone())
                .unwrap_or_else(|| panic!("unparsed\n{text}"))
        })
        .collect()
}

/// Whether everything `a` holds is in `b`: mappings key by key, lists of named items by
/// name, other lists item by item.
fn kept(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.iter().all(|(k, v)| y.get(k).is_some_and(|w| kept(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => x.iter().all(|item| match item.get("name") {
            Some(n) => y.iter().any(|o| o.get("name") == Some(n) && kept(item, o)),
            None => y.contains(item),
        }),
        // A null (an empty field) is kept by whatever fills it.
        (Value::Null, _) => true,
        _ => a == b,
    }
}

#[test]
fn inject_is_idempotent_reversible_agrees_with_its_patch_and_loses_nothing() {
    let injected = std::cell::Cell::new(0);
    let mut runner = proptest::test_runner::TestRunner::new(settings());
    runner
        .run(&(manifests(), config_text()), |((docs, style), config)| {
            let config = load(&config);
            let input = write(&docs, &style);
            let first = run(&config, &input, Mode::Inject);
            if first.ops.iter().any(|o| !o.is_empty()) {
                injected.set(injected.get() + 1);
            }

            // Nothing lost: every input object, with every field, is in the output.
            let before = values(&input);
            let after = values(&first.output);
            prop_assert_eq!(before.len(), after.len());
            for (b, a) in before.iter().zip(&after) {
                prop_assert!(kept(b, a), "lost:\n{}\n---\n{}", input, first.output);
            }

            // Patch/YAML agreement, with an independent RFC 6902 implementation.
            for ((b, a), ops) in before.iter().zip(&after).zip(&first.ops) {
                let mut patched = b.clone();
                let ops = serde_json::to_value(ops).expect("ops");
                let patch: json_patch::Patch = serde_json::from_value(ops).expect("a patch");
                json_patch::patch(&mut patched, &patch).expect("the patch applies");
                prop_assert_eq!(&patched, a, "patch and YAML differ:\n{}", input);
            }

            // Idempotence.
            let second = run(&config, &first.output, Mode::Inject);
            prop_assert_eq!(&second.output, &first.output, "not idempotent:\n{}", input);

            // Reversibility.
            let back = run(&config, &first.output, Mode::Uninject);
            prop_assert_eq!(
                &back.output,
                &input,
                "uninject does not give the input back"
            );
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    // Not vacuous: most generated streams hold something to inject.
    let cases = settings().cases;
    assert!(
        injected.get() * 2 > cases as usize,
        "{} of {cases} injected",
        injected.get()
    );
}

#[test]
fn a_configuration_that_matches_nothing_passes_every_byte_through() {
    let config = load(
        "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: s\n  containers:\n  - name: s\n    image: example.com/s:1\nrules:\n- name: none\n  match:\n    namespaces: [nowhere]\n  inject: [s]\n",
    );
    let mut runner = proptest::test_runner::TestRunner::new(settings());
    runner
        .run(&manifests(), |(docs, style)| {
            let input = write(&docs, &style);
            let out = run(&config, &input, Mode::Inject);
            prop_assert_eq!(&out.output, &input);
            prop_assert!(out.ops.iter().all(Vec::is_empty));
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn the_generated_manifests_are_what_they_say() {
    // The generator's own check: a written manifest reads back as the values it was
    // written from, whatever the style.
    let mut runner = proptest::test_runner::TestRunner::new(settings());
    runner
        .run(&manifests(), |(docs, style)| {
            let text = write(&docs, &style);
            prop_assert_eq!(values(&text), docs, "{}", text);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}
