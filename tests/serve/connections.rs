//! A connection's life: closed when idle (before its first request, between requests, over
//! HTTP/1.1 and HTTP/2 alike, whatever PINGs it answers), and on SIGTERM keep-alive HTTP/1.1
//! clients get their answers, the last with `Connection: close`, never a reset; an HTTP/2
//! client's reviews are answered across a SIGTERM, its connection ended by a GOAWAY.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use crate::common::serve::{self, ClientOptions, Tls, closed_within, connect, head, read_response};

use super::{Setup, answers, pod_review};

/// The header timeout the tests below give the server (`--header-timeout`).
const HEADER_TIMEOUT: Duration = Duration::from_secs(1);

/// How long after `--header-timeout` a connection may still be open: the server's timers
/// and this machine's scheduling.
const SLACK: Duration = Duration::from_millis(1500);

#[test]
fn a_connection_that_sends_nothing_after_its_handshake_is_closed() {
    let setup = Setup::new();
    let mut server = setup.server(&["--header-timeout", "1"]);
    let client = setup.client();
    let opened = Instant::now();
    // Many at once: each is closed, not one of them kept.
    let mut silent: Vec<Tls> = (0..50)
        .map(|_| connect(server.addr, &client).expect("handshake"))
        .collect();
    // One that was answered once and then says nothing (keep-alive idle).
    let mut used = connect(server.addr, &client).expect("handshake");
    let r = serve::post(&mut used, &pod_review("once")).expect("an answer");
    assert_eq!(r.status, 200);
    let within = HEADER_TIMEOUT + SLACK;
    for (i, tls) in silent.iter_mut().enumerate() {
        tls.sock
            .set_read_timeout(Some(Duration::from_millis(100)))
            .expect("timeout");
        let left = within.saturating_sub(opened.elapsed()) + Duration::from_millis(100);
        closed_within(tls, left)
            .unwrap_or_else(|e| panic!("silent connection {i} after {:?}: {e}", opened.elapsed()));
    }
    used.sock
        .set_read_timeout(Some(Duration::from_millis(100)))
        .expect("timeout");
    closed_within(&mut used, within).expect("the keep-alive connection, idle");
    assert!(
        opened.elapsed() >= Duration::from_millis(900),
        "closed before --header-timeout: {:?}",
        opened.elapsed()
    );
    answers(&mut server, &client);
}

/// An HTTP/2 frame as read: its type, flags, stream and payload.
struct Frame {
    kind: u8,
    flags: u8,
    payload: Vec<u8>,
}

const SETTINGS: u8 = 4;
const PING: u8 = 6;
const GOAWAY: u8 = 7;

fn write_frame(tls: &mut Tls, kind: u8, flags: u8, payload: &[u8]) -> std::io::Result<()> {
    let len = u32::try_from(payload.len()).expect("a small frame");
    let mut bytes = len.to_be_bytes()[1..].to_vec();
    bytes.extend([kind, flags, 0, 0, 0, 0]);
    bytes.extend_from_slice(payload);
    tls.write_all(&bytes)?;
    tls.flush()
}

/// The next frame, or None when the connection is closed.
fn read_frame(tls: &mut Tls) -> std::io::Result<Option<Frame>> {
    let mut header = [0u8; 9];
    match tls.read_exact(&mut header) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_be_bytes([0, header[0], header[1], header[2]]) as usize;
    let mut payload = vec![0; len];
    tls.read_exact(&mut payload)?;
    Ok(Some(Frame {
        kind: header[3],
        flags: header[4],
        payload,
    }))
}

/// An HTTP/2 connection that opens no stream and answers every PING (a client whose pool
/// keeps it, or one that only wants to hold it) is closed all the same: a GOAWAY, then the
/// end of the connection.
#[test]
fn an_http2_connection_with_no_stream_is_closed_though_it_answers_pings() {
    let setup = Setup::new();
    let mut server = setup.server(&["--header-timeout", "1"]);
    let ca = setup.pki.ca.pem();
    let mut options = ClientOptions::trusting(&[&ca]);
    options.alpn = vec![b"h2".to_vec()];
    let opened = Instant::now();
    let mut tls = connect(server.addr, &options.config()).expect("handshake");
    assert_eq!(tls.conn.alpn_protocol(), Some(&b"h2"[..]));
    tls.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        .expect("preface");
    write_frame(&mut tls, SETTINGS, 0, &[]).expect("settings");
    let (mut pings, mut goaway) = (0, None);
    let within = HEADER_TIMEOUT * 3 + SLACK;
    loop {
        assert!(
            opened.elapsed() < within,
            "still open after {:?} ({pings} PINGs answered)",
            opened.elapsed()
        );
        let Some(frame) = read_frame(&mut tls).expect("a frame or the end") else {
            break;
        };
        match frame.kind {
            SETTINGS if frame.flags & 1 == 0 => {
                write_frame(&mut tls, SETTINGS, 1, &[]).expect("ack");
            }
            PING if frame.flags & 1 == 0 => {
                pings += 1;
                // A client that answers PINGs: its connection is alive, and idle.
                if write_frame(&mut tls, PING, 1, &frame.payload).is_err() {
                    break;
                }
            }
            GOAWAY => goaway = Some(opened.elapsed()),
            _ => {}
        }
    }
    let goaway = goaway.expect("a GOAWAY before the end");
    assert!(
        goaway >= Duration::from_millis(900),
        "GOAWAY before --header-timeout: {goaway:?}"
    );
    answers(&mut server, &setup.client());
}

/// Keep-alive HTTP/1.1 clients in a closed loop (each writes its next request as soon as the
/// last answer is read) while the server gets SIGTERM: every request written is answered;
/// a connection ends only after an answer that said `Connection: close`.
#[test]
fn sigterm_answers_keep_alive_clients_or_tells_them_to_close() {
    const CLIENTS: usize = 64;
    let setup = Setup::new();
    let mut server = setup.server(&["--shutdown-timeout", "20"]);
    let client = setup.client();
    let started = Arc::new(Barrier::new(CLIENTS + 1));
    let answered = Arc::new(AtomicUsize::new(0));
    let signalled = Arc::new(AtomicBool::new(false));
    let addr = server.addr;
    let workers: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (client, started) = (Arc::clone(&client), Arc::clone(&started));
            let (answered, signalled) = (Arc::clone(&answered), Arc::clone(&signalled));
            std::thread::spawn(move || -> Result<usize, String> {
                let mut tls = connect(addr, &client).map_err(|e| format!("{c}: {e}"))?;
                started.wait();
                let mut after = 0;
                for i in 0.. {
                    let uid = format!("k{c}-{i}");
                    let body = serde_json::to_vec(&pod_review(&uid)).expect("JSON");
                    let mut bytes = head("POST", "/mutate", "application/json", body.len());
                    bytes.push_str(std::str::from_utf8(&body).expect("UTF-8"));
                    let late = signalled.load(Ordering::SeqCst);
                    let outcome = tls
                        .write_all(bytes.as_bytes())
                        .and_then(|()| tls.flush())
                        .and_then(|()| read_response(&mut tls));
                    let response = outcome.map_err(|e| {
                        format!("client {c}, request {i} (after SIGTERM: {late}): {e}")
                    })?;
                    if response.status != 200 || response.json()["response"]["uid"] != uid {
                        return Err(format!(
                            "{uid}: HTTP {}: {}",
                            response.status,
                            response.text()
                        ));
                    }
                    answered.fetch_add(1, Ordering::SeqCst);
                    after += usize::from(late);
                    if response
                        .header("connection")
                        .is_some_and(|v| v.eq_ignore_ascii_case("close"))
                    {
                        // Told to close: the server ends the connection, cleanly.
                        tls.sock
                            .set_read_timeout(Some(Duration::from_millis(100)))
                            .map_err(|e| e.to_string())?;
                        closed_within(&mut tls, Duration::from_secs(10))
                            .map_err(|e| format!("client {c} after `Connection: close`: {e}"))?;
                        return Ok(after);
                    }
                }
                unreachable!()
            })
        })
        .collect();
    started.wait();
    serve::eventually(Duration::from_secs(30), || {
        (answered.load(Ordering::SeqCst) >= CLIENTS * 10).then_some(())
    })
    .expect("the clients are answered");
    signalled.store(true, Ordering::SeqCst);
    server.signal(nix::sys::signal::Signal::SIGTERM);
    let outcomes: Vec<Result<usize, String>> = workers
        .into_iter()
        .map(|w| w.join().expect("a client thread"))
        .collect();
    let failed: Vec<&String> = outcomes.iter().filter_map(|o| o.as_ref().err()).collect();
    assert!(
        failed.is_empty(),
        "{} of {CLIENTS} clients failed: {failed:#?}\n{}",
        failed.len(),
        server.log()
    );
    let status = server
        .exited(Duration::from_secs(30))
        .unwrap_or_else(|| panic!("still running after SIGTERM:\n{}", server.log()));
    assert!(status.success(), "{status}\n{}", server.log());
    let stopped = server
        .wait_line(Duration::from_secs(5), |l| l["msg"] == "stopped")
        .unwrap_or_else(|| panic!("no `stopped` line:\n{}", server.log()));
    assert_eq!(stopped["drained"], true, "{}", server.log());
}

/// The API server's way: one HTTP/2 connection, many reviews in flight on it. Each is
/// answered; on SIGTERM those in flight are answered too, and the connection ends with a
/// GOAWAY, not a reset (a request the GOAWAY came before is one the client may send again).
#[test]
fn http2_reviews_are_answered_and_sigterm_ends_the_connection_cleanly() {
    use http_body_util::{BodyExt, Full};
    use hyper::body::Bytes;
    use hyper_util::rt::{TokioExecutor, TokioIo};

    let setup = Setup::new();
    let mut server = setup.server(&[]);
    let ca = setup.pki.ca.pem();
    let mut options = ClientOptions::trusting(&[&ca]);
    options.alpn = vec![b"h2".to_vec()];
    let config = options.config();
    let addr = server.addr;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let post = |sender: &mut hyper::client::conn::http2::SendRequest<Full<Bytes>>, uid: String| {
        let body = serde_json::to_vec(&pod_review(&uid)).expect("JSON");
        let request = hyper::Request::post("/mutate")
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body)))
            .expect("a request");
        let sent = sender.send_request(request);
        async move {
            let response = sent.await.map_err(|e| format!("{uid}: {e}"))?;
            let status = response.status();
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|e| format!("{uid}: {e}"))?
                .to_bytes();
            let answer: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
            if status != 200 || answer["response"]["uid"] != uid.as_str() {
                return Err(format!("{uid}: HTTP {status}: {answer}"));
            }
            Ok(())
        }
    };
    runtime.block_on(async {
        let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let name =
            tokio_rustls::rustls::pki_types::ServerName::try_from("localhost").expect("a name");
        let tls = tokio_rustls::TlsConnector::from(config)
            .connect(name, tcp)
            .await
            .expect("handshake");
        let (mut sender, connection) =
            hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tls))
                .await
                .expect("HTTP/2");
        let connection = tokio::spawn(connection);
        let first: Vec<_> = (0..64)
            .map(|i| post(&mut sender, format!("h{i}")))
            .collect();
        for outcome in futures_join(first).await {
            outcome.unwrap_or_else(|e| panic!("{e}"));
        }
        // More in flight, then SIGTERM.
        let last: Vec<_> = (0..64)
            .map(|i| post(&mut sender, format!("t{i}")))
            .collect();
        let pending = tokio::spawn(futures_join(last));
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        server.signal(nix::sys::signal::Signal::SIGTERM);
        let outcomes = pending.await.expect("the requests");
        let failed: Vec<&String> = outcomes.iter().filter_map(|o| o.as_ref().err()).collect();
        assert!(failed.is_empty(), "{failed:?}");
        // The server ends the connection itself, gracefully.
        let ended = tokio::time::timeout(std::time::Duration::from_secs(10), connection)
            .await
            .expect("the connection ends")
            .expect("its task");
        assert!(ended.is_ok(), "{ended:?}");
    });
    let status = server
        .exited(Duration::from_secs(30))
        .unwrap_or_else(|| panic!("still running after SIGTERM:\n{}", server.log()));
    assert!(status.success(), "{status}\n{}", server.log());
}

/// Awaits every future, in order.
async fn futures_join<F: std::future::Future>(futures: Vec<F>) -> Vec<F::Output> {
    let handles: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut out = Vec::with_capacity(handles.len());
    for handle in handles {
        out.push(handle.await);
    }
    out
}
