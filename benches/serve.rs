//! `kinject serve`'s speed, measured: `cargo bench --bench serve` (a few minutes).
//!
//! Starts the `kinject serve` cargo built for the benchmark (release profile) on loopback TLS,
//! with certificates made at start (ECDSA P-256 by rcgen, as tests make; RSA 2048 by `openssl`,
//! cert-manager's default; `KINJECT_BENCH_SERVE_KEYS=ecdsa,rsa`), its log (one JSON line
//! per review) written to a file, and sends it a typical review: a Pod CREATE as the API
//! server sends it (defaults filled in, a service-account token volume, managed fields, about
//! 4 KB), which the configuration gives a sidecar with a volume (the README's log-shipper). The
//! load is generated here, in this process (hyper's client over tokio-rustls, on one thread):
//! client and server share the machine's cores, so each part also says how much CPU the server
//! itself spent per review, read from /proc — its capacity on a core of its own.
//!
//! The parts (`KINJECT_BENCH_SERVE_PARTS`, comma-separated; all by default):
//! - `keepalive`: closed loop, N keep-alive HTTP/1.1 connections (`KINJECT_BENCH_SERVE_CONNECTIONS`,
//!   default 4,16,64), each sending a request as soon as the last is answered, for
//!   `KINJECT_BENCH_SERVE_RUN` seconds (default 5): reviews/s, p50/p99/max latency;
//! - `h2`: the same over one HTTP/2 connection with N streams in flight (how the API server's
//!   Go client talks to a webhook that offers h2);
//! - `pinned`: `keepalive` again with the server on CPU 0 (`taskset`) and the client on CPU 1
//!   (two cores or more);
//! - `open`: open loop at a fixed rate (`KINJECT_BENCH_SERVE_RATE`, default 1000/s) over 16
//!   keep-alive connections, each request scheduled on a timer and its latency counted from
//!   the time it was scheduled (a late answer delays the requests behind it, and that counts:
//!   no coordinated omission): p50/p99/p99.9/max;
//! - `fresh`: a new TCP connection and full TLS handshake per request (no resumption; and with
//!   TLS 1.3 resumption), 4 clients in a closed loop;
//! - `process`: the same reviews answered by `kinject admission` as a process per request
//!   (spawn, request on stdin, answer on stdout), 2 at a time: what serving saves;
//! - `memory`: the server's resident memory (VmRSS) sampled every 2 s during a steady run at
//!   the open loop's rate for `KINJECT_BENCH_SERVE_SECONDS` (default 20; the documented run is
//!   600): at start (after 5 s of warm-up), max, end, growth;
//! - `limits`: the server's memory at its limits (`limits.rs` says what it measures): the
//!   figures its defaults are chosen from.
//!
//! `KINJECT_BENCH_SERVE_LOG=null` sends the server's log to /dev/null instead of a file;
//! `KINJECT_BENCH_SERVE_BIN=PATH` runs another kinject (an A/B of two builds in one session).
//! The parts over TLS run once per key kind; a calibration line at the start and at the end
//! (serde_json reading the review on one core) says how fast the machine was meanwhile, so
//! the figures scale to another machine.
//! docs/performance.md (`kinject serve`) records a run and how to read it.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::{self, ClientConfig, RootCertStore};

#[path = "serve/limits.rs"]
mod limits;

const CONFIG: &str = r#"apiVersion: kinject.dev/v1alpha1
kind: InjectionConfig
sidecars:
- name: log-shipper
  containers:
  - name: log-shipper
    image: "registry.example.com/shipper:{{ values.version }}"
    volumeMounts:
    - {name: app-logs, mountPath: /var/log/app, readOnly: true}
  volumes:
  - {name: app-logs, emptyDir: {}}
  volumeMounts:
  - {name: app-logs, mountPath: /var/log/app}
values:
  version: "2.1"
rules:
- name: labelled-pods
  match:
    labelSelector:
      matchLabels: {sidecar.me/inject: "true"}
  inject: [log-shipper]
"#;

fn main() {
    let parts = env_or(
        "KINJECT_BENCH_SERVE_PARTS",
        "keepalive,h2,pinned,open,fresh,process,memory,limits".to_owned(),
    );
    let parts: Vec<&str> = parts.split(',').map(str::trim).collect();
    let run = Duration::from_secs_f64(env_or("KINJECT_BENCH_SERVE_RUN", 5.0));
    let memory_run = Duration::from_secs_f64(env_or("KINJECT_BENCH_SERVE_SECONDS", 20.0));
    let rate: f64 = env_or("KINJECT_BENCH_SERVE_RATE", 1000.0);
    let connections: Vec<usize> = env_or("KINJECT_BENCH_SERVE_CONNECTIONS", "4,16,64".to_owned())
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    let log_to_null = std::env::var("KINJECT_BENCH_SERVE_LOG").is_ok_and(|v| v == "null");

    // Another build to compare with (an A/B in one session), or the one cargo built.
    let kinject = std::env::var_os("KINJECT_BENCH_SERVE_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_kinject")),
        PathBuf::from,
    );
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("serve");
    std::fs::create_dir_all(&dir).expect("bench directory");
    let config = dir.join("config.yaml");
    std::fs::write(&config, CONFIG).expect("write config");
    let request = Bytes::from(serde_json::to_vec(&pod_review()).expect("request"));
    std::fs::write(dir.join("request.json"), &request).expect("write request");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let bench_with = |key: Key| {
        let roots = key.certificate(&dir);
        let client_config = |alpn: &[u8], resume: bool| {
            let mut c = ClientConfig::builder_with_provider(Arc::clone(&provider))
                .with_safe_default_protocol_versions()
                .expect("protocol versions")
                .with_root_certificates(roots.clone())
                .with_no_client_auth();
            c.alpn_protocols = vec![alpn.to_vec()];
            if !resume {
                c.resumption = rustls::client::Resumption::disabled();
            }
            Arc::new(c)
        };
        Bench {
            kinject: kinject.clone(),
            dir: dir.clone(),
            key,
            log_to_null,
            request: request.clone(),
            http1: client_config(b"http/1.1", false),
            h2: client_config(b"h2", false),
            resuming: client_config(b"http/1.1", true),
        }
    };
    let keys: Vec<Key> = env_or("KINJECT_BENCH_SERVE_KEYS", "ecdsa,rsa".to_owned())
        .split(',')
        .filter_map(|k| match k.trim() {
            "ecdsa" => Some(Key::Ecdsa),
            "rsa" => Some(Key::Rsa),
            _ => None,
        })
        .collect();
    let benches: Vec<Bench> = keys.into_iter().map(bench_with).collect();
    let bench = benches
        .first()
        .expect("KINJECT_BENCH_SERVE_KEYS names ecdsa or rsa");

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "kinject serve ({cores} cores, load average {}): TLS 1.3 ({}), log to {}, request {} bytes (a Pod CREATE), client on one thread in this process",
        load_average(),
        benches
            .iter()
            .map(|b| b.key.name())
            .collect::<Vec<_>>()
            .join(", then "),
        if log_to_null { "/dev/null" } else { "a file" },
        request.len()
    );
    // A figure of this machine at this moment, to scale the others by: the same fixed work
    // on one core at the start and at the end of the run.
    calibration("at the start", &request);
    let expected = admission_answer(&kinject, &config, &request);

    let client = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("client runtime")
    };
    let wanted = |p: &str| parts.contains(&p);
    for bench in benches
        .iter()
        .filter(|_| wanted("keepalive") || wanted("h2") || wanted("open") || wanted("fresh"))
    {
        println!("  {}:", bench.key.name());
        let server = bench.start(None);
        let rt = client();
        let answer = rt.block_on(server.one(bench));
        assert_eq!(
            serde_json::from_slice::<Value>(&answer).expect("the server's answer is JSON"),
            expected,
            "the server answers as `kinject admission` does"
        );
        println!(
            "  the server's answer ({} bytes) is `kinject admission`'s",
            answer.len()
        );
        if wanted("keepalive") {
            for &n in &connections {
                let r = rt.block_on(server.closed_loop(bench, n, run, Transport::Http1));
                r.print(&format!("keep-alive HTTP/1.1, {n:>2} connections"));
            }
        }
        if wanted("h2") {
            for &n in &connections {
                let r = rt.block_on(server.closed_loop(bench, n, run, Transport::H2));
                r.print(&format!("HTTP/2, 1 connection, {n:>2} streams"));
            }
        }
        if wanted("open") {
            let r =
                rt.block_on(server.open_loop(bench, rate, 16, run.max(Duration::from_secs(10))));
            r.print(&format!("open loop {rate:.0}/s, 16 connections"));
        }
        if wanted("fresh") {
            for (resume, name) in [(false, "full handshake"), (true, "TLS 1.3 resumption")] {
                let r = rt.block_on(server.closed_loop(bench, 4, run, Transport::Fresh { resume }));
                r.print(&format!("new connection per request, 4 clients, {name}"));
            }
        }
        server.stop();
    }
    if wanted("pinned") && cores >= 2 {
        let server = bench.start(Some(0));
        // The client's runtime is made on a thread pinned to CPU 1 (its threads inherit it).
        let r = std::thread::scope(|s| {
            s.spawn(|| {
                pin_to(1);
                let rt = client();
                rt.block_on(server.one(bench));
                connections
                    .iter()
                    .map(|&n| {
                        (
                            n,
                            rt.block_on(server.closed_loop(bench, n, run, Transport::Http1)),
                        )
                    })
                    .collect::<Vec<_>>()
            })
            .join()
            .expect("pinned client")
        });
        for (n, r) in r {
            r.print(&format!("pinned, keep-alive HTTP/1.1, {n:>2} connections"));
        }
        server.stop();
    }
    if wanted("process") {
        let r = process_per_request(&kinject, &config, &request, 2, run);
        r.print("kinject admission, a process per request, 2 at a time");
    }
    if wanted("memory") {
        let server = bench.start(None);
        let rt = client();
        rt.block_on(server.one(bench));
        let warm_up = Duration::from_secs(5).min(memory_run / 4);
        let samples = Arc::new(std::sync::Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let sampler = {
            let (samples, stop, pid) = (Arc::clone(&samples), Arc::clone(&stop), server.pid());
            std::thread::spawn(move || {
                let started = Instant::now();
                while !stop.load(Ordering::Relaxed) {
                    if let Some((kb, threads)) = rss_and_threads(pid) {
                        samples
                            .lock()
                            .expect("samples")
                            .push((started.elapsed(), kb, threads));
                    }
                    let next =
                        Duration::from_secs(2) * (samples.lock().expect("samples").len() as u32);
                    std::thread::sleep(
                        next.saturating_sub(started.elapsed())
                            .max(Duration::from_millis(10)),
                    );
                }
            })
        };
        let r = rt.block_on(server.open_loop(bench, rate, 16, memory_run));
        stop.store(true, Ordering::Relaxed);
        sampler.join().expect("sampler");
        let samples = samples.lock().expect("samples").clone();
        let csv: String = samples
            .iter()
            .map(|(t, kb, threads)| format!("{:.1},{kb},{threads}\n", t.as_secs_f64()))
            .collect();
        std::fs::write(
            dir.join("memory.csv"),
            format!("seconds,rss_kb,threads\n{csv}"),
        )
        .expect("write memory.csv");
        let after: Vec<(u64, u64)> = samples
            .iter()
            .filter(|(t, _, _)| *t >= warm_up)
            .map(|&(_, kb, threads)| (kb, threads))
            .collect();
        let first = samples.first().map_or(0, |s| s.1);
        if let (Some(&(start, threads_start)), Some(&(end, threads_end))) =
            (after.first(), after.last())
        {
            let max = after.iter().map(|s| s.0).max().unwrap_or(end);
            let threads_max = after.iter().map(|s| s.1).max().unwrap_or(threads_end);
            println!(
                "memory, {rate:.0}/s for {:.0} s: VmRSS at the first review {:.1} MB, after {:.0} s of warm-up {:.1} MB, max {:.1} MB, end {:.1} MB: growth {:+.1} % (max {:+.1} %), {} samples (memory.csv); threads {threads_start}, max {threads_max}, end {threads_end}",
                memory_run.as_secs_f64(),
                first as f64 / 1024.0,
                warm_up.as_secs_f64(),
                start as f64 / 1024.0,
                max as f64 / 1024.0,
                end as f64 / 1024.0,
                (end as f64 / start as f64 - 1.0) * 100.0,
                (max as f64 / start as f64 - 1.0) * 100.0,
                samples.len()
            );
        }
        r.print(&format!("  (latency over the memory run, {rate:.0}/s)"));
        server.stop();
    }
    if wanted("limits") {
        limits::run(&kinject, &dir, &bench.key.dir(&dir), &bench.http1);
    }
    calibration("at the end", &request);
    println!("load average at the end: {}", load_average());
}

/// The kind of key the server's certificate has (`KINJECT_BENCH_SERVE_KEYS`): ECDSA P-256, as
/// the tests make, or RSA 2048, cert-manager's default and what most clusters' webhooks have.
#[derive(Clone, Copy)]
enum Key {
    Ecdsa,
    Rsa,
}

impl Key {
    fn name(self) -> &'static str {
        match self {
            Key::Ecdsa => "ECDSA P-256",
            Key::Rsa => "RSA 2048",
        }
    }

    /// Where its `tls.crt` and `tls.key` are.
    fn dir(self, dir: &Path) -> PathBuf {
        dir.join(match self {
            Key::Ecdsa => "ecdsa",
            Key::Rsa => "rsa",
        })
    }

    /// Makes a self-signed certificate for localhost with a key of this kind (rcgen for
    /// ECDSA; `openssl` for RSA, which ring cannot generate) and returns it as the client's
    /// only root.
    fn certificate(self, dir: &Path) -> RootCertStore {
        let at = self.dir(dir);
        std::fs::create_dir_all(&at).expect("certificate directory");
        let (crt, key) = (at.join("tls.crt"), at.join("tls.key"));
        match self {
            Key::Ecdsa => {
                let certified = rcgen::generate_simple_self_signed(vec![
                    "localhost".to_owned(),
                    "127.0.0.1".to_owned(),
                ])
                .expect("certificate");
                std::fs::write(&crt, certified.cert.pem()).expect("write certificate");
                std::fs::write(&key, certified.signing_key.serialize_pem()).expect("write key");
            }
            Key::Rsa => {
                // ring signs with an RSA key but cannot make one: openssl makes the key
                // (PKCS #8), rcgen the certificate, as for ECDSA.
                let status = Command::new("openssl")
                    .args([
                        "genpkey",
                        "-algorithm",
                        "RSA",
                        "-pkeyopt",
                        "rsa_keygen_bits:2048",
                    ])
                    .arg("-out")
                    .arg(&key)
                    .stderr(Stdio::null())
                    .status()
                    .expect(
                        "openssl makes the RSA key (KINJECT_BENCH_SERVE_KEYS=ecdsa without it)",
                    );
                assert!(status.success(), "openssl genpkey: {status}");
                let pem = std::fs::read_to_string(&key).expect("the RSA key");
                let signing_key =
                    rcgen::KeyPair::from_pem_and_sign_algo(&pem, &rcgen::PKCS_RSA_SHA256)
                        .expect("an RSA key rcgen signs with");
                let cert = rcgen::CertificateParams::new(vec![
                    "localhost".to_owned(),
                    "127.0.0.1".to_owned(),
                ])
                .and_then(|params| params.self_signed(&signing_key))
                .expect("certificate");
                std::fs::write(&crt, cert.pem()).expect("write certificate");
            }
        }
        let pem = std::fs::read(&crt).expect("certificate");
        use rustls_pki_types::pem::PemObject;
        let der = rustls_pki_types::CertificateDer::pem_slice_iter(&pem)
            .next()
            .expect("a certificate")
            .expect("PEM");
        let mut roots = RootCertStore::empty();
        roots.add(der).expect("root");
        roots
    }
}

/// Prints the calibration line: serde_json reading `request` (the review every part sends)
/// 20,000 times on one core, best of five: how fast this machine is at this moment at the
/// kind of work a review is, for scaling the other figures to another machine.
fn calibration(when: &str, request: &[u8]) {
    const READS: u32 = 20_000;
    let best = (0..5)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..READS {
                let v: Value = serde_json::from_slice(std::hint::black_box(request))
                    .expect("the request is JSON");
                std::hint::black_box(v);
            }
            started.elapsed()
        })
        .min()
        .unwrap_or_default();
    println!(
        "calibration {when}: serde_json reads the {}-byte request {READS} times in {:.0} ms on one core ({:.1} us each), load average {}",
        request.len(),
        best.as_secs_f64() * 1000.0,
        best.as_secs_f64() * 1e6 / f64::from(READS),
        load_average()
    );
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A Pod CREATE as the API server sends it to a mutating webhook: the ReplicaSet
/// controller's pod, defaults filled in, the service-account token volume added.
fn pod_review() -> Value {
    let probe = |path: &str| {
        json!({"httpGet": {"path": path, "port": 8080, "scheme": "HTTP"}, "timeoutSeconds": 1,
               "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
    };
    json!({
      "kind": "AdmissionReview",
      "apiVersion": "admission.k8s.io/v1",
      "request": {
        "uid": "0df28fbd-5f5f-11e8-bc74-36e6bb280816",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
        "requestResource": {"group": "", "version": "v1", "resource": "pods"},
        "namespace": "shop",
        "operation": "CREATE",
        "userInfo": {
          "username": "system:serviceaccount:kube-system:replicaset-controller",
          "uid": "7b3e1d0e-6f0b-4a5e-9d0f-2f1b1f5c9a11",
          "groups": ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"]
        },
        "object": {
          "kind": "Pod",
          "apiVersion": "v1",
          "metadata": {
            "generateName": "web-7d8c9f5b6-",
            "namespace": "shop",
            "creationTimestamp": null,
            "labels": {"app.kubernetes.io/name": "web", "app.kubernetes.io/part-of": "shop",
                       "pod-template-hash": "7d8c9f5b6", "sidecar.me/inject": "true"},
            "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-11-20T10:00:00Z",
                            "prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d8c9f5b6",
                                 "uid": "5c3c4e0a-2b8d-4d6c-8f0e-1a2b3c4d5e6f", "controller": true,
                                 "blockOwnerDeletion": true}],
            "managedFields": [{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
                               "time": "2026-11-25T09:00:00Z", "fieldsType": "FieldsV1",
                               "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {},
                                 "f:app.kubernetes.io/name": {}, "f:pod-template-hash": {}},
                                 "f:ownerReferences": {".": {}, "k:{\"uid\":\"5c3c4e0a-2b8d-4d6c-8f0e-1a2b3c4d5e6f\"}": {}}},
                                 "f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}]
          },
          "spec": {
            "volumes": [
              {"name": "config", "configMap": {"name": "web-config", "defaultMode": 420}},
              {"name": "kube-api-access-7xk2p", "projected": {"sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
              ], "defaultMode": 420}}
            ],
            "containers": [{
              "name": "web",
              "image": "registry.example.com/shop/web:1.42.0",
              "args": ["--listen=:8080", "--config=/etc/web/config.yaml"],
              "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"},
                        {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}],
              "env": [{"name": "GOMAXPROCS", "value": "2"},
                      {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                      {"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}}],
              "resources": {"limits": {"memory": "512Mi"}, "requests": {"cpu": "250m", "memory": "256Mi"}},
              "volumeMounts": [{"name": "config", "readOnly": true, "mountPath": "/etc/web"},
                               {"name": "kube-api-access-7xk2p", "readOnly": true,
                                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
              "livenessProbe": probe("/healthz"),
              "readinessProbe": probe("/readyz"),
              "terminationMessagePath": "/dev/termination-log",
              "terminationMessagePolicy": "File",
              "imagePullPolicy": "IfNotPresent",
              "securityContext": {"capabilities": {"drop": ["ALL"]}, "runAsNonRoot": true,
                                  "readOnlyRootFilesystem": true, "allowPrivilegeEscalation": false}
            }],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default",
            "serviceAccount": "default",
            "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
            "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
              {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app.kubernetes.io/name": "web"}},
                                                  "topologyKey": "kubernetes.io/hostname"}}]}},
            "schedulerName": "default-scheduler",
            "tolerations": [
              {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
              {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            ],
            "priority": 0,
            "enableServiceLinks": true,
            "preemptionPolicy": "PreemptLowerPriority"
          },
          "status": {}
        },
        "oldObject": null,
        "dryRun": false,
        "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}
      }
    })
}

/// What every part needs.
struct Bench {
    kinject: PathBuf,
    dir: PathBuf,
    /// The server's key, and so the certificate the handshakes sign with.
    key: Key,
    log_to_null: bool,
    request: Bytes,
    http1: Arc<ClientConfig>,
    h2: Arc<ClientConfig>,
    resuming: Arc<ClientConfig>,
}

impl Bench {
    /// Starts `kinject serve` (on `cpu` alone, when given) and waits until it answers.
    fn start(&self, cpu: Option<usize>) -> Server {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let address: SocketAddr = format!("127.0.0.1:{port}").parse().expect("address");
        let mut command = match cpu {
            Some(cpu) => {
                let mut c = Command::new("taskset");
                c.args(["-c", &cpu.to_string()]).arg(&self.kinject);
                c
            }
            None => Command::new(&self.kinject),
        };
        let log: Stdio = if self.log_to_null {
            Stdio::null()
        } else {
            std::fs::File::create(self.dir.join("serve.log"))
                .expect("log file")
                .into()
        };
        let child = command
            .arg("serve")
            .arg("-c")
            .arg(self.dir.join("config.yaml"))
            .arg("--tls-cert-file")
            .arg(self.key.dir(&self.dir).join("tls.crt"))
            .arg("--tls-private-key-file")
            .arg(self.key.dir(&self.dir).join("tls.key"))
            .arg("--listen")
            .arg(address.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start kinject serve");
        let started = Instant::now();
        while std::net::TcpStream::connect(address).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "kinject serve did not listen on {address} within 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Server { child, address }
    }
}

struct Server {
    child: Child,
    address: SocketAddr,
}

#[derive(Clone, Copy)]
enum Transport {
    Http1,
    H2,
    /// A new connection per request.
    Fresh {
        resume: bool,
    },
}

/// A connection to the server, over which requests are sent one after another (HTTP/1.1) or
/// many at once (HTTP/2).
enum Sender {
    Http1(hyper::client::conn::http1::SendRequest<Full<Bytes>>),
    H2(hyper::client::conn::http2::SendRequest<Full<Bytes>>),
}

impl Sender {
    async fn send(&mut self, request: hyper::Request<Full<Bytes>>) -> Bytes {
        let response = match self {
            Sender::Http1(s) => s.send_request(request).await,
            Sender::H2(s) => s.send_request(request).await,
        }
        .expect("an answer");
        assert_eq!(response.status(), 200, "the review is answered");
        response
            .into_body()
            .collect()
            .await
            .expect("the answer's body")
            .to_bytes()
    }
}

impl Server {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The CPU time (user and system) the server has used.
    fn cpu(&self) -> Duration {
        cpu_of(self.pid())
    }

    fn stop(mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status();
        let _ = self.child.wait();
    }

    async fn connect(&self, config: &Arc<ClientConfig>, h2: bool) -> Sender {
        connect(self.address, config, h2).await
    }

    fn request(&self, bench: &Bench) -> hyper::Request<Full<Bytes>> {
        hyper::Request::post("/mutate")
            .header(hyper::header::HOST, "localhost")
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .body(Full::new(bench.request.clone()))
            .expect("request")
    }

    /// One review's answer.
    async fn one(&self, bench: &Bench) -> Bytes {
        let mut sender = self.connect(&bench.http1, false).await;
        sender.send(self.request(bench)).await
    }

    /// `clients` loops sending a request as soon as the last is answered, for `run` after a
    /// second of warm-up.
    async fn closed_loop(
        &self,
        bench: &Bench,
        clients: usize,
        run: Duration,
        transport: Transport,
    ) -> Measured {
        let shared_h2 = match transport {
            Transport::H2 => Some(self.connect(&bench.h2, true).await),
            _ => None,
        };
        let measure_from = Instant::now() + Duration::from_secs(1);
        let end = measure_from + run;
        let mut tasks = Vec::new();
        for _ in 0..clients {
            let mut sender = match (&shared_h2, transport) {
                (Some(Sender::H2(s)), _) => Some(Sender::H2(s.clone())),
                (_, Transport::Http1) => Some(self.connect(&bench.http1, false).await),
                _ => None,
            };
            let config = match transport {
                Transport::Fresh { resume: true } => Arc::clone(&bench.resuming),
                _ => Arc::clone(&bench.http1),
            };
            let request = self.request(bench);
            let address = self.address;
            tasks.push(tokio::spawn(async move {
                let mut latencies = Vec::new();
                while Instant::now() < end {
                    let sent = Instant::now();
                    match &mut sender {
                        Some(s) => s.send(request.clone()).await,
                        None => {
                            connect(address, &config, false)
                                .await
                                .send(request.clone())
                                .await
                        }
                    };
                    if sent >= measure_from {
                        latencies.push(sent.elapsed());
                    }
                }
                latencies
            }));
        }
        tokio::time::sleep_until(measure_from.into()).await;
        let (server_cpu, client_cpu) = (self.cpu(), own_cpu());
        let mut latencies = Vec::new();
        for t in tasks {
            latencies.extend(t.await.expect("client"));
        }
        Measured::new(
            latencies,
            measure_from.elapsed(),
            Some(self.cpu().saturating_sub(server_cpu)),
            Some(own_cpu().saturating_sub(client_cpu)),
        )
    }

    /// Requests scheduled at `rate` per second over `connections` keep-alive connections,
    /// for `run`: each request's latency counts from the time it was scheduled for.
    async fn open_loop(
        &self,
        bench: &Bench,
        rate: f64,
        connections: usize,
        run: Duration,
    ) -> Measured {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Instant>();
        let rx = Arc::new(tokio::sync::Mutex::new(rx));
        let total = (rate * run.as_secs_f64()) as u64;
        let start = Instant::now() + Duration::from_millis(200);
        // The pacer: a thread of its own, woken by the kernel's timer (tokio's is 1 ms coarse),
        // hands out each request at its time (and those already late at once).
        let pacer = std::thread::spawn(move || {
            for i in 0..total {
                let at = start + Duration::from_secs_f64(i as f64 / rate);
                let now = Instant::now();
                if at > now {
                    std::thread::sleep(at - now);
                }
                if tx.send(at).is_err() {
                    break;
                }
            }
        });
        let server_cpu = self.cpu();
        let client_cpu = own_cpu();
        let sent = Arc::new(AtomicU64::new(0));
        let mut tasks = Vec::new();
        for _ in 0..connections {
            let mut sender = self.connect(&bench.http1, false).await;
            let request = self.request(bench);
            let rx = Arc::clone(&rx);
            let sent = Arc::clone(&sent);
            tasks.push(tokio::spawn(async move {
                let mut latencies = Vec::new();
                loop {
                    let Some(at) = rx.lock().await.recv().await else {
                        break;
                    };
                    sent.fetch_add(1, Ordering::Relaxed);
                    sender.send(request.clone()).await;
                    latencies.push(at.elapsed());
                }
                latencies
            }));
        }
        let mut latencies = Vec::new();
        for t in tasks {
            latencies.extend(t.await.expect("client"));
        }
        pacer.join().expect("pacer");
        Measured::new(
            latencies,
            start.elapsed(),
            Some(self.cpu().saturating_sub(server_cpu)),
            Some(own_cpu().saturating_sub(client_cpu)),
        )
    }
}

/// A new connection to the server at `address`: TCP, TLS, then HTTP/2 or HTTP/1.1.
async fn connect(address: SocketAddr, config: &Arc<ClientConfig>, h2: bool) -> Sender {
    let tcp = TcpStream::connect(address).await.expect("connect");
    tcp.set_nodelay(true).expect("nodelay");
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("name");
    let tls = TlsConnector::from(Arc::clone(config))
        .connect(name, tcp)
        .await
        .expect("TLS handshake");
    let io = TokioIo::new(tls);
    if h2 {
        let (sender, connection) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
            .await
            .expect("HTTP/2 handshake");
        tokio::spawn(connection);
        Sender::H2(sender)
    } else {
        let (sender, connection) = hyper::client::conn::http1::handshake(io)
            .await
            .expect("HTTP/1.1 handshake");
        tokio::spawn(connection);
        Sender::Http1(sender)
    }
}

/// `kinject admission`'s answer to `request`.
fn admission_answer(kinject: &Path, config: &Path, request: &[u8]) -> Value {
    let out = admission_once(kinject, config, request);
    serde_json::from_slice(&out).expect("kinject admission answers JSON")
}

fn admission_once(kinject: &Path, config: &Path, request: &[u8]) -> Vec<u8> {
    let mut child = Command::new(kinject)
        .arg("admission")
        .arg("-c")
        .arg(config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start kinject admission");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(request)
        .expect("write the request");
    let mut out = Vec::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_end(&mut out)
        .expect("read the answer");
    assert!(
        child.wait().expect("wait").success(),
        "kinject admission succeeds"
    );
    out
}

/// `kinject admission` run per request by `clients` threads for `run` (after a second).
fn process_per_request(
    kinject: &Path,
    config: &Path,
    request: &[u8],
    clients: usize,
    run: Duration,
) -> Measured {
    let measure_from = Instant::now() + Duration::from_secs(1);
    let end = measure_from + run;
    let (latencies, cpu) = std::thread::scope(|s| {
        let threads: Vec<_> = (0..clients)
            .map(|_| {
                s.spawn(|| {
                    let mut latencies = Vec::new();
                    while Instant::now() < end {
                        let sent = Instant::now();
                        admission_once(kinject, config, request);
                        if sent >= measure_from {
                            latencies.push(sent.elapsed());
                        }
                    }
                    latencies
                })
            })
            .collect();
        std::thread::sleep(measure_from.saturating_duration_since(Instant::now()));
        let children_before = children_cpu();
        let latencies: Vec<Duration> = threads
            .into_iter()
            .flat_map(|t| t.join().expect("client"))
            .collect();
        (latencies, children_cpu().saturating_sub(children_before))
    });
    Measured::new(latencies, measure_from.elapsed(), Some(cpu), None)
}

/// Latencies and what the run cost.
struct Measured {
    latencies: Vec<Duration>,
    elapsed: Duration,
    server_cpu: Option<Duration>,
    client_cpu: Option<Duration>,
}

impl Measured {
    fn new(
        mut latencies: Vec<Duration>,
        elapsed: Duration,
        server_cpu: Option<Duration>,
        client_cpu: Option<Duration>,
    ) -> Self {
        latencies.sort_unstable();
        Measured {
            latencies,
            elapsed,
            server_cpu,
            client_cpu,
        }
    }

    fn at(&self, q: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let i =
            ((self.latencies.len() as f64 * q).ceil() as usize).clamp(1, self.latencies.len()) - 1;
        self.latencies[i].as_secs_f64() * 1e3
    }

    fn print(&self, what: &str) {
        let n = self.latencies.len();
        let per_second = n as f64 / self.elapsed.as_secs_f64();
        let per_review = |cpu: Option<Duration>| {
            cpu.filter(|_| n > 0)
                .map(|c| format!("{:.0}", c.as_secs_f64() * 1e6 / n as f64))
                .unwrap_or_else(|| "-".to_owned())
        };
        println!(
            "{what}: {per_second:>7.0} reviews/s ({n} in {:.1} s), latency ms p50 {:.3} p99 {:.3} p99.9 {:.3} max {:.3}; CPU µs/review server {} client {}; load {}",
            self.elapsed.as_secs_f64(),
            self.at(0.5),
            self.at(0.99),
            self.at(0.999),
            self.at(1.0),
            per_review(self.server_cpu),
            per_review(self.client_cpu),
            load_average(),
        );
    }
}

/// User and system CPU time of process `pid` (utime + stime, /proc/PID/stat).
fn cpu_of(pid: u32) -> Duration {
    stat_time(&format!("/proc/{pid}/stat"), 11)
}

fn own_cpu() -> Duration {
    cpu_of(std::process::id())
}

/// CPU time of this process's waited-for children (cutime + cstime).
fn children_cpu() -> Duration {
    stat_time("/proc/self/stat", 13)
}

/// The sum of two clock-tick fields of a `stat` file (ticks of 10 ms), the first at `at`
/// counted from the field after the command's name (which may hold spaces, in parentheses):
/// utime and stime, fields 14 and 15 of stat, are 11 and 12 there; cutime and cstime 13, 14.
fn stat_time(path: &str, at: usize) -> Duration {
    let Ok(stat) = std::fs::read_to_string(path) else {
        return Duration::ZERO;
    };
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Duration::from_millis((ticks(at) + ticks(at + 1)) * 10)
}

/// Resident memory of `pid` in kB, and its number of threads.
fn rss_and_threads(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
    };
    Some((field("VmRSS:")?, field("Threads:")?))
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Pins the calling thread (and the threads it starts) to `cpu`.
fn pin_to(cpu: usize) {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    rustix::thread::sched_setaffinity(None, &set).expect("sched_setaffinity");
}
