//! `kinject serve`: the in-cluster mutating webhook. The API server's AdmissionReviews over
//! HTTPS, each answered by the admission code `kinject admission` runs (one engine, the same
//! bytes), with the configuration and the certificates reloaded when their files change.

pub(crate) mod decide;
pub(crate) mod manifests;
