//! kinject: inject sidecar containers into Kubernetes manifests, offline.

pub mod config;
pub mod kinds;
pub mod diagnostic;
pub mod patch;
pub mod read;
pub mod select;
pub mod template;
pub mod yaml;
