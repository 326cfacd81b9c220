//! kinject: inject sidecar containers into Kubernetes manifests, offline.

pub mod admission;
pub mod cli;
pub mod config;
pub mod diagnostic;
pub(crate) mod formats;
#[doc(hidden)]
pub mod fuzz;
pub mod inject;
pub mod kinds;
pub mod krm;
pub mod overlay;
pub mod patch;
pub mod pipeline;
pub mod read;
pub mod render;
pub mod report;
pub mod select;
pub mod template;
pub mod write;
pub mod yaml;
