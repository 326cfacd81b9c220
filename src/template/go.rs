//! The filters templates translated from Go templates use (salesforce's): what Go prints for
//! a value, Go's `range`, and volume mounts as Go's `json.Unmarshal` reads them.

use serde_json::{Map, Value};

use super::filters::{invalid, ser};

/// What a Go template prints for a value (translated salesforce templates): text. A string as
/// it is, a number or boolean as written, nothing (a missing value) as nothing. A mapping or
/// list is refused: Go prints it as `map[…]` or `[…]` text, which no sidecar field means, and
/// taken as the value it holds it would let an annotation (`{% index .Annotations "x" |
/// fromYaml %}`) give a sidecar fields of its own.
pub(super) fn go_printed(v: minijinja::Value) -> Result<minijinja::Value, minijinja::Error> {
    use minijinja::value::ValueKind;
    match v.kind() {
        ValueKind::Undefined | ValueKind::None => Ok(minijinja::Value::from("")),
        ValueKind::Seq | ValueKind::Map | ValueKind::Iterable | ValueKind::Plain => {
            Err(invalid(format!(
                "a template action prints {}, which Go writes as text (`map[…]`, `[…]`), not as YAML: only a scalar \
                 can be printed",
                if v.kind() == ValueKind::Map {
                    "a mapping"
                } else {
                    "a list"
                }
            )))
        }
        ValueKind::String => Ok(v),
        ValueKind::Bool => Ok(minijinja::Value::from(if v.is_true() {
            "true"
        } else {
            "false"
        })),
        _ => Ok(minijinja::Value::from(v.to_string())),
    }
}

/// Go's `range` (translated salesforce templates): (index, item) of a list, (key, value) of a
/// mapping in key order.
pub(super) fn go_range(v: minijinja::Value) -> Result<minijinja::Value, minijinja::Error> {
    let pairs: Vec<minijinja::Value> = if v.kind() == minijinja::value::ValueKind::Map {
        let mut keys: Vec<minijinja::Value> = v.try_iter()?.collect();
        keys.sort();
        keys.into_iter()
            .map(|k| {
                let item = v.get_item(&k).unwrap_or_default();
                minijinja::Value::from(vec![k, item])
            })
            .collect()
    } else {
        v.try_iter()?
            .enumerate()
            .map(|(i, item)| minijinja::Value::from(vec![minijinja::Value::from(i), item]))
            .collect()
    };
    Ok(minijinja::Value::from(pairs))
}

/// A list of volume mounts as Go's `json.Unmarshal` reads it into `[]corev1.VolumeMount`
/// (salesforce's mount annotations): a member a mount does not have is ignored, and a member
/// name matches its field regardless of case (the last one given wins). The members kept are
/// checked as every mount is, after rendering.
pub(super) fn go_volume_mounts(v: minijinja::Value) -> Result<minijinja::Value, minijinja::Error> {
    // Go's `VolumeMount` fields, generated from its source (`scripts/go-fields.py`).
    let fields = || crate::go_json::fields::VOLUME_MOUNT.iter().map(|f| f.json);
    let list = serde_json::to_value(&v).map_err(|e| invalid(e.to_string()))?;
    let Value::Array(items) = list else {
        return Err(invalid(format!(
            "volume mounts must be a list, found {}",
            crate::model::schema::type_name(&list)
        )));
    };
    let mounts: Vec<Value> = items
        .into_iter()
        .map(|item| match item {
            Value::Object(members) => {
                let mut mount = Map::new();
                for (key, value) in members {
                    if let Some(field) = fields().find(|f| f.eq_ignore_ascii_case(&key)) {
                        mount.insert(field.to_owned(), value);
                    }
                }
                Value::Object(mount)
            }
            other => other,
        })
        .collect();
    Ok(ser(Value::Array(mounts)))
}
