//! The sidecar's containers as they go into one pod: with the resources a `resourcesPolicy`
//! works out, the app containers' volume mounts, devices and env where the sidecar takes them, env from the pod's annotations, and
//! (`targetSidecars`) what the sidecar gives app containers.

use serde_json::{Map, Value};

use super::super::error::InjectError;
use super::super::pod::{TOKEN_MOUNT, list_field, name_of, position};
use super::super::sidecar::Rendered;
use super::context::Ctx;
use super::resources::Compiled;
use crate::diagnostic::codes;
use crate::json::Fields;

/// The pod as it was before any sidecar, as `prepare` reads it.
pub(super) struct AppView<'a> {
    /// The pod's own containers (empty when no sidecar reads them).
    pub(super) containers: &'a [Value],
    /// The pod's own init containers (empty when no sidecar has a resources policy).
    pub(super) init_containers: &'a [Value],
    /// The names a resources policy leaves out (the sidecars' containers, theirs included).
    pub(super) not_app: &'a [String],
}

/// The sidecar's container as it goes into this pod: with the app's volume mounts when it
/// shares them, environment transferred from app containers, and (`targetSidecars`) the
/// sidecar's own `env` and `volumeMounts`.
pub(super) fn prepare(
    c: &Value,
    s: &Rendered,
    pod: &AppView<'_>,
    ctx: &Ctx<'_>,
) -> Result<Value, InjectError> {
    let app = pod.containers;
    let mut c = c.clone();
    let cname = name_of(&c).to_owned();
    let Value::Object(cm) = &mut c else {
        return Ok(c);
    };
    // Kruise works out the resources first (buildSidecars).
    if let Some((_, policy)) = s.resources.iter().find(|(n, _)| *n == cname) {
        set_resources(cm, &cname, policy, s, pod)?;
    }
    let shared = &s.spec.share_volume_mounts;
    // Kruise's order (buildSidecars): env transferred, then the env the shared mounts'
    // `subPathExpr`s read; the container's own variables win over both (MergeEnvVar).
    let mut envs = transferred_env(s, &cname, app, ctx);
    if !shared.is_empty() && names_container(shared, &cname) {
        envs.extend(share_app_mounts(cm, app));
    }
    add_env(cm, envs, false);
    let devices = &s.spec.share_volume_devices;
    if !devices.is_empty() && names_container(devices, &cname) {
        share_app_devices(cm, app);
    }
    if let Some(from) = &s.spec.env_from_annotations {
        add_env(cm, env_from_annotations(from, ctx.metadata), true);
    }
    if s.spec.target_sidecars {
        add_own_env_and_mounts(cm, s);
    }
    Ok(c)
}

/// Sets the `resources` sidecar container `cname`'s `resourcesPolicy` works out from the
/// pod's containers and init containers, every sidecar's left out (`pod.not_app`); as Kruise,
/// they replace the container's own (none when it works out none).
fn set_resources(
    cm: &mut Map<String, Value>,
    cname: &str,
    policy: &Compiled,
    s: &Rendered,
    pod: &AppView<'_>,
) -> Result<(), InjectError> {
    match policy.resources(pod.init_containers, pod.containers, pod.not_app) {
        Ok(Some(resources)) => {
            cm.insert("resources".to_owned(), resources);
        }
        Ok(None) => {
            cm.shift_remove("resources");
        }
        Err(e) => {
            return Err(InjectError::new(
                codes::INJECT_RESOURCES_POLICY,
                format!(
                    "sidecar `{}`: the `resourcesPolicy` of container `{cname}`: {e}",
                    s.name
                ),
            ));
        }
    }
    Ok(())
}

/// Whether `globs` name container `cname` (no globs: every container).
fn names_container(globs: &[String], cname: &str) -> bool {
    globs.is_empty()
        || globs
            .iter()
            .any(|g| crate::select::glob(g).is_ok_and(|m| m.is_match(cname)))
}

/// Gives a sidecar container the app containers' volume mounts (not the token mount, nor one
/// at a path the container already mounts a volume or device at), and returns the env their
/// `subPathExpr`s read (Kruise's GetInjectedVolumeMountsAndEnvs and MergeVolumeMounts).
fn share_app_mounts(cm: &mut Map<String, Value>, app: &[Value]) -> Vec<Value> {
    let mut created = false;
    let mut mounts = list_field(cm, "volumeMounts", &mut created).clone();
    let devices = cm.field("volumeDevices").and_then(Value::as_array);
    let mut paths: Vec<String> = mounts
        .iter()
        .filter_map(|m| m.field("mountPath"))
        .chain(
            devices
                .into_iter()
                .flatten()
                .filter_map(|d| d.field("devicePath")),
        )
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    let mut envs = Vec::new();
    for a in app.iter().filter(|a| !is_injected_sidecar(a)) {
        for m in a
            .field("volumeMounts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let path = m
                .field("mountPath")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if path == TOKEN_MOUNT {
                continue;
            }
            // `subPathExpr: foo/$(POD_NAME)` needs POD_NAME in the sidecar too.
            let expr = m
                .field("subPathExpr")
                .and_then(Value::as_str)
                .unwrap_or_default();
            for var in expr
                .split("$(")
                .skip(1)
                .filter_map(|r| r.split_once(')').map(|(v, _)| v))
            {
                if let Some(e) = env_of(a, var) {
                    envs.push(e.clone());
                }
            }
            if !paths.iter().any(|p| p == path) {
                paths.push(path.to_owned());
                mounts.push(m.clone());
            }
        }
    }
    cm.insert("volumeMounts".to_owned(), Value::Array(mounts));
    envs
}

/// Gives a sidecar container the app containers' volume devices, but one at a path the
/// container already mounts a volume or device at (Kruise's GetInjectedVolumeDevices and
/// MergeVolumeDevices, after the shared mounts).
fn share_app_devices(cm: &mut Map<String, Value>, app: &[Value]) {
    let own = cm.field("volumeDevices").and_then(Value::as_array);
    let mut devices = own.cloned().unwrap_or_default();
    let mounts = cm.field("volumeMounts").and_then(Value::as_array);
    let mut paths: std::collections::HashSet<String> = devices
        .iter()
        .filter_map(|d| d.field("devicePath"))
        .chain(
            mounts
                .into_iter()
                .flatten()
                .filter_map(|m| m.field("mountPath")),
        )
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    let before = devices.len();
    let app_devices = app
        .iter()
        .filter(|a| !is_injected_sidecar(a))
        .filter_map(|a| a.field("volumeDevices").and_then(Value::as_array))
        .flatten();
    for d in app_devices {
        let path = d
            .field("devicePath")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if paths.insert(path.to_owned()) {
            devices.push(d.clone());
        }
    }
    if devices.len() > before {
        cm.insert("volumeDevices".to_owned(), Value::Array(devices));
    }
}

/// Whether app container `a` is a sidecar Kruise injected earlier (`IS_INJECTED: "true"`),
/// whose mounts and devices Kruise does not share.
fn is_injected_sidecar(a: &Value) -> bool {
    env_of(a, "IS_INJECTED").and_then(|e| e.field("value")) == Some(&Value::from("true"))
}

/// The env vars `transferEnv` copies from app containers into sidecar container `cname`: for
/// each entry, its names sorted (Kruise iterates a set). A source the pod does not name (a
/// missing label or annotation) transfers nothing, as in Kruise; a warning says so.
fn transferred_env(s: &Rendered, cname: &str, app: &[Value], ctx: &Ctx<'_>) -> Vec<Value> {
    let mut transferred = Vec::new();
    for t in &s.spec.transfer_env {
        if !names_container(&t.containers, cname) {
            continue;
        }
        let source = match (&t.source_container_name, &t.source_container_name_from) {
            (Some(n), _) => n.clone(),
            (None, Some(from)) => {
                let path = &from.field_ref.field_path;
                let Some(name) = field_value(ctx.metadata, path) else {
                    ctx.warn(format!(
                        "sidecar `{}`: the pod has no `{path}` to name the container `transferEnv` copies from, so \
                            container `{cname}` gets none of its env",
                        s.name
                    ));
                    continue;
                };
                name
            }
            (None, None) => continue,
        };
        let Some(a) = app.iter().find(|a| name_of(a) == source) else {
            continue;
        };
        let names: std::collections::BTreeSet<&String> =
            t.env_name.iter().chain(&t.env_names).collect();
        for var in names {
            if let Some(e) = env_of(a, var) {
                transferred.push(e.clone());
            }
        }
    }
    transferred
}

/// Env vars from the pod's annotations named with `from.prefix` (the name after it).
fn env_from_annotations(from: &crate::model::EnvFromAnnotations, metadata: &Value) -> Vec<Value> {
    let annotations = metadata.field("annotations").and_then(Value::as_object);
    let envs = annotations.into_iter().flatten().filter_map(|(k, v)| {
        let name = k.strip_prefix(&from.prefix)?;
        (!name.is_empty() && !from.exclude.iter().any(|x| x == name))
            .then(|| serde_json::json!({"name": name, "value": v.as_str().unwrap_or_default()}))
    });
    envs.collect()
}

/// `targetSidecars`: the env and mounts the sidecar gives app containers, given to its own
/// container too where it has none of that name (or mount); lists left empty are removed.
fn add_own_env_and_mounts(cm: &mut Map<String, Value>, s: &Rendered) {
    let mut created = false;
    let env = list_field(cm, "env", &mut created);
    for e in &s.body.env {
        if position(env, name_of(e)).is_none() {
            env.push(e.clone());
        }
    }
    let mounts = list_field(cm, "volumeMounts", &mut created);
    let own = mounts.clone();
    for m in &s.body.volume_mounts {
        let taken = if s.spec.mounts_by_name {
            own.iter().any(|x| name_of(x) == name_of(m))
        } else {
            mounts
                .iter()
                .any(|x| x.field("mountPath") == m.field("mountPath"))
        };
        if !taken {
            mounts.push(m.clone());
        }
    }
    for field in ["env", "volumeMounts"] {
        if cm
            .field(field)
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
        {
            cm.shift_remove(field);
        }
    }
}

fn env_of<'a>(c: &'a Value, name: &str) -> Option<&'a Value> {
    c.field("env")?
        .as_array()?
        .iter()
        .find(|e| name_of(e) == name)
}

/// Adds env vars to a container. One of a name the container already has replaces it
/// (`replace`), or is left out: Kruise's MergeEnvVar, where the container's own value wins,
/// and the first of two.
fn add_env(cm: &mut Map<String, Value>, envs: Vec<Value>, replace: bool) {
    if envs.is_empty() {
        return;
    }
    let mut created = false;
    let list = list_field(cm, "env", &mut created);
    for e in envs {
        match position(list, name_of(&e)) {
            Some(i) if replace => list[i] = e,
            Some(_) => {}
            None => list.push(e),
        }
    }
}

/// `metadata.name`, `metadata.labels['k']` or `metadata.annotations['k']` of the pod.
fn field_value(metadata: &Value, path: &str) -> Option<String> {
    let get = |field: &str, key: &str| {
        metadata
            .field(field)?
            .field(key)?
            .as_str()
            .map(str::to_owned)
    };
    let keyed = |prefix: &str| {
        path.strip_prefix(prefix)?
            .strip_suffix("']")
            .or_else(|| path.strip_prefix(prefix)?.strip_suffix("\"]"))
            .map(str::to_owned)
    };
    if path == "metadata.name" {
        return metadata.field("name")?.as_str().map(str::to_owned);
    }
    if let Some(k) = keyed("metadata.labels['").or_else(|| keyed("metadata.labels[\"")) {
        return get("labels", &k);
    }
    if let Some(k) = keyed("metadata.annotations['").or_else(|| keyed("metadata.annotations[\"")) {
        return get("annotations", &k);
    }
    None
}
