//! Configuration: the native format's types, its JSON Schema, and loading files into one
//! resolved `Config` with located diagnostics.

pub(crate) mod compat;
mod load;
mod merge;

pub use crate::model::{
    API_VERSION, AnnotationPolicy, ConfigFile, CustomKind, JobPolicy, KIND, Match, Position, Rule,
    SameName, ServiceAccountPolicy, Sidecar, SidecarBody, TransferEnv,
};
pub(crate) use load::located_violation;
pub use load::{Config, Defaults, Origin, RuleDef, SidecarDef, load, load_texts};
