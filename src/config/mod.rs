//! Configuration: the native format's types, its JSON Schema, and loading files into one
//! resolved `Config` with located diagnostics.

pub mod model;
pub mod schema;

pub use model::*;
