//! The pipeline inside other tools' envelopes: a KRM function's ResourceList, an admission
//! webhook's AdmissionReview, and a kustomize overlay of RFC 6902 patches.

pub(crate) mod admission;
pub(crate) mod krm;
pub(crate) mod kustomize;
pub(crate) mod review_cost;
