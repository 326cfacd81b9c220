//! The per-object report on stderr: one line a human can scan, or JSON for machines.

use serde::Serialize;

use crate::diagnostic::one_line;
use crate::pipeline::{DocResult, FileResult, Identity};

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Entry {
    pub file: String,
    pub line: usize,
    pub document: usize,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub path: String,
    #[serde(flatten)]
    pub identity: Identity,
    /// `injected`, `unchanged`, `skipped`, `uninjected`, `not_injected` or `error`.
    pub action: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sidecars: Vec<String>,
    /// Skip reason code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    /// Sidecars of an earlier run this run removed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
    /// Sidecar containers the pod's own same-name containers override.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overridden: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The error, for `action: error`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

pub(crate) fn entries(files: &[FileResult]) -> Vec<Entry> {
    files.iter().flat_map(|f| entries_of(f, &f.docs)).collect()
}

/// The entries of the documents `docs` of the file `f` (a report is made a part at a time:
/// the entries of a million documents took 350 MB when made at once).
pub(crate) fn entries_of(f: &FileResult, docs: &[DocResult]) -> Vec<Entry> {
    let mut out = Vec::new();
    {
        for d in docs {
            for o in &d.objects {
                let base = Entry {
                    file: f.input.source.raw_name(),
                    line: o.line,
                    document: d.index,
                    path: o.pointer.clone(),
                    identity: o.identity.clone(),
                    action: "error",
                    sidecars: Vec::new(),
                    reason: None,
                    removed: Vec::new(),
                    overridden: Vec::new(),
                    warnings: Vec::new(),
                    error: None,
                };
                out.push(match &o.outcome {
                    Err(e) => Entry {
                        error: Some(format!("{} ({})", e.message, e.code)),
                        ..base
                    },
                    Ok(outcome) => Entry {
                        action: outcome.action.code(),
                        sidecars: outcome.action.sidecars().to_vec(),
                        reason: outcome.action.reason().map(|r| r.code()),
                        removed: outcome.removed.clone(),
                        overridden: outcome.overridden.clone(),
                        warnings: outcome.warnings.clone(),
                        ..base
                    },
                });
            }
        }
    }
    out
}

/// `deploy.yaml:3: deployment/web injected: log-shipper`
pub(crate) fn text(entries: &[Entry]) -> String {
    let mut out = String::new();
    for e in entries {
        let mut line = format!(
            "{}:{}: {} {}",
            e.file,
            e.line,
            e.identity.short(),
            e.action.replace('_', " ")
        );
        if !e.sidecars.is_empty() {
            line.push_str(&format!(": {}", e.sidecars.join(", ")));
        }
        if let Some(r) = e.reason {
            line.push_str(&format!(": {r}"));
        }
        if !e.removed.is_empty() {
            line.push_str(&format!(" (removed {})", e.removed.join(", ")));
        }
        if !e.overridden.is_empty() {
            line.push_str(&format!(
                " (overridden by the pod: {})",
                e.overridden.join(", ")
            ));
        }
        if let Some(err) = &e.error {
            line.push_str(&format!(": {err}"));
        }
        out.push_str(&one_line(&line));
        out.push('\n');
        for w in &e.warnings {
            out.push_str(&format!("  warning: {}\n", one_line(w)));
        }
    }
    out
}
