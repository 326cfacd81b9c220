//! Parity: what a running `kinject serve` answers for an object, applied to it, is what
//! `kinject inject -o json` gives for it — over every golden and compat case with a Pod or a
//! workload.
//!
//! A case's command line is read for its configuration (`-c`), template values (`--set`,
//! `--set-json`: the server gets them too) and namespace (`-n`); `-o` and `--output-file`
//! only say where output goes. Skipped, and counted: cases that are not `inject` or
//! `admission` (uninject, explain, krm, schema…), those with flags the server has no
//! equivalent of (`-i`/`--in-place`, `--check`, `-l`, `--namespace-labels`, …), those with no
//! `-c` (a configuration found by lookup), a URL as input, and compat cases refused by design
//! (`result: refused`). A configuration the server refuses at start-up (where `inject` also
//! refuses it, or a rule it cannot decide) is counted apart.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{Map, Value, json};

use crate::common::serve::{self, Pki, Server, connect, post};

/// One case: where it runs, its configuration and what to post.
struct Case {
    name: String,
    dir: PathBuf,
    /// `-c`, `--set` and `--set-json` with their values, as written (relative to `dir`).
    config_args: Vec<String>,
    /// The same with the configuration paths absolute, for the server (which runs elsewhere).
    server_args: Vec<String>,
    namespace: Option<String>,
    objects: Vec<(Value, Option<String>)>,
    /// The labels of the namespaces the input's `Namespace` objects give, by name: what the
    /// cluster has, for `inject` (`--namespace-labels`) and the webhook's namespaceSelector.
    namespace_labels: BTreeMap<String, Map<String, Value>>,
}

fn case_args(dir: &Path, file: &str) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(dir.join(file)).ok()?;
    Some(text.split_whitespace().map(str::to_owned).collect())
}

/// The objects of a YAML or JSON text (none where it does not read).
fn objects(text: &[u8]) -> Vec<Value> {
    crate::common::read_objects(text).unwrap_or_default()
}

/// A Pod, or an object with a pod template.
fn is_pod_or_workload(v: &Value) -> bool {
    let spec = &v["spec"];
    (v["kind"] == "Pod" && spec["containers"].is_array())
        || spec["template"]["spec"].is_object()
        || spec["jobTemplate"]["spec"]["template"]["spec"].is_object()
}

fn files_of(path: &Path) -> Vec<PathBuf> {
    if !path.is_dir() {
        return vec![path.to_owned()];
    }
    let mut files: Vec<PathBuf> = walkdir(path)
        .into_iter()
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
        })
        .collect();
    files.sort();
    files
}

fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(walkdir(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Reads a case's command line; the reason it is skipped, or the case.
fn parse(
    name: String,
    dir: &Path,
    args: &[String],
    stdin: Option<Vec<u8>>,
) -> Result<Case, String> {
    let command = args.first().map(String::as_str).unwrap_or_default();
    if !matches!(command, "inject" | "admission") {
        return Err(format!("`{command}`, not inject or admission"));
    }
    let mut case = Case {
        name,
        dir: dir.to_owned(),
        config_args: Vec::new(),
        server_args: Vec::new(),
        namespace: None,
        objects: Vec::new(),
        namespace_labels: BTreeMap::new(),
    };
    let mut inputs = Vec::new();
    let mut rest = args[1..].iter();
    while let Some(arg) = rest.next() {
        let mut value = || {
            rest.next()
                .cloned()
                .ok_or(format!("`{arg}` without a value"))
        };
        match arg.as_str() {
            "-c" | "--config" => {
                let v = value()?;
                let absolute = dir
                    .join(&v)
                    .canonicalize()
                    .map_err(|_| "a configuration file that does not exist".to_owned())?;
                case.config_args.extend(["-c".to_owned(), v]);
                case.server_args
                    .extend(["-c".to_owned(), absolute.display().to_string()]);
            }
            "--set" | "--set-json" => {
                let v = value()?;
                case.config_args.extend([arg.clone(), v.clone()]);
                case.server_args.extend([arg.clone(), v]);
            }
            "-n" | "--namespace" => case.namespace = Some(value()?),
            "-o" | "--output-file" => {
                value()?;
            }
            flag if flag.starts_with('-') && flag != "-" => {
                return Err(format!("`{flag}`: no equivalent in serve"));
            }
            input if input.starts_with("http") => return Err("a URL as input".to_owned()),
            input => inputs.push(input.to_owned()),
        }
    }
    if case.config_args.is_empty() {
        return Err("no -c: a configuration found by lookup".to_owned());
    }
    if command == "admission" {
        let stdin = stdin.ok_or("an admission run without a review")?;
        for review in objects(&stdin) {
            let ns = review["request"]["namespace"].as_str().map(str::to_owned);
            case.objects.push((review["request"]["object"].clone(), ns));
        }
    } else if inputs.is_empty() {
        for object in objects(&stdin.unwrap_or_default()) {
            case.objects.push((object, None));
        }
    } else {
        for input in inputs {
            for file in files_of(&dir.join(input)) {
                let text = std::fs::read(&file).unwrap_or_default();
                case.objects
                    .extend(objects(&text).into_iter().map(|o| (o, None)));
            }
        }
    }
    for (object, _) in &case.objects {
        if object["kind"] == "Namespace"
            && let Some(name) = object["metadata"]["name"].as_str()
        {
            let labels = object["metadata"]["labels"].as_object().cloned();
            case.namespace_labels
                .insert(name.to_owned(), labels.unwrap_or_default());
        }
    }
    case.objects.retain(|(o, _)| is_pod_or_workload(o));
    if case.objects.is_empty() {
        return Err("no Pod or workload in the input".to_owned());
    }
    Ok(case)
}

/// The golden cases (`testdata/cases/*/`).
fn golden(skipped: &mut BTreeMap<String, usize>) -> Vec<Case> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cases");
    let mut cases = Vec::new();
    for name in crate::common::entries(&root) {
        let dir = root.join(&name);
        let input = ["input.yaml", "input.json", "input"]
            .into_iter()
            .find(|f| dir.join(f).exists())
            .unwrap_or("input.yaml");
        let args = case_args(&dir, "args").unwrap_or_else(|| {
            ["inject", "-c", "config.yaml", input]
                .map(str::to_owned)
                .to_vec()
        });
        let stdin = std::fs::read(dir.join("stdin.yaml")).ok();
        match parse(format!("cases/{name}"), &dir, &args, stdin) {
            Ok(case) => cases.push(case),
            Err(why) => *skipped.entry(why).or_default() += 1,
        }
    }
    cases
}

/// The compat cases (`testdata/compat/*/…/case.yaml`).
fn compat(skipped: &mut BTreeMap<String, usize>) -> Vec<Case> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/compat");
    let mut dirs: Vec<PathBuf> = walkdir(&root)
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "case.yaml"))
        .filter_map(|p| p.parent().map(Path::to_owned))
        .collect();
    dirs.sort();
    let mut cases = Vec::new();
    for dir in dirs {
        let case = objects(&std::fs::read(dir.join("case.yaml")).expect("case.yaml"))
            .into_iter()
            .next()
            .unwrap_or_default();
        if case["result"] == "refused" {
            *skipped
                .entry("compat: refused by design".to_owned())
                .or_default() += 1;
            continue;
        }
        let args: Vec<String> = case["run"]
            .as_str()
            .unwrap_or("inject -c config.yaml input.yaml")
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        let stdin = case["stdin"]
            .as_str()
            .map(|f| std::fs::read(dir.join(f)).expect("the case's stdin"));
        let name = dir
            .strip_prefix(&root)
            .unwrap_or(&dir)
            .display()
            .to_string();
        match parse(format!("compat/{name}"), &dir, &args, stdin) {
            Ok(case) => cases.push(case),
            Err(why) => *skipped.entry(why).or_default() += 1,
        }
    }
    cases
}

/// What checking a group of cases found.
#[derive(Default)]
struct Tally {
    /// Objects injected by both and equal.
    equal: usize,
    /// Objects `inject` refuses, denied by the server.
    denied: usize,
    /// Objects in namespaces the webhook's namespaceSelector leaves out: never sent.
    not_sent: usize,
    cases: usize,
    /// Cases whose configuration both the server (at start-up) and `inject` refuse.
    config_refused: usize,
    /// Cases whose configuration the server refuses at start-up, `inject` not.
    refused_at_start: Vec<String>,
    failures: Vec<String>,
}

/// `kinject inject -o json` of one object: the result, or None where it refuses it.
fn inject(case: &Case, object: &Value, namespace: Option<&str>) -> Option<Value> {
    let mut args: Vec<&str> = vec!["inject", "-o", "json"];
    args.extend(case.config_args.iter().map(String::as_str));
    if let Some(ns) = namespace {
        args.extend(["-n", ns]);
    }
    let labels: Vec<String> = case
        .namespace_labels
        .iter()
        .flat_map(|(ns, labels)| {
            labels
                .iter()
                .map(move |(k, v)| format!("{ns}={k}={}", v.as_str().unwrap_or_default()))
        })
        .collect();
    for label in &labels {
        args.extend(["--namespace-labels", label]);
    }
    args.push("-");
    // kinject refuses a raw line separator (U+2028, U+2029, U+0085) in a text, as YAML
    // readers disagree on it; serde_json writes them raw, and only inside strings.
    let stdin = serde_json::to_string(object)
        .expect("JSON")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
        .replace('\u{85}', "\\u0085");
    let out = crate::common::kinject_with_stdin(&case.dir, &args, stdin.as_bytes());
    if !out.status.success() {
        return None;
    }
    Some(serde_json::from_slice(&out.stdout).expect("inject -o json writes JSON"))
}

/// The webhook configuration's `namespaceSelector` that `--print-manifests` makes for the
/// case's configuration: the API server sends nothing of the namespaces it does not select.
fn webhook_namespace_selector(case: &Case) -> Option<Value> {
    let mut args = vec![
        "serve",
        "--print-manifests",
        "--image",
        "registry.example.com/kinject:0.1.0",
    ];
    args.extend(case.server_args.iter().map(String::as_str));
    let out = crate::common::kinject_with_stdin(&case.dir, &args, b"");
    assert!(
        out.status.success(),
        "{}: --print-manifests refuses what the server accepts: {}",
        case.name,
        String::from_utf8_lossy(&out.stderr)
    );
    objects(&out.stdout)
        .into_iter()
        .find(|o| o["kind"] == "MutatingWebhookConfiguration")
        .map(|o| o["webhooks"][0]["namespaceSelector"].clone())
        .filter(Value::is_object)
}

/// Whether a label selector (`matchLabels`, `matchExpressions`) selects `labels`, as the API
/// server decides it.
fn selects(selector: &Value, labels: &Map<String, Value>) -> bool {
    let label = |k: &str| labels.get(k).and_then(Value::as_str);
    let by_labels = selector["matchLabels"]
        .as_object()
        .is_none_or(|m| m.iter().all(|(k, v)| label(k) == v.as_str()));
    let by_expressions = selector["matchExpressions"].as_array().is_none_or(|exprs| {
        exprs.iter().all(|e| {
            let key = e["key"].as_str().unwrap_or_default();
            let values: Vec<&str> = e["values"]
                .as_array()
                .map(|v| v.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            match e["operator"].as_str() {
                Some("In") => label(key).is_some_and(|v| values.contains(&v)),
                Some("NotIn") => label(key).is_none_or(|v| !values.contains(&v)),
                Some("Exists") => label(key).is_some(),
                Some("DoesNotExist") => label(key).is_none(),
                other => panic!("a selector operator the test does not know: {other:?}"),
            }
        })
    });
    by_labels && by_expressions
}

/// Starts one server for cases that share a configuration, and checks each of their objects.
fn check_group(pki: &Pki, cases: &[&Case], tally: &mut Tally) {
    let mut args = cases[0].server_args.clone();
    args.extend(pki.server_args());
    let server = match Server::try_start(&cases[0].dir, &args) {
        Ok(server) => server,
        // Where `inject` refuses every object too, the configuration is refused by both.
        Err(e) => {
            for case in cases {
                let injected = case.objects.iter().any(|(o, ns)| {
                    let ns = ns.as_deref().or(case.namespace.as_deref());
                    inject(case, o, ns).is_some()
                });
                if injected {
                    tally
                        .refused_at_start
                        .push(format!("{}: {}", case.name, e.stderr));
                } else {
                    tally.config_refused += 1;
                }
            }
            return;
        }
    };
    let selector = webhook_namespace_selector(cases[0]);
    let client = serve::ClientOptions::trusting(&[&pki.ca.pem()]).config();
    let mut tls = connect(server.addr, &client).expect("connect");
    for case in cases {
        tally.cases += 1;
        for (i, (object, review_ns)) in case.objects.iter().enumerate() {
            let namespace = object["metadata"]["namespace"]
                .as_str()
                .map(str::to_owned)
                .or_else(|| review_ns.clone())
                .or_else(|| case.namespace.clone());
            let uid = format!("{}#{i}", case.name);
            if let Some(selector) = &selector {
                let mut labels = namespace
                    .as_ref()
                    .and_then(|ns| case.namespace_labels.get(ns))
                    .cloned()
                    .unwrap_or_default();
                if let Some(ns) = &namespace {
                    labels.insert("kubernetes.io/metadata.name".to_owned(), json!(ns));
                }
                if !selects(selector, &labels) {
                    tally.not_sent += 1;
                    continue;
                }
            }
            let review = serve::review(object, namespace.as_deref(), &uid);
            let response = match post(&mut tls, &review) {
                Ok(r) => r,
                Err(e) => {
                    tally.failures.push(format!("{uid}: {e}\n{}", server.log()));
                    tls = connect(server.addr, &client).expect("connect again");
                    continue;
                }
            };
            let answer = response.json();
            let expected = inject(case, object, namespace.as_deref());
            let allowed = answer["response"]["allowed"] == true;
            let outcome = match (&expected, allowed) {
                _ if response.status != 200 || answer["response"]["uid"] != uid.as_str() => {
                    Err(format!("HTTP {}: {answer}", response.status))
                }
                (None, false) => {
                    tally.denied += 1;
                    Ok(())
                }
                (None, true) => Err(format!("inject refuses it, serve allows it: {answer}")),
                (Some(_), false) => Err(format!("inject injects it, serve denies it: {answer}")),
                (Some(want), true) => match serve::patched(object, &answer) {
                    Ok(got) if got == *want => {
                        tally.equal += 1;
                        Ok(())
                    }
                    Ok(got) => Err(format!(
                        "differs\n{}",
                        similar::TextDiff::from_lines(
                            serde_json::to_string_pretty(want).expect("JSON"),
                            serde_json::to_string_pretty(&got).expect("JSON"),
                        )
                        .unified_diff()
                        .header("inject -o json", "serve's patch applied")
                    )),
                    Err(e) => Err(e),
                },
            };
            if let Err(e) = outcome {
                tally.failures.push(format!("{uid}: {e}"));
            }
        }
    }
}

#[test]
fn serve_answers_what_inject_gives() {
    // kinject's threads have 16 MiB stacks; a debug build needs them to read the deepest
    // inputs of the hostile cases.
    std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(check_all)
        .expect("thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
}

fn check_all() {
    let mut skipped = BTreeMap::new();
    let golden = golden(&mut skipped);
    let compat = compat(&mut skipped);
    let (golden_cases, compat_cases) = (golden.len(), compat.len());
    // One server per configuration (the same files and values).
    let mut groups: BTreeMap<Vec<String>, Vec<&Case>> = BTreeMap::new();
    for case in golden.iter().chain(&compat) {
        groups
            .entry(case.server_args.clone())
            .or_default()
            .push(case);
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let pki = Pki::new(dir.path());
    let queue = Mutex::new(groups.into_values().collect::<Vec<_>>());
    let total = Mutex::new(Tally::default());
    std::thread::scope(|scope| {
        for _ in 0..3 {
            let worker = std::thread::Builder::new().stack_size(16 << 20);
            worker
                .spawn_scoped(scope, || {
                    loop {
                        let Some(group) = queue.lock().expect("queue").pop() else {
                            break;
                        };
                        let mut tally = Tally::default();
                        check_group(&pki, &group, &mut tally);
                        let mut total = total.lock().expect("tally");
                        total.equal += tally.equal;
                        total.denied += tally.denied;
                        total.not_sent += tally.not_sent;
                        total.cases += tally.cases;
                        total.config_refused += tally.config_refused;
                        total.refused_at_start.extend(tally.refused_at_start);
                        total.failures.extend(tally.failures);
                    }
                })
                .expect("thread");
        }
    });
    let total = total.into_inner().expect("tally");
    let summary = format!(
        "{golden_cases} golden and {compat_cases} compat cases with a Pod or workload; {} checked \
         against a server: {} objects equal, {} denied as inject refuses them, {} in namespaces the webhook's namespaceSelector leaves out; {} configurations \
         refused by both; refused by serve only, at start-up: {:?}; skipped: {skipped:?}",
        total.cases,
        total.equal,
        total.denied,
        total.not_sent,
        total.config_refused,
        total.refused_at_start,
    );
    eprintln!("{summary}");
    assert!(
        total.failures.is_empty(),
        "{} failures:\n{}\n\n{summary}",
        total.failures.len(),
        total.failures.join("\n\n")
    );
    assert!(golden_cases >= 100 && compat_cases >= 150, "{summary}");
    assert!(total.equal >= 300 && total.denied >= 10, "{summary}");
}
