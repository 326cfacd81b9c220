//! Sidecar templates (minijinja): compiled once per configuration, rendered per object.
//!
//! Two forms. A *field template* is any string of a sidecar definition holding `{{ }}` or
//! `{% %}`; it renders to that one string (or, when the string is a single `{{ expr }}`, to the
//! expression's value with its type), so whatever a manifest contains cannot add a field. A
//! *whole template* (`template:`) renders YAML text with loops and conditionals. There every
//! `{{ }}` prints a placeholder, not its value: the text is read as YAML with the placeholders
//! in it, and each value is then put where its placeholder is in what was read — the whole
//! node when the placeholder is a plain scalar alone, else its text inside the scalar (quoted,
//! block, or beside other text; a key). What a value holds is never read as YAML, so no value
//! can close a quote or a bracket of the template, start a line, or add a field, whatever
//! context the template put it in (Istio's kube-inject shipped a fix for annotations that did).
//!
//! `compiled` holds a configuration's templates and renders them, in the environment `env`
//! makes (with the `filters`, `functions` and `go` filters it registers and the `limits` of a
//! render); `fill` puts a whole template's printed values back; `context` is what a render
//! reads; `trial` tries every template once at load; `error` holds what fails.

mod compiled;
mod context;
mod env;
mod error;
mod fill;
mod filters;
mod functions;
mod go;
mod limits;
mod trial;

pub(crate) use compiled::{Dialect, Templates};
#[cfg(any(test, feature = "oracles"))]
pub(crate) use context::context;
pub(crate) use context::{Source, context_of};
pub(crate) use error::SyntaxError;
pub(crate) use trial::{Fault, suggest_value};

#[cfg(test)]
mod tests;
