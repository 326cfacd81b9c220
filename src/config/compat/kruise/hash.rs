//! Kruise's SidecarSet hashes (`kruise.io/sidecarset-hash` and `…-hash-without-image`), as the
//! cluster holds them: Kruise's SidecarSet webhook defaults the set (apis/apps/defaults) and
//! then hashes it (pkg/control/sidecarcontrol/hash.go): sha256 of Go's JSON of
//! `{"containers": […], "initContainers": […]}` (the init containers only when one of them is a
//! native sidecar), in k8s' "safe" alphabet. The pod webhook copies that hash into each pod,
//! and Kruise's controller compares the two, so a pod injected here must carry the same value.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::go_json::fields::SIDECAR_CONTAINER;
use crate::go_json::{self, Ty};
use crate::quantity;

/// The set's hash (`with_images`) or its hash without images, from the set's `spec`.
pub(super) fn of(spec: &Value, with_images: bool) -> String {
    let list = |key: &str, policy: &str| -> Option<Value> {
        let items = spec.get(key).filter(|v| !v.is_null())?;
        let mut items = items.clone();
        for c in items.as_array_mut().into_iter().flatten() {
            defaulted(c, policy);
            if !with_images && let Value::Object(m) = c {
                m.shift_remove("image");
            }
        }
        Some(items)
    };
    let containers = list("containers", "BeforeAppContainer");
    let inits = list("initContainers", "AfterAppContainer");
    let native = inits.as_ref().and_then(Value::as_array).is_some_and(|l| {
        l.iter()
            .any(|c| c.get("restartPolicy").and_then(Value::as_str) == Some("Always"))
    });
    hash_of(containers.as_ref(), inits.as_ref().filter(|_| native))
}

/// Go's JSON of the two lists (encoding/json sorts the keys of the map that holds them).
fn hash_of(containers: Option<&Value>, inits: Option<&Value>) -> String {
    let mut encoded = String::from("{\"containers\":");
    let list = Ty::Slice(&Ty::Struct(SIDECAR_CONTAINER));
    go_json::write(&mut encoded, list, containers);
    if let Some(inits) = inits {
        encoded.push_str(",\"initContainers\":");
        go_json::write(&mut encoded, list, Some(inits));
    }
    encoded.push('}');
    let digest = Sha256::digest(encoded.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    safe_encode(&hex)
}

/// What Kruise's SidecarSet webhook defaults in a sidecar container before hashing
/// (`setDefaultSidecarContainer`, with k8s' `SetDefaults_Container`, `_Probe`,
/// `_HTTPGetAction`, `_ObjectFieldSelector` and `_ResourceList`), `policy` being its
/// `podInjectPolicy` default.
fn defaulted(c: &mut Value, policy: &str) {
    let Value::Object(c) = c else {
        return;
    };
    set(c, "podInjectPolicy", policy);
    for (key, field, value) in [
        ("upgradeStrategy", "upgradeType", "ColdUpgrade"),
        ("shareVolumePolicy", "type", "disabled"),
    ] {
        if let Value::Object(inner) = c.entry(key).or_insert_with(|| json!({})) {
            set(inner, field, value);
        }
    }
    let tag = image_tag(c.get("image").and_then(Value::as_str).unwrap_or_default());
    set(
        c,
        "imagePullPolicy",
        if tag == "latest" {
            "Always"
        } else {
            "IfNotPresent"
        },
    );
    set(c, "terminationMessagePath", "/dev/termination-log");
    set(c, "terminationMessagePolicy", "File");
    for p in items_mut(c.get_mut("ports")) {
        set(p, "protocol", "TCP");
    }
    for (list, path) in [
        ("transferEnv", "/sourceContainerNameFrom/fieldRef"),
        ("env", "/valueFrom/fieldRef"),
    ] {
        let items = c.get_mut(list).and_then(Value::as_array_mut);
        for item in items.into_iter().flatten() {
            if let Some(Value::Object(f)) = item.pointer_mut(path) {
                set(f, "apiVersion", "v1");
            }
        }
    }
    for list in ["/limits", "/requests"] {
        let resources = c.get_mut("resources").and_then(|r| r.pointer_mut(list));
        let Some(Value::Object(r)) = resources else {
            continue;
        };
        for v in r.values_mut() {
            let text = match &*v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            if let Some(rounded) = quantity::rounded_to_milli(&text) {
                *v = Value::String(rounded);
            }
        }
    }
    for probe in ["livenessProbe", "readinessProbe"] {
        let Some(Value::Object(p)) = c.get_mut(probe) else {
            continue;
        };
        for (field, value) in [
            ("timeoutSeconds", 1),
            ("periodSeconds", 10),
            ("successThreshold", 1),
            ("failureThreshold", 3),
        ] {
            if p.get(field).is_none_or(|v| v.is_null() || v == 0) {
                p.insert(field.to_owned(), json!(value));
            }
        }
        http_get_defaulted(p.get_mut("httpGet"));
    }
    for hook in ["/postStart/httpGet", "/preStop/httpGet"] {
        http_get_defaulted(c.get_mut("lifecycle").and_then(|l| l.pointer_mut(hook)));
    }
}

/// `m[key] = value` unless `m` has a value there that is not empty.
fn set(m: &mut Map<String, Value>, key: &str, value: &str) {
    if m.get(key).is_none_or(|v| v.is_null() || v == "") {
        m.insert(key.to_owned(), json!(value));
    }
}

fn http_get_defaulted(action: Option<&mut Value>) {
    if let Some(Value::Object(h)) = action {
        set(h, "path", "/");
        set(h, "scheme", "HTTP");
    }
}

fn items_mut(list: Option<&mut Value>) -> impl Iterator<Item = &mut Map<String, Value>> {
    list.and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

/// The tag of an image reference as k8s' `parsers.ParseImageName` gives it: the tag written,
/// `latest` when neither a tag nor a digest is, and none for a reference it cannot parse.
fn image_tag(image: &str) -> &str {
    let (name, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    let (repository, tag) = match name.rsplit_once(':') {
        Some((r, t)) if !t.contains('/') => (r, Some(t)),
        _ => (name, None),
    };
    let mut parts = repository.split('/').peekable();
    let first = parts.peek().copied().unwrap_or_default();
    if repository.contains('/') && (first.contains(['.', ':']) || first == "localhost") {
        parts.next();
    }
    let path_ok = parts.all(|p| {
        !p.is_empty()
            && p.chars()
                .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || "._-".contains(ch))
    });
    let tag_ok = tag.is_none_or(|t| {
        !t.is_empty()
            && t.chars()
                .all(|ch| ch.is_ascii_alphanumeric() || "_.-".contains(ch))
    });
    if !path_ok || !tag_ok {
        return "";
    }
    match tag {
        Some(tag) => tag,
        None if digest.is_none() => "latest",
        None => "",
    }
}

/// k8s.io/apimachinery/pkg/util/rand.SafeEncodeString.
fn safe_encode(s: &str) -> String {
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    s.bytes()
        .map(|b| ALPHANUMS[usize::from(b) % ALPHANUMS.len()] as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `hash_test.go`'s values (pkg/control/sidecarcontrol, TestSidecarSetHash,
    /// TestSidecarSetHashWithoutImage and their V1beta1 twins), which hash the sets as the
    /// test builds them, without the webhook's defaulting.
    #[test]
    fn kruise_hash_test_values() {
        let container = json!({"name": "container1", "image": "test-image"});
        let native =
            json!({"name": "container1", "image": "test-image", "restartPolicy": "Always"});
        let without_image = |c: &Value| {
            let mut c = c.clone();
            c.as_object_mut().expect("an object").shift_remove("image");
            c
        };
        let cases = [
            // "containers"
            (
                json!([container]),
                None,
                "w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78",
            ),
            // "containers and initContainers": plain init containers are not hashed
            (
                json!([container]),
                None,
                "w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78",
            ),
            // "containers and initContainers with restartPolicy=Always"
            (
                json!([container]),
                Some(json!([native])),
                "4xwx4d4844vd4v9x79wb4xbxf4xb29475cc4446v8cz2c2f2f5c5bw448vd42z8w",
            ),
            // without image: "containers and initContainers"
            (
                json!([without_image(&container)]),
                None,
                "8wzddb4dvv9c6x8zdc77z4z75987424f457dfv6724ddw6zbdx467wz5x24fc759",
            ),
            // without image: "containers and initContainers with restartPolicy=Always"
            (
                json!([without_image(&container)]),
                Some(json!([without_image(&native)])),
                "5725fw8bwbx249bw57v5892c847dzf48bww9zb7c86xb95264fdz26654847b2c8",
            ),
        ];
        for (containers, inits, want) in cases {
            assert_eq!(hash_of(Some(&containers), inits.as_ref()), want);
        }
    }

    #[test]
    fn the_hash_ignores_how_the_yaml_was_written() {
        let spec = |c: Value| json!({"containers": [c]});
        let a = of(
            &spec(json!({"name": "c", "image": "i:1", "resources": {"limits": {"cpu": "0.5"}}})),
            true,
        );
        let b = of(
            &spec(
                json!({"image": "i:1", "resources": {"limits": {"cpu": "500m"}}, "name": "c",
                       "podInjectPolicy": "BeforeAppContainer"}),
            ),
            true,
        );
        assert_eq!(a, b);
        let c = of(&spec(json!({"name": "c", "image": "i:2"})), true);
        assert_ne!(a, c);
    }

    #[test]
    fn image_tags_as_kubernetes_reads_them() {
        for (image, tag) in [
            ("nginx", "latest"),
            ("nginx:1.25", "1.25"),
            ("registry:5000/team/app", "latest"),
            ("registry:5000/team/app:v1", "v1"),
            ("app@sha256:abc", ""),
            ("app:v1@sha256:abc", "v1"),
            ("Upper/app:v1", ""),
            ("", ""),
        ] {
            assert_eq!(image_tag(image), tag, "{image}");
        }
    }
}
