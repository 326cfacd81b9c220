//! Adding rendered sidecars to a pod template, recording each addition, and refusing
//! conflicts instead of silently replacing anything.

use std::collections::HashMap;

use globset::GlobMatcher;
use serde_json::{Map, Value};

use super::InjectError;
use super::pod::{list_field, name_of, object_field, overlay, position};
use super::status::{Previous, Record};
use crate::config::{Position, ServiceAccountPolicy, SidecarBody};

/// A sidecar rendered for one object, ready to add.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub name: String,
    pub body: SidecarBody,
    pub native: bool,
    pub position: Position,
    pub init_position: Position,
    pub service_account_policy: ServiceAccountPolicy,
    /// App containers that get mounts, env and args (empty: all).
    pub targets: Vec<GlobMatcher>,
    pub hash: String,
}

/// Which sidecar added which item, to tell a conflict between two sidecars from a clash
/// with the pod's own item.
#[derive(Default)]
struct Owners(HashMap<(&'static str, String), String>);

impl Owners {
    fn get(&self, kind: &'static str, key: &str) -> Option<&String> {
        self.0.get(&(kind, key.to_owned()))
    }

    fn set(&mut self, kind: &'static str, key: &str, sidecar: &str) {
        self.0.insert((kind, key.to_owned()), sidecar.to_owned());
    }
}

fn conflict(message: String) -> InjectError {
    InjectError::new("kinject::inject::conflict", message)
}

/// Adds `sidecars` to `pod` (a pod template: `metadata` and `spec`). Returns one record per
/// sidecar.
pub(crate) fn apply(pod: &mut Value, sidecars: &[Rendered]) -> Result<Vec<Record>, InjectError> {
    let Value::Object(pod) = pod else {
        return Err(conflict("the pod template is not a mapping".to_owned()));
    };
    let mut owners = Owners::default();
    let mut records = add_to_spec(object_field(pod, "spec", &mut false), sidecars, &mut owners)?;
    for (s, rec) in sidecars.iter().zip(records.iter_mut()) {
        add_metadata(pod, s, &mut owners, rec)?;
    }
    Ok(records)
}

fn add_to_spec(
    spec: &mut Map<String, Value>,
    sidecars: &[Rendered],
    owners: &mut Owners,
) -> Result<Vec<Record>, InjectError> {
    let mut records = Vec::new();
    let mut app = take_list(spec, "containers");
    let had_inits = matches!(spec.get("initContainers"), Some(Value::Array(_)));
    let mut inits = take_list(spec, "initContainers");
    let app_names: Vec<String> = app.iter().map(|c| name_of(c).to_owned()).collect();
    let (mut before, mut after, mut init_before, mut init_after) = (vec![], vec![], vec![], vec![]);
    let mut init_owner: Option<usize> = None;
    let original_sa = spec
        .get("serviceAccountName")
        .or_else(|| spec.get("serviceAccount"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    for s in sidecars {
        let mut rec = Record {
            name: s.name.clone(),
            hash: s.hash.clone(),
            ..Record::default()
        };
        // A sidecar's own init containers run before its native containers.
        for c in &s.body.init_containers {
            claim(owners, name_of(c), &s.name)?;
            let side = if s.init_position == Position::Before {
                &mut init_before
            } else {
                &mut init_after
            };
            place(c, &mut inits, &app, side, &mut rec, true, &s.name)?;
        }
        for c in &s.body.containers {
            let n = name_of(c).to_owned();
            claim(owners, &n, &s.name)?;
            if s.native {
                let mut c = c.clone();
                if let Value::Object(m) = &mut c {
                    m.insert(
                        "restartPolicy".to_owned(),
                        Value::String("Always".to_owned()),
                    );
                }
                let side = if s.init_position == Position::Before {
                    &mut init_before
                } else {
                    &mut init_after
                };
                place(&c, &mut inits, &app, side, &mut rec, true, &s.name)?;
            } else {
                let side = if s.position == Position::Before {
                    &mut before
                } else {
                    &mut after
                };
                place(c, &mut app, &inits, side, &mut rec, false, &s.name)?;
            }
        }
        if !had_inits && !rec.init_containers.is_empty() && init_owner.is_none() {
            init_owner = Some(records.len());
        }
        merge_named(spec, "volumes", &s.body.volumes, owners, &mut rec, &s.name)?;
        merge_named(
            spec,
            "imagePullSecrets",
            &s.body.image_pull_secrets,
            owners,
            &mut rec,
            &s.name,
        )?;
        for c in app.iter_mut() {
            let cname = name_of(c).to_owned();
            let is_app = app_names.contains(&cname) && owners.get("container", &cname).is_none();
            let targeted = s.targets.is_empty() || s.targets.iter().any(|g| g.is_match(&cname));
            if is_app && targeted {
                add_to_app_container(c, s, owners, &mut rec)?;
            }
        }
        if let Some(sa) = &s.body.service_account_name {
            set_service_account(spec, sa, s, original_sa.as_deref(), owners, &mut rec)?;
        }
        records.push(rec);
    }
    let containers: Vec<Value> = before.into_iter().chain(app).chain(after).collect();
    spec.insert("containers".to_owned(), Value::Array(containers));
    let all_inits: Vec<Value> = init_before
        .into_iter()
        .chain(inits)
        .chain(init_after)
        .collect();
    if had_inits || !all_inits.is_empty() {
        insert_before(
            spec,
            "initContainers",
            Value::Array(all_inits),
            "containers",
        );
    }
    if let Some(i) = init_owner {
        records[i].created.push("/spec/initContainers".to_owned());
    }
    Ok(records)
}

/// Adds a sidecar's pod annotations and labels; the pod's own values win.
fn add_metadata(
    pod: &mut Map<String, Value>,
    s: &Rendered,
    owners: &mut Owners,
    rec: &mut Record,
) -> Result<(), InjectError> {
    for (field, items) in [
        ("annotations", &s.body.annotations),
        ("labels", &s.body.labels),
    ] {
        if items.is_empty() {
            continue;
        }
        let created_md = !matches!(pod.get("metadata"), Some(Value::Object(_)));
        if created_md {
            pod.shift_insert(0, "metadata".to_owned(), Value::Object(Map::new()));
            rec.created.push("/metadata".to_owned());
        }
        let mut created = false;
        let metadata = object_field(pod, "metadata", &mut false);
        let map = object_field(metadata, field, &mut created);
        if created {
            rec.created.push(format!("/metadata/{field}"));
        }
        for (k, v) in items {
            match map.get(k) {
                Some(existing) if existing != v => {
                    if let Some(other) = owners.get(field, k) {
                        return Err(conflict(format!(
                            "{field} `{k}` is set differently by sidecar `{other}` and sidecar `{}`",
                            s.name
                        )));
                    }
                }
                Some(_) => {}
                None => {
                    map.insert(k.clone(), v.clone());
                    owners.set(field, k, &s.name);
                    if field == "annotations" {
                        rec.annotations.push(k.clone());
                    } else {
                        rec.labels.push(k.clone());
                    }
                }
            }
        }
    }
    Ok(())
}

fn take_list(spec: &mut Map<String, Value>, key: &str) -> Vec<Value> {
    match spec.get_mut(key) {
        Some(Value::Array(a)) => std::mem::take(a),
        _ => Vec::new(),
    }
}

fn insert_before(map: &mut Map<String, Value>, key: &str, value: Value, before: &str) {
    if map.contains_key(key) {
        map.insert(key.to_owned(), value);
        return;
    }
    let at = map.keys().position(|k| k == before).unwrap_or(map.len());
    map.shift_insert(at, key.to_owned(), value);
}

fn claim(owners: &mut Owners, name: &str, sidecar: &str) -> Result<(), InjectError> {
    if let Some(other) = owners.get("container", name) {
        return Err(conflict(format!(
            "container `{name}` is injected by both sidecar `{other}` and sidecar `{sidecar}`"
        )));
    }
    owners.set("container", name, sidecar);
    Ok(())
}

/// Puts a sidecar container into `list` (the pod's own containers or init containers): a
/// same-name container of the pod is a user override, merged over the sidecar's in place.
fn place(
    c: &Value,
    list: &mut [Value],
    other: &[Value],
    side: &mut Vec<Value>,
    rec: &mut Record,
    init: bool,
    sidecar: &str,
) -> Result<(), InjectError> {
    let n = name_of(c).to_owned();
    let (here, there) = if init {
        ("initContainers", "containers")
    } else {
        ("containers", "initContainers")
    };
    if let Some(i) = position(list, &n) {
        let user = list[i].clone();
        list[i] = overlay(c, &user);
        rec.overrides.insert(n.clone(), user);
    } else if position(other, &n).is_some() {
        return Err(conflict(format!("sidecar `{sidecar}` injects `{n}` into {here}, but the pod has a container `{n}` in {there}")).help(format!("move the pod's own `{n}` to {here} to override the sidecar, or rename it")));
    } else {
        side.push(c.clone());
    }
    if init {
        rec.init_containers.push(n);
    } else {
        rec.containers.push(n);
    }
    Ok(())
}

/// Merges named pod-level items (volumes, pull secrets): identical ones are shared, different
/// ones under one name are a conflict.
fn merge_named(
    spec: &mut Map<String, Value>,
    field: &'static str,
    items: &[Value],
    owners: &mut Owners,
    rec: &mut Record,
    sidecar: &str,
) -> Result<(), InjectError> {
    if items.is_empty() {
        return Ok(());
    }
    let mut created = false;
    let list = list_field(spec, field, &mut created);
    if created {
        rec.created.push(format!("/spec/{field}"));
    }
    let singular = if field == "volumes" {
        "volume"
    } else {
        "image pull secret"
    };
    let recorded = |rec: &mut Record, n: String| {
        if field == "volumes" {
            rec.volumes.push(n);
        } else {
            rec.image_pull_secrets.push(n);
        }
    };
    for item in items {
        let n = name_of(item).to_owned();
        match position(list, &n) {
            Some(i) if &list[i] == item => {
                if owners.get(field, &n).is_some() {
                    recorded(rec, n);
                }
            }
            Some(_) => {
                return Err(match owners.get(field, &n) {
                    Some(other) => conflict(format!(
                        "{singular} `{n}` is defined differently by sidecar `{other}` and sidecar `{sidecar}`"
                    )),
                    None => conflict(format!(
                        "sidecar `{sidecar}` defines {singular} `{n}` differently from the pod's own {singular} `{n}`"
                    ))
                    .at(format!("/spec/{field}/{}", position(list, &n).unwrap_or_default())),
                });
            }
            None => {
                list.push(item.clone());
                owners.set(field, &n, sidecar);
                recorded(rec, n);
            }
        }
    }
    Ok(())
}

fn add_to_app_container(
    c: &mut Value,
    s: &Rendered,
    owners: &mut Owners,
    rec: &mut Record,
) -> Result<(), InjectError> {
    let cname = name_of(c).to_owned();
    let Value::Object(cm) = c else { return Ok(()) };
    for e in &s.body.env {
        let n = name_of(e).to_owned();
        let key = format!("{cname}/{n}");
        let mut created = false;
        let list = list_field(cm, "env", &mut created);
        match position(list, &n) {
            Some(i) if &list[i] == e => {
                if owners.get("env", &key).is_some() {
                    rec.app(&cname).env.push(n);
                }
            }
            Some(_) => {
                if let Some(other) = owners.get("env", &key) {
                    return Err(conflict(format!(
                        "env `{n}` of container `{cname}` is set differently by sidecar `{other}` and sidecar `{}`",
                        s.name
                    )));
                }
                // The app's own value wins.
            }
            None => {
                list.push(e.clone());
                owners.set("env", &key, &s.name);
                let a = rec.app(&cname);
                a.env.push(n);
                if created {
                    a.created.push("env".to_owned());
                }
            }
        }
    }
    for m in &s.body.volume_mounts {
        let path = m
            .get("mountPath")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let key = format!("{cname}/{path}");
        let mut created = false;
        let list = list_field(cm, "volumeMounts", &mut created);
        let existing = list
            .iter()
            .position(|x| x.get("mountPath").and_then(Value::as_str) == Some(path.as_str()));
        match existing {
            Some(i) if &list[i] == m => {
                if owners.get("mount", &key).is_some() {
                    rec.app(&cname).volume_mounts.push(path);
                }
            }
            Some(_) => {
                return Err(conflict(match owners.get("mount", &key) {
                    Some(other) => format!(
                        "sidecars `{other}` and `{}` mount different volumes at `{path}` in container `{cname}`",
                        s.name
                    ),
                    None => format!(
                        "sidecar `{}` mounts `{}` at `{path}`, where container `{cname}` already mounts something else",
                        s.name,
                        name_of(m)
                    ),
                }));
            }
            None => {
                list.push(m.clone());
                owners.set("mount", &key, &s.name);
                let a = rec.app(&cname);
                a.volume_mounts.push(path);
                if created {
                    a.created.push("volumeMounts".to_owned());
                }
            }
        }
    }
    // Creating `args` is always possible, so this cannot fail.
    let _ = append_words(cm, "args", &s.body.append_args, rec, &cname, true);
    append_words(cm, "command", &s.body.append_command, rec, &cname, false).map_err(|_| {
        InjectError::new(
            "kinject::inject::no_command",
            format!(
                "sidecar `{}` appends to the command of container `{cname}`, which has none (it runs the image's entrypoint)",
                s.name
            ),
        )
        .help("use `appendArgs`, or limit the sidecar with `targetContainers`")
    })?;
    Ok(())
}

fn append_words(
    cm: &mut Map<String, Value>,
    field: &str,
    words: &[String],
    rec: &mut Record,
    cname: &str,
    may_create: bool,
) -> Result<(), ()> {
    if words.is_empty() {
        return Ok(());
    }
    if !may_create && !matches!(cm.get(field), Some(Value::Array(_))) {
        return Err(());
    }
    let mut created = false;
    let list = list_field(cm, field, &mut created);
    let mut added = Vec::new();
    for w in words {
        if !list.iter().any(|x| x.as_str() == Some(w)) {
            list.push(Value::String(w.clone()));
            added.push(w.clone());
        }
    }
    let a = rec.app(cname);
    if field == "args" {
        a.args.extend(added);
    } else {
        a.command.extend(added);
    }
    if created {
        a.created.push(field.to_owned());
    }
    Ok(())
}

fn set_service_account(
    spec: &mut Map<String, Value>,
    sa: &str,
    s: &Rendered,
    original: Option<&str>,
    owners: &mut Owners,
    rec: &mut Record,
) -> Result<(), InjectError> {
    let current = spec
        .get("serviceAccountName")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Some(other) = owners.get("serviceAccount", "") {
        if current.as_deref() != Some(sa) {
            return Err(InjectError::new(
                "kinject::inject::service_account_conflict",
                format!(
                    "sidecars `{other}` and `{}` want different service accounts (`{}` and `{sa}`)",
                    s.name,
                    current.unwrap_or_default()
                ),
            )
            .help("a pod has one service account; give both sidecars the same one"));
        }
        return Ok(());
    }
    let unset = original.is_none_or(|o| o.is_empty() || o == "default");
    let set = match s.service_account_policy {
        ServiceAccountPolicy::Never => false,
        ServiceAccountPolicy::IfUnset => unset,
        ServiceAccountPolicy::Force => true,
    };
    if set && current.as_deref() != Some(sa) {
        insert_before(
            spec,
            "serviceAccountName",
            Value::String(sa.to_owned()),
            "containers",
        );
        owners.set("serviceAccount", "", &s.name);
        rec.service_account_name = Some(Previous { previous: current });
    }
    Ok(())
}
