//! The other injectors' own test suites, ported: every folder under `testdata/compat/<injector>/`
//! that holds a `case.yaml` is one upstream test case (docs/compat.md, "Verified against").
//!
//! `case.yaml` says where the case comes from and what upstream expects:
//!
//! ```yaml
//! upstream: pkg/webhook/pod/mutating/sidecarset_test.go TestMergeSidecarSecrets (1st case)
//! run: inject -c sidecarset.yaml input.yaml     # default: inject -c config.yaml input.yaml
//! stdin: review.json                            # optional: a file piped in
//! result: match                                 # match | differs | refused
//! compat: "text of docs/compat.md"              # differs and refused: the row that says so
//! checks:                                       # match and differs: what the output holds
//!   - at: pod.spec.imagePullSecrets[*].name
//!     is: [s2, s3, s0, s1]
//! error: "substring of stderr"                  # refused (and a match or differs that
//!                                               # refuses): exit 2, nothing on stdout
//! patch: ../../fixtures/patch/x.json            # optional, an `admission` run: upstream's
//!                                               # expected JSON patch (below)
//! ```
//!
//! A check's `at` is a path into one output object (`doc: N`, default 0): `pod.` starts at the
//! object's pod (the object itself, or its pod template), `review.` at the whole
//! AdmissionReview of an `admission` run (whose objects are the request's object with the
//! response's patch applied). Segments: `key`, `["key.with/dots"]`, `[N]`, `[*]` (every item)
//! and `[name=x]` (the item whose `name` is `x`). Then exactly one of `is` (equal), `absent:
//! true`, `json` (a string that parses to this JSON value) or `contains` (a list holding these
//! items). `stderr: [..]` lists substrings the report must hold. `patch` checks the whole pod:
//! the request's object with kinject's response applied equals it with upstream's expected
//! patch applied, as the API server applies what those webhooks send (`apply_webhook_patch`),
//! both without Go's `resources: {}` and kinject's status annotation (docs/compat.md, "What
//! all formats share").
//!
//! `match` means every check is what the upstream test asserts (or, with `error`, that kinject
//! refuses where upstream expects an error). `differs` means kinject deliberately gives another
//! result, the one the checks state (or, with `error` instead of `checks`, refuses where
//! upstream gives a pod, because what upstream does would break one of kinject's guarantees or
//! is what the API server or the injector's own validating webhook refuses), and `compat`
//! quotes the row of docs/compat.md that says so (the test checks that the row is there).
//! `refused` means kinject refuses with file and line, as `compat` quotes, because it would
//! need what a manifest does not hold: state only the cluster has. Each injector's counts are in docs/compat.md
//! and checked here: they cannot drop without the table changing.
//!
//! `KINJECT_CASE=name[,name…]` runs only the cases whose folder name contains one of them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common;

const INJECTORS: [&str; 4] = ["kruise", "salesforce", "tumblr", "expedia"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

/// Every case folder of one injector, sorted.
fn cases(injector: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root().join("testdata/compat").join(injector)];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "case.yaml") {
                found.push(dir.clone());
            }
        }
    }
    found.sort();
    found
}

fn yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    common::objects_of_documents(&text)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("{}: empty", path.display()))
}

fn text<'a>(case: &'a Value, key: &str) -> Option<&'a str> {
    case.get(key).and_then(Value::as_str)
}

/// The objects a run gives, and the whole AdmissionReview of an `admission` run with the
/// object of its request.
struct Output {
    objects: Vec<Value>,
    review: Option<Value>,
    request_object: Option<Value>,
}

fn output_of(args: &[String], stdin: &[u8], stdout: &[u8]) -> Result<Output, String> {
    let stdout = String::from_utf8_lossy(stdout);
    if args.first().map(String::as_str) != Some("admission") {
        return Ok(Output {
            objects: common::objects(&stdout),
            review: None,
            request_object: None,
        });
    }
    let review: Value = serde_json::from_str(&stdout).map_err(|e| format!("stdout: {e}"))?;
    let request: Value = serde_json::from_slice(stdin)
        .or_else(|_| {
            let text = String::from_utf8_lossy(stdin);
            common::objects_of_documents(&text)
                .into_iter()
                .next()
                .ok_or("empty")
        })
        .map_err(|e| format!("stdin: {e}"))?;
    let request_object = request["request"]["object"].clone();
    let object = crate::common::serve::patched(&request_object, &review)?;
    Ok(Output {
        objects: vec![object],
        review: Some(review),
        request_object: Some(request_object),
    })
}

/// The pod of an object: itself, or its pod template.
fn pod_of(object: &Value) -> &Value {
    if object["kind"] == "Pod" || object.get("kind").is_none() {
        return object;
    }
    let spec = &object["spec"];
    if spec["jobTemplate"].is_object() {
        return &spec["jobTemplate"]["spec"]["template"];
    }
    &spec["template"]
}

fn segments(path: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let end = if let Some(quoted) = after.strip_prefix('"') {
                1 + quoted
                    .find('"')
                    .ok_or(format!("unclosed quote in `{path}`"))?
                    + 1
            } else {
                after.find(']').ok_or(format!("unclosed `[` in `{path}`"))?
            };
            if !after[end..].starts_with(']') {
                return Err(format!("unclosed `[` in `{path}`"));
            }
            out.push(format!("[{}]", &after[..end]));
            rest = &after[end + 1..];
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            out.push(rest[..end].to_owned());
            rest = &rest[end..];
        }
        rest = rest.strip_prefix('.').unwrap_or(rest);
    }
    Ok(out)
}

/// The values at `path` under `value` (several after a `[*]`).
fn select(values: Vec<Value>, segment: &str, spread: &mut bool) -> Vec<Value> {
    let inner = segment.strip_prefix('[').and_then(|s| s.strip_suffix(']'));
    let step = |v: &Value| -> Vec<Value> {
        match inner {
            None => v.get(segment).cloned().into_iter().collect(),
            Some("*") => v.as_array().cloned().unwrap_or_default(),
            Some(q) if q.starts_with('"') => {
                v.get(q.trim_matches('"')).cloned().into_iter().collect()
            }
            Some(q) => {
                if let Some((key, want)) = q.split_once('=') {
                    let items = v.as_array().map(Vec::as_slice).unwrap_or_default();
                    items
                        .iter()
                        .filter(|i| i[key].as_str() == Some(want))
                        .take(1)
                        .cloned()
                        .collect()
                } else {
                    let n: usize = q.parse().expect("an index");
                    v.get(n).cloned().into_iter().collect()
                }
            }
        }
    };
    if inner == Some("*") {
        *spread = true;
    }
    values.iter().flat_map(step).collect()
}

fn check(output: &Output, c: &Value) -> Result<(), String> {
    let at = text(c, "at").ok_or("a check without `at`")?;
    let doc = c.get("doc").and_then(Value::as_u64).unwrap_or(0) as usize;
    let mut parts = segments(at)?;
    let start = match parts.first().map(String::as_str) {
        Some("review") => {
            parts.remove(0);
            output
                .review
                .clone()
                .ok_or("`review.` in a run without one")?
        }
        Some("pod") => {
            parts.remove(0);
            let object = output.objects.get(doc).ok_or(format!("no object {doc}"))?;
            pod_of(object).clone()
        }
        _ => output
            .objects
            .get(doc)
            .ok_or(format!("no object {doc}"))?
            .clone(),
    };
    let mut spread = false;
    let mut values = vec![start];
    for part in &parts {
        values = select(values, part, &mut spread);
    }
    let found = if spread {
        Some(Value::Array(values))
    } else {
        values.into_iter().next()
    };
    let show = |v: &Option<Value>| v.as_ref().map_or("<absent>".to_owned(), Value::to_string);
    if let Some(want) = c.get("is") {
        if found.as_ref() != Some(want) {
            return Err(format!("{at}: expected {want}, found {}", show(&found)));
        }
    } else if c.get("absent").is_some() {
        if found.is_some() {
            return Err(format!("{at}: expected absent, found {}", show(&found)));
        }
    } else if let Some(want) = c.get("json") {
        let parsed = found
            .as_ref()
            .and_then(Value::as_str)
            .and_then(|s| serde_json::from_str::<Value>(s).ok());
        if parsed.as_ref() != Some(want) {
            return Err(format!(
                "{at}: expected JSON {want}, found {}",
                show(&found)
            ));
        }
    } else if let Some(want) = c.get("contains").and_then(Value::as_array) {
        let items = found.as_ref().and_then(Value::as_array);
        let missing: Vec<&Value> = want
            .iter()
            .filter(|w| !items.is_some_and(|i| i.contains(w)))
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "{at}: expected to contain {missing:?}, found {}",
                show(&found)
            ));
        }
    } else {
        return Err(format!(
            "{at}: a check needs `is`, `absent`, `json` or `contains`"
        ));
    }
    Ok(())
}

/// Applies an upstream webhook's JSON patch to a pod the way the API server's patching treats
/// what those webhooks send: `add` of `…/-` (or of a whole list) to a list the pod lacks
/// creates it, and `replace` of a field the pod lacks adds it.
fn apply_webhook_patch(pod: &mut Value, ops: &Value) -> Result<(), String> {
    for op in ops.as_array().ok_or("a patch is a list")? {
        let path = op["path"].as_str().ok_or("an operation without `path`")?;
        let tokens: Vec<String> = path
            .split('/')
            .skip(1)
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect();
        let (last, parents) = tokens.split_last().ok_or("a path below the root")?;
        let index = |t: &str| t.parse::<usize>().map_err(|e| format!("{path}: {e}"));
        let mut at = &mut *pod;
        for (i, t) in parents.iter().enumerate() {
            // What a missing step becomes: a list when the next token appends to it.
            let next_is_list = tokens[i + 1] == "-";
            at = match at {
                Value::Array(items) => {
                    items.get_mut(index(t)?).ok_or(format!("{path}: no item"))?
                }
                Value::Object(m) => m.entry(t.clone()).or_insert_with(|| {
                    if next_is_list {
                        serde_json::json!([])
                    } else {
                        serde_json::json!({})
                    }
                }),
                other => return Err(format!("cannot go into {other} at {path}")),
            };
        }
        let value = op.get("value").cloned().unwrap_or(Value::Null);
        match (op["op"].as_str(), at) {
            (Some("add"), Value::Array(items)) if last == "-" => items.push(value),
            (Some("add"), Value::Array(items)) => items.insert(index(last)?, value),
            (Some("replace"), Value::Array(items)) => {
                *items
                    .get_mut(index(last)?)
                    .ok_or(format!("{path}: no item"))? = value
            }
            (Some("remove"), Value::Array(items)) => {
                items.remove(index(last)?);
            }
            (Some("add" | "replace"), Value::Object(m)) if last != "-" => {
                m.insert(last.clone(), value);
            }
            (Some("remove"), Value::Object(m)) => {
                m.shift_remove(last);
            }
            (other, _) => return Err(format!("cannot apply {other:?} at {path}")),
        }
    }
    Ok(())
}

/// `value` without what Go adds to every container it serialises and kinject does not
/// (`resources: {}`), nor kinject's status annotation.
fn as_compared(mut value: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(m) => {
                if m.get("resources") == Some(&serde_json::json!({})) {
                    m.shift_remove("resources");
                }
                m.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    if let Some(Value::Object(a)) = value.pointer_mut("/metadata/annotations") {
        a.shift_remove("kinject.dev/status");
    }
    value
}

/// The `patch` check: kinject's pod is the request's object with upstream's patch applied.
fn check_upstream_patch(output: &Output, file: &Path) -> Result<(), String> {
    let request = output
        .request_object
        .clone()
        .ok_or("`patch` in a run that is not `admission`")?;
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let ops: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut expected = request;
    apply_webhook_patch(&mut expected, &ops)?;
    let expected = as_compared(expected);
    let found = as_compared(output.objects.first().cloned().unwrap_or_default());
    if found == expected {
        return Ok(());
    }
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default();
    Err(format!(
        "the pod is not what upstream's patch {} gives:\nkinject\n{}\nupstream\n{}",
        file.display(),
        pretty(&found),
        pretty(&expected)
    ))
}

fn words(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Runs one case; its result (`match`, `differs` or `refused`), or what went wrong.
fn run_case(dir: &Path, compat_md: &str) -> Result<String, String> {
    let case = yaml(&dir.join("case.yaml"));
    let upstream = text(&case, "upstream").ok_or("no `upstream`: which test is this?")?;
    if upstream.trim().is_empty() {
        return Err("an empty `upstream`".into());
    }
    let result = text(&case, "result").ok_or("no `result`")?.to_owned();
    let args: Vec<String> = text(&case, "run")
        .unwrap_or("inject -c config.yaml input.yaml")
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    let stdin = match text(&case, "stdin") {
        Some(file) => std::fs::read(dir.join(file)).map_err(|e| format!("{file}: {e}"))?,
        None => Vec::new(),
    };
    if result != "match" {
        let quoted = text(&case, "compat").ok_or(format!(
            "a `{result}` case quotes docs/compat.md in `compat`"
        ))?;
        if !words(compat_md).contains(&words(quoted)) {
            return Err(format!("docs/compat.md does not say: {quoted}"));
        }
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = common::kinject_with_stdin(dir, &argv, &stdin);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    let refuses = result == "refused" || case.get("error").is_some();
    if refuses && case.get("checks").is_some() {
        return Err("a case that refuses has no `checks`: nothing is written".into());
    }
    if refuses {
        let want = text(&case, "error").ok_or("a refused case states its `error`")?;
        if code != Some(2) || !out.stdout.is_empty() || !stderr.contains(want) {
            return Err(format!(
                "expected a refusal (exit 2, nothing written) saying `{want}`; exit {code:?}, \
                 {} bytes written, stderr:\n{stderr}",
                out.stdout.len()
            ));
        }
        return Ok(result);
    }
    if !["match", "differs"].contains(&result.as_str()) {
        return Err(format!("unknown result `{result}`"));
    }
    let expected_code = case.get("exit").and_then(Value::as_i64).unwrap_or(0) as i32;
    if code != Some(expected_code) {
        return Err(format!(
            "exit {code:?}, expected {expected_code}; stderr:\n{stderr}"
        ));
    }
    let output = output_of(&args, &stdin, &out.stdout)?;
    let checks = case["checks"].as_array().cloned().unwrap_or_default();
    if checks.is_empty() {
        return Err("no `checks`: a case asserts something".into());
    }
    let mut failed: Vec<String> = checks
        .iter()
        .filter_map(|c| check(&output, c).err())
        .collect();
    if let Some(file) = text(&case, "patch") {
        failed.extend(check_upstream_patch(&output, &dir.join(file)).err());
    }
    let wanted = case["stderr"].as_array().cloned().unwrap_or_default();
    let missing: Vec<String> = wanted
        .iter()
        .filter_map(Value::as_str)
        .filter(|w| !stderr.contains(w))
        .map(|w| format!("the report lacks `{w}`"))
        .collect();
    if failed.is_empty() && missing.is_empty() {
        Ok(result)
    } else {
        Err(format!(
            "{}\nstderr:\n{stderr}",
            [failed, missing].concat().join("\n")
        ))
    }
}

/// The counts docs/compat.md states for `injector`: (ported, match, differs, refused).
fn stated_counts(compat_md: &str, injector: &str) -> Option<[usize; 4]> {
    let row = compat_md
        .lines()
        .find(|l| l.starts_with(&format!("| {injector} |")))?;
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    let numbers: Vec<usize> = cells.iter().filter_map(|c| c.parse().ok()).collect();
    numbers.get(..4)?.try_into().ok()
}

#[test]
fn upstream_suites_pass() {
    let compat_md = std::fs::read_to_string(root().join("docs/compat.md")).expect("compat.md");
    let only = std::env::var("KINJECT_CASE").ok();
    let mut failures = Vec::new();
    let mut counts: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    for injector in INJECTORS {
        let tally = counts.entry(injector).or_default();
        for dir in cases(injector) {
            let name = dir
                .strip_prefix(root())
                .unwrap_or(&dir)
                .display()
                .to_string();
            if only
                .as_deref()
                .is_some_and(|o| !o.split(',').any(|n| name.contains(n)))
            {
                continue;
            }
            match run_case(&dir, &compat_md) {
                Ok(result) => {
                    tally[0] += 1;
                    let slot = ["match", "differs", "refused"]
                        .iter()
                        .position(|r| *r == result)
                        .expect("a known result");
                    tally[slot + 1] += 1;
                }
                Err(e) => failures.push(format!("{name}:\n{e}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} upstream case(s) fail:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    if only.is_some() {
        return;
    }
    let mut wrong = Vec::new();
    for (injector, tally) in &counts {
        if stated_counts(&compat_md, injector) != Some(*tally) {
            wrong.push(format!(
                "{injector}: ported {}, match {}, differs {}, refused {}",
                tally[0], tally[1], tally[2], tally[3]
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/compat.md's \"Verified against\" table states other counts; the cases give:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn a_check_path_reads_keys_with_dots_and_selects_items() {
    let object = serde_json::json!({
        "kind": "Deployment",
        "spec": {"template": {"metadata": {"annotations": {"a.b/c": "{\"x\":1}"}},
                 "spec": {"containers": [{"name": "app", "image": "i"}, {"name": "s", "image": "j"}]}}}
    });
    let output = Output {
        objects: vec![object],
        review: None,
        request_object: None,
    };
    let ok = |c: Value| check(&output, &c);
    assert_eq!(
        ok(serde_json::json!({"at": "pod.spec.containers[*].name", "is": ["app", "s"]})),
        Ok(())
    );
    assert_eq!(
        ok(serde_json::json!({"at": "pod.spec.containers[name=s].image", "is": "j"})),
        Ok(())
    );
    assert_eq!(
        ok(serde_json::json!({"at": "pod.metadata.annotations[\"a.b/c\"]", "json": {"x": 1}})),
        Ok(())
    );
    assert_eq!(
        ok(serde_json::json!({"at": "pod.spec.containers[1].name", "is": "s"})),
        Ok(())
    );
    assert_eq!(
        ok(serde_json::json!({"at": "pod.spec.volumes", "absent": true})),
        Ok(())
    );
    assert!(
        ok(serde_json::json!({"at": "pod.spec.containers[*].name", "is": ["s", "app"]})).is_err()
    );
    assert!(
        ok(serde_json::json!({"at": "pod.spec.containers[*].name", "contains": ["x"]})).is_err()
    );
    assert!(ok(serde_json::json!({"at": "pod.spec.containers"})).is_err());
}

/// The first and last lines of the part of each injector's README that lists its cases,
/// written from the cases by `readmes_list_the_cases`.
const CASES_BEGIN: &str = "<!-- The counts and the list of cases below are written from the cases by \
tests/compat.rs (`KINJECT_BLESS=1 cargo test --test it compat::`); do not edit them. -->";
const CASES_END: &str = "<!-- End of the list of cases. -->";

/// One cell of a Markdown table: the text on one line, `|` escaped.
fn cell(text: &str) -> String {
    words(text).replace('|', "\\|")
}

/// The counts and list of `injector`'s cases, as its README holds them between `CASES_BEGIN`
/// and `CASES_END`: each case's `upstream`, `result` and, when it is not `match`, the
/// docs/compat.md text it quotes. Read from `case.yaml`; `upstream_suites_pass` checks that
/// each case gives that result.
fn cases_section(injector: &str) -> String {
    let base = root().join("testdata/compat").join(injector);
    let mut rows = Vec::new();
    let mut folders: BTreeMap<String, [usize; 4]> = BTreeMap::new();
    let mut total = [0usize; 4];
    for dir in cases(injector) {
        let case = yaml(&dir.join("case.yaml"));
        let name = dir
            .strip_prefix(&base)
            .unwrap_or(&dir)
            .display()
            .to_string();
        let result = text(&case, "result").unwrap_or("?");
        let slot = 1 + ["match", "differs", "refused"]
            .iter()
            .position(|r| *r == result)
            .unwrap_or(2);
        let folder = name.split('/').next().unwrap_or_default().to_owned();
        for tally in [folders.entry(folder).or_default(), &mut total] {
            tally[0] += 1;
            tally[slot] += 1;
        }
        let why = text(&case, "compat").map(cell).unwrap_or_default();
        rows.push(format!(
            "| [{name}]({name}/case.yaml) | {} | {result} | {why} |",
            cell(text(&case, "upstream").unwrap_or_default())
        ));
    }
    let count = |t: &[usize; 4]| format!("{} | {} | {} | {}", t[0], t[1], t[2], t[3]);
    let mut out = vec![
        format!(
            "{} cases: {} match, {} differs, {} refused.",
            total[0], total[1], total[2], total[3]
        ),
        String::new(),
        "| folder | cases | match | differs | refused |".to_owned(),
        "|---|---|---|---|---|".to_owned(),
    ];
    out.extend(
        folders
            .iter()
            .map(|(folder, t)| format!("| `{folder}/` | {} |", count(t))),
    );
    out.extend([
        String::new(),
        "| case | upstream | result | docs/compat.md (differs, refused) |".to_owned(),
        "|---|---|---|---|".to_owned(),
    ]);
    out.extend(rows);
    out.join("\n") + "\n"
}

#[test]
fn readmes_list_the_cases() {
    let mut stale = Vec::new();
    for injector in INJECTORS {
        let path = root()
            .join("testdata/compat")
            .join(injector)
            .join("README.md");
        let readme = std::fs::read_to_string(&path).expect("README.md");
        let Some((before, rest)) = readme.split_once(CASES_BEGIN) else {
            panic!("{}: no line `{CASES_BEGIN}`", path.display());
        };
        let Some((_, after)) = rest.split_once(CASES_END) else {
            panic!("{}: no line `{CASES_END}`", path.display());
        };
        let written = format!(
            "{before}{CASES_BEGIN}\n\n{}\n{CASES_END}{after}",
            cases_section(injector)
        );
        if written == readme {
            continue;
        }
        if std::env::var_os("KINJECT_BLESS").is_some() {
            std::fs::write(&path, written).expect("write README.md");
        } else {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "the counts or the list of cases are stale in {stale:?}: run `KINJECT_BLESS=1 cargo test \
         --test it compat::` and read the diff"
    );
}
