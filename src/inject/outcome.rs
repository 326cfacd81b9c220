//! What injecting into one object gives: what happened (`Action`), the object as it should be,
//! and what the report says of it.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::select::{Reason, Verdicts};

/// What happened to an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Sidecars were added or updated.
    Injected(Vec<String>),
    /// The object already had exactly these sidecars.
    Unchanged(Vec<String>),
    Skipped(Reason),
    /// `uninject` removed these sidecars.
    Uninjected(Vec<String>),
    /// `uninject` found nothing of kinject's.
    NotInjected,
}

impl Action {
    /// The word the report, `--report json` and KRM results give it (docs/stability.md).
    pub fn code(&self) -> &'static str {
        self.kind().code()
    }

    /// What happened, without the sidecars or the reason it names.
    pub(crate) fn kind(&self) -> ActionKind {
        match self {
            Action::Injected(_) => ActionKind::Injected,
            Action::Unchanged(_) => ActionKind::Unchanged,
            Action::Skipped(_) => ActionKind::Skipped,
            Action::Uninjected(_) => ActionKind::Uninjected,
            Action::NotInjected => ActionKind::NotInjected,
        }
    }

    /// The sidecars it names (none for a skip).
    pub fn sidecars(&self) -> &[String] {
        match self {
            Action::Injected(n) | Action::Unchanged(n) | Action::Uninjected(n) => n,
            Action::Skipped(_) | Action::NotInjected => &[],
        }
    }

    /// Why nothing was injected, for a skip.
    pub fn reason(&self) -> Option<Reason> {
        match self {
            Action::Skipped(r) => Some(*r),
            _ => None,
        }
    }
}

/// What happened to an object (`Action`), without what it names: what the report's entries,
/// the webhook's log and its metrics tell apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ActionKind {
    Injected,
    Unchanged,
    Skipped,
    Uninjected,
    NotInjected,
}

impl ActionKind {
    /// Its word (`Action::code`; docs/stability.md).
    pub(crate) fn code(self) -> &'static str {
        match self {
            ActionKind::Injected => "injected",
            ActionKind::Unchanged => "unchanged",
            ActionKind::Skipped => "skipped",
            ActionKind::Uninjected => "uninjected",
            ActionKind::NotInjected => "not_injected",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Outcome {
    pub action: Action,
    /// The object as it should be; `None` when it stays as it is.
    pub target: Option<Box<Value>>,
    /// Sidecars from an earlier run that this run removed (no longer selected).
    pub removed: Vec<String>,
    /// Sidecar containers the pod's own same-name containers override (`sameName: override`).
    pub overridden: Vec<String>,
    pub warnings: Vec<String>,
    pub verdicts: Verdicts,
    /// Nulls of `target` that were written other than empty before kinject filled them
    /// (`null`, `~`), and how, by pointer: a text editor writes them so again.
    pub null_as: BTreeMap<String, String>,
}

impl Outcome {
    pub(crate) fn new(action: Action) -> Self {
        Outcome {
            action,
            target: None,
            removed: Vec::new(),
            overridden: Vec::new(),
            warnings: Vec::new(),
            verdicts: Verdicts::default(),
            null_as: BTreeMap::new(),
        }
    }
}
