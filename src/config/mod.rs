//! Configuration files in any format loaded into one resolved `Config`, with located
//! diagnostics: files read (`load`), other injectors' documents converted (`compat`), each
//! merged in (`merge`), `--set` applied (`set`), sidecars that clash found (`clash`); what is
//! loaded is `loaded`. The native format's types and its JSON Schema are `model`'s.

mod clash;
pub(crate) mod compat;
mod load;
mod loaded;
mod merge;
mod set;

pub(crate) use crate::model::{
    API_VERSION, AnnotationPolicy, JobPolicy, KIND, Position, SameName, ServiceAccountPolicy,
    Sidecar, SidecarBody,
};
pub use load::load_texts;
#[cfg(feature = "serve")]
pub(crate) use load::{expand as files, texts};
pub(crate) use load::{load, load_untried};
pub use loaded::Config;
pub(crate) use loaded::{AnnotationKeys, RuleDef, SidecarDef, UnreadAnnotations};
pub(crate) use merge::located_violation;
pub(crate) use set::Set;
