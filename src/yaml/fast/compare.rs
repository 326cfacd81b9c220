//! Comparing (`matches`): nothing is built; each node read takes the value it must be, and
//! the reader gives up where the text reads as another.

use serde_json::Value;

use super::reader::{GiveUp, R, Reader};
use crate::yaml::scalar::resolve_plain;

impl<'a> Reader<'a> {
    /// When comparing, the value the node being read must be (taken: each node takes its
    /// own once); `None` when not comparing.
    pub(super) fn expected(&mut self) -> R<Option<&'a Value>> {
        if !self.compare {
            return Ok(None);
        }
        self.expect.take().map(Some).ok_or(GiveUp)
    }

    /// When comparing, sets what the next node read must be: `expected` (its parent's
    /// expectation) must hold `child`.
    pub(super) fn expect_child(&mut self, child: Option<&'a Value>) -> R<()> {
        if self.compare {
            debug_assert!(self.expect.is_none(), "an expectation nothing took");
            self.expect = Some(child.ok_or(GiveUp)?);
        }
        Ok(())
    }

    /// When comparing, the scalar just read must be the expected value: `read` gives it
    /// (called only when comparing, and only where the value is not the plain text itself).
    pub(super) fn check_scalar(&mut self, read: impl FnOnce() -> Value) -> R<()> {
        match self.expected()? {
            Some(e) if read() != *e => Err(GiveUp),
            _ => Ok(()),
        }
    }

    /// `check_scalar` for a scalar that reads as the string `s` (quoted, block).
    pub(super) fn check_string(&mut self, s: &str) -> R<()> {
        match self.expected()? {
            Some(Value::String(e)) if e != s => Err(GiveUp),
            Some(Value::String(_)) | None => Ok(()),
            Some(_) => Err(GiveUp),
        }
    }

    /// `check_scalar` for a plain scalar written `raw`: most are strings read as written,
    /// compared without being resolved.
    pub(super) fn check_plain(&mut self, raw: &str) -> R<()> {
        if !self.compare {
            return Ok(());
        }
        if let Some(Value::String(s)) = self.expect
            && s == raw
            && plain_reads_as_written(raw)
        {
            self.expect = None;
            return Ok(());
        }
        self.check_scalar(|| resolve_plain(raw))
    }
}

/// Whether a plain key reads as its own text (a string, as written): most keys, found without
/// resolving them.
pub(super) fn plain_reads_as_written(raw: &str) -> bool {
    match raw.as_bytes().first() {
        Some(b'\'' | b'"') | None => false,
        // What may be a number: resolved to be sure.
        Some(b'0'..=b'9' | b'+' | b'-' | b'.') => {
            matches!(resolve_plain(raw), Value::String(ref s) if s == raw)
        }
        Some(_) => crate::yaml::scalar::word(raw).is_none(),
    }
}
