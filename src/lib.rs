//! kinject: inject sidecar containers into Kubernetes manifests, offline.

pub(crate) mod yaml;
