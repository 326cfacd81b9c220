//! What the server writes is what docs/serve.md says it writes: every log line (its `msg`,
//! level and fields) and every metric (its name and labels). The test reads the docs' two
//! tables and compares them with what servers emit over a run that makes them write every
//! line and metric the tables list: reviews of each kind of answer, a refusal, reloads of the
//! configuration and the certificates that fail and then succeed, a SIGTERM that drains and
//! one that does not.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::serve::{self, Server, connect, get, head, strings};

use super::{BROKEN, Setup, config_text, pod, pod_review};

/// One table of docs/serve.md: the rows after the header that starts with `header`, as cells.
fn table(docs: &str, header: &str) -> Vec<Vec<String>> {
    let mut lines = docs.lines().skip_while(|l| !l.starts_with(header));
    assert!(
        lines.next().is_some(),
        "no table `{header}` in docs/serve.md"
    );
    lines
        .skip(1) // |---|
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_owned())
                .collect()
        })
        .collect()
}

/// The `code` spans of a cell, outside parentheses when `outside` (what a field or label
/// holds is said in parentheses after its name).
fn spans(cell: &str, outside: bool) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let (mut depth, mut code) = (0, None::<String>);
    for c in cell.chars() {
        match (c, &mut code) {
            ('`', None) => code = Some(String::new()),
            ('`', Some(text)) => {
                if !outside || depth == 0 {
                    out.insert(std::mem::take(text));
                }
                code = None;
            }
            (c, Some(text)) => text.push(c),
            ('(', None) => depth += 1,
            (')', None) => depth -= 1,
            _ => {}
        }
    }
    out
}

fn docs() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/serve.md");
    std::fs::read_to_string(path).expect("docs/serve.md")
}

/// What a log line or a metric has: its levels (log lines) and its fields or labels.
#[derive(Default, Debug)]
struct Shape {
    levels: BTreeSet<String>,
    fields: BTreeSet<String>,
}

fn documented_log(docs: &str) -> BTreeMap<String, Shape> {
    table(docs, "| `msg` |")
        .into_iter()
        .map(|row| {
            let msg = spans(&row[0], false).into_iter().next().expect("a `msg`");
            let shape = Shape {
                levels: spans(&row[1], false),
                fields: spans(&row[2], true),
            };
            (msg, shape)
        })
        .collect()
}

fn documented_metrics(docs: &str) -> BTreeMap<String, Shape> {
    table(docs, "| metric |")
        .into_iter()
        .map(|row| {
            let name = spans(&row[0], false).into_iter().next().expect("a name");
            let shape = Shape {
                levels: BTreeSet::from([row[1].clone()]),
                fields: spans(&row[2], true),
            };
            (name, shape)
        })
        .collect()
}

/// The log lines of `servers`, by `msg`: the levels and fields seen.
fn emitted_log(lines: &[Value]) -> BTreeMap<String, Shape> {
    let mut out: BTreeMap<String, Shape> = BTreeMap::new();
    for line in lines {
        let object = line.as_object().expect("a JSON object");
        let msg = object["msg"].as_str().expect("a msg").to_owned();
        let shape = out.entry(msg).or_default();
        shape
            .levels
            .insert(object["level"].as_str().expect("a level").to_owned());
        shape.fields.extend(
            object
                .keys()
                .filter(|k| !matches!(k.as_str(), "ts" | "level" | "msg"))
                .cloned(),
        );
    }
    out
}

/// The metrics of a `/metrics` text, by the name a query uses (a counter's with `_total`):
/// their labels (a histogram's `le` left out).
fn emitted_metrics(text: &str) -> BTreeMap<String, Shape> {
    let mut kinds = BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (family, kind) = rest.split_once(' ').expect("# TYPE name kind");
            kinds.insert(family.to_owned(), kind.to_owned());
        }
    }
    let mut out: BTreeMap<String, Shape> = BTreeMap::new();
    for (family, kind) in &kinds {
        let name = if kind == "counter" {
            format!("{family}_total")
        } else {
            family.clone()
        };
        out.entry(name).or_default().levels.insert(kind.clone());
    }
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let series = line.split([' ', '{']).next().expect("a name");
        let family = kinds
            .keys()
            .filter(|f| series.starts_with(f.as_str()))
            .max_by_key(|f| f.len())
            .unwrap_or_else(|| panic!("a series of no family: {line}"));
        let name = if kinds[family] == "counter" {
            format!("{family}_total")
        } else {
            family.clone()
        };
        let labels = line
            .split_once('{')
            .and_then(|(_, rest)| rest.rsplit_once('}'))
            .map(|(labels, _)| labels)
            .unwrap_or_default();
        let shape = out.get_mut(&name).expect("its family");
        for pair in labels.split("\",").filter(|p| !p.is_empty()) {
            let label = pair.split('=').next().expect("a label").to_owned();
            if label != "le" {
                shape.fields.insert(label);
            }
        }
    }
    out
}

/// What differs between the docs' table and what was emitted.
fn differences(
    what: &str,
    documented: &BTreeMap<String, Shape>,
    emitted: &BTreeMap<String, Shape>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (name, seen) in emitted {
        let Some(doc) = documented.get(name) else {
            out.push(format!("{what} `{name}` is written but not documented"));
            continue;
        };
        for level in seen.levels.difference(&doc.levels) {
            out.push(format!(
                "{what} `{name}`: `{level}` is written, not documented"
            ));
        }
        for field in seen.fields.difference(&doc.fields) {
            out.push(format!(
                "{what} `{name}`: `{field}` is written, not documented"
            ));
        }
    }
    for (name, doc) in documented {
        let Some(seen) = emitted.get(name) else {
            out.push(format!("{what} `{name}` is documented but was not written"));
            continue;
        };
        for field in doc.fields.difference(&seen.fields) {
            out.push(format!(
                "{what} `{name}`: `{field}` is documented but was not written"
            ));
        }
    }
    out
}

/// Posts `review` on a new connection; its answer.
fn post(server: &Server, setup: &Setup, review: &Value) -> Value {
    let mut tls = connect(server.addr, &setup.client()).expect("connect");
    serve::post(&mut tls, review).expect("an answer").json()
}

/// A server that writes every line and metric it has: the one with TLS.
fn busy_server(setup: &Setup) -> (Vec<Value>, String) {
    let server = setup.server(&["--reload-interval", "0.2"]);
    // Reviews: injected; skipped (no label: a `reason`); denied (a container of the
    // sidecar's name: a `message`); malformed; without any kind (a `warning`).
    post(&server, setup, &pod_review("injected"));
    let mut unlabelled = pod("skipped");
    unlabelled["metadata"]["labels"] = json!({});
    post(
        &server,
        setup,
        &serve::review(&unlabelled, Some("shop"), "skipped"),
    );
    let mut clash = pod("denied");
    clash["spec"]["containers"] = json!([{"name": "curl", "image": "curl:0"}]);
    let denied = post(
        &server,
        setup,
        &serve::review(&clash, Some("shop"), "denied"),
    );
    assert_eq!(denied["response"]["allowed"], false, "{denied}");
    let mut no_kind = pod_review("no-kind");
    no_kind["request"]
        .as_object_mut()
        .expect("request")
        .remove("kind");
    no_kind["request"]["object"]
        .as_object_mut()
        .expect("object")
        .remove("kind");
    post(&server, setup, &no_kind);
    let mut tls = connect(server.addr, &setup.client()).expect("connect");
    serve::request(
        &mut tls,
        "POST",
        "/mutate",
        "application/json",
        b"{\"request\": [",
    )
    .expect("an answer");
    // A refusal.
    let mut tls = connect(server.addr, &setup.client()).expect("connect");
    assert_eq!(get(&mut tls, "/elsewhere").expect("an answer").status, 404);
    // The configuration broken, then fixed.
    let config = setup.dir.path().join("config.yaml");
    std::fs::write(&config, BROKEN).expect("write");
    wait(
        &server,
        "configuration not reloaded: the last good one still serves",
    );
    std::fs::write(&config, config_text("curl:2")).expect("write");
    wait(&server, "configuration reloaded");
    // The certificate of another key (a pair that does not go together), then its key.
    let next = setup.pki.ca.server();
    std::fs::write(setup.dir.path().join("tls.crt"), &next.cert).expect("write");
    wait(
        &server,
        "certificates not reloaded: the last good ones still serve",
    );
    std::fs::write(setup.dir.path().join("tls.key"), &next.key).expect("write");
    wait(&server, "certificates reloaded");
    let metrics = server.probe("/metrics").text();
    let mut server = server;
    server.signal(nix::sys::signal::Signal::SIGTERM);
    server
        .exited(Duration::from_secs(30))
        .unwrap_or_else(|| panic!("still running:\n{}", server.log()));
    wait(&server, "stopped");
    (server.lines(), metrics)
}

fn wait(server: &Server, msg: &str) {
    server
        .wait_line(Duration::from_secs(30), |l| l["msg"] == msg)
        .unwrap_or_else(|| panic!("no `{msg}` line:\n{}", server.log()));
}

/// A server in plain HTTP (a warning at start) whose SIGTERM leaves a request unfinished
/// past `--shutdown-timeout` (`stopped` with `drained: false`).
fn undrained_server(setup: &Setup) -> Vec<Value> {
    let args = strings(&[
        "-c",
        &setup.config(),
        "--insecure-plain-http",
        "--shutdown-timeout",
        "0.3",
    ]);
    let mut server = Server::start(setup.dir.path(), &args);
    let mut half = serve::plain(server.addr);
    half.write_all(head("POST", "/mutate", "application/json", 100).as_bytes())
        .expect("write");
    half.write_all(b"{").expect("write");
    std::thread::sleep(Duration::from_millis(200));
    server.signal(nix::sys::signal::Signal::SIGTERM);
    server
        .exited(Duration::from_secs(30))
        .unwrap_or_else(|| panic!("still running:\n{}", server.log()));
    wait(&server, "stopped");
    server.lines()
}

#[test]
fn every_log_field_and_metric_is_the_one_the_docs_list() {
    let docs = docs();
    let setup = Setup::new();
    let (mut lines, metrics) = busy_server(&setup);
    lines.extend(undrained_server(&setup));
    let mut wrong = differences("log line", &documented_log(&docs), &emitted_log(&lines));
    wrong.extend(differences(
        "metric",
        &documented_metrics(&docs),
        &emitted_metrics(&metrics),
    ));
    assert!(
        wrong.is_empty(),
        "docs/serve.md and the server disagree:\n{}\n\nmetrics:\n{metrics}",
        wrong.join("\n")
    );
}
