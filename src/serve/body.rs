//! The bodies of requests and answers, within the budget of bytes in flight: a request's body
//! read whole up to its limits, and an answer handed to its connection in chunks, its bytes
//! held in the budget until the socket has taken them.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use http_body_util::BodyExt;
use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};

use super::activity::InProgress;
use super::budget::{Budget, Held};

/// An answer is handed to its connection in chunks of this size (an HTTP/2 frame's, a TLS
/// record's): the connection takes the next one when it has written the last, so that what
/// HTTP/1.1 and HTTP/2 buffer beyond the budget's count stays a few chunks.
const CHUNK: usize = 16 * 1024;

/// A request's body, read whole, its bytes held in the budget until this is dropped.
pub(crate) struct Received {
    pub bytes: Vec<u8>,
    _held: Held,
}

/// Why a request's body was not read.
pub(crate) enum Unread {
    /// Larger than `--max-request-bytes`.
    TooLarge,
    /// It does not fit in what the budget has left.
    Busy,
    /// Not all sent before the request's deadline.
    Late,
    /// The connection failed while it was read.
    Broken(String),
}

/// Reads `body` whole: at most `max` bytes, before `deadline`, each byte taken from the
/// budget as it arrives (the buffer that holds them grows in steps, each step taken first).
pub(crate) async fn read(
    mut body: Incoming,
    declared: Option<usize>,
    max: usize,
    budget: &std::sync::Arc<Budget>,
    deadline: tokio::time::Instant,
) -> Result<Received, Unread> {
    let mut held = Held::none(budget);
    let mut bytes: Vec<u8> = Vec::new();
    loop {
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Err(_) => return Err(Unread::Late),
            Ok(None) => break,
            Ok(Some(Err(e))) => return Err(Unread::Broken(e.to_string())),
            Ok(Some(Ok(frame))) => frame,
        };
        let Ok(data) = frame.into_data() else {
            continue; // trailers
        };
        let length = bytes.len() + data.len();
        if length > max {
            return Err(Unread::TooLarge);
        }
        if length > bytes.capacity() {
            // The declared length at once (it is the body's, or the body is refused), else
            // doubling, up to the limit.
            let want = declared
                .filter(|d| *d >= length)
                .unwrap_or_else(|| length.max(bytes.capacity() * 2).max(CHUNK))
                .min(max);
            if !held.grow(want - bytes.capacity()) {
                return Err(Unread::Busy);
            }
            bytes.reserve_exact(want - bytes.len());
        }
        bytes.extend_from_slice(&data);
    }
    Ok(Received { bytes, _held: held })
}

/// An answer being handed to its connection: the chunks not handed yet.
pub(crate) struct Answer {
    chunks: VecDeque<Bytes>,
    left: usize,
    /// The answer's number on its connection.
    id: u64,
    /// The request, in progress until its answer is handed over (dropped last).
    request: InProgress,
}

impl Answer {
    /// The answer `bytes` to `request`, if the budget has room for them.
    pub(crate) fn fitting(bytes: Vec<u8>, request: InProgress) -> Result<Answer, InProgress> {
        if !request.activity().budget().try_take(bytes.len()) {
            return Err(request);
        }
        Ok(Answer::held(bytes, request))
    }

    /// The answer `bytes` to `request`, taken from the budget whether it has room or not: the
    /// small text answers (a refusal, a probe's) the server sends whatever its load.
    pub(crate) fn forced(bytes: Vec<u8>, request: InProgress) -> Answer {
        request.activity().budget().force(bytes.len());
        Answer::held(bytes, request)
    }

    fn held(bytes: Vec<u8>, request: InProgress) -> Answer {
        let length = bytes.len();
        let id = request.activity().answering(length);
        // Chunks of their own (copied): a chunk written frees its memory as the budget is
        // given its bytes back, which slices of one buffer would not.
        let chunks = if length <= CHUNK {
            VecDeque::from([Bytes::from(bytes)])
        } else {
            bytes.chunks(CHUNK).map(Bytes::copy_from_slice).collect()
        };
        Answer {
            chunks,
            left: length,
            id,
            request,
        }
    }
}

impl Body for Answer {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.chunks.pop_front() {
            Some(chunk) => {
                self.left -= chunk.len();
                Poll::Ready(Some(Ok(Frame::data(chunk))))
            }
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.chunks.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.left as u64)
    }
}

impl Drop for Answer {
    fn drop(&mut self) {
        self.request.activity().answered(self.id, self.left);
    }
}
