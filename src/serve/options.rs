//! What `kinject serve` is told: its options, and what one request (and all of them at once)
//! may take.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::tls::TlsFiles;
use crate::config::Set;
use crate::integrations::admission::OnError;

/// Everything `kinject serve` is told.
pub(crate) struct Options {
    pub config: Vec<PathBuf>,
    pub sets: Vec<Set>,
    pub listen: SocketAddr,
    /// None: plain HTTP (`--insecure-plain-http`).
    pub tls: Option<TlsFiles>,
    pub probe_listen: Option<SocketAddr>,
    pub path: String,
    /// What to answer for an object that cannot be injected correctly (`--on-error`): a
    /// policy, not a limit.
    pub on_error: OnError,
    pub limits: Limits,
    pub shutdown_delay: Duration,
    pub shutdown_timeout: Duration,
    pub reload_interval: Duration,
}

/// What one request, and all of them at once, may take.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub max_request_bytes: usize,
    /// Bytes of request bodies being read and answers not yet written, all requests together.
    pub max_in_flight_bytes: usize,
    /// Connections open at once on `--listen`.
    pub max_connections: usize,
    pub header_timeout: Duration,
    pub request_timeout: Duration,
    /// The time an answer may take to be written.
    pub write_timeout: Duration,
    /// What one review may cost.
    pub review: crate::integrations::admission::Limits,
}
