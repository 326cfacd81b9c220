//! kinject over every corpus folder: `testdata/corpus/manifests/` (real manifests others wrote;
//! its SOURCES.md) and `testdata/corpus/templated-data/` (other tools' `{{ }}` as data, written
//! here; its README.md), which must never be refused as a Helm template.
//!
//! With a configuration that matches nothing, output is the input byte for byte. With one that
//! injects into every workload (default skips off): exit 0 (or a clean diagnostic for files
//! that are not valid YAML, and never a panic), every workload gets the sidecar, every other
//! object is unchanged, the diff adds lines and removes none, injecting again changes nothing, `uninject` gives the input back byte
//! for byte, and the output passes `kubernetes-validate` wherever the input did.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::{self, objects};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

fn kinject(args: &[&str], stdin: Option<&[u8]>) -> Output {
    common::kinject_with_stdin(&root(), args, stdin.unwrap_or_default())
}

fn config(name: &str) -> String {
    root()
        .join("testdata/corpus")
        .join(name)
        .display()
        .to_string()
}

/// The text kinject reads from a file (UTF-16 decoded).
fn text_of(path: &Path) -> String {
    let bytes = std::fs::read(path).expect("read");
    let input = kinject::from_bytes(kinject::Source::stdin(), &bytes).expect("decodable");
    input.text.to_string()
}

fn has_probe(object: &Value, pointer: &str) -> bool {
    let Some(pod) = object.pointer(pointer) else {
        return false;
    };
    ["/spec/containers", "/spec/initContainers"]
        .iter()
        .any(|list| {
            pod.pointer(list)
                .and_then(Value::as_array)
                .is_some_and(|l| l.iter().any(|c| c["name"] == "kinject-probe"))
        })
}

/// A corpus folder the checks run over: its files, and how much of it the run must cover.
struct Corpus {
    /// Its folder, as failures name it.
    name: &'static str,
    /// Its files (each folder's listing checks them against its index).
    files: fn() -> Vec<PathBuf>,
    /// The fewest files injection must go through.
    injected_at_least: usize,
    /// The fewest input resources kubernetes-validate must pass.
    validated_at_least: usize,
}

/// Every corpus folder.
const CORPORA: [Corpus; 2] = [
    Corpus {
        name: "testdata/corpus/manifests",
        files: common::corpus_files,
        injected_at_least: 251,
        validated_at_least: 101,
    },
    Corpus {
        name: "testdata/corpus/templated-data",
        files: common::templated_data_files,
        injected_at_least: 24,
        validated_at_least: 10,
    },
];

struct Injected {
    path: PathBuf,
    input: String,
    output: String,
}

/// Runs the all-workloads injection over the `files` of a corpus, checking everything but
/// validation.
fn inject_corpus(files: Vec<PathBuf>, failures: &mut Vec<String>) -> Vec<Injected> {
    let all = config("inject-all.yaml");
    let nothing = config("inject-nothing.yaml");
    let mut done = Vec::new();
    for path in files {
        let name = path.display().to_string();
        let p = path.to_str().expect("utf-8 path");
        let out = kinject(&["inject", "-q", "-c", &nothing, p], None);
        match out.status.code() {
            Some(0) => {
                if out.stdout != text_of(&path).as_bytes() {
                    failures.push(format!(
                        "{name}: a config matching nothing changed the file"
                    ));
                }
            }
            Some(2) if !out.stderr.is_empty() => {}
            other => failures.push(format!(
                "{name}: exit {other:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            )),
        }
        let out = kinject(&["inject", "--report", "json", "-c", &all, p], None);
        let stderr = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => {}
            Some(2) if stderr.contains("kinject::input::syntax") => continue,
            other => {
                failures.push(format!("{name}: exit {other:?}: {stderr}"));
                continue;
            }
        }
        let input = text_of(&path);
        let output = String::from_utf8(out.stdout).expect("utf-8 output");
        let (ins, outs) = (objects(&input), objects(&output));
        if ins.len() != outs.len() {
            failures.push(format!(
                "{name}: {} objects in, {} out",
                ins.len(),
                outs.len()
            ));
            continue;
        }
        // JSON Lines: the objects' lines, in document order (then warnings and the summary).
        let report: Vec<Value> = stderr
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l)
                    .unwrap_or_else(|e| panic!("{name}: JSON report: {e}\n{stderr}"))
            })
            .filter(|entry| entry.get("document").is_some())
            .collect();
        for ((i, o), entry) in ins.iter().zip(&outs).zip(&report) {
            match kinject::workload_kind(i, &[]) {
                Some(wk) if entry["reason"] == "no_pod_template" => {
                    if i != o {
                        failures.push(format!(
                            "{name}: {} without a pod template changed",
                            wk.kind
                        ));
                    }
                }
                Some(wk) => {
                    if !has_probe(o, &wk.pod_template) {
                        failures.push(format!(
                            "{name}: {} {} has no sidecar ({entry})",
                            wk.kind, o["metadata"]["name"]
                        ));
                    }
                }
                None => {
                    if i != o {
                        failures.push(format!("{name}: non-workload {} changed", i["kind"]));
                    }
                }
            }
        }
        if let Some(line) = removed_line(&input, &output) {
            failures.push(format!(
                "{name}: the diff input→output removes or changes a line: {line:?}"
            ));
        }
        let again = kinject(&["inject", "-q", "-c", &all, "-"], Some(output.as_bytes()));
        if again.stdout != output.as_bytes() {
            failures.push(format!("{name}: injecting the output again changed it"));
        }
        let back = kinject(
            &["uninject", "-q", "-c", &all, "-"],
            Some(output.as_bytes()),
        );
        if back.stdout != input.as_bytes() {
            failures.push(format!(
                "{name}: uninject does not restore the input\n{}",
                similar::TextDiff::from_lines(&input, String::from_utf8_lossy(&back.stdout))
                    .unified_diff()
            ));
        }
        done.push(Injected {
            path,
            input,
            output,
        });
    }
    done
}

/// The first line the unified diff input→output removes, if any. The one allowed exception
/// here: a file without a final line break whose last line gets content after it (the line
/// gains a break; docs/fidelity.md lists all exceptions, each with a golden case).
fn removed_line(input: &str, output: &str) -> Option<String> {
    let terminate = |s: &str| {
        if s.is_empty() || s.ends_with('\n') {
            s.to_owned()
        } else {
            format!("{s}\n")
        }
    };
    let (input, output) = (terminate(input), terminate(output));
    let diff = similar::TextDiff::from_lines(&input, &output);
    diff.iter_all_changes()
        .find(|c| c.tag() == similar::ChangeTag::Delete)
        .map(|c| c.value().to_owned())
}

/// The run over every corpus, in the order of `CORPORA`: each one's files injected and its
/// failures. Shared by the tests of this file (they run in parallel threads).
fn corpus_run() -> &'static [(Vec<Injected>, Vec<String>)] {
    static RUN: std::sync::OnceLock<Vec<(Vec<Injected>, Vec<String>)>> = std::sync::OnceLock::new();
    RUN.get_or_init(|| {
        CORPORA
            .iter()
            .map(|corpus| {
                let mut failures = Vec::new();
                let done = inject_corpus((corpus.files)(), &mut failures);
                (done, failures)
            })
            .collect()
    })
}

#[test]
fn corpus_inject_and_uninject() {
    let mut failures = Vec::new();
    for (corpus, (done, failed)) in CORPORA.iter().zip(corpus_run()) {
        if done.len() < corpus.injected_at_least {
            failures.push(format!(
                "{}: only {} files injected",
                corpus.name,
                done.len()
            ));
        }
        failures.extend(failed.iter().cloned());
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// (resource, passed) per file, in order, from kubernetes-validate's log lines.
fn validation(files: &[PathBuf]) -> HashMap<String, Vec<(String, bool)>> {
    let mut results: HashMap<String, Vec<(String, bool)>> = HashMap::new();
    for chunk in files.chunks(100) {
        let out = Command::new(common::kubernetes_validate())
            .args(chunk)
            .output()
            .expect("run kubernetes-validate");
        for line in String::from_utf8_lossy(&out.stdout)
            .lines()
            .chain(String::from_utf8_lossy(&out.stderr).lines())
        {
            let (passed, rest) = if let Some(r) = line.strip_prefix("INFO ") {
                (true, r)
            } else if let Some(r) = line.strip_prefix("ERROR ") {
                (false, r)
            } else {
                continue;
            };
            let Some(res_at) = rest.find(" for resource ") else {
                continue;
            };
            let file = rest.split(' ').next().unwrap_or_default().to_owned();
            let resource = rest[res_at + 14..]
                .split(' ')
                .next()
                .unwrap_or_default()
                .to_owned();
            results.entry(file).or_default().push((resource, passed));
        }
    }
    results
}

#[test]
fn corpus_output_validates_wherever_input_did() {
    let mut failures = Vec::new();
    for (corpus, (done, _)) in CORPORA.iter().zip(corpus_run()) {
        validate_corpus(corpus, done, &mut failures);
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Runs kubernetes-validate over the inputs and outputs of a corpus's run (`done`): every
/// resource that passed before injection passes after.
fn validate_corpus(corpus: &Corpus, done: &[Injected], failures: &mut Vec<String>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    for (i, d) in done.iter().enumerate() {
        let input = tmp.path().join(format!("{i}.in.yaml"));
        let output = tmp.path().join(format!("{i}.out.yaml"));
        std::fs::write(&input, &d.input).expect("write");
        std::fs::write(&output, &d.output).expect("write");
        inputs.push(input);
        outputs.push(output);
    }
    let before = validation(&inputs);
    let after = validation(&outputs);
    let mut checked = 0;
    for (i, d) in done.iter().enumerate() {
        let key_in = inputs[i].display().to_string();
        let key_out = outputs[i].display().to_string();
        let passed_in = before.get(&key_in).cloned().unwrap_or_default();
        let got_out = after.get(&key_out).cloned().unwrap_or_default();
        for (resource, ok) in passed_in.iter().filter(|(_, ok)| *ok) {
            let _ = ok;
            checked += 1;
            let still = got_out.iter().any(|(r, ok)| r == resource && *ok);
            if !still {
                failures.push(format!(
                    "{}: {resource} validated before injection, not after",
                    d.path.display()
                ));
            }
        }
    }
    if checked < corpus.validated_at_least {
        failures.push(format!(
            "{}: kubernetes-validate passed only {checked} input resources",
            corpus.name
        ));
    }
}

/// Helm's templates, beside the corpus of other tools' `{{ }}`: each is still refused as a
/// template (exit 2, `kinject::input::template`), not injected as a manifest.
#[test]
fn corpus_helm_templates_still_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let chart = tmp.path().join("web");
    std::fs::create_dir_all(chart.join("templates")).expect("mkdir");
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    )
    .expect("write");
    let deployment = |name: &str, image: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  \
             selector:\n    matchLabels: {{app: web}}\n  template:\n    metadata:\n      \
             labels: {{app: web}}\n    spec:\n      containers:\n      - name: web\n        \
             image: {image}\n"
        )
    };
    let files = [
        (
            tmp.path().join("values.yaml"),
            deployment(
                "web",
                "\"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"",
            ),
        ),
        (
            tmp.path().join("release.yaml"),
            deployment(
                "\"{{ .Release.Name }}-web\"",
                "registry.example.com/web:1.0",
            ),
        ),
        (
            tmp.path().join("include.yaml"),
            deployment(
                "'{{ include \"web.fullname\" . }}'",
                "registry.example.com/web:1.0",
            ),
        ),
        (
            tmp.path().join("tpl.yaml"),
            deployment("web", "\"{{ tpl .Values.imageTemplate . }}\""),
        ),
        (
            chart.join("templates/deployment.yaml"),
            deployment("\"{{ $fullname }}-web\"", "registry.example.com/web:1.0"),
        ),
    ];
    let config = config("inject-all.yaml");
    let mut failures = Vec::new();
    for (path, text) in &files {
        std::fs::write(path, text).expect("write");
        let out = kinject(
            &["inject", "-c", &config, path.to_str().expect("utf-8")],
            None,
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.code() != Some(2) || !stderr.contains("kinject::input::template") {
            failures.push(format!(
                "{}: exit {:?}, not refused as a template: {stderr}",
                path.display(),
                out.status.code()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
