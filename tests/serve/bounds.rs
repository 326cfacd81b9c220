//! A bounded server: what clients can make it hold, and for how long. The metrics' labels are
//! a closed set, escaped; a body that is not JSON is refused, located, before it can expand;
//! the bodies being read and the answers not yet written stay under `--max-in-flight-bytes`,
//! and answers a client does not read are dropped after `--write-timeout`; a configuration
//! caught half-written is never served. The server's peak memory is measured against the
//! limit the printed Deployment gives it (256 MiB).
//!
//! Tests that move many megabytes use plain HTTP (`--insecure-plain-http`): their subject is
//! what the server holds, and this machine encrypts slowly in a debug build.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::serve::{self, Server, connect, eventually, head, read_response, strings};

use super::{Setup, pod, pod_review};

/// The memory limit of the Deployment `--print-manifests` prints, in MiB.
const PRINTED_LIMIT_MIB: u64 = 256;

/// A server over plain HTTP with the test's configuration and `extra`.
fn plain_server(setup: &Setup, extra: &[&str]) -> Server {
    let mut args = strings(&["-c", &setup.config(), "--insecure-plain-http"]);
    args.extend(strings(extra));
    Server::start(setup.dir.path(), &args)
}

/// A GET on the server's own address (plain HTTP).
fn plain_get(server: &Server, path: &str) -> serve::Response {
    serve::get(&mut serve::plain(server.addr), path).expect("an answer")
}

/// The value of a metric without labels, from `/metrics`.
fn gauge(metrics: &str, name: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .and_then(|v| v.trim().parse().ok())
}

#[test]
fn metric_labels_are_a_closed_set_and_escaped() {
    let setup = Setup::new();
    let server = setup.server(&[]);
    let client = setup.client();
    let forged = "X\"} 1\nkinject_forged_total{a=\"";
    let mut kinds: Vec<String> = (0..30)
        .map(|i| format!("K{i}{}", "k".repeat(100_000)))
        .collect();
    kinds.extend([forged.to_owned(), "Deployment".to_owned(), String::new()]);
    for (i, kind) in kinds.iter().enumerate() {
        let mut review = pod_review(&format!("kind-{i}"));
        review["request"]["kind"]["kind"] = json!(kind);
        review["request"]["object"]["kind"] = json!(kind);
        let mut tls = connect(server.addr, &client).expect("connect");
        let r = serve::post(&mut tls, &review).expect("an answer");
        assert_eq!(r.status, 200, "{}", r.text());
    }
    let metrics = server.probe("/metrics").text();
    assert!(
        metrics.len() < 16 * 1024,
        "/metrics holds {} bytes after 30 reviews of 100 KB kinds",
        metrics.len()
    );
    // Every line: a comment, or `name{label="escaped value",…} number`.
    for line in metrics.lines().filter(|l| !l.starts_with('#')) {
        assert!(
            line.starts_with("kinject_"),
            "a line of no metric: {line:?}"
        );
        assert!(
            !line.starts_with("kinject_forged"),
            "a forged series: {line:?}"
        );
    }
    let kinds_seen: Vec<&str> = metrics
        .lines()
        .filter(|l| l.starts_with("kinject_admission_reviews_total{"))
        .filter_map(|l| l.split("kind=\"").nth(1)?.split('"').next())
        .collect();
    for kind in &kinds_seen {
        assert!(
            matches!(*kind, "Pod" | "Deployment" | "other"),
            "a kind label outside the closed set: {kind:?}\n{metrics}"
        );
    }
    assert!(kinds_seen.contains(&"other"), "{metrics}");
    // The log writes the request's kind as it is, JSON-escaped, cut to a bounded length.
    let logged = server
        .wait_line(Duration::from_secs(10), |l| l["uid"] == "kind-30")
        .expect("the forged kind's line");
    assert_eq!(logged["kind"], forged);
    let long = server
        .wait_line(Duration::from_secs(10), |l| l["uid"] == "kind-0")
        .expect("a long kind's line");
    assert!(
        long["kind"].as_str().is_some_and(|k| k.len() < 1024),
        "the log line holds the whole 100 KB kind"
    );
}

/// A review body of YAML, whose aliases expand it a thousandfold, sent as JSON.
fn alias_review() -> String {
    let env: String = (0..1000)
        .map(|i| format!("      - {{name: E{i}, value: v}}\n"))
        .collect();
    let containers: String = (0..300)
        .map(|i| format!("      - {{name: c{i}, image: x, env: *env}}\n"))
        .collect();
    format!(
        "apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nrequest:\n  uid: yaml\n  kind: {{group: '', version: v1, kind: Pod}}\n  operation: CREATE\n  object:\n    apiVersion: v1\n    kind: Pod\n    metadata: {{name: p}}\n    x-env: &env\n{env}    spec:\n      containers:\n{containers}"
    )
}

#[test]
fn a_body_that_is_not_json_is_refused_where_it_is_not() {
    let setup = Setup::new();
    let server = plain_server(&setup, &[]);
    let body = alias_review();
    assert!(body.len() < 64 * 1024, "{} bytes", body.len());
    let mut tcp = serve::plain(server.addr);
    let r = serve::request(
        &mut tcp,
        "POST",
        "/mutate",
        "application/json",
        body.as_bytes(),
    )
    .expect("an answer");
    assert_eq!(r.status, 200, "{}", r.text());
    let answer = r.json();
    assert_eq!(answer["response"]["allowed"], false, "{answer}");
    assert_eq!(answer["response"]["status"]["code"], 400, "{answer}");
    let message = answer["response"]["status"]["message"]
        .as_str()
        .expect("a message");
    assert!(
        message.contains("not JSON") && message.contains("line 1 column 1"),
        "{message}"
    );
    let peak = server.peak_rss_mib();
    assert!(
        peak < 100,
        "the server peaked at {peak} MiB for a {} byte body",
        body.len()
    );
    // JSON as the API server writes it is answered, and so is JSON with spaces and a final
    // line break.
    let pretty = serde_json::to_string_pretty(&pod_review("pretty")).expect("JSON") + "\n";
    let r = serve::request(
        &mut tcp,
        "POST",
        "/mutate",
        "application/json",
        pretty.as_bytes(),
    )
    .expect("an answer");
    assert_eq!(r.json()["response"]["allowed"], true, "{}", r.text());
}

/// A configuration written as an editor or `kubectl cp` writes it: truncated, the first part,
/// a pause, the rest. The first part alone loads (a sidecar without its `securityContext`,
/// no rule); it is never served, as the files did not hold still for a reload interval. The
/// pause straddles a tick of the reloader (every `--reload-interval` from the last reload),
/// so a reloader that loads what it sees changed loads the first part each time.
#[test]
fn a_configuration_caught_half_written_is_not_loaded() {
    const INTERVAL: f64 = 0.2;
    let setup = Setup::new();
    let full = |tag: usize| {
        format!(
            "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: curl\n  containers:\n  - name: curl\n    image: curl:{tag}\n    securityContext:\n      runAsNonRoot: true\nrules:\n- name: all\n  inject: [curl]\n"
        )
    };
    let path = setup.dir.path().join("config.yaml");
    std::fs::write(&path, full(0)).expect("write");
    let server = setup.server(&["--reload-interval", &INTERVAL.to_string()]);
    let reloads = |server: &Server| {
        server
            .lines()
            .into_iter()
            .filter(|l| l["msg"] == "configuration reloaded")
            .collect::<Vec<Value>>()
    };
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("a clock")
            .as_secs_f64()
    };
    let sleep_until = |at: f64| std::thread::sleep(Duration::from_secs_f64((at - now()).max(0.0)));
    let mut last = server.lines()[0]["ts"]
        .as_f64()
        .expect("the serving line's time");
    for tag in 1..=6 {
        let tick = last + INTERVAL;
        sleep_until(tick - 0.07);
        let text = full(tag);
        let cut = text.find("    securityContext").expect("the cut");
        let mut file = std::fs::File::create(&path).expect("truncate");
        file.write_all(&text.as_bytes()[..cut]).expect("write");
        sleep_until(tick + 0.07);
        file.write_all(&text.as_bytes()[cut..]).expect("write");
        drop(file);
        let reloaded = eventually(Duration::from_secs(30), || {
            reloads(&server)
                .into_iter()
                .filter(|l| l["rules"] == 1)
                .nth(tag - 1)
        })
        .unwrap_or_else(|| panic!("configuration {tag} not reloaded:\n{}", server.log()));
        last = reloaded["ts"].as_f64().expect("a time");
    }
    let half: Vec<Value> = reloads(&server)
        .into_iter()
        .filter(|l| l["rules"] != 1)
        .collect();
    assert!(
        half.is_empty(),
        "half-written configurations served: {half:?}"
    );
    let mut tls = connect(server.addr, &setup.client()).expect("connect");
    let answer = serve::post(&mut tls, &pod_review("last"))
        .expect("an answer")
        .json();
    let patch = serve::patch_text(&answer);
    assert!(
        patch.contains("curl:6") && patch.contains("runAsNonRoot"),
        "{patch}"
    );
}

/// Connections that send a body of nearly `--max-request-bytes` and hold its last byte:
/// together they would hold gigabytes; the budget refuses what does not fit, with 503.
#[test]
fn bodies_being_read_stay_within_the_budget() {
    const CLIENTS: usize = 60;
    let setup = Setup::new();
    let server = plain_server(&setup, &[]);
    let length = 7 * 1024 * 1024;
    let chunk = vec![b' '; 1024 * 1024];
    let mut held: Vec<TcpStream> = Vec::new();
    let mut refused = 0;
    for _ in 0..CLIENTS {
        let mut tcp = serve::plain(server.addr);
        let head = head("POST", "/mutate", "application/json", length);
        let mut sent = tcp.write_all(head.as_bytes());
        for _ in 0..6 {
            sent = sent.and_then(|()| tcp.write_all(&chunk));
        }
        sent = sent.and_then(|()| tcp.write_all(&chunk[..chunk.len() - 1]));
        match sent {
            Ok(()) => held.push(tcp),
            // Refused while it was sending: the 503 came before its last bytes.
            Err(_) => refused += 1,
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    let peak = server.peak_rss_mib();
    let answered: Vec<u16> = held
        .iter_mut()
        .filter_map(|tcp| {
            tcp.set_read_timeout(Some(Duration::from_millis(50))).ok()?;
            read_response(tcp).ok().map(|r| r.status)
        })
        .collect();
    assert!(
        peak < PRINTED_LIMIT_MIB,
        "{CLIENTS} bodies of 7 MiB held: the server peaked at {peak} MiB"
    );
    assert!(
        refused + answered.iter().filter(|s| **s == 503).count() > 0,
        "none refused: {answered:?}"
    );
    drop(held);
    // What they held is given back: a review is answered, the budget is empty again.
    eventually(Duration::from_secs(10), || {
        (gauge(
            &plain_get(&server, "/metrics").text(),
            "kinject_in_flight_bytes",
        ) == Some(0.0))
        .then_some(())
    })
    .unwrap_or_else(|| panic!("{}", plain_get(&server, "/metrics").text()));
    let mut tcp = serve::plain(server.addr);
    let r = serve::post(&mut tcp, &pod_review("after")).expect("an answer");
    assert_eq!(r.json()["response"]["allowed"], true, "{}", r.text());
}

/// A sidecar that copies an annotation into four variables: a review of 256 KB whose answer
/// is 1.4 MB.
const COPYING: &str = "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: copy\n  containers:\n  - name: copy\n    image: copy:1\n    env:\n    - {name: A, value: \"{{ annotation('payload') }}\"}\n    - {name: B, value: \"{{ annotation('payload') }}\"}\n    - {name: C, value: \"{{ annotation('payload') }}\"}\n    - {name: D, value: \"{{ annotation('payload') }}\"}\nrules:\n- name: all\n  inject: [copy]\n";

/// Clients that post a review and never read its answer: the answers are dropped, and their
/// connections closed, after `--write-timeout`; meanwhile they stay within the budget (8 MiB
/// here: five answers), and the others are refused with 503.
#[test]
fn answers_a_client_does_not_read_are_dropped_after_the_write_timeout() {
    const CLIENTS: usize = 12;
    let setup = Setup::new();
    std::fs::write(setup.dir.path().join("config.yaml"), COPYING).expect("write");
    let server = plain_server(
        &setup,
        &["--write-timeout", "1", "--max-in-flight-bytes", "8388608"],
    );
    let mut object = pod("copied");
    object["metadata"]["annotations"] = json!({"payload": "p".repeat(256_000)});
    let body = serde_json::to_vec(&serve::review(&object, Some("shop"), "copied")).expect("JSON");
    let mut clients: Vec<TcpStream> = (0..CLIENTS)
        .map(|_| {
            let mut tcp = serve::plain(server.addr);
            let mut bytes = head("POST", "/mutate", "application/json", body.len()).into_bytes();
            bytes.extend_from_slice(&body);
            tcp.write_all(&bytes).expect("write");
            tcp
        })
        .collect();
    // Every review answered (or refused), then the write timeout, and some slack.
    eventually(Duration::from_secs(60), || {
        let lines = server.lines();
        let done = lines
            .iter()
            .filter(|l| l["msg"] == "review" || l["msg"] == "refused")
            .count();
        (done >= CLIENTS).then_some(())
    })
    .unwrap_or_else(|| panic!("not all answered:\n{}", server.log()));
    std::thread::sleep(Duration::from_millis(2500));
    // Now read: a 503 in full, or part of an answer the server has given up on; never a
    // whole answer on a connection still open.
    for (i, tcp) in clients.iter_mut().enumerate() {
        tcp.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        let started = Instant::now();
        let mut read = Vec::new();
        let outcome = tcp.read_to_end(&mut read);
        let whole_200 = read.starts_with(b"HTTP/1.1 200") && read.len() > 1_000_000;
        assert!(
            started.elapsed() < Duration::from_secs(4) && !whole_200,
            "connection {i}: {} bytes read ({outcome:?}) in {:?}: the answer was kept",
            read.len(),
            started.elapsed()
        );
    }
    let refused = server
        .lines()
        .iter()
        .filter(|l| l["msg"] == "refused")
        .count();
    assert!(refused > 0, "none refused:\n{}", server.log());
    eventually(Duration::from_secs(10), || {
        (gauge(
            &plain_get(&server, "/metrics").text(),
            "kinject_in_flight_bytes",
        ) == Some(0.0))
        .then_some(())
    })
    .unwrap_or_else(|| panic!("{}", plain_get(&server, "/metrics").text()));
}
