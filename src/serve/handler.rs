//! One review's answer, from its body's bytes: the admission code `kinject admission` runs,
//! with the configuration in force, JSON only and within the server's limits. No I/O here
//! (the fuzz target calls it as it is).

use std::time::Instant;

use super::state::Shared;
use crate::integrations::admission::{self, Facts, Limits, OnError, Policy, ReviewResult};

/// How the server answers a review, besides its configuration.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Terms {
    /// What to answer for an object that cannot be injected correctly (`--on-error`).
    pub on_error: OnError,
    /// What one review may cost (`--max-request-values`, `--max-containers`).
    pub limits: Limits,
    /// Past this the review is abandoned, not begun or not finished: its client has had its
    /// 504 (`--request-timeout`).
    pub deadline: Option<Instant>,
}

/// What to send back, and what to log and count of it.
pub(crate) struct Handled {
    pub status: u16,
    pub body: Vec<u8>,
    pub facts: Facts,
    pub result: ReviewResult,
    pub warnings: Vec<String>,
    /// Why it was refused, for the log.
    pub message: Option<String>,
}

/// Answers the AdmissionReview in `bytes`, which must be JSON. A malformed one gets its
/// refusal with HTTP 200, as the API server reads a review's verdict from the body (with
/// another status it would not read the message, only apply the webhook's `failurePolicy`).
/// None when the deadline passed before it was begun.
pub(crate) fn answer(shared: &Shared, bytes: &[u8], terms: &Terms) -> Option<Handled> {
    if terms
        .deadline
        .is_some_and(|deadline| Instant::now() >= deadline)
    {
        return None;
    }
    let engine = shared.engine();
    let labels = crate::inject::NamespaceLabels::new();
    let mut policy = Policy::new(&engine.config, &labels);
    policy.on_error = terms.on_error;
    policy.namespace_selector_holds = engine.webhook.namespace_selector.is_some();
    policy.json_only = true;
    policy.limits = terms.limits;
    policy.deadline = terms.deadline;
    let answer = admission::review(bytes, &policy);
    let message = answer.message().map(str::to_owned);
    Some(Handled {
        status: 200,
        body: serde_json::to_vec(&answer.response).unwrap_or_default(),
        facts: answer.facts,
        result: answer.result,
        warnings: answer.warnings,
        message,
    })
}

/// The answer when the review could not be answered (`result`: `Panic`, `Timeout`): an HTTP
/// error, for which the API server applies the webhook's `failurePolicy`.
pub(crate) fn failed(bytes: &[u8], message: &str, result: ReviewResult) -> Handled {
    let status = if result == ReviewResult::Timeout {
        504
    } else {
        500
    };
    Handled {
        status,
        body: format!("{message}\n").into_bytes(),
        facts: admission::facts(bytes),
        result,
        warnings: Vec::new(),
        message: Some(message.to_owned()),
    }
}
