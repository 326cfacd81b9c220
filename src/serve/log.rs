//! The server's log: JSON lines on stderr, one per review and one per event (start,
//! reload, shutdown). A review's line says what it was about and what became of it — never
//! the object, its environment values or anything else of its content — and what the request
//! names (its uid, kind, namespace, name) at most `CLIP` bytes of each.

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};

use super::handler::Handled;
use crate::integrations::admission::ReviewResult;

/// Writes one line: `ts` (seconds since the epoch), `level`, `msg`, then `fields`.
pub(crate) fn line(level: &str, msg: &str, fields: Value) {
    let ts = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default();
    let mut record = Map::new();
    record.insert("ts".to_owned(), json!((ts * 1000.0).round() / 1000.0));
    record.insert("level".to_owned(), json!(level));
    record.insert("msg".to_owned(), json!(msg));
    if let Value::Object(fields) = fields {
        record.extend(fields);
    }
    let mut text = Value::Object(record).to_string();
    text.push('\n');
    // A log that cannot be written is not a reason to stop answering.
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

pub(crate) fn info(msg: &str, fields: Value) {
    line("info", msg, fields);
}

pub(crate) fn error(msg: &str, fields: Value) {
    line("error", msg, fields);
}

/// The line of one review.
pub(crate) fn review(answer: &Handled, seconds: f64) {
    let facts = &answer.facts;
    let mut fields = json!({
        "uid": clipped(&facts.uid),
        "kind": clipped(&facts.kind),
        "namespace": clipped(&facts.namespace),
        "name": clipped(&facts.name),
        "operation": clipped(&facts.operation),
        "result": answer.result.code(),
        "sidecars": facts.sidecars,
        "status": answer.status,
        "durationMs": (seconds * 1e6).round() / 1e3,
    });
    if let Some(reason) = facts.reason {
        fields["reason"] = json!(reason);
    }
    if !answer.warnings.is_empty() {
        fields["warnings"] = json!(answer.warnings);
    }
    if let Some(message) = &answer.message {
        fields["message"] = json!(message);
    }
    let level = match answer.result {
        ReviewResult::Denied | ReviewResult::Malformed => "warn",
        ReviewResult::Panic | ReviewResult::Timeout => "error",
        _ => "info",
    };
    line(level, "review", fields);
}

/// The longest a request's name (its uid, kind, namespace, name, operation) is logged: the
/// longest a Kubernetes name may be (a DNS subdomain, 253) and some. Longer ones are the
/// client's doing, and cut.
const CLIP: usize = 256;

/// `text`, cut to `CLIP` bytes (at a character's boundary) with `…` when longer.
fn clipped(text: &str) -> String {
    if text.len() <= CLIP {
        return text.to_owned();
    }
    let mut end = CLIP;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_cut_at_a_character() {
        assert_eq!(clipped("Pod"), "Pod");
        let long = "é".repeat(200);
        let cut = clipped(&long);
        assert!(
            cut.len() <= CLIP + '…'.len_utf8() && cut.ends_with('…'),
            "{cut}"
        );
        assert!(cut.starts_with("éé"));
    }
}
