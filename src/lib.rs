//! kinject: inject sidecar containers into Kubernetes manifests, offline.

pub mod cli;
pub mod config;
pub mod diagnostic;
#[doc(hidden)]
pub mod fuzz;
pub mod inject;
pub mod integrations;
pub mod kinds;
pub mod model;
pub mod patch;
pub mod pipeline;
pub mod read;
pub mod render;
pub mod select;
pub mod template;
pub mod yaml;
