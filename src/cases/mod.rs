//! Test cases as folders: what the project's golden runner (`tests/golden.rs`) and
//! `kinject test` share, so that the two cannot drift. `layout` finds a case's files (its
//! input, its arguments, its one expectation) and the case folders under a directory;
//! `command` reads a case's command line as kinject will (clap, on `crate::args`); `run` runs
//! kinject on a case; `check` compares what it wrote with the expectation and
//! checks the three invariants of an inject case (injecting twice changes nothing, the patch
//! and the YAML agree, `uninject` gives the input back byte for byte); `record` is the hash of
//! a case's input that `kinject test --update` keeps beside the expectation.
//!
//! A case runs kinject as a process (`run::Runner`), the built binary for the golden runner,
//! the running one (`std::env::current_exe`) for `kinject test`: a case then tests exactly
//! what a user's `kinject inject` does — argument parsing, configuration discovery from the
//! case's folder, exit codes, the report on stderr — with nothing of the test run (its
//! current directory, its terminal, its environment's report file) leaking into it.

mod check;
mod command;
mod layout;
mod record;
mod run;

pub use check::{Apply, Failure, Outcome, Steps, apply_own, check};
pub(crate) use layout::read_case_file;
pub use layout::{Found, Layout, Rules, find, is_case};
pub use record::{Record, input_hash};
pub use run::{Ran, Runner};
