//! A template's errors: one that does not compile, one that fails to render for an object.

use crate::diagnostic::codes;

pub(super) const RENDER: &str = codes::TEMPLATE_RENDER;

/// A template that failed to compile: where (JSON pointer inside the sidecar definition, or
/// `/template`), and the byte range inside the template text when known.
#[derive(Debug, Clone)]
pub(crate) struct SyntaxError {
    pub pointer: String,
    pub message: String,
    pub range: Option<std::ops::Range<usize>>,
}

/// A template that failed to render for one object.
#[derive(Debug, Clone)]
pub struct TemplateError {
    /// `kinject::template::render`, or `kinject::template::invalid_yaml` when a whole
    /// template's own text is not YAML.
    pub code: &'static str,
    pub pointer: String,
    pub message: String,
}
