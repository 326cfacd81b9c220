//! `--report json`: everything a run says on stderr is one JSON list, written an item at a
//! time as the run goes — the report's entries, the diagnostics (with their `code`), warnings
//! and errors — so that a machine reading it never meets text. (With text reports, stderr is
//! for people: diagnostics drawn with their excerpt, then the report.)

use std::sync::Mutex;

use serde_json::{Value, json};

use crate::render::json::PrettyArray;

/// The list being written, when stderr is JSON.
static LIST: Mutex<Option<PrettyArray>> = Mutex::new(None);

/// From now on, stderr is one JSON list.
pub(crate) fn start() {
    *list() = Some(PrettyArray::default());
}

/// Whether stderr is one JSON list.
pub(crate) fn on() -> bool {
    list().is_some()
}

/// Writes `items` into the list.
pub(crate) fn items<T: serde::Serialize>(items: &[T]) {
    let mut list = list();
    if let Some(array) = list.as_mut() {
        let mut text = String::new();
        array.push(items, &mut text);
        super::write_stderr(&text);
    }
}

/// Ends the list (at the end of the run).
pub(crate) fn finish() {
    if let Some(array) = list().take() {
        let mut text = String::new();
        array.finish(&mut text);
        super::write_stderr(&text);
    }
}

/// A line kinject would have printed for people (`error: …`, `warning: …`), as an item.
pub(crate) fn said(text: &str) {
    let said: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(
            |l| match (l.strip_prefix("error: "), l.strip_prefix("warning: ")) {
                (Some(e), _) => json!({"action": "error", "error": e}),
                (_, Some(w)) => json!({"action": "warning", "warning": w}),
                _ => json!({"message": l}),
            },
        )
        .collect();
    items(&said);
}

/// A diagnostic as an item: its `code`, its message with `file:line:column`, its help.
pub(crate) fn diagnostic(d: &dyn miette::Diagnostic) -> Value {
    let mut item = json!({
        "action": if d.severity() == Some(miette::Severity::Warning) { "warning" } else { "error" },
        "code": d.code().map(|c| c.to_string()),
        "error": d.to_string(),
    });
    if let Some(help) = d.help() {
        item["help"] = Value::String(help.to_string());
    }
    item
}

fn list() -> std::sync::MutexGuard<'static, Option<PrettyArray>> {
    LIST.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
