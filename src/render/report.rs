//! The report of a run: one entry per object (a line a human can scan, or a JSON line for
//! machines), which entries a person is shown, and the tally its summary line is made from.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::diagnostic::one_line;
use crate::inject::ActionKind;
use crate::pipeline::{DocResult, FileResult, Identity};
use crate::select::Reason;

/// What an entry says became of its object: what injection did, or an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryAction {
    Did(ActionKind),
    Error,
}

impl EntryAction {
    /// `injected`, `unchanged`, `skipped`, `uninjected`, `not_injected` or `error`
    /// (docs/stability.md).
    pub(crate) fn code(self) -> &'static str {
        match self {
            EntryAction::Did(action) => action.code(),
            EntryAction::Error => "error",
        }
    }

    /// Whether the object was changed (injected, uninjected): its file is written.
    pub(crate) fn changed(self) -> bool {
        matches!(
            self,
            EntryAction::Did(ActionKind::Injected | ActionKind::Uninjected)
        )
    }
}

impl Serialize for EntryAction {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.code())
    }
}

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
    pub action: EntryAction,
    /// The skip reason of `skipped`, the diagnostic code of `error`, else the action.
    pub code: &'static str,
    /// `--check` and `--diff`: what the action says would be done, nothing was written.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// `Some(false)` when the run wrote nothing (an error elsewhere stopped its output): the
    /// action is what would have been done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written: Option<bool>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sidecars: Vec<String>,
    /// Why it was skipped (its code in JSON).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
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

impl Entry {
    /// Whether a person is shown this entry without `-v`: what was done (or would be), what
    /// went wrong, what was said about it, and the skips `Reason::shown_by_default`.
    pub(crate) fn acted_on(&self) -> bool {
        match self.action {
            EntryAction::Did(
                ActionKind::Unchanged | ActionKind::NotInjected | ActionKind::Skipped,
            ) => {
                !self.warnings.is_empty()
                    || !self.removed.is_empty()
                    || self.reason.is_some_and(Reason::shown_by_default)
            }
            _ => true,
        }
    }

    /// The action's words on a report line: `injected`, or `would inject` in a dry run.
    fn verb(&self) -> String {
        let would = self.dry_run || self.written == Some(false);
        match (would, self.action) {
            (true, EntryAction::Did(ActionKind::Injected)) => "would inject".to_owned(),
            (true, EntryAction::Did(ActionKind::Uninjected)) => "would uninject".to_owned(),
            (_, action) => action.code().replace('_', " "),
        }
    }

    /// Marks this entry an error: its file was not written (`why`).
    pub(crate) fn not_written(&mut self, code: &'static str, why: &str) {
        self.action = EntryAction::Error;
        self.code = code;
        self.sidecars.clear();
        self.error = Some(format!("not written: {why} (the file is unchanged)"));
    }
}

pub(crate) fn entries(files: &[FileResult]) -> Vec<Entry> {
    files.iter().flat_map(|f| entries_of(f, &f.docs)).collect()
}

/// The entries of the documents `docs` of the file `f` (a report is made a part at a time:
/// the entries of a million documents took 350 MB when made at once).
pub(crate) fn entries_of(f: &FileResult, docs: &[DocResult]) -> Vec<Entry> {
    let mut out = Vec::new();
    for d in docs {
        for o in &d.objects {
            let base = Entry {
                file: f.input.source.raw_name(),
                line: o.line,
                document: d.index,
                path: o.pointer.clone(),
                identity: o.identity.clone(),
                action: EntryAction::Error,
                code: "error",
                dry_run: false,
                written: None,
                sidecars: Vec::new(),
                reason: None,
                removed: Vec::new(),
                overridden: Vec::new(),
                warnings: Vec::new(),
                error: None,
            };
            out.push(match &o.outcome {
                Err(e) => Entry {
                    code: e.code,
                    error: Some(e.message.clone()),
                    ..base
                },
                Ok(outcome) => {
                    let reason = outcome.action.reason();
                    Entry {
                        action: EntryAction::Did(outcome.action.kind()),
                        code: reason.map_or(outcome.action.code(), Reason::code),
                        sidecars: outcome.action.sidecars().to_vec(),
                        reason,
                        removed: outcome.removed.clone(),
                        overridden: outcome.overridden.clone(),
                        warnings: outcome.warnings.clone(),
                        ..base
                    }
                }
            });
        }
    }
    out
}

/// Lines of one kind (`injected: log-shipper`, `skipped: opted_out`) a person is shown
/// before the others of that kind are only counted (`Groups`); `-v` shows every line.
pub(crate) const GROUP_LINES: usize = 20;

/// The lines of each kind shown so far, and those counted instead, for a report of thousands
/// of objects that says the same of most of them.
#[derive(Debug, Default)]
pub(crate) struct Groups {
    by_kind: BTreeMap<String, (usize, usize)>,
}

impl Groups {
    /// Whether a line of `kind` is shown (else it is counted).
    fn show(&mut self, kind: String) -> bool {
        let (shown, more) = self.by_kind.entry(kind).or_default();
        if *shown < GROUP_LINES {
            *shown += 1;
            true
        } else {
            *more += 1;
            false
        }
    }

    /// `and 49,000 more injected: log-shipper (-v lists every object)`, a line for each kind
    /// that had more lines than were shown.
    pub(crate) fn tail(&self) -> String {
        let mut out = String::new();
        for (kind, (_, more)) in self.by_kind.iter().filter(|(_, (_, m))| *m > 0) {
            out.push_str(&format!(
                "and {} more {kind} (-v lists every object)\n",
                thousands(*more)
            ));
        }
        out
    }
}

/// `49000` as `49,000`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `deploy.yaml:3: deployment/web injected: log-shipper`, for every entry (`all`) or those
/// a person is shown by default (`Entry::acted_on`), a kind of line at most `GROUP_LINES`
/// times when `groups` counts them (errors and lines with warnings always shown).
pub(crate) fn text(entries: &[Entry], all: bool, mut groups: Option<&mut Groups>) -> String {
    let mut out = String::new();
    for e in entries.iter().filter(|e| all || e.acted_on()) {
        let mut kind = e.verb();
        if !e.sidecars.is_empty() {
            kind.push_str(&format!(": {}", e.sidecars.join(", ")));
        }
        if let Some(r) = e.reason {
            kind.push_str(&format!(": {}", r.code()));
        }
        let repeats = e.error.is_none()
            && e.warnings.is_empty()
            && e.removed.is_empty()
            && e.overridden.is_empty();
        if let Some(g) = groups.as_deref_mut()
            && repeats
            && !g.show(one_line(&kind).into_owned())
        {
            continue;
        }
        let mut line = format!("{}:{}: {} {kind}", e.file, e.line, e.identity.short());
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
            line.push_str(&format!(": {err} ({})", e.code));
        }
        out.push_str(&one_line(&line));
        out.push('\n');
        for w in &e.warnings {
            out.push_str(&format!("  warning: {}\n", one_line(w)));
        }
    }
    out
}

/// What a run did, counted: the summary line's numbers, and the last line of `--report
/// json`.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Tally {
    /// Objects read (those with an error among them).
    pub objects: usize,
    pub injected: usize,
    pub unchanged: usize,
    pub uninjected: usize,
    pub not_injected: usize,
    pub skipped: usize,
    /// The skips, by reason code.
    pub skipped_by: BTreeMap<&'static str, usize>,
    /// Errors reported (each diagnostic and each error line once; an object's error is one).
    pub errors: usize,
    /// `--in-place`, `--check`, `--diff`: the files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Files>,
    /// kustomize's own files read as objects (`kind: Kustomization`): a directory to build
    /// first was given as an input.
    #[serde(skip)]
    pub kustomizations: usize,
}

/// Files compared (and written) by `--in-place`, `--check` or `--diff`.
#[derive(Debug, Clone, Copy, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Files {
    /// Changed (`--in-place`), or that would change.
    pub changed: usize,
    pub unchanged: usize,
    /// Would have changed, but could not be written.
    pub not_written: usize,
}

/// How a run's summary words what it did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Wording {
    /// `uninject` (else `inject`).
    pub uninject: bool,
    /// `--check` or `--diff`: nothing is written.
    pub dry_run: bool,
}

impl Tally {
    pub(crate) fn add(&mut self, entries: &[Entry]) {
        for e in entries {
            self.count(e.action, e.code, &e.identity.kind);
        }
    }

    /// Counts the objects of `docs` as their entries would be counted, without making them
    /// (`-q` makes no entry).
    pub(crate) fn add_results(&mut self, docs: &[DocResult]) {
        for o in docs.iter().flat_map(|d| &d.objects) {
            match &o.outcome {
                Err(e) => self.count(EntryAction::Error, e.code, &o.identity.kind),
                Ok(outcome) => {
                    let action = outcome.action.kind();
                    let reason = outcome.action.reason().map(|r| r.code());
                    let code = reason.unwrap_or(action.code());
                    self.count(EntryAction::Did(action), code, &o.identity.kind);
                }
            }
        }
    }

    /// Counts one object: its entry's `action` and `code`, and its `kind`.
    fn count(&mut self, action: EntryAction, code: &'static str, kind: &str) {
        self.objects += 1;
        if kind == "Kustomization" || kind == "Component" {
            self.kustomizations += 1;
        }
        let EntryAction::Did(action) = action else {
            return;
        };
        match action {
            ActionKind::Injected => self.injected += 1,
            ActionKind::Unchanged => self.unchanged += 1,
            ActionKind::Uninjected => self.uninjected += 1,
            ActionKind::NotInjected => self.not_injected += 1,
            ActionKind::Skipped => {
                self.skipped += 1;
                *self.skipped_by.entry(code).or_default() += 1;
            }
        }
    }

    /// `11 injected, 3 unchanged, 22 skipped (20 not_a_workload, 2 opted_out), 0 errors`,
    /// then the files when there are (`; 2 files changed, 1 unchanged`).
    pub(crate) fn line(&self, wording: Wording) -> String {
        let would = if wording.dry_run { " would be" } else { "" };
        let mut parts = if wording.uninject {
            vec![
                format!("{}{would} uninjected", self.uninjected),
                format!("{} not injected", self.not_injected),
            ]
        } else {
            vec![
                format!("{}{would} injected", self.injected),
                format!("{} unchanged", self.unchanged),
            ]
        };
        let mut skipped = format!("{} skipped", self.skipped);
        if !self.skipped_by.is_empty() {
            skipped.push_str(&format!(" ({})", by_count(self.skipped_by.iter())));
        }
        parts.push(skipped);
        parts.push(plural(self.errors, "error"));
        let mut line = parts.join(", ");
        if let Some(f) = self.files {
            let verb = if wording.dry_run {
                "would change"
            } else {
                "changed"
            };
            line.push_str(&format!(
                "; {} {verb}, {} unchanged",
                plural(f.changed, "file"),
                f.unchanged
            ));
            if f.not_written > 0 {
                line.push_str(&format!(", {} not written", f.not_written));
            }
        }
        line
    }

    /// Why nothing was injected, when a run that had no error injected nothing, and found
    /// nothing injected before: the warning linkerd gives as `no supported objects found`.
    pub(crate) fn nothing_injected(&self) -> Option<String> {
        if self.errors > 0 || self.injected + self.unchanged > 0 {
            return None;
        }
        let not_workloads = self.skipped_by.get("not_a_workload").copied().unwrap_or(0);
        let workloads = self.objects - not_workloads;
        Some(if self.objects == 0 {
            "nothing was injected: the input holds no Kubernetes objects".to_owned()
        } else if workloads == 0 && self.kustomizations > 0 {
            format!(
                "nothing was injected: {} and no workload; a kustomization.yaml is kustomize's, \
                 not a manifest: build the directory first (`kubectl kustomize DIR | kinject \
                 inject …`), or write an overlay of patches (`--emit-kustomize`)",
                plural(self.objects, "object")
            )
        } else if workloads == 0 {
            format!(
                "nothing was injected: {} and no workload (an object with a pod template)",
                plural(self.objects, "object")
            )
        } else {
            let skips = by_count(
                self.skipped_by
                    .iter()
                    .filter(|(reason, _)| **reason != "not_a_workload"),
            );
            format!(
                "nothing was injected: {}, all skipped ({skips}; `kinject explain` shows why)",
                plural(workloads, "workload")
            )
        })
    }
}

/// `20 not_a_workload, 2 opted_out`: counts by reason, most first.
fn by_count<'a>(counts: impl Iterator<Item = (&'a &'static str, &'a usize)>) -> String {
    let mut by: Vec<_> = counts.collect();
    by.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let by: Vec<String> = by.iter().map(|(r, n)| format!("{n} {r}")).collect();
    by.join(", ")
}

/// `1 error`, `2 errors`.
fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(skips: &[(&'static str, usize)], injected: usize) -> Tally {
        let mut t = Tally {
            injected,
            ..Tally::default()
        };
        for (reason, n) in skips {
            t.skipped += n;
            t.objects += n;
            t.skipped_by.insert(reason, *n);
        }
        t.objects += injected;
        t
    }

    #[test]
    fn the_summary_counts_skips_by_reason_most_first_and_files_when_edited() {
        let mut t = tally(&[("opted_out", 2), ("not_a_workload", 20)], 11);
        assert_eq!(
            t.line(Wording::default()),
            "11 injected, 0 unchanged, 22 skipped (20 not_a_workload, 2 opted_out), 0 errors"
        );
        t.errors = 1;
        t.files = Some(Files {
            changed: 1,
            unchanged: 3,
            not_written: 1,
        });
        let dry = Wording {
            dry_run: true,
            uninject: false,
        };
        assert_eq!(
            t.line(dry),
            "11 would be injected, 0 unchanged, 22 skipped (20 not_a_workload, 2 opted_out), \
             1 error; 1 file would change, 3 unchanged, 1 not written"
        );
    }

    #[test]
    fn nothing_injected_says_whether_there_were_workloads() {
        let none = Tally::default().nothing_injected().expect("a warning");
        assert!(none.contains("no Kubernetes objects"), "{none}");
        let services = tally(&[("not_a_workload", 3)], 0).nothing_injected();
        assert!(services.is_some_and(|w| w.contains("3 objects and no workload")));
        let unmatched = tally(&[("not_a_workload", 3), ("no_rule_matched", 2)], 0);
        let w = unmatched.nothing_injected().expect("a warning");
        assert_eq!(
            w,
            "nothing was injected: 2 workloads, all skipped (2 no_rule_matched; \
             `kinject explain` shows why)"
        );
        assert_eq!(tally(&[("no_rule_matched", 2)], 1).nothing_injected(), None);
        let mut failed = tally(&[], 0);
        failed.errors = 1;
        assert_eq!(failed.nothing_injected(), None);
    }
}
