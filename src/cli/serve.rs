//! `kinject serve`: wiring only.

use super::{ExitStatus, ServeArgs, eprint};

#[cfg(not(feature = "serve"))]
pub(crate) fn run(_: &ServeArgs) -> ExitStatus {
    eprint("error: this kinject was built without the server (cargo feature `serve`)\n");
    ExitStatus::Error
}

#[cfg(feature = "serve")]
pub(crate) fn run(_: &ServeArgs) -> ExitStatus {
    // In progress (issue 25): the server lands in the next commits.
    eprint("error: kinject serve is not built yet\n");
    ExitStatus::Error
}
