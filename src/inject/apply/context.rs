//! What adding sidecars to one pod reads besides its spec, and the warnings it gathers.

use serde_json::Value;

/// What the spec work reads besides the spec.
pub(super) struct Ctx<'a> {
    /// The pod template's metadata, before injection (for `transferEnv` field references).
    pub(super) metadata: &'a Value,
    pub(super) sort_inits: bool,
    /// What the report says about this pod besides the records.
    pub(super) warnings: std::cell::RefCell<Vec<String>>,
}

impl Ctx<'_> {
    pub(super) fn warn(&self, warning: String) {
        self.warnings.borrow_mut().push(warning);
    }
}
