//! Checks the tests and the fuzzer (`crate::fuzz`) make: each panics where the readers
//! disagree. Test support, built for the unit tests and with the `oracles` feature.

use serde_json::Value;

use super::read::{IDENTITY, matches, parse, parse_shallow, parse_value, reads};
use crate::yaml::node::{Entry, NodeKind};

/// The fast reader, where it reads `text`, gives what the general parser gives.
pub(crate) fn agrees(text: &str) -> bool {
    // The checks that build nothing (how large documents are read) agree with the reads.
    assert_eq!(reads(text), parse(text).is_some(), "{text:?}");
    let general = crate::yaml::parse::parse_general(text);
    let checked = crate::yaml::parse::check_general(text);
    match &general {
        Ok(_) => assert_eq!(checked, Ok(()), "{text:?}"),
        // A merge key's value is looked at only when building.
        Err(e) if e.message.contains("merge key") => {}
        Err(e) => assert_eq!(checked.as_ref(), Err(e), "{text:?}"),
    }
    match parse(text) {
        Some(fast) => {
            let general = crate::yaml::parse::parse_general(text)
                .unwrap_or_else(|e| panic!("fast read what is not YAML: {text:?}: {e:?}"));
            assert_eq!(fast, general, "{text:?}");
            // Without spans, the same value.
            assert_eq!(parse_value(text).as_ref(), Some(&general.value), "{text:?}");
            // Compared without being built: found to be its value (unless a duplicate key
            // left the value with fewer keys than the text), and not any other.
            assert!(
                matches(text, &general.value) || !general.duplicates.is_empty(),
                "not found to read as its value: {text:?}"
            );
            for other in variants(&general.value) {
                assert!(
                    !matches(text, &other),
                    "found to read as {other:?}: {text:?}"
                );
            }
            true
        }
        None => false,
    }
}

/// Values that differ from `value` in one place each (a scalar changed, a collection given
/// an item or a key more or less), for the first 64 nodes.
pub(super) fn variants(value: &Value) -> Vec<Value> {
    fn paths(v: &Value, path: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if out.len() >= 64 {
            return;
        }
        out.push(path.clone());
        let children: Vec<&Value> = match v {
            Value::Array(a) => a.iter().collect(),
            Value::Object(m) => m.values().collect(),
            _ => Vec::new(),
        };
        for (i, child) in children.into_iter().enumerate() {
            path.push(i);
            paths(child, path, out);
            path.pop();
        }
    }
    let mut all = Vec::new();
    paths(value, &mut Vec::new(), &mut all);
    let mut out = Vec::new();
    for path in all {
        for shorter in [false, true] {
            let mut changed = value.clone();
            let mut node = &mut changed;
            for &i in &path {
                node = match node {
                    Value::Array(a) => &mut a[i],
                    Value::Object(m) => m.values_mut().nth(i).expect("a path into the value"),
                    _ => unreachable!("paths lead through collections"),
                };
            }
            // A key no text holds: the reader refuses NUL.
            *node = match (node.take(), shorter) {
                (Value::Array(mut a), true) if !a.is_empty() => {
                    a.pop();
                    Value::Array(a)
                }
                (Value::Object(mut m), true) if !m.is_empty() => {
                    let last = m.keys().next_back().cloned().unwrap_or_default();
                    m.shift_remove(&last);
                    Value::Object(m)
                }
                (_, true) => continue,
                (Value::Array(mut a), false) => {
                    a.push(Value::Null);
                    Value::Array(a)
                }
                (Value::Object(mut m), false) => {
                    m.insert("\0".to_owned(), Value::Null);
                    Value::Object(m)
                }
                (Value::String(s), false) => Value::String(s + "x"),
                (Value::Null, false) => Value::String(String::new()),
                (Value::Bool(b), false) => Value::Bool(!b),
                (Value::Number(n), false) => Value::String(n.to_string()),
            };
            out.push(changed);
        }
    }
    out
}

/// A shallow read keeps what a full read gives for `apiVersion`, `kind` and `metadata`.
pub(crate) fn shallow_agrees(text: &str) -> bool {
    let Some(shallow) = parse_shallow(text) else {
        return false;
    };
    let full = parse(text).expect("read in full where read shallowly");
    let keep = |v: &Value| -> Value {
        let mut m = v.as_object().cloned().unwrap_or_default();
        m.retain(|k, _| IDENTITY.contains(&k.as_str()));
        Value::Object(m)
    };
    assert_eq!(shallow.value, keep(&full.value), "{text:?}");
    let (Some(NodeKind::Map { entries: a, .. }), Some(NodeKind::Map { entries: b, .. })) = (
        shallow.root.as_ref().map(|n| &n.kind),
        full.root.as_ref().map(|n| &n.kind),
    ) else {
        panic!("not mappings: {text:?}");
    };
    let b: Vec<&Entry> = b
        .iter()
        .filter(|e| IDENTITY.contains(&e.key.as_str()))
        .collect();
    assert_eq!(a.iter().collect::<Vec<_>>(), b, "{text:?}");
    assert_eq!(shallow.duplicates.len(), full.duplicates.len(), "{text:?}");
    true
}
