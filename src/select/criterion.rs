//! One criterion of a rule's `match`, as `explain` shows it: the field, what the object has,
//! what the rule wants, and whether it held. Matching itself records these only when asked
//! (`Trace`), so an `inject` run builds no text.

use serde::Serialize;

use super::reason::Miss;

/// One criterion of a rule (or one policy of the configuration) on one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Criterion {
    /// The `match` field (`kinds`, `namespaces`, `labelSelector`, …) or policy
    /// (`kinject.dev/inject`, `skipHostNetwork`, `skipNamespaces`).
    pub field: &'static str,
    pub matched: bool,
    /// What the object has; `None` when it has nothing there.
    pub actual: Option<String>,
    /// What the rule wants.
    pub expected: String,
    /// What to do about it, where something helps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<&'static str>,
}

impl Criterion {
    pub(crate) fn new(
        field: &'static str,
        matched: bool,
        actual: Option<String>,
        expected: String,
    ) -> Self {
        Criterion {
            field,
            matched,
            actual,
            expected,
            hint: None,
        }
    }

    pub(crate) fn hint(mut self, hint: Option<&'static str>) -> Self {
        self.hint = hint;
        self
    }
}

/// What a walk over a rule's criteria keeps: the first miss, and (for `explain`) every
/// criterion.
pub(crate) struct Trace {
    /// Every field that did not match, in the order they are checked, once each.
    pub(crate) misses: Vec<Miss>,
    /// `Some` to record every criterion (then the walk does not stop at the first miss).
    pub(crate) criteria: Option<Vec<Criterion>>,
}

impl Trace {
    pub(crate) fn first_miss_only() -> Self {
        Trace {
            misses: Vec::new(),
            criteria: None,
        }
    }

    pub(crate) fn every_criterion() -> Self {
        Trace {
            misses: Vec::new(),
            criteria: Some(Vec::new()),
        }
    }

    /// Notes one criterion's result (`describe` is called only when recording); `true` when
    /// the walk can stop.
    pub(crate) fn note(
        &mut self,
        miss: Miss,
        matched: bool,
        describe: impl FnOnce() -> Criterion,
    ) -> bool {
        if !matched && !self.misses.contains(&miss) {
            self.misses.push(miss);
        }
        match &mut self.criteria {
            Some(all) => {
                all.push(describe());
                false
            }
            None => !matched,
        }
    }
}
