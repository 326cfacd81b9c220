//! HTTP over the connections: the routes, and the limits a client cannot get around (the
//! body's size, the time to send headers and body, the time to answer).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use hyper::body::Incoming;
use hyper::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::json;

use super::activity::InProgress;
use super::body::{self, Answer, Unread};
use super::handler;
use super::log;
use super::options::Limits;
use super::state::Shared;
use crate::integrations::admission::{OnError, ReviewResult};

type Reply = Response<Answer>;

/// What a route needs besides the request.
pub(crate) struct Routes {
    pub shared: Arc<Shared>,
    pub limits: Limits,
    /// What to answer for an object that cannot be injected correctly (`--on-error`).
    pub on_error: OnError,
    /// The path AdmissionReviews are posted to (none: probes and metrics only).
    pub review_path: Option<String>,
}

/// Answers one request.
pub(crate) async fn route(
    routes: Arc<Routes>,
    request: Request<Incoming>,
    in_progress: InProgress,
) -> Result<Reply, Infallible> {
    let path = request.uri().path();
    let reply = match (request.method(), path) {
        (&Method::GET | &Method::HEAD, "/healthz" | "/livez") => {
            text(StatusCode::OK, "ok\n", in_progress)
        }
        (&Method::GET | &Method::HEAD, "/readyz") => {
            let (ready, body) = routes.shared.readiness();
            let status = if ready {
                StatusCode::OK
            } else {
                StatusCode::SERVICE_UNAVAILABLE
            };
            text(status, &body, in_progress)
        }
        (&Method::GET | &Method::HEAD, "/metrics") => {
            let mut reply = text(StatusCode::OK, &routes.shared.metrics.text(), in_progress);
            reply.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static(super::metrics::CONTENT_TYPE),
            );
            reply
        }
        (method, p) if routes.review_path.as_deref() == Some(p) => {
            if method == Method::POST {
                return Ok(review(&routes, request, in_progress).await);
            }
            refuse(
                &routes,
                StatusCode::METHOD_NOT_ALLOWED,
                "POST an AdmissionReview here",
                in_progress,
            )
        }
        _ => refuse(&routes, StatusCode::NOT_FOUND, "no such path", in_progress),
    };
    Ok(reply)
}

/// Reads a review's body within the limits and answers it.
async fn review(routes: &Routes, request: Request<Incoming>, in_progress: InProgress) -> Reply {
    let started = Instant::now();
    let _in_flight = routes.shared.metrics.in_flight();
    if !is_json(request.headers().get(CONTENT_TYPE)) {
        return refuse(
            routes,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "an AdmissionReview is sent as Content-Type: application/json",
            in_progress,
        );
    }
    let max = routes.limits.max_request_bytes;
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return too_large(routes, max, in_progress);
    }
    let timeout = routes.limits.request_timeout;
    let deadline = tokio::time::Instant::from_std(started + timeout);
    let declared = declared.and_then(|n| usize::try_from(n).ok());
    let budget = &routes.shared.budget;
    let received = match body::read(request.into_body(), declared, max, budget, deadline).await {
        Ok(received) => Arc::new(received),
        Err(Unread::Late) => {
            return refuse(
                routes,
                StatusCode::REQUEST_TIMEOUT,
                "the request's body did not arrive in time",
                in_progress,
            );
        }
        Err(Unread::TooLarge) => return too_large(routes, max, in_progress),
        Err(Unread::Busy) => return busy(routes, in_progress),
        Err(Unread::Broken(e)) => {
            return refuse(
                routes,
                StatusCode::BAD_REQUEST,
                &format!("cannot read the body: {e}"),
                in_progress,
            );
        }
    };
    let shared = Arc::clone(&routes.shared);
    let terms = handler::Terms {
        on_error: routes.on_error,
        limits: routes.limits.review,
        deadline: Some(deadline.into_std()),
    };
    let request = Arc::clone(&received);
    // The body is held (in the budget) until the review has finished with it, or given up:
    // a review past its deadline is not begun, and stops between its steps.
    let work =
        tokio::task::spawn_blocking(move || handler::answer(&shared, &request.bytes, &terms));
    let late = || {
        handler::failed(
            &received.bytes,
            &format!(
                "no answer within {:.1}s (--request-timeout)",
                timeout.as_secs_f64()
            ),
            ReviewResult::Timeout,
        )
    };
    let answer = match tokio::time::timeout_at(deadline, work).await {
        Ok(Ok(Some(answer))) if answer.result != ReviewResult::Timeout => answer,
        Ok(Ok(_)) | Err(_) => late(),
        Ok(Err(panic)) => {
            handler::failed(&received.bytes, &panic_message(panic), ReviewResult::Panic)
        }
    };
    drop(received);
    let seconds = started.elapsed().as_secs_f64();
    let engine = routes.shared.engine();
    let known = |kind: &str| crate::kinds::is_known(kind, &engine.config.kinds);
    routes.shared.metrics.review(
        answer.result,
        super::metrics::kind_label(&answer.facts.kind, &known),
        &answer.facts.sidecars,
        seconds,
    );
    log::review(&answer, seconds);
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    match Answer::fitting(answer.body, in_progress) {
        Ok(body) => {
            let mut reply = Response::new(body);
            *reply.status_mut() = status;
            reply
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            reply
        }
        Err(in_progress) => busy(routes, in_progress),
    }
}

/// Whether the content type is JSON (`application/json`, with parameters or not).
fn is_json(value: Option<&HeaderValue>) -> bool {
    value
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
}

fn too_large(routes: &Routes, max: usize, in_progress: InProgress) -> Reply {
    refuse(
        routes,
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("the request is larger than {max} bytes (--max-request-bytes)"),
        in_progress,
    )
}

/// The refusal of a request whose headers, body or answer do not fit in the budget.
pub(crate) fn busy(routes: &Routes, in_progress: InProgress) -> Reply {
    refuse(
        routes,
        StatusCode::SERVICE_UNAVAILABLE,
        "the server holds all the requests and answers it may at once (--max-in-flight-bytes): try again",
        in_progress,
    )
}

/// A refusal before any review: counted, logged, said in the body.
fn refuse(routes: &Routes, status: StatusCode, why: &str, in_progress: InProgress) -> Reply {
    routes.shared.metrics.refusal(status.as_u16());
    log::line(
        "warn",
        "refused",
        json!({"status": status.as_u16(), "reason": why}),
    );
    text(status, &format!("{why}\n"), in_progress)
}

/// A text answer: sent whatever the budget has left (it is small), and counted in it.
fn text(status: StatusCode, body: &str, in_progress: InProgress) -> Reply {
    let mut reply = Response::new(Answer::forced(body.as_bytes().to_vec(), in_progress));
    *reply.status_mut() = status;
    reply.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    reply
}

fn panic_message(e: tokio::task::JoinError) -> String {
    let Ok(payload) = e.try_into_panic() else {
        return "the review was cancelled".to_owned();
    };
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    format!("kinject failed on this request (a bug; please report it): {what}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_application_json_with_or_without_parameters() {
        let is = |v: &'static str| is_json(Some(&HeaderValue::from_static(v)));
        assert!(is("application/json"));
        assert!(is("Application/JSON; charset=utf-8"));
        assert!(!is("application/yaml"));
        assert!(!is("text/plain"));
        assert!(!is("application/jsonx"));
        assert!(!is_json(None));
    }
}
