//! kinject: inject sidecar containers into Kubernetes manifests, offline.

pub mod patch;
pub(crate) mod yaml;
