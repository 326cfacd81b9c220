//! What one connection is doing, as its requests and its writes tell it: the requests in
//! progress (none: the connection is idle, since when), the answers being written (since
//! when), and the bytes of its answers the budget still holds because the socket has not
//! taken them yet. The connection's watch (`connection`) reads it to close the connection.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;

use super::budget::{Budget, Held};

/// One connection's activity.
pub(crate) struct Activity {
    /// When the connection was accepted: the time stamps below count from it.
    opened: Instant,
    /// Requests begun whose answer has not been handed to the connection whole.
    requests: AtomicUsize,
    /// When `requests` last became 0 (milliseconds from `opened`).
    idle_since: AtomicU64,
    /// When the last request began (milliseconds from `opened`).
    last_begun: AtomicU64,
    /// The answers being handed to the connection: their number and when each was ready.
    answers: Mutex<VecDeque<(u64, Instant)>>,
    next_answer: AtomicU64,
    /// Bytes of this connection's answers the budget holds, not yet written to the socket.
    unsent: AtomicUsize,
    budget: Arc<Budget>,
    /// Known to speak HTTP/2 (by ALPN, or its requests).
    http2: AtomicBool,
    /// The server is stopping: HTTP/1.1 answers say `Connection: close`.
    stopping: AtomicBool,
    /// Asked to end, to make room for a new connection (`Connections::place`).
    evicting: AtomicBool,
    evicted: Notify,
}

impl Activity {
    pub(crate) fn new(budget: &Arc<Budget>) -> Arc<Activity> {
        Arc::new(Activity {
            opened: Instant::now(),
            requests: AtomicUsize::new(0),
            idle_since: AtomicU64::new(0),
            last_begun: AtomicU64::new(0),
            answers: Mutex::new(VecDeque::new()),
            next_answer: AtomicU64::new(0),
            unsent: AtomicUsize::new(0),
            budget: Arc::clone(budget),
            http2: AtomicBool::new(false),
            stopping: AtomicBool::new(false),
            evicting: AtomicBool::new(false),
            evicted: Notify::new(),
        })
    }

    pub(crate) fn budget(&self) -> &Arc<Budget> {
        &self.budget
    }

    /// A request begins; it is in progress until the guard is dropped, and what it holds of
    /// the budget (its headers, its state) held as long.
    pub(crate) fn begin(self: &Arc<Self>, held: Held) -> InProgress {
        self.last_begun.store(self.millis(), Ordering::SeqCst);
        self.requests.fetch_add(1, Ordering::SeqCst);
        InProgress {
            activity: Arc::clone(self),
            _held: held,
        }
    }

    /// Since when the connection has had no request in progress, if it has none.
    pub(crate) fn idle_since(&self) -> Option<Instant> {
        if self.requests.load(Ordering::SeqCst) > 0 {
            return None;
        }
        let since = self.idle_since.load(Ordering::SeqCst);
        let idle = self.opened + Duration::from_millis(since);
        // A request that began between the two loads.
        (self.requests.load(Ordering::SeqCst) == 0).then_some(idle)
    }

    /// How long the connection has done nothing, for the choice of which to end when a new
    /// one needs its place: idle (true) since when, else busy since its last request began.
    /// An idle connection is staler than a busy one, and an older time staler than a newer.
    pub(crate) fn staleness(&self) -> (bool, Instant) {
        match self.idle_since() {
            Some(idle) => (true, idle),
            None => {
                let begun = self.last_begun.load(Ordering::SeqCst);
                (false, self.opened + Duration::from_millis(begun))
            }
        }
    }

    /// Asks the connection to end (once): a new one takes its place.
    pub(crate) fn evict(&self) -> bool {
        let first = !self.evicting.swap(true, Ordering::SeqCst);
        if first {
            self.evicted.notify_one();
        }
        first
    }

    pub(crate) fn is_evicted(&self) -> bool {
        self.evicting.load(Ordering::SeqCst)
    }

    /// Returns once the connection is asked to end.
    pub(crate) async fn evicted(&self) {
        self.evicted.notified().await;
    }

    fn millis(&self) -> u64 {
        u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// When the oldest answer still being handed to the connection was ready.
    pub(crate) fn oldest_answer(&self) -> Option<Instant> {
        lock(&self.answers).front().map(|(_, ready)| *ready)
    }

    /// An answer of `bytes`, taken from the budget by the caller, is handed to the connection
    /// from now on: its number, for `answered`.
    pub(crate) fn answering(&self, bytes: usize) -> u64 {
        self.unsent.fetch_add(bytes, Ordering::SeqCst);
        let id = self.next_answer.fetch_add(1, Ordering::SeqCst);
        lock(&self.answers).push_back((id, Instant::now()));
        id
    }

    /// The answer `id` is handed over (or dropped), `unyielded` of its bytes never given to
    /// the connection: those go back to the budget now.
    pub(crate) fn answered(&self, id: u64, unyielded: usize) {
        lock(&self.answers).retain(|(a, _)| *a != id);
        self.settle(unyielded);
    }

    /// `bytes` were written to the socket (or will never be): as many of the answers' bytes
    /// go back to the budget.
    fn settle(&self, bytes: usize) {
        let mut given = 0;
        let _ = self
            .unsent
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |unsent| {
                given = unsent.min(bytes);
                Some(unsent - given)
            });
        self.budget.give_back(given);
    }

    pub(crate) fn set_http2(&self) {
        self.http2.store(true, Ordering::SeqCst);
    }

    pub(crate) fn is_http2(&self) -> bool {
        self.http2.load(Ordering::SeqCst)
    }

    pub(crate) fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
    }

    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }
}

impl Drop for Activity {
    /// The connection is gone: what it had not written never will be.
    fn drop(&mut self) {
        self.budget.give_back(*self.unsent.get_mut());
    }
}

/// A request in progress on its connection.
pub(crate) struct InProgress {
    activity: Arc<Activity>,
    _held: Held,
}

impl InProgress {
    pub(crate) fn activity(&self) -> &Arc<Activity> {
        &self.activity
    }
}

impl Drop for InProgress {
    fn drop(&mut self) {
        let activity = &self.activity;
        let millis = activity.millis();
        // Stamped before the count falls, so that a connection seen idle has its time.
        activity.idle_since.store(millis, Ordering::SeqCst);
        activity.requests.fetch_sub(1, Ordering::SeqCst);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The socket of a connection, counting what is written to it for its `Activity` (under TLS:
/// what is written is the encrypted answer, so that the budget holds an answer until the
/// kernel has it, past every buffer of HTTP and TLS).
pub(crate) struct Counted<T> {
    inner: T,
    activity: Arc<Activity>,
}

impl<T> Counted<T> {
    pub(crate) fn new(inner: T, activity: &Arc<Activity>) -> Counted<T> {
        Counted {
            inner,
            activity: Arc::clone(activity),
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Counted<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Counted<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = polled {
            self.activity.settle(n);
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = polled {
            self.activity.settle(n);
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use prometheus_client::metrics::gauge::Gauge;

    use super::*;

    #[test]
    fn an_answer_is_held_until_written_or_dropped() {
        let budget = Budget::new(1000, Gauge::default());
        let activity = Activity::new(&budget);
        let request = activity.begin(Held::none(&budget));
        assert!(activity.idle_since().is_none());
        assert!(budget.try_take(300));
        let id = activity.answering(300);
        assert!(activity.oldest_answer().is_some());
        // 100 bytes yielded and written, then the rest dropped unyielded.
        activity.settle(100);
        assert_eq!(budget.taken(), 200);
        activity.answered(id, 150);
        assert_eq!(budget.taken(), 50);
        assert!(activity.oldest_answer().is_none());
        drop(request);
        assert!(activity.idle_since().is_some());
        // What was yielded and never written goes back with the connection.
        drop(activity);
        assert_eq!(budget.taken(), 0);
    }
}
