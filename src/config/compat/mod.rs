//! Other injectors' configuration files, read as they are and turned into the native model:
//! one engine, no second injection path. Each adapter validates its format's fields (unknown
//! ones are errors with their place) and says which fields it cannot honour.

mod context;
mod expedia;
mod gotemplate;
mod kruise;
pub(crate) mod prepare;
mod salesforce;
mod tumblr;

use serde_json::Value;

use crate::diagnostic::codes;
use crate::json::Pointer;
use crate::model::schema::validate;
use crate::yaml::Node;
pub(crate) use context::{Context, Failure, Problem, nothing};

/// The native configuration for a document of another injector's format, `None` when the
/// document is not one.
pub(crate) fn to_native(
    value: &Value,
    root: &Node,
    doc: &str,
    ctx: &Context<'_>,
) -> Option<Result<Value, Failure>> {
    if salesforce::is_chart_config_map(value) {
        return Some(Err(Failure::Problems(vec![Problem {
            path: vec!["data".to_owned()],
            code: codes::CONFIG_UNSUPPORTED_FORMAT,
            message: "salesforce's Helm chart ConfigMap (`data` holds `mutationconfig.yaml` and \
                      `sidecarconfig.yaml`): kinject reads the two files it mounts for the \
                      webhook, not the ConfigMap: write each key to its own file and pass both with `-c`"
                .to_owned(),
            span: None,
        }])));
    }
    if expedia::is_sidecar_config_map(value) {
        return Some(expedia::to_native(value, root, doc, ctx));
    }
    if kruise::is_sidecar_set(value) {
        let violations = validate(kruise::schema(), "", value);
        if !violations.is_empty() {
            return Some(Err(Failure::Schema(violations)));
        }
        return Some(kruise::to_native(value, ctx).map_err(Failure::Problems));
    }
    if tumblr::is_config_map(value) {
        return Some(tumblr::config_map_to_native(value, root, doc, ctx));
    }
    if salesforce::is_mutation_config(value) {
        return Some(salesforce::to_native(value, ctx));
    }
    if tumblr::is_config(value) {
        return Some(tumblr::to_native(value, ctx));
    }
    if value.get("kind").and_then(Value::as_str) == Some("ConfigMap") {
        // Injectors pick their ConfigMaps by label; the others sit beside them in the same
        // files (the data a sidecar mounts).
        let name = value
            .at_pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        ctx.warnings.borrow_mut().push(Problem {
            path: Vec::new(),
            code: codes::CONFIG_NOT_A_SIDECAR_CONFIG,
            message: format!(
                "ConfigMap `{name}` holds no sidecar configuration (neither Expedia's `sidecars.yaml` nor tumblr \
                 configurations); skipped"
            ),
            span: None,
        });
        return Some(Ok(nothing()));
    }
    None
}
