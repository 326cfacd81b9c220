//! The error of injecting into one object: a stable code, a message, and where in the object.

/// A problem injecting into one object; the caller adds where the object is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectError {
    /// Stable code (`kinject::inject::conflict`).
    pub code: &'static str,
    pub message: String,
    pub help: Option<String>,
    /// JSON pointer, in the object, of what the error is about (when there is one place).
    pub at: Option<String>,
}

impl InjectError {
    pub(crate) fn new(code: &'static str, message: impl Into<String>) -> Self {
        InjectError {
            code,
            message: message.into(),
            help: None,
            at: None,
        }
    }

    pub(crate) fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub(crate) fn at(mut self, pointer: impl Into<String>) -> Self {
        self.at = Some(pointer.into());
        self
    }
}
