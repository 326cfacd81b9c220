//! `kinject serve`: the in-cluster mutating webhook. The API server's AdmissionReviews over
//! HTTPS, each answered by the admission code `kinject admission` runs (one engine, the same
//! bytes), with the configuration and the certificates reloaded when their files change.
//!
//! This file starts and stops the server, calling down into its parts; what it is told is
//! `options.rs`. The parts import each other, never this file.

mod activity;
mod body;
mod budget;
mod connection;
pub(crate) mod decide;
mod handler;
mod http;
mod listen;
mod log;
pub(crate) mod manifests;
mod metrics;
mod options;
mod reload;
mod state;
mod tls;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::diagnostic::Located;

pub(crate) use options::{Limits, Options};
pub(crate) use tls::TlsFiles;
// The request handler and its state, for the fuzz target (`crate::fuzz::serve`).
#[cfg(feature = "oracles")]
pub(crate) use {
    handler::{Terms, answer},
    state::Shared,
};

/// Why the server did not start.
pub(crate) enum StartError {
    /// The configuration does not load: its diagnostics.
    Config(Vec<Located>),
    Other(String),
}

/// Serves until SIGTERM or SIGINT, then lets the requests in flight finish (within
/// `shutdown_timeout`).
pub(crate) fn run(options: Options) -> Result<(), StartError> {
    let engine = loop {
        match state::load(&options.config, &options.sets) {
            Ok(Some(engine)) => break engine,
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(errors) => return Err(StartError::Config(errors)),
        }
    };
    let tls = match &options.tls {
        Some(files) => Some(tls::server_config(files).map_err(StartError::Other)?),
        None => None,
    };
    raise_open_files_limit();
    // Reviews are CPU work: more threads running them than cores answer none sooner. Tokio's
    // default pool (up to 512 threads, a new one whenever none is idle at that instant, each
    // kept while it gets work within 10 s) held 57 threads and 85 MB after 600 s at a steady
    // 1,000 reviews/s on two busy cores (22 MB at the first review): each thread's allocator
    // heap. Bounded to the cores: 6 threads and 22 MB, flat, and 64 keep-alive connections
    // answered 35 % faster (docs/performance.md, `kinject serve`).
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(cores)
        .thread_name("kinject-serve")
        .build()
        .map_err(|e| StartError::Other(format!("cannot start the server: {e}")))?;
    let shared = Arc::new(state::Shared::new(
        engine,
        tls,
        options.limits.max_in_flight_bytes,
    ));
    shared.metrics.loaded("config", true, false);
    if options.tls.is_some() {
        shared.metrics.loaded("certificate", true, false);
    }
    runtime.block_on(serve(options, shared))
}

async fn serve(options: Options, shared: Arc<state::Shared>) -> Result<(), StartError> {
    let bind = |addr: SocketAddr| {
        listener(addr).map_err(|e| StartError::Other(format!("cannot listen on {addr}: {e}")))
    };
    let main = bind(options.listen)?;
    let probes = match options.probe_listen {
        Some(addr) => Some(bind(addr)?),
        None => None,
    };
    let routes = Arc::new(http::Routes {
        shared: Arc::clone(&shared),
        limits: options.limits,
        on_error: options.on_error,
        review_path: Some(options.path.clone()),
    });
    let probe_routes = Arc::new(http::Routes {
        shared: Arc::clone(&shared),
        limits: options.limits,
        on_error: options.on_error,
        review_path: None,
    });
    announce(&options, &main, probes.as_ref(), &shared);
    let connections = [
        connection::Connections::new(
            options.limits.max_connections,
            shared.metrics.open_connections(),
        ),
        connection::Connections::new(PROBE_CONNECTIONS, Default::default()),
    ];
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let reloader = tokio::spawn(reload::watch(
        Arc::clone(&shared),
        reload::Watched {
            config: options.config.clone(),
            sets: options.sets.clone(),
            tls: options.tls.clone(),
            interval: options.reload_interval,
        },
    ));
    let secure = options.tls.is_some();
    let mut accepting = vec![tokio::spawn(listen::accept(
        main,
        routes,
        secure,
        Arc::clone(&connections[0]),
        stop_rx.clone(),
    ))];
    if let Some(probes) = probes {
        accepting.push(tokio::spawn(listen::accept(
            probes,
            probe_routes,
            false,
            Arc::clone(&connections[1]),
            stop_rx,
        )));
    }
    let signal = stop_signal().await;
    let stopping = Stopping {
        connections,
        stop_accepting: stop_tx,
        accepting,
        reloader,
    };
    stop(&options, &shared, stopping, signal).await;
    Ok(())
}

/// The kernel's buffer for what a connection writes (it doubles it): what a client does not
/// read stays in the server, where the budget counts it and `--write-timeout` ends it, and not
/// in the kernel's memory, which grows to megabytes a connection by default and counts in the
/// pod's memory all the same. 128 KiB in flight is 100 MB/s at a millisecond's round trip.
const SEND_BUFFER: u32 = 64 * 1024;

/// A listening socket on `addr`, as tokio's `TcpListener::bind` makes it (address reuse, a
/// backlog of 1,024), its connections with `SEND_BUFFER`.
fn listener(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.set_send_buffer_size(SEND_BUFFER)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

/// The first log line: what is served where, with which configuration.
fn announce(
    options: &Options,
    main: &tokio::net::TcpListener,
    probes: Option<&tokio::net::TcpListener>,
    shared: &state::Shared,
) {
    let engine = shared.engine();
    log::info(
        "serving",
        json!({
            "version": env!("KINJECT_VERSION"),
            "address": main.local_addr().map(|a| a.to_string()).unwrap_or_default(),
            "tls": options.tls.is_some(),
            "clientCA": options.tls.as_ref().is_some_and(|t| t.client_ca.is_some()),
            "probeAddress": probes.and_then(|p| p.local_addr().ok()).map(|a| a.to_string()),
            "path": options.path,
            "config": options.config.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            "sidecars": engine.config.sidecars.len(),
            "rules": engine.config.rules.len(),
        }),
    );
    if options.tls.is_none() {
        log::line(
            "warn",
            "serving plain HTTP without TLS (--insecure-plain-http): for local testing only, the API server calls \
                webhooks over HTTPS alone",
            json!({}),
        );
    }
}

/// The connections of the probe port, at most (the kubelet's probes and Prometheus): a
/// place of their own, so that a full webhook port does not fail the liveness probe.
const PROBE_CONNECTIONS: usize = 64;

/// What the stop acts on: the connections of both listeners, the accept loops and what tells
/// them (and every connection) to stop, the reloader.
struct Stopping {
    connections: [Arc<connection::Connections>; 2],
    stop_accepting: tokio::sync::watch::Sender<bool>,
    accepting: Vec<tokio::task::JoinHandle<()>>,
    reloader: tokio::task::JoinHandle<()>,
}

/// After the stop signal: unready at once, still accepting for `--shutdown-delay`, then no
/// new connection, and the connections given `--shutdown-timeout` to finish: their requests
/// answered (over HTTP/1.1 with `Connection: close`), then closed (`connection`).
async fn stop(options: &Options, shared: &state::Shared, stopping: Stopping, signal: &str) {
    shared.stop();
    let [main, probes] = &stopping.connections;
    log::info(
        "shutting down",
        json!({
            "signal": signal,
            "openConnections": main.open() + probes.open(),
            "delaySeconds": options.shutdown_delay.as_secs_f64(),
            "timeoutSeconds": options.shutdown_timeout.as_secs_f64(),
        }),
    );
    tokio::time::sleep(options.shutdown_delay).await;
    let _ = stopping.stop_accepting.send(true);
    for task in stopping.accepting {
        let _ = task.await;
    }
    stopping.reloader.abort();
    let drained = tokio::time::timeout(options.shutdown_timeout, async {
        main.drained().await;
        probes.drained().await;
    })
    .await
    .is_ok();
    if drained {
        log::info("stopped", json!({"drained": true}));
    } else {
        log::error(
            "stopped",
            json!({"drained": false, "reason": "requests still in flight at --shutdown-timeout"}),
        );
    }
}

/// Raises the soft limit of open files to the hard one, as Go's runtime does for every
/// server written in it: each connection is a file, and the soft limit (often 1,024) would
/// refuse connections long before the server is busy.
fn raise_open_files_limit() {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::process::{Resource, getrlimit, setrlimit};
        let mut limit = getrlimit(Resource::Nofile);
        if limit.current < limit.maximum {
            limit.current = limit.maximum;
            let _ = setrlimit(Resource::Nofile, limit);
        }
    }
}

/// Waits for SIGTERM (the kubelet's) or SIGINT, and names it.
#[cfg(not(unix))]
async fn stop_signal() -> &'static str {
    let _ = tokio::signal::ctrl_c().await;
    "SIGINT"
}

/// Waits for SIGTERM (the kubelet's) or SIGINT, and names it.
#[cfg(unix)]
async fn stop_signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut term) = signal(SignalKind::terminate()) else {
        let _ = tokio::signal::ctrl_c().await;
        return "SIGINT";
    };
    tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = tokio::signal::ctrl_c() => "SIGINT",
    }
}
