//! One connection from its accept to its end: HTTP/1.1 or HTTP/2 over it, and its watch, which
//! closes it when it has been idle `--header-timeout` (before its first request, between
//! requests, whatever PINGs it answers), ends it when an answer is not written within
//! `--write-timeout`, and on SIGTERM lets keep-alive HTTP/1.1 clients hear `Connection:
//! close` rather than meet a closed socket. The server's connections, their cap
//! (`--max-connections`: at the cap, a new connection ends the one that has done nothing
//! for the longest) and their drain are here too.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use hyper::header::{CONNECTION, HeaderValue};
use hyper::service::service_fn;
use hyper::{Request, Version};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use prometheus_client::metrics::gauge::Gauge;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{Notify, watch};

use super::activity::Activity;
use super::budget::Held;
use super::http::{self, Routes};
use super::options::Limits;

/// An idle HTTP/1.1 connection is closed on SIGTERM once it has been idle this long (or
/// `--header-timeout`, if shorter): a request its client wrote as the last answer arrived,
/// already on its way, is answered (with `Connection: close`) instead of meeting a closed
/// socket. On loopback and in a cluster's network, such a request arrives within
/// milliseconds.
const QUIET: Duration = Duration::from_secs(1);

/// What a client may send on an HTTP/2 stream, and on its connection, before the server has
/// read it (HTTP/2's own default, 65,535, and four times it): the server reads bodies as they
/// come, into the budget; these bound what waits in between, per connection.
const STREAM_WINDOW: u32 = 64 * 1024;
const CONNECTION_WINDOW: u32 = 256 * 1024;

/// Up to 256 streams at once on one HTTP/2 connection (the API server's client opens another
/// connection beyond the server's limit).
const MAX_STREAMS: u32 = 256;

/// Streams at once on an HTTP/2 connection to the probe port (its requests are not refused
/// for the budget: these bound them, with its 64 connections).
const PROBE_STREAMS: u32 = 8;

/// A connection reads at most this much at once, and buffers at most this much of what it
/// writes: a request's headers must fit (the API server's are a few hundred bytes), and a
/// slow client holds no more of the server's memory than this.
const MAX_BUFFER: usize = 16 * 1024;

/// What a request in progress costs the server besides its headers and its body: its state
/// in HTTP, in the connection's watch, in the route. Counted in the budget.
const REQUEST_COST: usize = 4 * 1024;

/// The bytes a request's headers take (each with a HeaderMap entry's own, about 32 bytes).
fn headers_size<B>(request: &Request<B>) -> usize {
    let headers: usize = request
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 32)
        .sum();
    headers + request.uri().to_string().len()
}

/// The connections of one listener: how many are open, at most how many, and what each is
/// doing.
pub(crate) struct Connections {
    open: AtomicUsize,
    max: usize,
    /// The open connections' activity, by their place's number.
    members: Mutex<HashMap<u64, Weak<Activity>>>,
    next_place: AtomicU64,
    changed: Notify,
    /// `kinject_open_connections` (the webhook's listener; a gauge of its own for others).
    gauge: Gauge,
}

impl Connections {
    pub(crate) fn new(max: usize, gauge: Gauge) -> Arc<Connections> {
        Arc::new(Connections {
            open: AtomicUsize::new(0),
            max: max.max(1),
            members: Mutex::new(HashMap::new()),
            next_place: AtomicU64::new(0),
            changed: Notify::new(),
            gauge,
        })
    }

    /// A place for the connection `activity` tells of. At the cap, the connection that has
    /// done nothing for the longest is asked to end, and its place taken once it has: an
    /// idle one first (in its handshake, before its first request, between requests), the
    /// one idle the longest; else the one whose last request began first. Connections that
    /// send nothing, slowly or not at all, cannot keep others out: before, the listener
    /// stopped accepting at the cap, and 64 such connections to the probe port failed the
    /// kubelet's probes.
    pub(crate) async fn place(self: &Arc<Self>, activity: &Arc<Activity>) -> Place {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let open = self.open.load(Ordering::SeqCst);
            if open < self.max {
                if self
                    .open
                    .compare_exchange(open, open + 1, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
                {
                    self.gauge.inc();
                    let number = self.next_place.fetch_add(1, Ordering::SeqCst);
                    lock(&self.members).insert(number, Arc::downgrade(activity));
                    return Place(Arc::clone(self), number);
                }
                continue;
            }
            if let Some(stalest) = self.stalest() {
                stalest.evict();
            }
            changed.await;
        }
    }

    /// The open connection that has done nothing for the longest, not yet asked to end.
    fn stalest(&self) -> Option<Arc<Activity>> {
        lock(&self.members)
            .values()
            .filter_map(Weak::upgrade)
            .filter(|a| !a.is_evicted())
            .min_by_key(|a| {
                let (idle, since) = a.staleness();
                (!idle, since)
            })
    }

    pub(crate) fn open(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }

    /// Returns once every connection has ended.
    pub(crate) async fn drained(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.open() == 0 {
                return;
            }
            changed.await;
        }
    }
}

/// One connection's place among its listener's (and its number), given back when dropped.
pub(crate) struct Place(Arc<Connections>, u64);

impl Drop for Place {
    fn drop(&mut self) {
        lock(&self.0.members).remove(&self.1);
        self.0.open.fetch_sub(1, Ordering::SeqCst);
        self.0.gauge.dec();
        self.0.changed.notify_waiters();
    }
}

/// Serves HTTP on `io` until the connection ends, watching it (see the module's doc):
/// `http2` when ALPN chose HTTP/2; `stop` turns true when the server stops accepting.
pub(crate) async fn serve<I>(
    io: I,
    routes: Arc<Routes>,
    activity: Arc<Activity>,
    http2: bool,
    mut stop: watch::Receiver<bool>,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    if http2 {
        activity.set_http2();
    }
    let limits = routes.limits;
    let builder = builder(&routes);
    let service = {
        let activity = Arc::clone(&activity);
        service_fn(move |request: Request<hyper::body::Incoming>| {
            // What a request holds while it is in progress (its headers, its state) is
            // counted in the budget: HTTP/2 lets a connection have many in progress at once.
            let mut held = Held::none(activity.budget());
            let cost = REQUEST_COST + headers_size(&request);
            // The probe port's requests (the kubelet's, Prometheus') are answered whatever
            // the budget holds: a full budget must not fail the liveness probe. Its few
            // connections and streams bound them.
            let probes = routes.review_path.is_none();
            let fits = if probes {
                held.force(cost);
                true
            } else {
                held.grow(cost)
            };
            let in_progress = activity.begin(held);
            let version = request.version();
            if version == Version::HTTP_2 {
                activity.set_http2();
            }
            let (routes, activity) = (Arc::clone(&routes), Arc::clone(&activity));
            async move {
                let mut reply = match fits {
                    true => http::route(routes, request, in_progress).await?,
                    false => http::busy(&routes, in_progress),
                };
                if activity.is_stopping() && version < Version::HTTP_2 {
                    reply
                        .headers_mut()
                        .insert(CONNECTION, HeaderValue::from_static("close"));
                }
                Ok::<_, std::convert::Infallible>(reply)
            }
        })
    };
    let connection = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(connection);
    let mut stopping = false;
    let mut closing = false;
    loop {
        let next = tokio::time::Instant::from_std(next_look(&activity, &limits, stopping));
        tokio::select! {
            // A connection that ends in an error (the client went away, a malformed request
            // line) concerns that client only.
            _ = connection.as_mut() => return,
            changed = stop.wait_for(|s| *s), if !stopping => {
                let _ = changed;
                stopping = true;
                activity.stop();
            }
            () = tokio::time::sleep_until(next) => {}
            // A new connection needs its place (`Connections::place`).
            () = activity.evicted() => return,
        }
        match verdict(&activity, &limits, stopping) {
            Verdict::Keep => {}
            Verdict::Close if !closing => {
                closing = true;
                connection.as_mut().graceful_shutdown();
            }
            Verdict::Close => {}
            // Dropping the connection closes its socket.
            Verdict::End => return,
        }
    }
}

/// HTTP/1.1 and HTTP/2 as the server speaks them, the one a connection speaks read from its
/// first bytes (whatever ALPN said: a connection that has sent nothing yet holds no HTTP
/// buffers, 20 KB less each).
fn builder(routes: &Routes) -> auto::Builder<TokioExecutor> {
    let streams = if routes.review_path.is_some() {
        MAX_STREAMS
    } else {
        PROBE_STREAMS
    };
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(routes.limits.header_timeout)
        .max_buf_size(MAX_BUFFER);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(routes.limits.header_timeout)
        .max_concurrent_streams(streams)
        .max_send_buf_size(MAX_BUFFER)
        .initial_stream_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW);
    builder
}

/// What to do with a connection now.
enum Verdict {
    Keep,
    /// Close it gracefully: HTTP/1.1 at once when idle (else after the answer in progress),
    /// HTTP/2 with GOAWAY once its streams are answered.
    Close,
    /// End it now.
    End,
}

fn verdict(activity: &Activity, limits: &Limits, stopping: bool) -> Verdict {
    let now = Instant::now();
    if activity
        .oldest_answer()
        .is_some_and(|ready| now >= ready + limits.write_timeout)
    {
        return Verdict::End;
    }
    if let Some(idle) = activity.idle_since() {
        let idle_for = now.saturating_duration_since(idle);
        // Asked to close and still there (a client that reads nothing of what is written,
        // a request whose headers never end): ended.
        if idle_for >= limits.header_timeout * 2 {
            return Verdict::End;
        }
        if idle_for >= limits.header_timeout
            || (stopping && idle_for >= QUIET.min(limits.header_timeout))
        {
            return Verdict::Close;
        }
    }
    if stopping && activity.is_http2() {
        return Verdict::Close;
    }
    Verdict::Keep
}

/// When to look at the connection again: the earliest time its verdict may change, or soon,
/// as requests and answers change it without telling.
fn next_look(activity: &Activity, limits: &Limits, stopping: bool) -> Instant {
    let now = Instant::now();
    let mut next = now + limits.header_timeout.min(limits.write_timeout) / 2;
    if let Some(ready) = activity.oldest_answer() {
        next = next.min(ready + limits.write_timeout);
    }
    if let Some(idle) = activity.idle_since() {
        let quiet = if stopping {
            QUIET.min(limits.header_timeout)
        } else {
            limits.header_timeout
        };
        for at in [idle + quiet, idle + limits.header_timeout * 2] {
            if at > now {
                next = next.min(at);
            }
        }
    }
    next.max(now + Duration::from_millis(5))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
