//! kinject: inject sidecar containers into Kubernetes manifests, offline.

pub mod patch;
pub mod read;
pub mod yaml;
