//! One sidecar rendered for an object: its templates filled in, the result checked as a
//! Kubernetes definition, and hashed; a sidecar without templates once in a run.

use std::borrow::Cow;
use std::sync::OnceLock;

use globset::GlobMatcher;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::apply::resources::{Compiled, compile};
use super::error::InjectError;
use crate::config::{Config, Position, ServiceAccountPolicy, SidecarBody, SidecarDef};
use crate::diagnostic::codes;
use crate::json::Fields;
use crate::model::schema::{Wording, body_schema, validate};
use crate::select;

/// A sidecar rendered for one object, ready to add.
#[derive(Debug, Clone)]
pub(crate) struct Rendered {
    pub name: String,
    /// The definition's settings (how it is added).
    pub spec: crate::config::Sidecar,
    pub body: SidecarBody,
    pub native: bool,
    pub position: Position,
    pub init_position: Position,
    pub service_account_policy: ServiceAccountPolicy,
    /// App containers that get mounts, env and args (empty: all).
    pub targets: Vec<GlobMatcher>,
    /// `resourcesPolicies`, compiled: each container's.
    pub resources: Vec<(String, Compiled)>,
    pub hash: String,
}

/// The rendering of each sidecar without templates, the same for every object: made once in a
/// run, when first needed, as a plain and as a native sidecar; by the sidecar's place in the
/// configuration. Kept beside the settings, not in the configuration, which stays plain data.
pub(crate) struct StaticRenders(Vec<StaticRender>);

#[derive(Default)]
struct StaticRender {
    plain: OnceLock<Result<Rendered, InjectError>>,
    native: OnceLock<Result<Rendered, InjectError>>,
}

impl StaticRenders {
    pub(super) fn of(config: &Config) -> Self {
        StaticRenders(
            config
                .sidecars
                .iter()
                .map(|_| StaticRender::default())
                .collect(),
        )
    }

    /// `def` rendered for an object, as a plain or a native sidecar: a sidecar without
    /// templates once in the run, and lent; one with templates for this object, from its
    /// template context (`ctx`, made when first needed).
    pub(super) fn render<'s>(
        &'s self,
        config: &Config,
        def: &SidecarDef,
        native: bool,
        ctx: impl FnOnce() -> &'s minijinja::Value,
    ) -> Result<Cow<'s, Rendered>, InjectError> {
        if !config.templates.is_static(&def.spec.name) {
            return render(def, config, ctx(), native).map(Cow::Owned);
        }
        let slot = &self.0[def.index];
        let made = if native { &slot.native } else { &slot.plain };
        match made.get_or_init(|| render(def, config, ctx(), native)) {
            Ok(r) => Ok(Cow::Borrowed(r)),
            Err(e) => Err(e.clone()),
        }
    }
}

/// Renders one sidecar's templates for this object and checks the result.
fn render(
    def: &SidecarDef,
    config: &Config,
    ctx: &minijinja::Value,
    native: bool,
) -> Result<Rendered, InjectError> {
    let name = &def.spec.name;
    let (file, line, column) = def.origin.position();
    let defined = format!("sidecar `{name}` is defined at {file}:{line}:{column}");
    let fail =
        |code: &'static str, message: String| InjectError::new(code, message).help(defined.clone());
    let value = match config.templates.render_whole(name, ctx) {
        Some(value) => {
            let value = value
                .map_err(|e| fail(e.code, format!("sidecar `{name}`: template: {}", e.message)))?;
            if value.is_null() {
                Value::Object(Map::new())
            } else {
                value
            }
        }
        None => config
            .templates
            .render_fields(name, &def.definition, ctx)
            .map_err(|e| {
                fail(
                    codes::TEMPLATE_RENDER,
                    format!("sidecar `{name}` at `{}`: {}", e.pointer, e.message),
                )
            })?,
    };
    if let Some(v) = validate(body_schema(), "", &value).into_iter().next() {
        let what = v.message(Wording::default());
        return Err(fail(
            codes::INJECT_INVALID_SIDECAR,
            format!("sidecar `{name}` rendered to an invalid definition: {what}"),
        ));
    }
    let body: SidecarBody = serde_json::from_value(value).map_err(|e| {
        fail(
            codes::INJECT_INVALID_SIDECAR,
            format!("sidecar `{name}`: {e}"),
        )
    })?;
    for c in body.containers.iter().chain(&body.init_containers) {
        check_container(name, c)?;
    }
    let native = native || def.spec.native;
    let position = def.spec.position.unwrap_or(Position::After);
    let init_position = def.spec.init_position.unwrap_or(if native {
        Position::Before
    } else {
        Position::After
    });
    let targets = def
        .spec
        .target_containers
        .iter()
        .filter_map(|p| select::glob(p).ok())
        .collect();
    let resources = def
        .spec
        .resources_policies
        .iter()
        .map(|(c, p)| match compile(p) {
            Ok(compiled) => Ok((c.clone(), compiled)),
            Err(e) => Err(fail(
                codes::INJECT_INVALID_SIDECAR,
                format!("sidecar `{name}`: the `resourcesPolicies` of `{c}`: {e}"),
            )),
        })
        .collect::<Result<_, _>>()?;
    let hash = hash(def, &body, native);
    Ok(Rendered {
        name: name.clone(),
        spec: def.spec.clone(),
        body,
        native,
        position,
        init_position,
        service_account_policy: def
            .spec
            .service_account_policy
            .unwrap_or(ServiceAccountPolicy::IfUnset),
        targets,
        resources,
        hash,
    })
}

/// The hash of everything that decides what a sidecar adds: what is added (`body`, rendered)
/// and how (its settings). Key order is how the configuration was written, not what it
/// means: the keys are sorted first.
fn hash(def: &SidecarDef, body: &SidecarBody, native: bool) -> String {
    let mut settings = serde_json::to_value(&def.spec).unwrap_or_default();
    if let Value::Object(m) = &mut settings {
        let body_fields = body_schema()["properties"].as_object();
        m.retain(|k, _| {
            // `notAppContainers` decides what other sidecars' `resourcesPolicies` work out,
            // not what this one adds.
            !["description", "template", "notAppContainers"].contains(&k.as_str())
                && !body_fields.is_some_and(|f| f.contains_key(k))
        });
        m.insert("native".to_owned(), Value::Bool(native));
    }
    let hash_input = serde_json::json!({"body": body, "settings": settings});
    let digest = Sha256::digest(canonical(&hash_input).to_string().as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// `value` with every mapping's keys sorted (as Go writes maps).
pub(super) fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), canonical(&m[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// A container must have a name and an image and read as a Kubernetes `Container`.
fn check_container(sidecar: &str, c: &Value) -> Result<(), InjectError> {
    let fail = |message: String| InjectError::new(codes::INJECT_INVALID_SIDECAR, message);
    let name = c.field("name").and_then(Value::as_str).unwrap_or_default();
    if name.is_empty() {
        return Err(fail(format!(
            "sidecar `{sidecar}` has a container without a name"
        )));
    }
    serde_json::from_value::<k8s_openapi::api::core::v1::Container>(c.clone()).map_err(|e| {
        fail(format!(
            "sidecar `{sidecar}`: container `{name}` is not a valid Kubernetes container: {e}"
        ))
    })?;
    Ok(())
}
