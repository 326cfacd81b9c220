//! Configuration: the native format's types, its JSON Schema, and loading files into one
//! resolved `Config` with located diagnostics.

pub(crate) mod compat;
mod load;
mod merge;

pub(crate) use crate::model::{
    API_VERSION, AnnotationPolicy, JobPolicy, KIND, Position, SameName, ServiceAccountPolicy,
    Sidecar, SidecarBody,
};
pub(crate) use load::located_violation;
pub use load::{Config, load_texts};
pub(crate) use load::{SidecarDef, load};
