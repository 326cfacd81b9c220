//! How a run ends, as its exit code tells it: every band of the command line returns it.

use std::process::ExitCode;

/// Exit codes: 0 success, 1 files changed (or would), 2 error.
/// How a run ends, as its exit code tells it (docs/output.md; never renumbered,
/// docs/stability.md). Ordered: a run of several parts ends with the worst of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExitStatus {
    /// 0: done (nothing to change, or written).
    Success,
    /// 1: files changed (`--in-place`) or would change (`--check`, `--diff`).
    Changed,
    /// 2: an error; nothing was written on stdout.
    Error,
}

impl ExitStatus {
    /// The process's exit code.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Changed => 1,
            ExitStatus::Error => 2,
        }
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> Self {
        ExitCode::from(status.code())
    }
}
