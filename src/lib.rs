//! kinject: inject sidecar containers into Kubernetes manifests, offline.
//!
//! The modules are floors: each imports only modules on floors below its own (tests inside a
//! module excepted), so no two import each other. `tests/floors.rs` reads `src/` and holds
//! this order; a module that is not listed here, or an import that climbs, fails it. From
//! the ground up:
//!
//! 1. `json`: JSON field access and pointers, and RFC 6902 operations (`json::patch`: `diff`,
//!    `apply`), the one description of a change.
//! 1. `diagnostic`: located diagnostics, text positions (lines, columns, characters).
//! 1. `quantity`: Kubernetes resource quantities, canonical and with the arithmetic
//!    OpenKruise does on them.
//! 2. `yaml`: YAML text as Kubernetes reads it, its span tree, and edits spliced into it.
//! 2. `model`: the native configuration format and its JSON Schema.
//! 2. `calculator`: OpenKruise's resource calculator (`resourcesPolicy` expressions).
//! 2. `go_json`: values written as Go's `encoding/json` writes a Go struct (Kruise's hash),
//!    and the fields of the Go structs, generated from their source.
//! 2. `tree`: where a run may read and write (the one rule for every path it opens or
//!    writes), and which configuration a file uses when none is given.
//! 3. `read`: inputs → documents → objects (*read*).
//! 3. `select`: rules matched against an object, skip reasons (*select*, run by inject).
//! 3. `template`: sidecar templates, compiled once and rendered per object.
//! 3. `kinds`: which objects are workloads and where their pod template lives.
//! 4. `config`: configuration files in any format (`config::compat`: the other injectors')
//!    → one checked `Config`.
//! 5. `inject`: one object → the object as it should be (*inject*: select, render, add).
//! 6. `pipeline`: one input through the stages, in document order, on every core; *diff*
//!    (`json::patch::diff`) per object; each document handed to a `Sink`.
//! 7. `render`: results → bytes (*render*): the YAML sink (edited in place), JSON, patches,
//!    the report.
//! 8. `integrations`: the pipeline in other tools' envelopes: KRM, admission, kustomize.
//! 9. `args`: the command line's grammar, every subcommand's flags as clap reads them.
//! 9. `serve`: the in-cluster mutating webhook: HTTPS, the admission answer per request,
//!    configuration and certificates reloaded, metrics (feature `serve`).
//! 10. `cases`: test cases as folders, run and checked (the three invariants): what the
//!     golden runner and `kinject test` share; a case's command line read with `args`.
//! 11. `cli`: the command line run: the terminal, files written in place, exit codes.
//! 11. `fuzz`: the fuzz targets' entry points and oracles.

#![warn(unreachable_pub)]

mod args;
mod calculator;
// The case runner `tests/golden.rs` and `kinject test` share (docs/test.md).
pub mod cases;
mod cli;
mod config;
mod diagnostic;
#[doc(hidden)]
pub mod fuzz;
mod go_json;
mod inject;
mod integrations;
mod json;
mod kinds;
mod model;
mod pipeline;
mod quantity;
mod read;
mod render;
mod select;
#[cfg(feature = "serve")]
mod serve;
mod template;
mod tree;
mod yaml;

// The library's surface: what the binary, the tests, the benchmarks and the fuzz targets use.
// Everything else is the crate's own (`pub(crate)`, held by the `unreachable_pub` lint).
pub use cli::{Cli, ExitStatus, main};
pub use config::{Config, load_texts};
pub use diagnostic::codes;
pub use inject::{Mode, Settings};
pub use json::patch::Op;
pub use kinds::workload_kind;
pub use model::schema::document as schema;
pub use pipeline::{STACK, Values, on_stack, process};
pub use read::{Source, from_bytes, objects};
pub use render::yaml::render as render_yaml;
pub use select::{Miss, Reason};
