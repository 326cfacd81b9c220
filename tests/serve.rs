//! `kinject serve` run for real over loopback TLS, certificates made in the test
//! (tests/common/serve.rs holds the harness: the CAs, the server process, a client written by
//! hand on rustls). What is tested:
//!
//! - Parity: every golden case (`testdata/cases/`) and every compat case (`testdata/compat/`)
//!   whose input holds a Pod or a workload: each object, posted as an AdmissionReview to a
//!   running server (one per configuration), patched with the answer, equals `kinject inject
//!   -o json` of it; an object `inject` refuses is denied.
//! - TLS: with `--client-ca-file`, the right client certificate is answered, none or another
//!   CA's is refused at the handshake; TLS 1.2 and 1.3; ALPN h2 negotiated.
//! - The certificate files swapped as a Secret volume does (a `..data` symlink) while a client
//!   keeps requesting, a new connection each time: the new certificate is served, no request
//!   fails.
//! - Configuration reload: a broken configuration keeps the last good one serving, `/readyz`,
//!   `/metrics` and the log (the located diagnostic) say so; the fixed one is picked up; the
//!   same with a ConfigMap-style directory.
//! - Abuse: bodies above `--max-request-bytes` (by Content-Length, and chunked), malformed JSON,
//!   a wrong content type, GET on the review path, a client that stalls in its headers, in its
//!   body, in its TLS handshake, 1,000 connections at once, SIGTERM with 50 requests in flight
//!   (they complete, new connections are refused, exit 0, `drained`). The server is alive and
//!   answering after each.
//! - Connections (`serve/connections.rs`): closed when idle, HTTP/1.1 and HTTP/2; SIGTERM
//!   with keep-alive clients and an HTTP/2 client.
//! - Bounds (`serve/bounds.rs`): the budget of bytes in flight, the write timeout, the review
//!   limits, JSON only, abandoned work, the connection cap, closed metric labels, reloads of a
//!   file written in parts; the server's peak memory against the printed Deployment's limit.
//! - What the server writes is what docs/serve.md lists (`serve/observe.rs`).
//!
//! The request handler is also fuzzed (`kinject::fuzz::serve`, tests/fuzz.rs).

mod bounds;
mod connections;
mod load;
mod observe;
mod parity;

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::serve::{
    self, Ca, ClientOptions, Pki, Server, closed_within, connect, eventually, get, head, post,
    read_response, request, strings,
};

/// The tutorial's configuration: pods labelled `sidecar.me/inject: "true"` get `curl`.
fn config_text(image: &str) -> String {
    format!(
        "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: curl\n  containers:\n  - name: curl\n    image: {image}\nrules:\n- name: labelled-pods\n  match:\n    labelSelector:\n      matchLabels:\n        sidecar.me/inject: \"true\"\n  inject: [curl]\n"
    )
}

fn pod(name: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop", "labels": {"sidecar.me/inject": "true"}},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}
    })
}

fn pod_review(uid: &str) -> Value {
    serve::review(&pod(uid), Some("shop"), uid)
}

/// A test's directory: the configuration (`config.yaml`) and the certificates.
struct Setup {
    dir: tempfile::TempDir,
    pki: Pki,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("config.yaml"), config_text("curl:1")).expect("write");
        let pki = Pki::new(dir.path());
        Setup { dir, pki }
    }

    fn config(&self) -> String {
        self.dir.path().join("config.yaml").display().to_string()
    }

    /// A server with `-c config.yaml`, the certificates, and `extra`.
    fn server(&self, extra: &[&str]) -> Server {
        let mut args = strings(&["-c", &self.config(), "--probe-listen", "127.0.0.1:0"]);
        args.extend(self.pki.server_args());
        args.extend(strings(extra));
        Server::start(self.dir.path(), &args)
    }

    fn client(&self) -> std::sync::Arc<tokio_rustls::rustls::ClientConfig> {
        ClientOptions::trusting(&[&self.pki.ca.pem()]).config()
    }
}

/// Posts a pod's review on a new connection and checks it is injected.
fn answers(server: &mut Server, client: &std::sync::Arc<tokio_rustls::rustls::ClientConfig>) {
    assert!(server.alive(), "the server died:\n{}", server.log());
    let mut tls = connect(server.addr, client).expect("connect");
    let response = post(&mut tls, &pod_review("still-alive")).expect("an answer");
    assert_eq!(response.status, 200, "{}", response.text());
    let answer = response.json();
    assert_eq!(answer["response"]["allowed"], true, "{answer}");
    assert!(
        serve::patch_text(&answer).contains("curl"),
        "not injected: {answer}"
    );
}

#[test]
fn client_certificates_are_checked_at_the_handshake() {
    let setup = Setup::new();
    let mut args = strings(&["-c", &setup.config()]);
    args.extend(setup.pki.mutual_args());
    let server = Server::start(setup.dir.path(), &args);
    let ca = setup.pki.ca.pem();

    let mut tls = connect(server.addr, &setup.pki.client_config()).expect("handshake");
    let response = post(&mut tls, &pod_review("mtls")).expect("an answer");
    assert_eq!(response.status, 200);
    assert_eq!(response.json()["response"]["uid"], "mtls");

    // In TLS 1.3 the client's handshake is over before the server has read its certificate:
    // the refusal (an alert) comes with the first read.
    let refused = |options: ClientOptions<'_>| {
        let outcome = connect(server.addr, &options.config())
            .and_then(|mut tls| post(&mut tls, &pod_review("refused")));
        assert!(outcome.is_err(), "answered: {outcome:?}");
        outcome.expect_err("refused").to_string()
    };
    let none = refused(ClientOptions::trusting(&[&ca]));
    assert!(none.to_lowercase().contains("certificate"), "{none}");
    let mut stranger = ClientOptions::trusting(&[&ca]);
    stranger.identity = Some(&setup.pki.stranger);
    let why = refused(stranger);
    assert!(
        why.contains("UnknownCA") || why.to_lowercase().contains("certificate"),
        "{why}"
    );
    let mut tls = connect(server.addr, &setup.pki.client_config()).expect("handshake");
    assert_eq!(
        post(&mut tls, &pod_review("after")).expect("answer").status,
        200
    );
}

#[test]
fn tls_versions_and_alpn() {
    use tokio_rustls::rustls::{ProtocolVersion, version};
    let setup = Setup::new();
    let server = setup.server(&[]);
    let ca = setup.pki.ca.pem();
    for (v, want) in [
        (&version::TLS12, ProtocolVersion::TLSv1_2),
        (&version::TLS13, ProtocolVersion::TLSv1_3),
    ] {
        let mut options = ClientOptions::trusting(&[&ca]);
        options.versions = vec![v];
        let mut tls = connect(server.addr, &options.config()).expect("handshake");
        assert_eq!(tls.conn.protocol_version(), Some(want));
        assert_eq!(tls.conn.alpn_protocol(), Some(&b"http/1.1"[..]));
        // Two requests on one connection: keep-alive.
        for uid in ["first", "second"] {
            let response = post(&mut tls, &pod_review(uid)).expect("an answer");
            assert_eq!(response.status, 200, "{want:?}");
            assert_eq!(response.json()["response"]["uid"], uid);
        }
    }
    // h2 is offered and chosen when the client prefers it; an HTTP/2 connection preface is
    // then answered with the server's SETTINGS frame (type 4).
    let mut options = ClientOptions::trusting(&[&ca]);
    options.alpn = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let mut tls = connect(server.addr, &options.config()).expect("handshake");
    assert_eq!(tls.conn.alpn_protocol(), Some(&b"h2"[..]));
    tls.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0")
        .expect("preface");
    let mut frame = [0u8; 9];
    std::io::Read::read_exact(&mut tls, &mut frame).expect("a frame");
    assert_eq!(frame[3], 4, "not a SETTINGS frame: {frame:?}");
}

/// A Secret volume's layout: `..data` → a timestamped directory holding the files, and each
/// file a symlink to `..data/<file>`. `swap` makes a new directory and moves `..data` to it
/// in one rename, as the kubelet does.
struct Projected {
    dir: std::path::PathBuf,
    generation: u32,
}

impl Projected {
    fn new(dir: &Path, files: &[(&str, &str)]) -> Projected {
        std::fs::create_dir_all(dir).expect("mkdir");
        let mut projected = Projected {
            dir: dir.to_owned(),
            generation: 0,
        };
        projected.swap(files);
        for (name, _) in files {
            std::os::unix::fs::symlink(format!("..data/{name}"), dir.join(name)).expect("link");
        }
        projected
    }

    fn swap(&mut self, files: &[(&str, &str)]) {
        self.generation += 1;
        let old = format!("..{}", self.generation - 1);
        let new = format!("..{}", self.generation);
        std::fs::create_dir(self.dir.join(&new)).expect("mkdir");
        for (name, text) in files {
            std::fs::write(self.dir.join(&new).join(name), text).expect("write");
        }
        let tmp = self.dir.join("..data_tmp");
        std::os::unix::fs::symlink(&new, &tmp).expect("link");
        std::fs::rename(&tmp, self.dir.join("..data")).expect("swap");
        let _ = std::fs::remove_dir_all(self.dir.join(old));
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }
}

#[test]
fn certificates_swapped_under_load() {
    let setup = Setup::new();
    let first = setup.pki.ca.server();
    let next_ca = Ca::new("the next CA");
    let next = next_ca.server();
    let mut secret = Projected::new(
        &setup.dir.path().join("secret"),
        &[("tls.crt", &first.cert), ("tls.key", &first.key)],
    );
    let args = strings(&[
        "-c",
        &setup.config(),
        "--tls-cert-file",
        &secret.path("tls.crt"),
        "--tls-private-key-file",
        &secret.path("tls.key"),
        "--reload-interval",
        "0.2",
    ]);
    let mut server = Server::start(setup.dir.path(), &args);
    let (old_pem, new_pem) = (setup.pki.ca.pem(), next_ca.pem());
    let client = ClientOptions::trusting(&[&old_pem, &new_pem]).config();
    let new_der = serve::der(&next.cert);
    let addr = server.addr;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopped = std::sync::Arc::clone(&stop);
    // The client: a new connection per request, until told to stop; what each one got.
    let load = std::thread::spawn(move || {
        let mut seen = Vec::new();
        while !stopped.load(std::sync::atomic::Ordering::SeqCst) {
            let outcome = connect(addr, &client).and_then(|mut tls| {
                let peer = tls.conn.peer_certificates().expect("a peer")[0].to_vec();
                let response = post(&mut tls, &pod_review("swap"))?;
                Ok((peer, response.status))
            });
            seen.push(outcome.map_err(|e| e.to_string()));
        }
        seen
    });
    // Some requests with the first certificate, then the swap.
    eventually(Duration::from_secs(30), || {
        server
            .lines()
            .iter()
            .filter(|l| l["msg"] == "review")
            .nth(20)
            .cloned()
    })
    .expect("the client's requests are answered");
    secret.swap(&[("tls.crt", &next.cert), ("tls.key", &next.key)]);
    server
        .wait_line(Duration::from_secs(30), |l| {
            l["msg"] == "certificates reloaded"
        })
        .unwrap_or_else(|| panic!("no reload:\n{}", server.log()));
    // Let the client make more requests with the new certificate.
    let reloaded_at = server.lines().len();
    eventually(Duration::from_secs(30), || {
        (server.lines().len() > reloaded_at + 20).then_some(())
    })
    .expect("requests after the swap");
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let seen = load.join().expect("the client");
    let failed: Vec<&String> = seen.iter().filter_map(|r| r.as_ref().err()).collect();
    assert!(
        failed.is_empty(),
        "{} requests failed: {failed:?}",
        failed.len()
    );
    assert!(
        seen.iter().flatten().all(|(_, status)| *status == 200),
        "not every answer is a 200"
    );
    let certs: Vec<bool> = seen
        .iter()
        .flatten()
        .map(|(peer, _)| *peer == new_der)
        .collect();
    assert!(
        !certs[0],
        "the first request already saw the new certificate"
    );
    assert!(certs[certs.len() - 1], "the new certificate is not served");
    answers(&mut server, &ClientOptions::trusting(&[&new_pem]).config());
}

/// Posts a pod's review; the decoded patch.
fn patch_now(
    server: &Server,
    client: &std::sync::Arc<tokio_rustls::rustls::ClientConfig>,
) -> String {
    let mut tls = connect(server.addr, client).expect("connect");
    let response = post(&mut tls, &pod_review("reload")).expect("an answer");
    assert_eq!(response.status, 200);
    let answer = response.json();
    assert_eq!(answer["response"]["allowed"], true, "{answer}");
    serve::patch_text(&answer)
}

/// A configuration with an unknown field on line 7 (`imag` for `image`).
const BROKEN: &str = "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: curl\n  containers:\n  - name: curl\n    imag: curl:2\nrules:\n- name: labelled-pods\n  inject: [curl]\n";

/// What a broken configuration and its fix do to a server that reads `config` (which
/// `write` replaces).
fn reload_cycle(setup: &Setup, server: &Server, write: &mut dyn FnMut(&str)) {
    let client = setup.client();
    assert!(patch_now(server, &client).contains("curl:1"));
    write(BROKEN);
    let failed = server
        .wait_line(Duration::from_secs(30), |l| {
            l["msg"]
                .as_str()
                .is_some_and(|m| m.starts_with("configuration not reloaded"))
        })
        .unwrap_or_else(|| panic!("no failed reload in the log:\n{}", server.log()));
    let said = failed["errors"].to_string();
    assert!(
        said.contains("config.yaml:7:5"),
        "no located diagnostic (config.yaml:7:5): {said}"
    );
    assert!(
        patch_now(server, &client).contains("curl:1"),
        "the last good configuration does not serve"
    );
    let ready = server.probe("/readyz");
    assert_eq!(ready.status, 200, "{}", ready.text());
    assert!(
        ready.text().contains("[-]config-reload failed"),
        "{}",
        ready.text()
    );
    let metrics = server.probe("/metrics").text();
    assert!(
        metrics.contains("kinject_load_successful{what=\"config\"} 0"),
        "{metrics}"
    );
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("kinject_reloads_total{")
                && l.contains("what=\"config\"")
                && l.contains("result=\"failure\"")
                && !l.ends_with(" 0")),
        "{metrics}"
    );
    write(&config_text("curl:2"));
    let patch = eventually(Duration::from_secs(30), || {
        let patch = patch_now(server, &client);
        patch.contains("curl:2").then_some(patch)
    });
    assert!(
        patch.is_some(),
        "the fixed configuration is not picked up:\n{}",
        server.log()
    );
    let ready = server.probe("/readyz").text();
    assert!(!ready.contains("[-]"), "{ready}");
    let metrics = server.probe("/metrics").text();
    assert!(
        metrics.contains("kinject_load_successful{what=\"config\"} 1"),
        "{metrics}"
    );
}

#[test]
fn a_broken_configuration_keeps_the_last_good_one() {
    let setup = Setup::new();
    let server = setup.server(&["--reload-interval", "0.2"]);
    let path = setup.dir.path().join("config.yaml");
    reload_cycle(&setup, &server, &mut |text| {
        std::fs::write(&path, text).expect("write");
    });
}

/// A new configuration whose rules need another webhook configuration (here a namespace
/// label selector, which the webhook's `namespaceSelector` must carry) is refused on reload:
/// the API server still sends what the old webhook configuration selects.
#[test]
fn a_configuration_needing_another_webhook_is_not_reloaded() {
    let setup = Setup::new();
    let server = setup.server(&["--reload-interval", "0.2"]);
    let client = setup.client();
    let with_selector = config_text("curl:2").replace(
        "  match:\n",
        "  match:\n    namespaceSelector:\n      matchLabels:\n        team: shop\n",
    );
    assert!(with_selector.contains("team: shop"), "{with_selector}");
    std::fs::write(setup.dir.path().join("config.yaml"), &with_selector).expect("write");
    let refused = server
        .wait_line(Duration::from_secs(30), |l| {
            l["msg"]
                .as_str()
                .is_some_and(|m| m.starts_with("configuration not reloaded"))
        })
        .unwrap_or_else(|| panic!("no refused reload in the log:\n{}", server.log()));
    let said = refused["errors"].to_string();
    assert!(
        said.contains("kinject::serve::webhook_changed") && said.contains("config.yaml:"),
        "{said}"
    );
    assert!(
        patch_now(&server, &client).contains("curl:1"),
        "the configuration before keeps serving"
    );
    assert!(
        server
            .probe("/readyz")
            .text()
            .contains("[-]config-reload failed")
    );
}

#[test]
fn a_configmap_directory_is_reloaded() {
    let setup = Setup::new();
    let dir = setup.dir.path().join("configmap");
    let mut projected = Projected::new(&dir, &[("config.yaml", &config_text("curl:1"))]);
    let mut args = strings(&[
        "-c",
        &dir.display().to_string(),
        "--probe-listen",
        "127.0.0.1:0",
        "--reload-interval",
        "0.2",
    ]);
    args.extend(setup.pki.server_args());
    let server = Server::start(setup.dir.path(), &args);
    reload_cycle(&setup, &server, &mut |text| {
        projected.swap(&[("config.yaml", text)]);
    });
}

#[test]
fn requests_refused_as_they_should_be() {
    let setup = Setup::new();
    let mut server = setup.server(&["--max-request-bytes", "4096"]);
    let client = setup.client();
    let on_new = |f: &dyn Fn(&mut serve::Tls) -> serve::Response| {
        let mut tls = connect(server.addr, &client).expect("connect");
        f(&mut tls)
    };
    // Declared too large: refused before the body is read.
    let big = vec![b' '; 5000];
    let r = on_new(&|tls| {
        request(tls, "POST", "/mutate", "application/json", &big).expect("an answer")
    });
    assert_eq!(r.status, 413, "{}", r.text());
    // Chunked, no Content-Length: refused when the body read passes the limit.
    let r = on_new(&|tls| {
        let mut bytes = b"POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        for _ in 0..5 {
            bytes.extend_from_slice(b"400\r\n");
            bytes.extend_from_slice(&[b' '; 1024]);
            bytes.extend_from_slice(b"\r\n");
        }
        bytes.extend_from_slice(b"0\r\n\r\n");
        tls.write_all(&bytes).expect("write");
        read_response(tls).expect("an answer")
    });
    assert_eq!(r.status, 413, "{}", r.text());
    // Malformed JSON: a review's refusal, as `kinject admission` answers it.
    let r = on_new(&|tls| {
        request(
            tls,
            "POST",
            "/mutate",
            "application/json",
            b"{\"request\": [",
        )
        .expect("answer")
    });
    assert_eq!(r.status, 200, "{}", r.text());
    let answer = r.json();
    assert_eq!(answer["response"]["allowed"], false, "{answer}");
    assert_eq!(answer["response"]["status"]["code"], 400, "{answer}");
    let r = on_new(&|tls| {
        let body = serde_json::to_vec(&pod_review("yaml")).expect("JSON");
        request(tls, "POST", "/mutate", "application/yaml", &body).expect("answer")
    });
    assert_eq!(r.status, 415, "{}", r.text());
    let r = on_new(&|tls| get(tls, "/mutate").expect("answer"));
    assert_eq!(r.status, 405, "{}", r.text());
    let r = on_new(&|tls| get(tls, "/elsewhere").expect("answer"));
    assert_eq!(r.status, 404, "{}", r.text());
    answers(&mut server, &client);
}

#[test]
fn slow_clients_cannot_hold_the_server() {
    let setup = Setup::new();
    let mut server = setup.server(&["--header-timeout", "1", "--request-timeout", "2"]);
    let client = setup.client();
    // Half the headers, then nothing.
    let opened = Instant::now();
    let mut headers = connect(server.addr, &client).expect("connect");
    headers
        .write_all(b"POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Ty")
        .expect("write");
    headers.flush().expect("flush");
    let started = Instant::now();
    // Half a body, then nothing.
    let mut body = connect(server.addr, &client).expect("connect");
    let review = serde_json::to_vec(&pod_review("slow")).expect("JSON");
    let half = head("POST", "/mutate", "application/json", review.len());
    body.write_all(half.as_bytes()).expect("write");
    body.write_all(&review[..review.len() / 2]).expect("write");
    body.flush().expect("flush");
    // A TCP connection that never says hello, and one that stops in the middle of it.
    let mut silent = serve::plain(server.addr);
    let mut halfway = serve::plain(server.addr);
    halfway
        .write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01])
        .expect("write");
    // Others are answered meanwhile.
    answers(&mut server, &client);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "answered only after the timeout"
    );
    let within = Duration::from_secs(20);
    closed_within(&mut headers, within).expect("the slow headers' connection");
    assert!(
        opened.elapsed() >= Duration::from_millis(900),
        "closed before --header-timeout: {:?}",
        opened.elapsed()
    );
    match read_response(&mut body) {
        Ok(r) => assert_eq!(r.status, 408, "{}", r.text()),
        Err(e) => assert!(
            e.kind() != std::io::ErrorKind::WouldBlock && e.kind() != std::io::ErrorKind::TimedOut,
            "the stalled body's connection is still open: {e}"
        ),
    }
    closed_within(&mut silent, within).expect("a silent client");
    closed_within(&mut halfway, within).expect("a half handshake");
    answers(&mut server, &client);
}
