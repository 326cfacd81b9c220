//! Removing what earlier injections added, exactly as the status annotation records it.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::pod::{ContainerIndex, name_of, null_if_empty, position, remove_if_empty};
use super::status::{AppRecord, Record, STATUS_ANNOTATION, Status};
use crate::json::{Fields, Pointer};

/// Removes the status annotation and what the records chosen by `strip_it` added to `pod`.
/// Returns the records left in place (sidecars of other configurations), and how the fields
/// made null again were written before where that was not empty (`null`, `~`), by pointer.
pub(crate) fn strip(
    pod: &mut Value,
    status: &Status,
    strip_it: impl Fn(&Record) -> bool,
) -> (Vec<Record>, BTreeMap<String, String>) {
    if let Some(Value::Object(a)) = pod.at_pointer_mut("/metadata/annotations") {
        a.shift_remove(STATUS_ANNOTATION);
    }
    let (gone, kept): (Vec<&Record>, Vec<&Record>) =
        status.sidecars.iter().partition(|r| strip_it(r));
    // Sidecars left in place claim only what the pod has. A claim on a container or volume
    // that is gone (edited away, or a status written by hand) would keep alive the item of
    // the same name a sidecar of this run adds, and that run's record would then differ
    // from the next run's.
    let kept: Vec<Record> = kept.into_iter().map(|r| present(pod, r)).collect();
    // Last added, first removed: values one sidecar changed after another are restored in turn.
    let mut app_nulls = Vec::new();
    for r in gone.iter().rev() {
        strip_record(pod, r, &mut app_nulls);
    }
    remove_unused_shared(pod, &gone, &kept);
    let mut spelled = remove_created(pod, &gone, status);
    // The app containers' fields, where their containers are now.
    let containers = (!app_nulls.is_empty()).then(|| ContainerIndex::of(pod));
    for (name, field, s) in app_nulls {
        if let Some(pointer) = containers.as_ref().and_then(|c| c.field(pod, name, field))
            && pod.at_pointer(&pointer).is_some_and(Value::is_null)
        {
            spelled.insert(pointer, s.clone());
        }
    }
    (kept, spelled)
}

/// Removes the volumes and pull secrets the `gone` records added, but only those no `kept`
/// record still uses: sidecars share identical pod-level items.
fn remove_unused_shared(pod: &mut Value, gone: &[&Record], kept: &[Record]) {
    let still_used = |field: fn(&Record) -> &Vec<String>, name: &str| {
        kept.iter().any(|r| field(r).iter().any(|n| n == name))
    };
    for (pointer, field) in [
        (
            "/spec/volumes",
            (|r: &Record| &r.volumes) as fn(&Record) -> &Vec<String>,
        ),
        ("/spec/imagePullSecrets", |r: &Record| &r.image_pull_secrets),
    ] {
        for r in gone {
            for name in field(r) {
                if still_used(field, name) {
                    continue;
                }
                if let Some(Value::Array(list)) = pod.at_pointer_mut(pointer)
                    && let Some(i) = position(list, name)
                {
                    list.remove(i);
                }
            }
        }
    }
}

/// Removes the fields the `gone` records and the status created, where they are empty now,
/// or makes null again those that were null. Returns how those nulls were written where that
/// was not empty, by pointer.
fn remove_created(pod: &mut Value, gone: &[&Record], status: &Status) -> BTreeMap<String, String> {
    let mut created: Vec<&String> = gone
        .iter()
        .flat_map(|r| &r.created)
        .chain(&status.created)
        .collect();
    let null: Vec<&String> = gone
        .iter()
        .flat_map(|r| &r.null)
        .chain(&status.null)
        .collect();
    let null_as: BTreeMap<&String, &String> = gone
        .iter()
        .flat_map(|r| &r.null_as)
        .chain(&status.null_as)
        .collect();
    let mut spelled = BTreeMap::new();
    // Deepest first, so `/metadata/annotations` goes before `/metadata`.
    created.sort_by_key(|p| std::cmp::Reverse(p.matches('/').count()));
    for pointer in created {
        if null.contains(&pointer) {
            null_if_empty(pod, pointer);
            if let Some(s) = null_as.get(pointer)
                && pod.at_pointer(pointer).is_some_and(Value::is_null)
            {
                spelled.insert(pointer.clone(), (*s).clone());
            }
        } else {
            remove_if_empty(pod, pointer);
        }
    }
    spelled
}

/// `r` with only the containers, volumes and pull secrets `pod` has.
fn present(pod: &Value, r: &Record) -> Record {
    let mut r = r.clone();
    for (pointer, names) in [
        ("/spec/containers", &mut r.containers),
        ("/spec/initContainers", &mut r.init_containers),
        ("/spec/volumes", &mut r.volumes),
        ("/spec/imagePullSecrets", &mut r.image_pull_secrets),
    ] {
        let list = pod
            .at_pointer(pointer)
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        names.retain(|n| position(list, n).is_some());
    }
    r
}

/// Takes out what `r` added. Fields of app containers it makes null again that were written
/// other than empty go to `app_nulls` (container, field, how it was written).
fn strip_record<'r>(
    pod: &mut Value,
    r: &'r Record,
    app_nulls: &mut Vec<(&'r str, &'r str, &'r String)>,
) {
    remove_containers(pod, r);
    // The app containers stay where they are from here on.
    let containers = ContainerIndex::of(pod);
    for app in &r.app_containers {
        let Some((pointer, index)) = containers.at(pod, &app.name) else {
            continue;
        };
        let Some(Value::Object(c)) = pod.at_pointer_mut(&format!("{pointer}/{index}")) else {
            continue;
        };
        strip_app_container(c, app, app_nulls);
    }
    strip_metadata(pod, r);
    if let Some(Value::Object(spec)) = pod.field_mut("spec") {
        restore_host_settings(spec, r);
    }
    if let Some(sa) = &r.service_account_name
        && let Some(Value::Object(spec)) = pod.field_mut("spec")
    {
        match &sa.previous {
            Some(p) => {
                spec.insert("serviceAccountName".to_owned(), Value::String(p.clone()));
            }
            None => {
                spec.shift_remove("serviceAccountName");
            }
        }
    }
}

/// Removes the containers and init containers `r` added, putting back the pod's own
/// container where one overrode a sidecar's.
fn remove_containers(pod: &mut Value, r: &Record) {
    for (pointer, names) in [
        ("/spec/containers", &r.containers),
        ("/spec/initContainers", &r.init_containers),
    ] {
        if let Some(Value::Array(list)) = pod.at_pointer_mut(pointer) {
            for name in names {
                if let Some(i) = position(list, name) {
                    match r.overrides.get(name) {
                        Some(user) => list[i] = user.clone(),
                        None => {
                            list.remove(i);
                        }
                    }
                }
            }
        }
    }
}

/// Takes out of app container `c` what `app` records (mounts, env, args, command words), puts
/// back the token mounts it removed, and removes (or makes null again) the fields it created.
fn strip_app_container<'r>(
    c: &mut Map<String, Value>,
    app: &'r AppRecord,
    app_nulls: &mut Vec<(&'r str, &'r str, &'r String)>,
) {
    remove_items(c.field_mut("volumeMounts"), |m| {
        app.volume_mounts
            .iter()
            .any(|p| m.field("mountPath").and_then(Value::as_str) == Some(p))
    });
    remove_items(c.field_mut("env"), |e| {
        app.env.iter().any(|n| name_of(e) == n)
    });
    remove_tail(c.field_mut("args"), &app.args);
    remove_tail(c.field_mut("command"), &app.command);
    if !app.removed_mounts.is_empty() {
        let mut created = false;
        let mounts = super::pod::list_field(c, "volumeMounts", &mut created);
        for m in &app.removed_mounts {
            mounts.insert(m.index.min(mounts.len()), m.mount.clone());
        }
    }
    for field in &app.created {
        let empty = match c.field(field) {
            Some(Value::Array(a)) => a.is_empty(),
            Some(Value::Null) => true,
            _ => false,
        };
        if empty && app.null.contains(field) {
            c.insert(field.clone(), Value::Null);
            if let Some(s) = app.null_as.get(field) {
                app_nulls.push((&app.name, field, s));
            }
        } else if empty {
            c.shift_remove(field);
        }
    }
}

/// Removes the annotations and labels `r` added, and puts back the annotations it replaced.
fn strip_metadata(pod: &mut Value, r: &Record) {
    for (pointer, keys) in [
        ("/metadata/annotations", &r.annotations),
        ("/metadata/labels", &r.labels),
    ] {
        if let Some(Value::Object(m)) = pod.at_pointer_mut(pointer) {
            for k in keys {
                m.shift_remove(k);
            }
        }
    }
    if let Some(Value::Object(m)) = pod.at_pointer_mut("/metadata/annotations") {
        for (k, previous) in &r.replaced_annotations {
            m.insert(k.clone(), previous.clone());
        }
    }
}

/// Removes the host aliases `r` added, and puts `hostNetwork` and `hostPID` back as they were.
fn restore_host_settings(spec: &mut Map<String, Value>, r: &Record) {
    if let Some(Value::Array(aliases)) = spec.field_mut("hostAliases") {
        for a in r.host_aliases.iter().rev() {
            if let Some(i) = aliases.iter().rposition(|x| x == a) {
                aliases.remove(i);
            }
        }
    }
    for (field, previous) in [("hostNetwork", &r.host_network), ("hostPID", &r.host_pid)] {
        match previous.as_ref().map(|p| p.previous) {
            Some(Some(b)) => {
                spec.insert(field.to_owned(), Value::Bool(b));
            }
            Some(None) => {
                spec.shift_remove(field);
            }
            None => {}
        }
    }
}

fn remove_items(list: Option<&mut Value>, matches: impl Fn(&Value) -> bool) {
    if let Some(Value::Array(items)) = list {
        items.retain(|i| !matches(i));
    }
}

/// Removes `added` from a string list: at its end when it is there, else item by item from
/// the back.
fn remove_tail(list: Option<&mut Value>, added: &[String]) {
    let Some(Value::Array(items)) = list else {
        return;
    };
    if added.is_empty() {
        return;
    }
    let tail_matches = items.len() >= added.len()
        && items[items.len() - added.len()..]
            .iter()
            .zip(added)
            .all(|(a, b)| a.as_str() == Some(b));
    if tail_matches {
        items.truncate(items.len() - added.len());
        return;
    }
    for a in added.iter().rev() {
        if let Some(i) = items.iter().rposition(|x| x.as_str() == Some(a)) {
            items.remove(i);
        }
    }
}
