//! JSON values as kinject reads and edits them: fields of a mapping (`Fields`), values at a
//! JSON pointer (`Pointer`), and pointer tokens escaped and split as RFC 6901 writes them.
//! `patch`: the RFC 6902 operations made and applied with them.

pub(crate) mod patch;

use std::borrow::Cow;

use serde_json::{Map, Value};

/// Escapes one reference token (`/` → `~1`, `~` → `~0`).
pub(crate) fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Splits a JSON pointer into unescaped tokens.
pub(crate) fn tokens(pointer: &str) -> Vec<String> {
    if pointer.is_empty() {
        return Vec::new();
    }
    pointer
        .strip_prefix('/')
        .unwrap_or(pointer)
        .split('/')
        .map(|t| unescape(t).into_owned())
        .collect()
}

/// One reference token unescaped (`~1` → `/`, `~0` → `~`), copied only when it has escapes.
pub(crate) fn unescape(token: &str) -> Cow<'_, str> {
    if token.contains('~') {
        Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(token)
    }
}

/// A mapping's value for a key, as `Map::get` finds it, but without hashing the key when the
/// mapping is small, as Kubernetes objects' mappings nearly all are: their keys are compared
/// one by one (most differ in length, compared first), cheaper than the map's keyed hash of
/// the key. Lookups are on every object's hot path.
pub(crate) trait Fields {
    fn field(&self, key: &str) -> Option<&Value>;
    fn field_mut(&mut self, key: &str) -> Option<&mut Value>;
}

/// Up to how many keys a mapping is searched by comparing them one by one.
const SCANNED: usize = 16;

impl Fields for Map<String, Value> {
    fn field(&self, key: &str) -> Option<&Value> {
        if self.len() <= SCANNED {
            self.iter().find_map(|(k, v)| (k == key).then_some(v))
        } else {
            self.get(key)
        }
    }

    fn field_mut(&mut self, key: &str) -> Option<&mut Value> {
        if self.len() <= SCANNED {
            self.iter_mut().find_map(|(k, v)| (k == key).then_some(v))
        } else {
            self.get_mut(key)
        }
    }
}

impl Fields for Value {
    fn field(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(map) => map.field(key),
            _ => None,
        }
    }

    fn field_mut(&mut self, key: &str) -> Option<&mut Value> {
        match self {
            Value::Object(map) => map.field_mut(key),
            _ => None,
        }
    }
}

/// JSON pointer lookups, as `Value::pointer` reads them but without its two new strings for
/// every token: lookups are on every object's hot path.
pub(crate) trait Pointer {
    fn at_pointer(&self, pointer: &str) -> Option<&Value>;
    fn at_pointer_mut(&mut self, pointer: &str) -> Option<&mut Value>;
}

impl Pointer for Value {
    fn at_pointer(&self, pointer: &str) -> Option<&Value> {
        if pointer.is_empty() {
            return Some(self);
        }
        pointer
            .strip_prefix('/')?
            .split('/')
            .try_fold(self, |target, token| match target {
                Value::Object(map) => map.field(&unescape(token)),
                Value::Array(list) => list.get(array_index(token)?),
                _ => None,
            })
    }

    fn at_pointer_mut(&mut self, pointer: &str) -> Option<&mut Value> {
        if pointer.is_empty() {
            return Some(self);
        }
        pointer
            .strip_prefix('/')?
            .split('/')
            .try_fold(self, |target, token| match target {
                Value::Object(map) => map.field_mut(&unescape(token)),
                Value::Array(list) => list.get_mut(array_index(token)?),
                _ => None,
            })
    }
}

/// An array index as RFC 6901 writes it: digits, no sign, no leading zero.
fn array_index(token: &str) -> Option<usize> {
    if token.starts_with('+') || (token.starts_with('0') && token.len() != 1) {
        return None;
    }
    token.parse().ok()
}

pub(crate) fn push(pointer: &str, token: &str) -> String {
    format!("{pointer}/{}", escape(token))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_are_found_as_the_map_finds_them() {
        // Small mappings are searched key by key, large ones through the map's index.
        for size in [0, 1, 2, SCANNED, SCANNED + 1, 3 * SCANNED] {
            let mut map: Map<String, Value> =
                (0..size).map(|i| (format!("k{i}"), json!(i))).collect();
            map.insert("a".repeat(size + 1), json!("long"));
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys.iter().map(String::as_str).chain(["", "k", "missing"]) {
                assert_eq!(map.field(key), map.get(key), "{key} in {size}");
                let value = Value::Object(map.clone());
                assert_eq!(value.field(key), map.get(key), "{key} in {size}");
            }
            for key in &keys {
                *map.field_mut(key).expect("there") = json!(key);
                assert_eq!(map[key.as_str()], json!(key));
            }
            assert!(map.field_mut("missing").is_none());
        }
        assert_eq!(json!([1]).field("0"), None);
        assert_eq!(json!("a").field("a"), None);
    }

    #[test]
    fn pointers_read_as_serde_json_reads_them() {
        let v = json!({"a/b": {"c~d": [10, 11, {"": 1}]}, "e": {"01": 2}});
        for p in [
            "",
            "/a~1b",
            "/a~1b/c~0d",
            "/a~1b/c~0d/1",
            "/a~1b/c~0d/2/",
            "/a~1b/c~0d/01",
            "/a~1b/c~0d/+1",
            "/a~1b/c~0d/-",
            "/a~1b/c~0d/3",
            "/e/01",
            "/e/1",
            "a",
            "/x/y",
        ] {
            assert_eq!(v.at_pointer(p), v.pointer(p), "{p}");
            assert_eq!(v.clone().at_pointer_mut(p), v.clone().pointer_mut(p), "{p}");
        }
    }
}
