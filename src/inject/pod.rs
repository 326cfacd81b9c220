//! Small operations on a pod template value: named list items, fields created on demand,
//! and the strategic-merge-style overlay of a user's container over a sidecar's.

use std::collections::HashMap;

use serde_json::{Map, Value};

pub(crate) use crate::json::patch::name_of;
use crate::json::{Fields, Pointer};

pub(crate) fn position(list: &[Value], name: &str) -> Option<usize> {
    list.iter().position(|v| name_of(v) == name)
}

/// The object at `key` of `map`, created (and reported) when missing or null.
pub(crate) fn object_field<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
    created: &mut bool,
) -> &'a mut Map<String, Value> {
    let slot = map.entry(key.to_owned()).or_insert(Value::Null);
    if !slot.is_object() {
        *created = slot.is_null();
        *slot = Value::Object(Map::new());
    }
    match slot {
        Value::Object(m) => m,
        _ => unreachable!("just made an object"),
    }
}

/// The list at `key` of `map`, created (and reported) when missing or null.
pub(crate) fn list_field<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
    created: &mut bool,
) -> &'a mut Vec<Value> {
    let slot = map.entry(key.to_owned()).or_insert(Value::Null);
    if !slot.is_array() {
        *created = slot.is_null();
        *slot = Value::Array(Vec::new());
    }
    match slot {
        Value::Array(a) => a,
        _ => unreachable!("just made a list"),
    }
}

/// An empty list or mapping, or null: what kinject created and then emptied again.
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        Value::Null => true,
        _ => false,
    }
}

/// Where each container of a pod template is, by name: its list (`/spec/containers` or
/// `/spec/initContainers`) and index; of two with one name, the first, containers before
/// init containers. For a pod of many containers the places are found once, so that finding
/// every app container is linear in their number (a search of the lists per container made
/// 64,000 containers take 27 s); a pod of a few is searched, as before.
pub(crate) struct ContainerIndex(Option<HashMap<String, (&'static str, usize)>>);

/// The container lists of a pod template.
const CONTAINER_LISTS: [&str; 2] = ["/spec/containers", "/spec/initContainers"];

/// Up to this many containers, a search costs less than making an index.
const FEW: usize = 16;

impl ContainerIndex {
    pub(crate) fn of(pod: &Value) -> Self {
        let lists = CONTAINER_LISTS.map(|l| (l, pod.at_pointer(l).and_then(Value::as_array)));
        if lists
            .iter()
            .filter_map(|(_, c)| *c)
            .map(Vec::len)
            .sum::<usize>()
            <= FEW
        {
            return ContainerIndex(None);
        }
        let mut at = HashMap::new();
        for (list, items) in lists {
            for (i, c) in items.into_iter().flatten().enumerate() {
                at.entry(name_of(c).to_owned()).or_insert((list, i));
            }
        }
        ContainerIndex(Some(at))
    }

    /// The list and index of the container `name` of `pod`, the pod this index was made of
    /// (as it was then).
    pub(crate) fn at(&self, pod: &Value, name: &str) -> Option<(&'static str, usize)> {
        match &self.0 {
            Some(at) => at.get(name).copied(),
            None => CONTAINER_LISTS
                .into_iter()
                .find_map(|p| Some((p, position(pod.at_pointer(p)?.as_array()?, name)?))),
        }
    }

    /// The pointer of `field` of the container `name` of `pod`.
    pub(crate) fn field(&self, pod: &Value, name: &str, field: &str) -> Option<String> {
        let (list, i) = self.at(pod, name)?;
        Some(format!("{list}/{i}/{}", crate::json::escape(field)))
    }
}

/// Makes the value at `pointer` null when it is an empty list or mapping (it was null before
/// kinject made it one).
pub(crate) fn null_if_empty(root: &mut Value, pointer: &str) {
    if let Some(v) = root.at_pointer_mut(pointer).filter(|v| is_empty(v)) {
        *v = Value::Null;
    }
}

/// Removes the value at `pointer` when it is an empty list or mapping.
pub(crate) fn remove_if_empty(root: &mut Value, pointer: &str) {
    if !root.at_pointer(pointer).is_some_and(is_empty) {
        return;
    }
    if let Some((parent, key)) = pointer.rsplit_once('/') {
        let key = key.replace("~1", "/").replace("~0", "~");
        if let Some(Value::Object(m)) = root.at_pointer_mut(parent) {
            m.shift_remove(&key);
        }
    }
}

/// Lists Kubernetes merges by a key field rather than by position.
fn merge_key(field: &str) -> Option<&'static str> {
    Some(match field {
        "env" => "name",
        "ports" => "containerPort",
        "volumeMounts" => "mountPath",
        "volumeDevices" => "devicePath",
        _ => return None,
    })
}

/// `over` merged on top of `base` (a user's container over the rendered sidecar): mappings
/// merge, keyed lists merge item by item, anything else is replaced; `image: auto` keeps the
/// sidecar's image (Istio's convention). Keys keep `base`'s order.
pub(crate) fn overlay(base: &Value, over: &Value) -> Value {
    overlay_field("", base, over)
}

fn overlay_field(field: &str, base: &Value, over: &Value) -> Value {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            let mut out = b.clone();
            for (k, ov) in o {
                if k == "image" && ov == "auto" && field.is_empty() {
                    continue;
                }
                let merged = match out.field(k) {
                    Some(bv) => overlay_field(k, bv, ov),
                    None => ov.clone(),
                };
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (Value::Array(b), Value::Array(o)) => match merge_key(field) {
            Some(key) => {
                let mut out = b.clone();
                for item in o {
                    match out
                        .iter()
                        .position(|x| x.field(key).is_some() && x.field(key) == item.field(key))
                    {
                        Some(i) => out[i] = overlay_field("", &out[i], item),
                        None => out.push(item.clone()),
                    }
                }
                Value::Array(out)
            }
            None => over.clone(),
        },
        _ => over.clone(),
    }
}

/// Where Kubernetes mounts a service account's token.
pub(crate) const TOKEN_MOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn overlay_merges_like_istio() {
        let sidecar = json!({"name": "proxy", "image": "p:1", "args": ["a"], "env": [{"name": "A", "value": "1"}], "resources": {"limits": {"cpu": "1"}}});
        let user = json!({"name": "proxy", "image": "auto", "args": ["b"], "env": [{"name": "A", "value": "2"}, {"name": "B", "value": "3"}], "resources": {"requests": {"cpu": "2"}}});
        assert_eq!(
            overlay(&sidecar, &user),
            json!({"name": "proxy", "image": "p:1", "args": ["b"], "env": [{"name": "A", "value": "2"}, {"name": "B", "value": "3"}], "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "2"}}})
        );
    }

    #[test]
    fn created_fields_are_reported() {
        let mut m = Map::new();
        let mut created = false;
        list_field(&mut m, "volumes", &mut created).push(json!(1));
        assert!(created);
        let mut again = false;
        list_field(&mut m, "volumes", &mut again);
        assert!(!again);
        let mut root = json!({"a": {"b": []}});
        remove_if_empty(&mut root, "/a/b");
        assert_eq!(root, json!({"a": {}}));
    }
}
