//! The harness of `kinject serve`'s tests: certificates made in the test (rcgen), a running
//! server that is killed when dropped, and a small synchronous HTTP/1.1 client over rustls
//! (or plain TCP) that writes requests by hand, so a test can also write them wrong.

// Not every test binary that includes `common` (tests/cost.rs) uses it.
#![allow(dead_code)]

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SanType,
};
use serde_json::{Value, json};
use tokio_rustls::rustls::{self, ClientConfig, ClientConnection, RootCertStore, StreamOwned};

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};

/// A certificate authority made for one test.
pub struct Ca {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

/// A certificate and its key, in PEM.
#[derive(Clone)]
pub struct Leaf {
    pub cert: String,
    pub key: String,
}

impl Ca {
    pub fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("CA key");
        Ca {
            issuer: CertifiedIssuer::self_signed(params, key).expect("CA certificate"),
        }
    }

    pub fn pem(&self) -> String {
        self.issuer.pem()
    }

    /// A server certificate for `localhost` and 127.0.0.1.
    pub fn server(&self) -> Leaf {
        let mut params = CertificateParams::new(vec!["localhost".to_owned()]).expect("params");
        params
            .subject_alt_names
            .push(SanType::IpAddress([127, 0, 0, 1].into()));
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        self.leaf(params, "kinject-serve")
    }

    /// A client certificate (the API server's, in a cluster).
    pub fn client(&self, name: &str) -> Leaf {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        self.leaf(params, name)
    }

    fn leaf(&self, mut params: CertificateParams, name: &str) -> Leaf {
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        let key = KeyPair::generate().expect("key");
        let cert = params.signed_by(&key, &self.issuer).expect("sign");
        Leaf {
            cert: cert.pem(),
            key: key.serialize_pem(),
        }
    }
}

/// The DER of the first certificate of a PEM text.
pub fn der(pem: &str) -> Vec<u8> {
    CertificateDer::from_pem_slice(pem.as_bytes())
        .expect("a PEM certificate")
        .to_vec()
}

/// How a test client connects.
pub struct ClientOptions<'a> {
    /// The CAs it trusts (PEM).
    pub roots: Vec<&'a str>,
    pub identity: Option<&'a Leaf>,
    /// Default: TLS 1.2 and 1.3.
    pub versions: Vec<&'static rustls::SupportedProtocolVersion>,
    pub alpn: Vec<Vec<u8>>,
}

impl<'a> ClientOptions<'a> {
    pub fn trusting(roots: &[&'a str]) -> Self {
        ClientOptions {
            roots: roots.to_vec(),
            identity: None,
            versions: vec![&rustls::version::TLS13, &rustls::version::TLS12],
            alpn: vec![b"http/1.1".to_vec()],
        }
    }

    pub fn config(&self) -> Arc<ClientConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = RootCertStore::empty();
        for pem in &self.roots {
            roots
                .add(CertificateDer::from_pem_slice(pem.as_bytes()).expect("CA PEM"))
                .expect("a CA");
        }
        let builder = ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&self.versions)
            .expect("versions")
            .with_root_certificates(roots);
        let mut config = match self.identity {
            None => builder.with_no_client_auth(),
            Some(leaf) => builder
                .with_client_auth_cert(
                    vec![CertificateDer::from_pem_slice(leaf.cert.as_bytes()).expect("cert")],
                    PrivateKeyDer::from_pem_slice(leaf.key.as_bytes()).expect("key"),
                )
                .expect("client identity"),
        };
        config.alpn_protocols = self.alpn.clone();
        Arc::new(config)
    }
}

pub type Tls = StreamOwned<ClientConnection, TcpStream>;

/// A TLS connection to `addr` (as `localhost`), its handshake done.
pub fn connect(addr: SocketAddr, config: &Arc<ClientConfig>) -> io::Result<Tls> {
    let tcp = TcpStream::connect(addr)?;
    tcp.set_read_timeout(Some(Duration::from_secs(30)))?;
    tcp.set_write_timeout(Some(Duration::from_secs(30)))?;
    let name = ServerName::try_from("localhost").expect("a name");
    let connection = ClientConnection::new(Arc::clone(config), name).map_err(io::Error::other)?;
    let mut tls = StreamOwned::new(connection, tcp);
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock)?;
    }
    Ok(tls)
}

/// A plain TCP connection (the probes' listener, `--insecure-plain-http`).
pub fn plain(addr: SocketAddr) -> TcpStream {
    let tcp = TcpStream::connect(addr).expect("connect");
    tcp.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    tcp
}

/// A plain TCP connection whose receive buffer is small (a few KB): what it does not read
/// stays with the server.
pub fn plain_small_window(addr: SocketAddr) -> TcpStream {
    let socket =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).expect("a socket");
    socket.set_recv_buffer_size(4096).expect("SO_RCVBUF");
    socket.connect(&addr.into()).expect("connect");
    let tcp = TcpStream::from(socket);
    tcp.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    tcp
}

/// An HTTP response as read.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
}

/// The head of a request with a body (keep-alive).
pub fn head(method: &str, path: &str, content_type: &str, length: usize) -> String {
    format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\n\r\n"
    )
}

/// Sends one request and reads its response.
pub fn request<S: Read + Write>(
    stream: &mut S,
    method: &str,
    path: &str,
    content_type: &str,
    body: &[u8],
) -> io::Result<Response> {
    let mut bytes = head(method, path, content_type, body.len()).into_bytes();
    bytes.extend_from_slice(body);
    stream.write_all(&bytes)?;
    stream.flush()?;
    read_response(stream)
}

/// `GET path`.
pub fn get<S: Read + Write>(stream: &mut S, path: &str) -> io::Result<Response> {
    write!(stream, "GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n")?;
    stream.flush()?;
    read_response(stream)
}

/// Posts `review` to `/mutate`.
pub fn post<S: Read + Write>(stream: &mut S, review: &Value) -> io::Result<Response> {
    let body = serde_json::to_vec(review).expect("JSON");
    request(stream, "POST", "/mutate", "application/json", &body)
}

/// Reads one response: the status line, the headers, and a body of `Content-Length` bytes.
/// Reads byte by byte up to the body, so nothing of a next response is taken.
pub fn read_response<R: Read>(stream: &mut R) -> io::Result<Response> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "closed after {} bytes of a response",
                    String::from_utf8_lossy(&head)
                ),
            ));
        }
        head.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&head);
    let mut lines = text.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| io::Error::other(format!("no status line: {text:?}")))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .ok_or_else(|| io::Error::other(format!("no Content-Length: {text:?}")))?;
    let mut body = vec![0; length];
    stream.read_exact(&mut body)?;
    Ok(Response {
        status,
        headers,
        body,
    })
}

/// Whether the peer closed the connection (EOF or reset) within `within`, without answering.
pub fn closed_within<R: Read>(stream: &mut R, within: Duration) -> Result<Duration, String> {
    let start = Instant::now();
    let mut buf = [0u8; 512];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return Ok(start.elapsed()),
            Ok(n) => return Err(format!("answered: {}", String::from_utf8_lossy(&buf[..n]))),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                if start.elapsed() > within {
                    return Err(format!("still open after {within:?}"));
                }
            }
            Err(_) => return Ok(start.elapsed()),
        }
    }
}

/// An AdmissionReview (v1, CREATE) of `object` in `namespace`.
pub fn review(object: &Value, namespace: Option<&str>, uid: &str) -> Value {
    let (group, version) = match object["apiVersion"]
        .as_str()
        .unwrap_or("v1")
        .split_once('/')
    {
        Some((g, v)) => (g.to_owned(), v.to_owned()),
        None => (
            String::new(),
            object["apiVersion"].as_str().unwrap_or("v1").to_owned(),
        ),
    };
    let kind = object["kind"].as_str().unwrap_or("Pod");
    let mut request = json!({
        "uid": uid,
        "kind": {"group": group, "version": version, "kind": kind},
        "operation": "CREATE",
        "object": object,
    });
    if let Some(ns) = namespace {
        request["namespace"] = json!(ns);
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
}

/// `object` with the response's base64 JSONPatch applied (unchanged without one).
pub fn patched(object: &Value, response: &Value) -> Result<Value, String> {
    use base64::Engine;
    let mut object = object.clone();
    if let Some(patch) = response["response"]["patch"].as_str() {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(patch)
            .map_err(|e| format!("patch: {e}"))?;
        let ops: json_patch::Patch =
            serde_json::from_slice(&bytes).map_err(|e| format!("patch: {e}"))?;
        json_patch::patch(&mut object, &ops).map_err(|e| format!("patch does not apply: {e}"))?;
    }
    Ok(object)
}

/// The decoded JSONPatch of a review's answer, as text ("" without one).
pub fn patch_text(response: &Value) -> String {
    use base64::Engine;
    response["response"]["patch"]
        .as_str()
        .map(|p| {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(p)
                .expect("base64");
            String::from_utf8(bytes).expect("UTF-8")
        })
        .unwrap_or_default()
}

/// Polls `check` until it gives a value or `within` passes.
pub fn eventually<T>(within: Duration, mut check: impl FnMut() -> Option<T>) -> Option<T> {
    let start = Instant::now();
    loop {
        if let Some(v) = check() {
            return Some(v);
        }
        if start.elapsed() > within {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A running `kinject serve`, killed when dropped; its stderr gathered as it comes.
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
    /// The `--probe-listen` address, when asked for.
    pub probes: Option<SocketAddr>,
    log: Arc<Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

/// Why a server did not start: its exit status and stderr.
#[derive(Debug)]
pub struct NotStarted {
    pub status: Option<ExitStatus>,
    pub stderr: String,
}

impl Server {
    /// Starts `kinject serve ARGS --listen 127.0.0.1:0` in `dir` and waits for its "serving"
    /// line (which says the port the OS chose).
    pub fn start(dir: &Path, args: &[String]) -> Server {
        Self::try_start(dir, args).unwrap_or_else(|e| panic!("kinject serve did not start: {e:?}"))
    }

    pub fn try_start(dir: &Path, args: &[String]) -> Result<Server, NotStarted> {
        Self::spawn(Command::new(env!("CARGO_BIN_EXE_kinject")), dir, args)
    }

    /// The same, run through `prlimit --nofile=N` (the test process's limits stay as they are).
    pub fn start_with_nofile(dir: &Path, args: &[String], nofile: u64) -> Server {
        let mut command = Command::new("prlimit");
        command
            .arg(format!("--nofile={nofile}"))
            .arg("--")
            .arg(env!("CARGO_BIN_EXE_kinject"));
        Self::spawn(command, dir, args).unwrap_or_else(|e| panic!("did not start: {e:?}"))
    }

    fn spawn(mut command: Command, dir: &Path, args: &[String]) -> Result<Server, NotStarted> {
        let mut child = command
            .arg("serve")
            .args(args)
            .args(["--listen", "127.0.0.1:0"])
            .current_dir(dir)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn kinject serve");
        let log = Arc::new(Mutex::new(String::new()));
        let stderr = child.stderr.take().expect("stderr");
        let gathered = Arc::clone(&log);
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let mut log = gathered.lock().expect("log");
                log.push_str(&line);
                log.push('\n');
            }
        });
        let mut server = Server {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            probes: None,
            log,
            reader: Some(reader),
        };
        let serving = eventually(Duration::from_secs(60), || {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Some(Err(status));
            }
            server
                .lines()
                .into_iter()
                .find(|l| l["msg"] == "serving")
                .map(Ok)
        });
        match serving {
            Some(Ok(line)) => {
                let address = |key: &str| line[key].as_str().and_then(|a| a.parse().ok());
                server.addr = address("address").expect("the serving line's address");
                server.probes = address("probeAddress");
                Ok(server)
            }
            Some(Err(status)) => {
                // The reader has the last lines once it has read to the end.
                if let Some(reader) = server.reader.take() {
                    let _ = reader.join();
                }
                Err(NotStarted {
                    status: Some(status),
                    stderr: server.log(),
                })
            }
            None => Err(NotStarted {
                status: None,
                stderr: server.log(),
            }),
        }
    }

    /// Everything written on stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().expect("log").clone()
    }

    /// The JSON lines of the log (other lines, such as a warning at start, left out).
    pub fn lines(&self) -> Vec<Value> {
        self.log()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(Value::is_object)
            .collect()
    }

    /// Waits for a log line `check` accepts.
    pub fn wait_line(&self, within: Duration, check: impl Fn(&Value) -> bool) -> Option<Value> {
        eventually(within, || self.lines().into_iter().find(|l| check(l)))
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    pub fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).expect("a pid")
    }

    pub fn signal(&self, signal: nix::sys::signal::Signal) {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.pid()), signal).expect("kill");
    }

    /// Waits for the process to exit.
    pub fn exited(&mut self, within: Duration) -> Option<ExitStatus> {
        eventually(within, || self.child.try_wait().ok().flatten())
    }

    /// The process's peak resident memory so far (`VmHWM`), in MiB.
    pub fn peak_rss_mib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("the server's /proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .expect("VmHWM")
            / 1024
    }

    /// A plain-HTTP GET on the probes' listener.
    pub fn probe(&self, path: &str) -> Response {
        let addr = self.probes.expect("started with --probe-listen");
        get(&mut plain(addr), path).expect("a probe's answer")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Files of a test's certificates in `dir`: the server's (`tls.crt`, `tls.key`) and the
/// client CA (`client-ca.crt`); the flags that name them.
pub struct Pki {
    pub ca: Ca,
    pub client_ca: Ca,
    /// Signed by `client_ca`.
    pub client: Leaf,
    /// Signed by a CA the server does not know.
    pub stranger: Leaf,
    pub dir: PathBuf,
}

impl Pki {
    pub fn new(dir: &Path) -> Pki {
        let ca = Ca::new("kinject test CA");
        let server = ca.server();
        let client_ca = Ca::new("kinject test client CA");
        let client = client_ca.client("kube-apiserver");
        let stranger = Ca::new("someone else").client("kube-apiserver");
        std::fs::write(dir.join("tls.crt"), &server.cert).expect("write");
        std::fs::write(dir.join("tls.key"), &server.key).expect("write");
        std::fs::write(dir.join("client-ca.crt"), client_ca.pem()).expect("write");
        Pki {
            ca,
            client_ca,
            client,
            stranger,
            dir: dir.to_owned(),
        }
    }

    /// `--tls-cert-file` and `--tls-private-key-file`.
    pub fn server_args(&self) -> Vec<String> {
        vec![
            "--tls-cert-file".into(),
            self.dir.join("tls.crt").display().to_string(),
            "--tls-private-key-file".into(),
            self.dir.join("tls.key").display().to_string(),
        ]
    }

    /// The same and `--client-ca-file`.
    pub fn mutual_args(&self) -> Vec<String> {
        let mut args = self.server_args();
        args.push("--client-ca-file".into());
        args.push(self.dir.join("client-ca.crt").display().to_string());
        args
    }

    /// A client that trusts the server's CA and shows the client certificate.
    pub fn client_config(&self) -> Arc<ClientConfig> {
        let ca = self.ca.pem();
        let mut options = ClientOptions::trusting(&[&ca]);
        options.identity = Some(&self.client);
        options.config()
    }
}

/// The arguments as `String`s.
pub fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| (*s).to_owned()).collect()
}
