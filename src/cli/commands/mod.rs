//! One file per subcommand, wiring only: each reads its arguments, calls the services of
//! `cli` and the library, and returns how the run ended. `edit`, `stream` and `overlay` are
//! the ways `inject` and `uninject` write (files in place, standard input a window at a time,
//! a kustomize overlay).

pub(super) mod admission;
mod edit;
pub(super) mod explain;
pub(super) mod inject;
pub(super) mod krm;
mod manifests;
mod overlay;
pub(super) mod serve;
mod stream;
pub(super) mod test;
pub(super) mod uninject;
pub(super) mod version;
