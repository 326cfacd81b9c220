//! Output renderers, one per format: YAML (format-preserving), JSON, and RFC 6902 patches.
//! Each renders the same operations. Which one a run writes is chosen once, from `-o`
//! (`output::Format`).

pub(crate) mod json;
mod json_edit;
pub(crate) mod output;
pub(crate) mod patch;
pub(crate) mod report;
pub(crate) mod yaml;

/// A document that could not be rendered (an internal error: nothing is written).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{file}: document {}: {message}", document + 1)]
pub struct RenderError {
    pub file: String,
    pub document: usize,
    pub message: String,
}
