//! The `limits` part of the serve benchmark: what the server's memory comes to at its limits,
//! the measurements its defaults are chosen from (docs/performance.md, "Bounds").
//!
//! The server runs with its defaults, in plain HTTP for what moves megabytes (its subject is
//! what the server holds) and TLS for the connections' own cost. Memory is the resident set's
//! peak (VmHWM, reset between measurements through /proc/PID/clear_refs) above what the idle
//! server holds.
//!
//! - One review at the limits, of each shape that makes a review costly: as many values as
//!   `--max-request-values` allows as numbers, as objects, spread over `--max-containers`
//!   containers; a body of `--max-request-bytes` (one annotation), and of the 3 MiB the API
//!   server's own limit lets through. Then two at once of the costliest (the pool that
//!   computes reviews has two threads in the Deployment `--print-manifests` prints).
//! - Bodies held: 40 connections sending nearly `--max-request-bytes` each and holding the last
//!   byte (the budget refuses what does not fit).
//! - Connections: 1,000 TLS connections idle after their handshake, and 500 each holding a
//!   request's headers but for their end (the most a connection buffers).
//! - All at once: the budget filled with held bodies, and two of the costliest reviews.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_rustls::rustls::{self, ClientConfig, ClientConnection, StreamOwned};

/// `--max-request-bytes`'s default.
const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// A server run for one measurement.
struct Limited {
    child: Child,
    address: SocketAddr,
}

impl Limited {
    /// Starts the server with `dir`'s `config.yaml`, over TLS with the certificate in `tls`
    /// (`tls.crt`, `tls.key`) or plain.
    fn start(kinject: &Path, dir: &Path, tls: Option<&Path>, extra: &[&str]) -> Limited {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let address: SocketAddr = format!("127.0.0.1:{port}").parse().expect("address");
        let mut command = Command::new(kinject);
        command
            .arg("serve")
            .arg("-c")
            .arg(dir.join("config.yaml"))
            .args(["--listen", &address.to_string()])
            .args(extra);
        if let Some(tls) = tls {
            command
                .arg("--tls-cert-file")
                .arg(tls.join("tls.crt"))
                .arg("--tls-private-key-file")
                .arg(tls.join("tls.key"));
        } else {
            command.arg("--insecure-plain-http");
        }
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start kinject serve");
        let started = Instant::now();
        while TcpStream::connect(address).is_err() {
            assert!(started.elapsed() < Duration::from_secs(10), "not listening");
            std::thread::sleep(Duration::from_millis(20));
        }
        Limited { child, address }
    }

    fn field(&self, name: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .expect("a field")
    }

    /// Resident memory now, in MB.
    fn rss(&self) -> f64 {
        self.field("VmRSS:") as f64 / 1024.0
    }

    /// The peak since the last reset, in MB.
    fn peak(&self) -> f64 {
        self.field("VmHWM:") as f64 / 1024.0
    }

    /// Starts counting the peak anew from the resident memory now.
    fn reset_peak(&self) {
        std::fs::write(format!("/proc/{}/clear_refs", self.child.id()), "5")
            .expect("reset the peak (clear_refs)");
    }

    /// Posts each body at once (one connection and thread each); their HTTP statuses, once
    /// all are answered.
    fn post_all(&self, bodies: &[Vec<u8>]) -> Vec<u16> {
        std::thread::scope(|s| {
            let posted: Vec<_> = bodies
                .iter()
                .map(|body| s.spawn(|| post(self.address, body)))
                .collect();
            posted
                .into_iter()
                .map(|p| p.join().expect("a client"))
                .collect()
        })
    }
}

impl Drop for Limited {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Posts `body` as a review; the status.
fn post(address: SocketAddr, body: &[u8]) -> u16 {
    let mut tcp = TcpStream::connect(address).expect("connect");
    let head = format!(
        "POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    tcp.write_all(head.as_bytes()).expect("write");
    tcp.write_all(body).expect("write");
    let mut answer = Vec::new();
    let _ = tcp.read_to_end(&mut answer);
    std::str::from_utf8(&answer[..answer.len().min(12)])
        .ok()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// A CREATE of a Pod labelled for the benchmark's sidecar.
fn review(object: Value) -> Vec<u8> {
    let review = json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "limits", "kind": {"group": "", "version": "v1", "kind": "Pod"},
                    "namespace": "shop", "operation": "CREATE", "object": object}
    });
    serde_json::to_vec(&review).expect("JSON")
}

fn pod(containers: Value, annotations: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "shop", "annotations": annotations,
                     "labels": {"sidecar.me/inject": "true"}},
        "spec": {"containers": containers}
    })
}

/// The shapes of a costly review, at the server's limits: (what, body).
fn shapes(max_values: usize, max_containers: usize) -> Vec<(String, Vec<u8>)> {
    // Values the envelope and the pod's own fields take, besides those made here.
    let room = max_values - 60;
    let numbers = pod(
        json!([{"name": "app", "image": "x", "args": vec![0; room]}]),
        json!({}),
    );
    let objects = pod(
        json!([{"name": "app", "image": "x", "args": vec![json!({"a": 0}); room / 3]}]),
        json!({}),
    );
    let per = room / max_containers / 3;
    let containers: Vec<Value> = (0..max_containers)
        .map(|i| {
            let env: Vec<Value> = (0..per / 2)
                .map(|j| json!({"name": format!("E{j}"), "value": "1"}))
                .collect();
            json!({"name": format!("c{i}"), "image": "x", "env": env})
        })
        .collect();
    let annotation = |bytes: usize| {
        pod(
            json!([{"name": "app", "image": "x"}]),
            json!({"big": "x".repeat(bytes - 1000)}),
        )
    };
    vec![
        (format!("{room} numbers"), review(numbers)),
        (
            format!("{} objects of one member", room / 3),
            review(objects),
        ),
        (
            format!("{max_containers} containers sharing the values"),
            review(pod(json!(containers), json!({}))),
        ),
        (
            "a 4 MiB annotation (--max-request-bytes)".to_owned(),
            review(annotation(MAX_REQUEST_BYTES)),
        ),
        (
            "a 3 MiB annotation (the API server's limit)".to_owned(),
            review(annotation(3 * 1024 * 1024)),
        ),
    ]
}

/// Holds `n` connections, each having sent all but the last byte of a body of
/// `--max-request-bytes`; those refused (503 before the body's end) are dropped.
fn hold_bodies(address: SocketAddr, n: usize) -> (Vec<TcpStream>, usize) {
    let chunk = vec![b' '; 1024 * 1024];
    let mut held = Vec::new();
    let mut refused = 0;
    for _ in 0..n {
        let mut tcp = TcpStream::connect(address).expect("connect");
        let head = format!(
            "POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {MAX_REQUEST_BYTES}\r\n\r\n"
        );
        let mut sent = tcp.write_all(head.as_bytes());
        for _ in 0..MAX_REQUEST_BYTES / chunk.len() - 1 {
            sent = sent.and_then(|()| tcp.write_all(&chunk));
        }
        sent = sent.and_then(|()| tcp.write_all(&chunk[..chunk.len() - 1]));
        match sent {
            Ok(()) => held.push(tcp),
            Err(_) => refused += 1,
        }
    }
    (held, refused)
}

/// A TLS connection, its handshake done.
fn tls_connection(
    address: SocketAddr,
    config: &Arc<ClientConfig>,
) -> StreamOwned<ClientConnection, TcpStream> {
    let tcp = TcpStream::connect(address).expect("connect");
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("name");
    let connection = ClientConnection::new(Arc::clone(config), name).expect("client");
    let mut tls = StreamOwned::new(connection, tcp);
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock).expect("handshake");
    }
    tls
}

/// The part: prints what it measures.
pub(crate) fn run(kinject: &Path, dir: &Path, certificate: &Path, tls: &Arc<ClientConfig>) {
    let help = Command::new(kinject)
        .args(["serve", "--help"])
        .output()
        .expect("kinject serve --help");
    // Words only: clap wraps the text, `[default:` and its value among it.
    let help = String::from_utf8_lossy(&help.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let default = |flag: &str| -> usize {
        let at = help.find(flag).expect("the flag in --help");
        help[at..]
            .split("[default: ")
            .nth(1)
            .and_then(|d| d.split(']').next())
            .and_then(|d| d.parse().ok())
            .expect("its default")
    };
    let (max_values, max_containers) =
        (default("--max-request-values"), default("--max-containers"));
    let budget = default("--max-in-flight-bytes");
    // Each measurement on a server of its own: memory an earlier one freed would be counted
    // again (the allocator keeps it) or reused.
    let fresh = || {
        let server = Limited::start(kinject, dir, None, &[]);
        post(
            server.address,
            &review(pod(json!([{"name": "app", "image": "x"}]), json!({}))),
        );
        let idle = server.rss();
        server.reset_peak();
        (server, idle)
    };
    println!(
        "limits (defaults: --max-request-values {max_values}, --max-containers {max_containers}, --max-in-flight-bytes {budget}): VmRSS idle {:.1} MB",
        fresh().1
    );
    let mut costliest = (0.0, Vec::new());
    for (what, body) in shapes(max_values, max_containers) {
        let (server, idle) = fresh();
        let started = Instant::now();
        let status = server.post_all(std::slice::from_ref(&body))[0];
        let took = started.elapsed();
        let above = server.peak() - idle;
        println!(
            "  one review, {what} ({:.1} MB): HTTP {status}, peak +{above:.1} MB, {:.0} ms",
            body.len() as f64 / 1e6,
            took.as_secs_f64() * 1e3
        );
        if above > costliest.0 {
            costliest = (above, body);
        }
    }
    let worst = costliest.1;
    let (server, idle) = fresh();
    let statuses = server.post_all(&[worst.clone(), worst.clone()]);
    println!(
        "  two of the costliest at once: {statuses:?}, peak +{:.1} MB",
        server.peak() - idle
    );
    let (server, idle) = fresh();
    let (held, refused) = hold_bodies(server.address, 40);
    std::thread::sleep(Duration::from_millis(300));
    println!(
        "  40 bodies of 4 MiB held: {} held, {refused} refused while sending, peak +{:.1} MB",
        held.len(),
        server.peak() - idle
    );
    drop(held);
    drop(server);

    let server = Limited::start(kinject, dir, Some(certificate), &[]);
    post_tls_warm(&server, tls);
    let before = server.rss();
    let idle_connections: Vec<_> = (0..1000)
        .map(|_| tls_connection(server.address, tls))
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let idle_each = (server.rss() - before) * 1024.0 / 1000.0;
    drop(idle_connections);
    std::thread::sleep(Duration::from_millis(300));
    let before = server.rss();
    let headers: Vec<_> = (0..500)
        .map(|_| {
            let mut tls = tls_connection(server.address, tls);
            let mut head = b"POST /mutate HTTP/1.1\r\nHost: localhost\r\n".to_vec();
            while head.len() < 15 * 1024 {
                head.extend_from_slice(b"X-Filler: 0123456789012345678901234567890123456789\r\n");
            }
            tls.write_all(&head).expect("write");
            tls.flush().expect("flush");
            tls
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let headers_each = (server.rss() - before) * 1024.0 / 500.0;
    drop(headers);
    println!(
        "  connections (TLS): {idle_each:.1} KB each idle after the handshake, {headers_each:.1} KB each holding 15 KB of headers"
    );
    drop(server);

    let (server, idle) = fresh();
    let room = budget.saturating_sub(2 * worst.len()) / MAX_REQUEST_BYTES;
    let (held, _) = hold_bodies(server.address, room);
    let statuses = server.post_all(&[worst.clone(), worst]);
    println!(
        "  all at once: the budget filled by {} held bodies, and two of the costliest reviews ({statuses:?}): peak {:.1} MB (+{:.1} MB), the Deployment's limit 256 MiB",
        held.len(),
        server.peak(),
        server.peak() - idle
    );
}

/// One review over TLS, so that the server's TLS and HTTP state is warm before counting.
fn post_tls_warm(server: &Limited, tls: &Arc<ClientConfig>) {
    let mut connection = tls_connection(server.address, tls);
    let body = review(pod(json!([{"name": "app", "image": "x"}]), json!({})));
    let head = format!(
        "POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    connection.write_all(head.as_bytes()).expect("write");
    connection.write_all(&body).expect("write");
    let mut answer = Vec::new();
    let _ = connection.read_to_end(&mut answer);
}
