//! Many clients at once: 1,000 connections open together, each with one review; SIGTERM while
//! 50 reviews are half sent (they complete, new connections are refused, the server exits 0
//! and says it drained).

use std::io::Write;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use crate::common::serve::{self, Tls, connect, eventually, head, read_response};

use super::{Setup, answers, pod_review};

/// Checks one review's answer: 200, its uid, the sidecar injected.
fn injected(tls: &mut Tls, uid: &str) -> Result<(), String> {
    let response = read_response(tls).map_err(|e| format!("{uid}: {e}"))?;
    let answer = response.json();
    if response.status != 200
        || answer["response"]["uid"] != uid
        || answer["response"]["allowed"] != true
        || !serve::patch_text(&answer).contains("curl")
    {
        return Err(format!("{uid}: HTTP {}: {answer}", response.status));
    }
    Ok(())
}

/// How many connections this process may hold (its soft limit on open files, less a margin
/// for what the other tests of the binary hold): the limit is read, never raised (tests/it.rs
/// says why).
fn connections_allowed(wanted: usize) -> usize {
    let (soft, _) = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .expect("getrlimit");
    wanted.min(
        usize::try_from(soft)
            .unwrap_or(usize::MAX)
            .saturating_sub(300),
    )
}

#[test]
fn a_thousand_connections_at_once() {
    let setup = Setup::new();
    // Opening them all takes this machine seconds, and an idle connection is closed after
    // `--header-timeout`: the first must still be open when the last is.
    let mut server = setup.server(&["--header-timeout", "60"]);
    let client = setup.client();
    let total = connections_allowed(1000);
    assert!(
        total >= 500,
        "the open-file limit allows only {total} connections"
    );
    const THREADS: usize = 4;
    let barrier = Arc::new(Barrier::new(THREADS));
    let addr = server.addr;
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (barrier, client) = (Arc::clone(&barrier), Arc::clone(&client));
            std::thread::spawn(move || -> Result<usize, String> {
                let mine: Vec<String> = (t..total)
                    .step_by(THREADS)
                    .map(|i| format!("c{i}"))
                    .collect();
                let connected: Result<Vec<Tls>, String> = mine
                    .iter()
                    .map(|uid| connect(addr, &client).map_err(|e| format!("{uid}: {e}")))
                    .collect();
                // Every connection is open before any request is sent.
                barrier.wait();
                let mut connections = connected?;
                for (tls, uid) in connections.iter_mut().zip(&mine) {
                    let body = serde_json::to_vec(&pod_review(uid)).expect("JSON");
                    let mut bytes = head("POST", "/mutate", "application/json", body.len());
                    bytes.push_str(std::str::from_utf8(&body).expect("UTF-8"));
                    tls.write_all(bytes.as_bytes())
                        .map_err(|e| format!("{uid}: {e}"))?;
                }
                for (tls, uid) in connections.iter_mut().zip(&mine) {
                    injected(tls, uid)?;
                }
                Ok(mine.len())
            })
        })
        .collect();
    let answered: usize = workers
        .into_iter()
        .map(|w| w.join().expect("a client thread"))
        .collect::<Result<Vec<usize>, String>>()
        .unwrap_or_else(|e| panic!("{e}\n{}", server.log()))
        .into_iter()
        .sum();
    assert_eq!(answered, total);
    answers(&mut server, &client);
}

#[test]
fn sigterm_lets_the_requests_in_flight_complete() {
    const IN_FLIGHT: usize = 50;
    let setup = Setup::new();
    let mut server = setup.server(&["--shutdown-timeout", "30"]);
    let client = setup.client();
    // Each sends its headers and half its body, then waits.
    let mut halves = Vec::new();
    for i in 0..IN_FLIGHT {
        let uid = format!("term{i}");
        let body = serde_json::to_vec(&pod_review(&uid)).expect("JSON");
        let mut tls = connect(server.addr, &client).expect("connect");
        let (first, second) = body.split_at(body.len() / 2);
        tls.write_all(head("POST", "/mutate", "application/json", body.len()).as_bytes())
            .expect("write");
        tls.write_all(first).expect("write");
        tls.flush().expect("flush");
        halves.push((tls, uid, second.to_vec()));
    }
    let gauge = format!("kinject_reviews_in_flight {IN_FLIGHT}");
    eventually(Duration::from_secs(30), || {
        server
            .probe("/metrics")
            .text()
            .contains(&gauge)
            .then_some(())
    })
    .unwrap_or_else(|| {
        panic!(
            "not {IN_FLIGHT} in flight:\n{}",
            server.probe("/metrics").text()
        )
    });
    let signalled = Instant::now();
    server.signal(nix::sys::signal::Signal::SIGTERM);
    server
        .wait_line(Duration::from_secs(30), |l| l["msg"] == "shutting down")
        .unwrap_or_else(|| panic!("no shutdown:\n{}", server.log()));
    // No new connection once it stops accepting.
    eventually(Duration::from_secs(30), || {
        std::net::TcpStream::connect(server.addr)
            .is_err()
            .then_some(())
    })
    .expect("new connections are refused after SIGTERM");
    for (tls, _, second) in &mut halves {
        tls.write_all(second).expect("the rest of the body");
        tls.flush().expect("flush");
    }
    let failed: Vec<String> = halves
        .iter_mut()
        .filter_map(|(tls, uid, _)| injected(tls, uid).err())
        .collect();
    assert!(failed.is_empty(), "{failed:?}\n{}", server.log());
    let status = server
        .exited(Duration::from_secs(30))
        .unwrap_or_else(|| panic!("still running after SIGTERM:\n{}", server.log()));
    assert!(status.success(), "{status}\n{}", server.log());
    assert!(signalled.elapsed() < Duration::from_secs(30));
    let stopped = server
        .wait_line(Duration::from_secs(5), |l| l["msg"] == "stopped")
        .unwrap_or_else(|| panic!("no `stopped` line:\n{}", server.log()));
    assert_eq!(stopped["drained"], true, "{}", server.log());
}
