//! A bounded server: what clients can make it hold, and for how long. The metrics' labels are
//! a closed set, escaped; a body that is not JSON is refused, located, before it can expand;
//! the bodies being read and the answers not yet written stay under `--max-in-flight-bytes`,
//! and answers a client does not read are dropped after `--write-timeout`; a configuration
//! caught half-written is never served. The server's peak memory is measured against the
//! limit the printed Deployment gives it (256 MiB).
//!
//! Tests that move many megabytes use plain HTTP (`--insecure-plain-http`): their subject is
//! what the server holds, and this machine encrypts slowly in a debug build.

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

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

/// Whether the budget holds nothing but the scrape that asks (a request in progress holds
/// 4 KiB and its headers).
fn budget_given_back(metrics: &str) -> bool {
    gauge(metrics, "kinject_in_flight_bytes").is_some_and(|b| b < 8192.0)
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

/// `--max-request-bytes`' default.
const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// Opens `n` connections, each sending a body of `--max-request-bytes` but its last byte:
/// those still sending (held), and how many were refused while they sent.
fn hold_bodies(server: &Server, n: usize) -> (Vec<TcpStream>, usize) {
    let chunk = vec![b' '; 1024 * 1024];
    let mut held: Vec<TcpStream> = Vec::new();
    let mut refused = 0;
    for _ in 0..n {
        let mut tcp = serve::plain(server.addr);
        let head = head("POST", "/mutate", "application/json", MAX_REQUEST_BYTES);
        let mut sent = tcp.write_all(head.as_bytes());
        for _ in 0..MAX_REQUEST_BYTES / chunk.len() - 1 {
            sent = sent.and_then(|()| tcp.write_all(&chunk));
        }
        sent = sent.and_then(|()| tcp.write_all(&chunk[..chunk.len() - 1]));
        match sent {
            Ok(()) => held.push(tcp),
            // Refused while it was sending: the 503 came before its last bytes.
            Err(_) => refused += 1,
        }
    }
    (held, refused)
}

/// Connections that send a body of nearly `--max-request-bytes` and hold its last byte:
/// together they would hold gigabytes; the budget refuses what does not fit, with 503.
#[test]
fn bodies_being_read_stay_within_the_budget() {
    const CLIENTS: usize = 60;
    let setup = Setup::new();
    let server = plain_server(&setup, &[]);
    let (mut held, refused) = hold_bodies(&server, CLIENTS);
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
        "{CLIENTS} bodies of 4 MiB held: the server peaked at {peak} MiB"
    );
    assert!(
        refused + answered.iter().filter(|s| **s == 503).count() > 0,
        "none refused: {answered:?}"
    );
    drop(held);
    // What they held is given back: a review is answered, the budget is empty again.
    eventually(Duration::from_secs(10), || {
        budget_given_back(&plain_get(&server, "/metrics").text()).then_some(())
    })
    .unwrap_or_else(|| panic!("{}", plain_get(&server, "/metrics").text()));
    let mut tcp = serve::plain(server.addr);
    let r = serve::post(&mut tcp, &pod_review("after")).expect("an answer");
    assert_eq!(r.json()["response"]["allowed"], true, "{}", r.text());
}

/// The budget full (one body of `--max-request-bytes` and its request, here), a request to
/// the webhook's address is refused with 503, and the kubelet's probes on the probe port are
/// answered all the same: a full budget must not make the kubelet restart the server.
#[test]
fn probes_are_answered_whatever_the_budget_holds() {
    let setup = Setup::new();
    let budget = (MAX_REQUEST_BYTES + 6000).to_string();
    let server = plain_server(
        &setup,
        &[
            "--probe-listen",
            "127.0.0.1:0",
            "--max-in-flight-bytes",
            &budget,
        ],
    );
    let (held, _) = hold_bodies(&server, 1);
    assert_eq!(held.len(), 1, "the body fits");
    std::thread::sleep(Duration::from_millis(200));
    let r = plain_get(&server, "/healthz");
    assert_eq!(r.status, 503, "{}", r.text());
    for path in ["/healthz", "/readyz", "/metrics"] {
        let r = server.probe(path);
        assert_eq!(r.status, 200, "{path}: {}", r.text());
    }
}

/// A sidecar that copies an annotation into four variables: a review of 128 KB whose answer
/// is 700 KB.
const COPYING: &str = "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: copy\n  containers:\n  - name: copy\n    image: copy:1\n    env:\n    - {name: A, value: \"{{ annotation('payload') }}\"}\n    - {name: B, value: \"{{ annotation('payload') }}\"}\n    - {name: C, value: \"{{ annotation('payload') }}\"}\n    - {name: D, value: \"{{ annotation('payload') }}\"}\nrules:\n- name: all\n  inject: [copy]\n";

/// Clients that post a review and never read its answer: the answers are dropped, and their
/// connections closed, after `--write-timeout`; meanwhile they stay within the budget (2 MiB
/// here: two answers), and the others are refused with 503.
#[test]
fn answers_a_client_does_not_read_are_dropped_after_the_write_timeout() {
    const CLIENTS: usize = 10;
    let setup = Setup::new();
    std::fs::write(setup.dir.path().join("config.yaml"), COPYING).expect("write");
    let server = plain_server(
        &setup,
        &[
            "--write-timeout",
            "1",
            "--max-in-flight-bytes",
            "2097152",
            "--header-timeout",
            "1",
        ],
    );
    let mut object = pod("copied");
    object["metadata"]["annotations"] = json!({"payload": "p".repeat(128_000)});
    let body = serde_json::to_vec(&serve::review(&object, Some("shop"), "copied")).expect("JSON");
    let mut clients: Vec<TcpStream> = (0..CLIENTS)
        .map(|_| {
            let mut tcp = serve::plain_small_window(server.addr);
            let mut bytes = head("POST", "/mutate", "application/json", body.len()).into_bytes();
            bytes.extend_from_slice(&body);
            tcp.write_all(&bytes).expect("write");
            tcp
        })
        .collect();
    // The budget holds answers not yet written (the clients' sockets take a few KB).
    eventually(Duration::from_secs(30), || {
        let held = gauge(
            &plain_get(&server, "/metrics").text(),
            "kinject_in_flight_bytes",
        );
        held.is_some_and(|b| b > 1_000_000.0).then_some(())
    })
    .unwrap_or_else(|| panic!("no answer held:\n{}", server.log()));
    // Every review answered (or refused), then the write timeout, and some slack.
    eventually(Duration::from_secs(60), || {
        let metrics = plain_get(&server, "/metrics").text();
        (gauge(&metrics, "kinject_reviews_in_flight") == Some(0.0)).then_some(())
    })
    .unwrap_or_else(|| panic!("not all answered:\n{}", server.log()));
    std::thread::sleep(Duration::from_millis(2500));
    // Now read: a 503 in full, or part of an answer the server has given up on; never a
    // whole answer.
    for (i, tcp) in clients.iter_mut().enumerate() {
        tcp.set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        match read_response(tcp) {
            Ok(r) if r.status == 503 => {}
            Ok(r) => panic!(
                "connection {i}: a whole answer of {} bytes, HTTP {}, kept for it\n{}",
                r.body.len(),
                r.status,
                server.log()
            ),
            Err(e) => assert!(
                !matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ),
                "connection {i} still open: {e}"
            ),
        }
    }
    let refused = server
        .lines()
        .iter()
        .filter(|l| l["msg"] == "refused")
        .count();
    assert!(refused > 0, "none refused:\n{}", server.log());
    eventually(Duration::from_secs(10), || {
        budget_given_back(&plain_get(&server, "/metrics").text()).then_some(())
    })
    .unwrap_or_else(|| panic!("{}", plain_get(&server, "/metrics").text()));
}

/// A pod of `n` containers (and `init` init containers), labelled for the test's sidecar.
fn pod_of(n: usize, init: usize) -> Value {
    let mut object = pod("many");
    let containers = |prefix: &str, n: usize| -> Vec<Value> {
        (0..n)
            .map(|i| json!({"name": format!("{prefix}{i}"), "image": "x"}))
            .collect()
    };
    object["spec"]["containers"] = json!(containers("c", n));
    if init > 0 {
        object["spec"]["initContainers"] = json!(containers("i", init));
    }
    object
}

/// Posts `review` on a new plain connection; the review's response.
fn answer_of(server: &Server, review: &Value) -> Value {
    let mut tcp = serve::plain(server.addr);
    let r = serve::post(&mut tcp, review).expect("an answer");
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["response"].clone()
}

#[test]
fn a_review_beyond_the_limits_is_refused_saying_where() {
    let setup = Setup::new();
    let server = plain_server(
        &setup,
        &["--max-containers", "3", "--max-request-values", "2000"],
    );
    // At the limits: injected.
    let at = answer_of(&server, &serve::review(&pod_of(2, 1), Some("shop"), "at"));
    assert_eq!(at["allowed"], true, "{at}");
    assert!(at["patch"].is_string(), "{at}");
    // One container more, in a pod and in a Deployment's template.
    let beyond = answer_of(&server, &serve::review(&pod_of(2, 2), Some("shop"), "pod"));
    assert_eq!(beyond["allowed"], false, "{beyond}");
    assert_eq!(beyond["status"]["code"], 413, "{beyond}");
    let message = beyond["status"]["message"].as_str().expect("a message");
    assert!(
        message.contains("the pod has 4 containers (`spec.containers`: 2, `spec.initContainers`: 2), more than the 3")
            && message.contains("--max-containers")
            && message.contains("kinject::serve::too_large"),
        "{message}"
    );
    let template = pod_of(4, 0);
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "shop"},
        "spec": {"template": {"metadata": template["metadata"], "spec": template["spec"]}}
    });
    let beyond = answer_of(&server, &serve::review(&deployment, Some("shop"), "deploy"));
    let message = beyond["status"]["message"].as_str().expect("a message");
    assert!(
        message.contains("`spec.template.spec.containers`: 4"),
        "{message}"
    );
    // Values: a container's arguments, counted before the body is read.
    let mut object = pod("values");
    object["spec"]["containers"][0]["args"] = json!(vec!["a"; 3000]);
    let beyond = answer_of(&server, &serve::review(&object, Some("shop"), "values"));
    assert_eq!(beyond["uid"], "values", "{beyond}");
    assert_eq!(beyond["allowed"], false, "{beyond}");
    let message = beyond["status"]["message"].as_str().expect("a message");
    assert!(
        message.contains("holds more than 2000 JSON values (the limit is passed at line 1 column ")
            && message.contains("--max-request-values"),
        "{message}"
    );
    let logged = server
        .wait_line(Duration::from_secs(10), |l| l["uid"] == "values")
        .expect("its log line");
    assert_eq!(logged["result"], "denied", "{logged}");
    // Allowed on error: admitted unchanged, the message as a warning.
    let allowing = plain_server(&setup, &["--max-containers", "3", "--on-error", "allow"]);
    let allowed = answer_of(
        &allowing,
        &serve::review(&pod_of(4, 0), Some("shop"), "allowed"),
    );
    assert_eq!(allowed["allowed"], true, "{allowed}");
    assert!(allowed.get("patch").is_none(), "{allowed}");
    assert!(
        allowed["warnings"][0]
            .as_str()
            .is_some_and(|w| w.contains("kinject::serve::too_large")),
        "{allowed}"
    );
}

/// A review of a pod of `values` JSON values, for the test's sidecar (a quarter of a second
/// of a debug build's work at 95,000).
fn costly_review(uid: &str, values: usize) -> Vec<u8> {
    let mut object = pod(uid);
    object["spec"]["containers"][0]["args"] = json!(vec![0; values]);
    serde_json::to_vec(&serve::review(&object, Some("shop"), uid)).expect("JSON")
}

/// Reviews still queued at their deadline (`--request-timeout`) are not computed: the pool
/// that computes reviews is free for the next request as soon as their time has run out,
/// instead of working on answers no one waits for.
///
/// How much work is queued is measured on the machine the test runs on: one review is timed
/// first, and enough are queued that the server's pool (one thread per core) would need four
/// deadlines to compute them all. A fixed count passed where reviews were slow and the pool
/// narrow, and failed where they were fast or the pool wide (4 of 32 timed out).
#[test]
fn reviews_past_their_deadline_are_abandoned_not_computed() {
    let setup = Setup::new();
    let server = plain_server(
        &setup,
        &[
            "--request-timeout",
            "1",
            "--max-in-flight-bytes",
            "2000000000",
        ],
    );
    let one = costly_review("alone", 95_000);
    let mut request = head("POST", "/mutate", "application/json", one.len()).into_bytes();
    request.extend_from_slice(&one);
    let answer = || {
        let mut tcp = serve::plain(server.addr);
        tcp.write_all(&request).expect("write");
        let r = read_response(&mut tcp).expect("an answer");
        assert_eq!(r.status, 200, "{}", r.text());
    };
    answer(); // the first is slower (the server's first allocations)
    let started = std::time::Instant::now();
    for _ in 0..3 {
        answer();
    }
    let each = started.elapsed() / 3;
    // The server's pool is as wide as the cores it sees (at least two); so is this.
    let pool = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    let queued = ((4.0 * pool as f64 / each.as_secs_f64()).ceil() as usize).clamp(32, 800);
    // Made before any is sent (a debug build takes a while to write one), then sent at once.
    let bodies: Vec<Vec<u8>> = (0..queued)
        .map(|i| costly_review(&format!("q{i}"), 95_000))
        .collect();
    let mut clients: Vec<TcpStream> = bodies
        .iter()
        .map(|body| {
            let mut tcp = serve::plain(server.addr);
            let mut bytes = head("POST", "/mutate", "application/json", body.len()).into_bytes();
            bytes.extend_from_slice(body);
            tcp.write_all(&bytes).expect("write");
            tcp
        })
        .collect();
    // Every deadline passes (--request-timeout after the last was sent), with most of the
    // reviews still queued.
    std::thread::sleep(Duration::from_millis(1100));
    // The next review is answered within its own --request-timeout, at once but for the step
    // of an abandoned review the pool is in: the pool does not work on the answers no one
    // waits for any more (there are seconds of them).
    let mut tcp = serve::plain(server.addr);
    let r = serve::post(&mut tcp, &pod_review("next")).expect("an answer");
    assert_eq!(
        r.status,
        200,
        "{} ({queued} queued, {each:?} each)\n{}",
        r.text(),
        server.log()
    );
    let mut timeouts = 0;
    for tcp in &mut clients {
        let r = read_response(tcp).expect("an answer");
        assert!(matches!(r.status, 200 | 504), "{}", r.text());
        timeouts += usize::from(r.status == 504);
    }
    assert!(
        timeouts >= queued / 2,
        "{timeouts} of {queued} timed out ({each:?} each, a pool of {pool})"
    );
}

/// A review's request on `stream` whose body has begun and does not end: a request in
/// progress.
fn begin_slow_body(stream: &mut impl Write) {
    stream
        .write_all(head("POST", "/mutate", "application/json", 1000).as_bytes())
        .expect("headers");
    stream.write_all(b"{\"kind\":").expect("a first part");
    stream.flush().expect("flush");
}

/// Runs `serve_one` on a thread: whether it was done within `within` (the connections that
/// hold their places would keep it out for the 30 s of their timeouts), and its result.
fn served_within<T: Send + 'static>(
    within: Duration,
    serve_one: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(serve_one());
    });
    rx.recv_timeout(within).ok()
}

#[test]
fn connections_that_do_nothing_cannot_keep_a_client_out() {
    // At the cap, a new connection ends the one that has done nothing for the longest: idle
    // ones first (in their handshake, before their first request, between requests), then
    // the one whose request began first. Before, new connections waited for a place, and
    // 64 connections that sent nothing to the probe port failed the kubelet's probes (12 of
    // 15 in 20 s, 1 s timeout), as 1,100 did on the webhook's port.
    let setup = Setup::new();
    let server = setup.server(&[
        "--max-connections",
        "4",
        "--header-timeout",
        "30",
        "--request-timeout",
        "30",
    ]);
    let client = setup.client();
    let within = Duration::from_secs(15);
    let addr = server.addr;
    // A fifth client's review, and whether it was answered within the time.
    let fifth = || {
        let client = std::sync::Arc::clone(&client);
        served_within(within, move || {
            let mut tls = connect(addr, &client).expect("handshake");
            serve::post(&mut tls, &pod_review("fifth")).map(|r| r.status)
        })
    };
    // Whether the gauge `name` reads `n` within the time.
    let gauge_reads = |name: &str, n: f64| {
        eventually(within, || {
            let metrics = server.probe("/metrics").text();
            (gauge(&metrics, name) == Some(n)).then_some(())
        })
    };
    // Four connections that send nothing, the first the stalest.
    let mut idle: Vec<TcpStream> = (0..4)
        .map(|_| {
            let tcp = serve::plain(addr);
            std::thread::sleep(Duration::from_millis(50));
            tcp
        })
        .collect();
    assert_eq!(
        fifth().map(Result::ok),
        Some(Some(200)),
        "a client kept out by four idle connections"
    );
    idle[0]
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    let ended = serve::closed_within(&mut idle[0], within);
    assert!(ended.is_ok(), "the stalest idle connection: {ended:?}");
    let open = |n: f64| gauge_reads("kinject_open_connections", n);
    // The fifth has closed: the other three idle ones are left.
    assert!(open(3.0).is_some(), "not the three idle connections left");
    drop(idle);
    assert!(
        open(0.0).is_some(),
        "the connections closed are still counted"
    );

    // Four requests in progress whose bodies never end: the one begun first is ended.
    let mut slow: Vec<serve::Tls> = (0..4)
        .map(|_| {
            let mut tls = connect(addr, &client).expect("handshake");
            begin_slow_body(&mut tls);
            std::thread::sleep(Duration::from_millis(50));
            tls
        })
        .collect();
    let in_progress = gauge_reads("kinject_reviews_in_flight", 4.0);
    assert!(in_progress.is_some(), "four reviews in progress");
    assert_eq!(
        fifth().map(Result::ok),
        Some(Some(200)),
        "a client kept out by four slow bodies"
    );
    slow[0]
        .sock
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    let ended = serve::closed_within(&mut slow[0], within);
    assert!(ended.is_ok(), "the slow body begun first: {ended:?}");
    drop(slow);

    // The probe port's 64 places, taken by connections that send nothing: the kubelet's
    // probe is answered.
    let probes = server.probes.expect("a probe port");
    let _held: Vec<TcpStream> = (0..64).map(|_| serve::plain(probes)).collect();
    let probe = served_within(within, move || {
        serve::get(&mut serve::plain(probes), "/healthz").map(|r| r.status)
    });
    assert_eq!(
        probe.map(Result::ok),
        Some(Some(200)),
        "the kubelet's probe kept out by 64 idle connections"
    );
}

/// A pod whose JSON holds `values` values, in objects of one member (the costliest to read
/// and to plan, per value).
fn objects_review(uid: &str, values: usize) -> Vec<u8> {
    let mut object = pod(uid);
    object["spec"]["containers"][0]["args"] = json!(vec![json!({"a": 0}); values / 3]);
    serde_json::to_vec(&serve::review(&object, Some("shop"), uid)).expect("JSON")
}

/// A pod with an annotation that makes its review `bytes` long.
fn annotated_review(uid: &str, bytes: usize) -> Vec<u8> {
    let mut object = pod(uid);
    object["metadata"]["annotations"] = json!({"big": "x".repeat(bytes - 1000)});
    serde_json::to_vec(&serve::review(&object, Some("shop"), uid)).expect("JSON")
}

/// A pod with `n` more annotations (or labels) than the test's, each a short key and a 40-byte
/// value: two counted values each, the most metadata the defaults accept (3.9 MB).
fn metadata_review(uid: &str, field: &str, n: usize) -> Vec<u8> {
    let mut object = pod(uid);
    let entries = object["metadata"]
        .as_object_mut()
        .expect("metadata")
        .entry(field)
        .or_insert_with(|| json!({}));
    for i in 0..n {
        entries[format!("{}{i}", &field[..1])] = json!("v".repeat(40));
    }
    serde_json::to_vec(&serve::review(&object, Some("shop"), uid)).expect("JSON")
}

/// The test's configuration with a template, so that every review is rendered for: what a
/// template may read of the pod (its labels, its annotations) is the other way a review
/// grows.
fn templated(setup: &Setup) {
    std::fs::write(
        setup.dir.path().join("config.yaml"),
        super::config_text("\"curl:{{ values.tag }}\"") + "values:\n  tag: \"1\"\n",
    )
    .expect("write");
}

/// The server at its limits, measured against the memory limit of the Deployment
/// `--print-manifests` prints: the budget filled with bodies being read, and the two threads
/// that compute reviews each on one of the costliest reviews the defaults accept (the most
/// values, in objects; the largest body; the most annotations, the most labels), with a
/// configuration that has a template — docs/performance.md has the figures.
#[test]
fn the_costliest_reviews_and_a_full_budget_fit_the_printed_memory_limit() {
    let setup = Setup::new();
    templated(&setup);
    let server = plain_server(&setup, &[]);
    let costliest = [
        objects_review("objects-1", 149_000),
        objects_review("objects-2", 149_000),
        annotated_review("annotated-1", MAX_REQUEST_BYTES),
        annotated_review("annotated-2", MAX_REQUEST_BYTES),
        metadata_review("annotations-1", "annotations", 74_900),
        metadata_review("annotations-2", "annotations", 74_900),
        metadata_review("labels-1", "labels", 74_900),
        metadata_review("labels-2", "labels", 74_900),
    ];
    // Beyond the limits, refused before it costs: the review's F7, a pod of 80,000 containers
    // (2.4 MB: the API server lets it through) peaked at 306-326 MB.
    let containers: Vec<Value> = (0..80_000)
        .map(|i| json!({"name": format!("c{i}"), "image": "x"}))
        .collect();
    let mut huge = pod("huge");
    huge["spec"]["containers"] = json!(containers);
    let mut tcp = serve::plain(server.addr);
    let refused = serve::post(&mut tcp, &serve::review(&huge, Some("shop"), "huge"))
        .expect("an answer")
        .json();
    assert_eq!(refused["response"]["allowed"], false, "{refused}");
    // The budget (32 MiB) less the room the reviews' bodies need.
    let (held, _) = hold_bodies(&server, 5);
    for pair in costliest.chunks(2) {
        let statuses: Vec<Value> = std::thread::scope(|s| {
            let posted: Vec<_> = pair
                .iter()
                .map(|body| {
                    s.spawn(|| {
                        let mut tcp = serve::plain(server.addr);
                        serve::request(&mut tcp, "POST", "/mutate", "application/json", body)
                            .expect("an answer")
                            .json()
                    })
                })
                .collect();
            posted
                .into_iter()
                .map(|p| p.join().expect("a client"))
                .collect()
        });
        for answer in &statuses {
            assert_eq!(answer["response"]["allowed"], true, "{answer}");
            assert!(
                answer["response"]["patch"].is_string(),
                "not injected: {answer}"
            );
        }
    }
    let peak = server.peak_rss_mib();
    eprintln!("the costliest reviews and a full budget: the server peaked at {peak} MiB");
    assert!(
        peak < PRINTED_LIMIT_MIB,
        "the server peaked at {peak} MiB, over the printed Deployment's {PRINTED_LIMIT_MIB} MiB"
    );
    drop(held);
}
