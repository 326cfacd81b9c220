//! What one AdmissionReview may cost `kinject serve` (`--max-request-values`,
//! `--max-containers`): the memory of a review grows with the JSON values of its body (each
//! read into a tree node) and with its pod's containers (each edited, each with patch
//! operations of its own). The values are counted before the body is read, the containers
//! before the pod is planned; a review beyond is refused, saying where.

use serde_json::Value;

use crate::json::Pointer;
use crate::model::CustomKind;

/// `kinject serve`'s defaults (`--max-request-values`, `--max-containers`), measured
/// (docs/performance.md, "Bounds"): a review at both costs at most about 60 MB at its peak.
pub(crate) const SERVE_MAX_VALUES: usize = 150_000;
pub(crate) const SERVE_MAX_CONTAINERS: usize = 1000;

/// The limits of one review; none by default (`kinject admission`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Limits {
    /// JSON values of the body: objects, arrays, strings, numbers, booleans and nulls, keys
    /// included.
    pub max_values: Option<usize>,
    /// Containers of the pod: `containers`, `initContainers` and `ephemeralContainers`.
    pub max_containers: Option<usize>,
}

/// Where the JSON text `bytes` holds more than `max` values: the byte offset of the first
/// one beyond, if it does. A value other than the first is announced by the `[`, `{`, `,` or
/// `:` before it, so their count outside strings (plus the first) is the number of values,
/// or more by the empty arrays and objects.
pub(crate) fn values_beyond(bytes: &[u8], max: usize) -> Option<usize> {
    let mut count = 1usize;
    let mut in_string = false;
    let mut escaped = false;
    for (offset, byte) in bytes.iter().enumerate() {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' | b',' | b':' => {
                count += 1;
                if count > max {
                    return Some(offset);
                }
            }
            _ => {}
        }
    }
    None
}

/// What is wrong with a pod of more than `max` containers, if `object` is one (or has the
/// template of one): where they are and how many.
pub(crate) fn containers_beyond(
    object: &Value,
    custom: &[CustomKind],
    max: usize,
) -> Option<String> {
    let kind = crate::kinds::workload_kind(object, custom)?;
    let spec_pointer = format!("{}/spec", kind.pod_template);
    let spec = object.at_pointer(&spec_pointer)?;
    let mut total = 0;
    let mut lists = Vec::new();
    for field in ["containers", "initContainers", "ephemeralContainers"] {
        if let Some(list) = spec.get(field).and_then(Value::as_array) {
            total += list.len();
            let path = format!("{spec_pointer}/{field}");
            lists.push(format!("`{}`: {}", dotted(&path), list.len()));
        }
    }
    (total > max).then(|| {
        format!(
            "the pod has {total} containers ({}), more than the {max} kinject serve reviews in one pod \
                (--max-containers)",
            lists.join(", ")
        )
    })
}

/// A JSON pointer as the dotted path Kubernetes messages use (`spec.template.spec`).
fn dotted(pointer: &str) -> String {
    pointer.trim_start_matches('/').replace('/', ".")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn values_are_counted_outside_strings() {
        let count = |text: &str| {
            (1..100)
                .find(|max| values_beyond(text.as_bytes(), *max).is_none())
                .expect("fewer than 100")
        };
        assert_eq!(count("0"), 1);
        assert_eq!(count("[0,0,0]"), 4);
        assert_eq!(count(r#"{"a":1,"b":[true,null]}"#), 7);
        assert_eq!(count(r#"["a,b:[{", "\"{,", "\\"]"#), 4);
        assert_eq!(values_beyond(b"[0,0,0]", 3), Some(4));
    }

    #[test]
    fn containers_of_every_list_are_counted_where_the_pod_template_is() {
        let deployment = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "spec": {"template": {"spec": {
                "containers": [{"name": "a"}, {"name": "b"}],
                "initContainers": [{"name": "i"}]
            }}}
        });
        assert_eq!(containers_beyond(&deployment, &[], 3), None);
        let said = containers_beyond(&deployment, &[], 2).expect("beyond");
        assert!(
            said.starts_with(
                "the pod has 3 containers (`spec.template.spec.containers`: 2, \
                `spec.template.spec.initContainers`: 1)"
            ),
            "{said}"
        );
        assert_eq!(containers_beyond(&json!({"kind": "Service"}), &[], 0), None);
    }
}
