//! Other injectors' configuration files, read as they are and turned into the native model:
//! one engine, no second injection path. Each adapter validates its format's fields (unknown
//! ones are errors with their place) and says which fields it cannot honour.

mod expedia;
mod gotemplate;
mod kruise;

use serde_json::Value;

use crate::config::schema::{Violation, validate};

/// A problem with a field of another format, at its path in the document.
#[derive(Debug, Clone)]
pub(crate) struct Problem {
    pub path: Vec<String>,
    pub code: &'static str,
    pub message: String,
    /// Byte span in the document, when the path cannot say (inside an embedded document).
    pub span: Option<(usize, usize)>,
}

/// Why a document could not be converted.
pub(crate) enum Failure {
    /// It breaks its format's schema.
    Schema(Vec<Violation>),
    /// It uses fields kinject refuses.
    Problems(Vec<Problem>),
}

/// The native configuration for a document of another injector's format, `None` when the
/// document is not one.
pub(crate) fn to_native(
    value: &Value,
    root: &crate::yaml::Node,
    doc: &str,
) -> Option<Result<Value, Failure>> {
    if expedia::is_sidecar_config_map(value) {
        return Some(expedia::to_native(value, root, doc));
    }
    if kruise::is_sidecar_set(value) {
        let violations = validate(kruise::schema(), "", value);
        if !violations.is_empty() {
            return Some(Err(Failure::Schema(violations)));
        }
        return Some(kruise::to_native(value).map_err(Failure::Problems));
    }
    None
}
