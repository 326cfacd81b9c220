//! The server's log: JSON lines on stderr, one per review and one per event (start,
//! reload, shutdown). A review's line says what it was about and what became of it — never
//! the object, its environment values or anything else of its content.

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};

use super::handler::Handled;

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
        "uid": facts.uid,
        "kind": facts.kind,
        "namespace": facts.namespace,
        "name": facts.name,
        "operation": facts.operation,
        "result": facts.result,
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
    let level = match facts.result {
        "denied" | "malformed" => "warn",
        "panic" | "timeout" => "error",
        _ => "info",
    };
    line(level, "review", fields);
}
