//! RFC 6902 operations: the one description of a change that YAML, JSON and patch output all
//! render. `diff` derives them from the injected object with name-based meaning (`add
//! /spec/containers/-`, not index rewrites); `apply` replays them on a value.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Fields, escape, push, tokens};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Op {
    Add { path: String, value: Value },
    Remove { path: String },
    Replace { path: String, value: Value },
}

impl Op {
    pub fn path(&self) -> &str {
        match self {
            Op::Add { path, .. } | Op::Remove { path } | Op::Replace { path, .. } => path,
        }
    }

    /// This operation on the object found at `prefix` of a larger document.
    pub(crate) fn within(mut self, prefix: &str) -> Op {
        if !prefix.is_empty() {
            let path = match &mut self {
                Op::Add { path, .. } | Op::Remove { path } | Op::Replace { path, .. } => path,
            };
            path.insert_str(0, prefix);
        }
        self
    }

    /// The same operation on the object found at `prefix` of a larger document.
    pub(crate) fn prefixed(&self, prefix: &str) -> Op {
        self.clone().within(prefix)
    }
}

/// Applies `ops` in order; the first failure names the operation.
pub(crate) fn apply(value: &mut Value, ops: &[Op]) -> Result<(), String> {
    for op in ops {
        apply_one(value, op).map_err(|e| format!("{} {}: {e}", op_name(op), op.path()))?;
    }
    Ok(())
}

fn op_name(op: &Op) -> &'static str {
    match op {
        Op::Add { .. } => "add",
        Op::Remove { .. } => "remove",
        Op::Replace { .. } => "replace",
    }
}

fn apply_one(root: &mut Value, op: &Op) -> Result<(), String> {
    let mut toks = tokens(op.path());
    let Some(last) = toks.pop() else {
        return match op {
            Op::Add { value, .. } | Op::Replace { value, .. } => {
                *root = value.clone();
                Ok(())
            }
            Op::Remove { .. } => Err("cannot remove the whole document".to_owned()),
        };
    };
    let mut parent = root;
    for t in &toks {
        parent = match parent {
            Value::Object(m) => m.field_mut(t).ok_or("no such key")?,
            Value::Array(a) => {
                let i = index(t, a.len())?;
                &mut a[i]
            }
            _ => return Err("path goes through a scalar".to_owned()),
        };
    }
    match (parent, op) {
        (Value::Object(m), Op::Add { value, .. }) => {
            m.insert(last, value.clone());
        }
        (Value::Object(m), Op::Replace { value, .. }) => {
            *m.field_mut(&last).ok_or("no such key")? = value.clone();
        }
        (Value::Object(m), Op::Remove { .. }) => {
            m.shift_remove(&last).ok_or("no such key")?;
        }
        (Value::Array(a), Op::Add { value, .. }) => {
            let i = if last == "-" {
                a.len()
            } else {
                index(&last, a.len() + 1)?
            };
            a.insert(i, value.clone());
        }
        (Value::Array(a), Op::Replace { value, .. }) => {
            let i = index(&last, a.len())?;
            a[i] = value.clone();
        }
        (Value::Array(a), Op::Remove { .. }) => {
            let i = index(&last, a.len())?;
            a.remove(i);
        }
        _ => return Err("parent is a scalar".to_owned()),
    }
    Ok(())
}

fn index(token: &str, len: usize) -> Result<usize, String> {
    let i: usize = token
        .parse()
        .map_err(|_| format!("`{token}` is not an array index"))?;
    if i < len {
        Ok(i)
    } else {
        Err(format!("index {i} out of range"))
    }
}

/// The operations that turn `from` into `to`. Lists of objects with unique `name`s are compared
/// by name (items removed, changed in place, or inserted where `to` has them); other lists by
/// their common prefix and suffix. Applying the result to `from` gives exactly `to`.
pub(crate) fn diff(from: &Value, to: &Value) -> Vec<Op> {
    let mut ops = Vec::new();
    diff_at(&mut String::new(), from, to, &mut ops);
    ops
}

/// `a == b` as serde_json compares values (mappings whatever their key order), without
/// hashing keys while both mappings have them in the same order, as they almost always do:
/// values are compared on every object's path.
pub(crate) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            if x.len() != y.len() {
                return false;
            }
            let mut pairs = x.iter().zip(y);
            for ((kx, vx), (ky, vy)) in pairs.by_ref() {
                if kx != ky {
                    // The keys before are the same in both: the rest of `x`'s are among the
                    // rest of `y`'s, or the two differ.
                    return y.field(kx).is_some_and(|v| equal(vx, v))
                        && pairs.all(|((k, v), _)| y.field(k).is_some_and(|w| equal(v, w)));
                }
                if !equal(vx, vy) {
                    return false;
                }
            }
            true
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| equal(v, w))
        }
        _ => a == b,
    }
}

/// The operations from `from` to `to`. Subtrees are compared before anything is done for
/// them: equal ones cost no allocation. `path` is the pointer of both, extended and
/// restored on the way down.
fn diff_at(path: &mut String, from: &Value, to: &Value, ops: &mut Vec<Op>) {
    match (from, to) {
        (Value::Object(a), Value::Object(b)) => {
            // The keys of both, in the same order: values are paired without lookups.
            let aligned = a.len() == b.len() && a.keys().zip(b.keys()).all(|(x, y)| x == y);
            if aligned {
                for ((k, bv), av) in b.iter().zip(a.values()) {
                    if !equal(av, bv) {
                        descend(path, k, |path| diff_at(path, av, bv, ops));
                    }
                }
                return;
            }
            for k in a.keys().filter(|k| b.field(k).is_none()) {
                ops.push(Op::Remove {
                    path: push(path, k),
                });
            }
            for (k, bv) in b {
                match a.field(k) {
                    Some(av) if equal(av, bv) => {}
                    Some(av) => descend(path, k, |path| diff_at(path, av, bv, ops)),
                    None => ops.push(Op::Add {
                        path: push(path, k),
                        value: bv.clone(),
                    }),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            if !diff_named(path, a, b, ops) {
                diff_positional(path, a, b, ops);
            }
        }
        _ => {
            if from != to {
                ops.push(Op::Replace {
                    path: path.clone(),
                    value: to.clone(),
                });
            }
        }
    }
}

/// Runs `f` with `token` (escaped) added to `path`, then takes it off again.
fn descend<T>(path: &mut String, token: &str, f: impl FnOnce(&mut String) -> T) -> T {
    let len = path.len();
    path.push('/');
    if token.contains(['~', '/']) {
        path.push_str(&escape(token));
    } else {
        path.push_str(token);
    }
    let result = f(path);
    path.truncate(len);
    result
}

/// Unique `name` of every item, or `None` when the list is not a list of named objects.
fn names(items: &[Value]) -> Option<Vec<&str>> {
    let names: Option<Vec<&str>> = items.iter().map(|v| v.field("name")?.as_str()).collect();
    let names = names?;
    let mut seen = std::collections::HashSet::new();
    names.iter().all(|n| seen.insert(*n)).then_some(names)
}

fn diff_named(path: &mut String, a: &[Value], b: &[Value], ops: &mut Vec<Op>) -> bool {
    let (Some(an), Some(bn)) = (names(a), names(b)) else {
        return false;
    };
    if a.is_empty() || b.is_empty() {
        return false;
    }
    let b_index: HashMap<&str, usize> = bn.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let common_in_a: Vec<usize> = an.iter().filter_map(|n| b_index.get(n).copied()).collect();
    if !common_in_a.windows(2).all(|w| w[0] < w[1]) {
        return false; // items were reordered: not a name-based edit
    }
    for i in (0..a.len()).rev() {
        if !b_index.contains_key(an[i]) {
            ops.push(Op::Remove {
                path: push(path, &i.to_string()),
            });
        }
    }
    let kept: Vec<&Value> = a
        .iter()
        .filter(|v| b_index.contains_key(name_of(v)))
        .collect();
    for (i, item) in kept.iter().enumerate() {
        let target = &b[b_index[name_of(item)]];
        if !equal(item, target) {
            descend(path, &i.to_string(), |path| {
                diff_at(path, item, target, ops)
            });
        }
    }
    let a_names: std::collections::HashSet<&str> = an.into_iter().collect();
    let mut len = kept.len();
    for (i, item) in b.iter().enumerate() {
        if !a_names.contains(name_of(item)) {
            let at = if i == len {
                "-".to_owned()
            } else {
                i.to_string()
            };
            ops.push(Op::Add {
                path: push(path, &at),
                value: item.clone(),
            });
            len += 1;
        }
    }
    true
}

/// The `name` of a list item (empty when it has none).
pub(crate) fn name_of(v: &Value) -> &str {
    v.field("name").and_then(Value::as_str).unwrap_or_default()
}

fn diff_positional(path: &mut String, a: &[Value], b: &[Value], ops: &mut Vec<Op>) {
    let prefix = a.iter().zip(b).take_while(|(x, y)| equal(x, y)).count();
    let max_suffix = a.len().min(b.len()) - prefix;
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(max_suffix)
        .take_while(|(x, y)| equal(x, y))
        .count();
    let (a_mid, b_mid) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    if a_mid.len() == b_mid.len() {
        for (i, (x, y)) in a_mid.iter().zip(b_mid).enumerate() {
            if !equal(x, y) {
                descend(path, &(prefix + i).to_string(), |path| {
                    diff_at(path, x, y, ops)
                });
            }
        }
        return;
    }
    for i in (0..a_mid.len()).rev() {
        ops.push(Op::Remove {
            path: push(path, &(prefix + i).to_string()),
        });
    }
    // After the removals the list is prefix + suffix: items go in before the suffix, or at
    // the end when there is none.
    for (i, item) in b_mid.iter().enumerate() {
        let token = if suffix == 0 {
            "-".to_owned()
        } else {
            (prefix + i).to_string()
        };
        ops.push(Op::Add {
            path: push(path, &token),
            value: item.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_is_value_equality_whatever_the_key_order() {
        let cases = [
            (
                json!({"a": 1, "b": [1, {"c": 2, "d": 3}]}),
                json!({"a": 1, "b": [1, {"c": 2, "d": 3}]}),
            ),
            (
                json!({"a": 1, "b": 2, "c": 3}),
                json!({"a": 1, "c": 3, "b": 2}),
            ),
            (
                json!({"a": 1, "b": 2, "c": 3}),
                json!({"a": 1, "c": 3, "b": 3}),
            ),
            (json!({"a": 1, "b": 2}), json!({"a": 1, "c": 2})),
            (json!({"a": 1, "b": 2}), json!({"a": 1})),
            (
                json!({"a": {"x": 1, "y": 2}}),
                json!({"a": {"y": 2, "x": 1}}),
            ),
            (json!([1, 2]), json!([1, 2, 3])),
            (json!([{"a": 1}]), json!([{"a": 1.0}])),
            (json!(null), json!(false)),
            (json!("1"), json!(1)),
        ];
        for (a, b) in cases {
            assert_eq!(equal(&a, &b), a == b, "{a} {b}");
            assert_eq!(equal(&b, &a), a == b, "{b} {a}");
        }
    }

    fn check(from: Value, to: Value) -> Vec<Op> {
        let ops = diff(&from, &to);
        let mut applied = from.clone();
        apply(&mut applied, &ops).unwrap();
        assert_eq!(applied, to, "{ops:?}");
        ops
    }

    #[test]
    fn appends_by_name() {
        let ops = check(
            json!({"containers": [{"name": "app"}]}),
            json!({"containers": [{"name": "app"}, {"name": "proxy", "image": "p"}]}),
        );
        assert_eq!(
            ops,
            vec![Op::Add {
                path: "/containers/-".into(),
                value: json!({"name": "proxy", "image": "p"})
            }]
        );
    }

    #[test]
    fn prepends_and_removes_by_name() {
        let ops = check(
            json!({"c": [{"name": "old"}, {"name": "app"}, {"name": "b"}]}),
            json!({"c": [{"name": "new"}, {"name": "app", "x": 1}, {"name": "b"}]}),
        );
        assert_eq!(
            ops[0],
            Op::Remove {
                path: "/c/0".into()
            }
        );
        assert!(ops.contains(&Op::Add {
            path: "/c/0".into(),
            value: json!({"name": "new"})
        }));
    }

    #[test]
    fn positional_lists_and_maps() {
        check(
            json!({"args": ["a", "b"]}),
            json!({"args": ["a", "b", "c"]}),
        );
        check(
            json!({"args": ["a", "b", "z"]}),
            json!({"args": ["a", "x", "y", "z"]}),
        );
        check(
            json!({"m": {"a": 1, "b": 2}}),
            json!({"m": {"b": 3, "c": {"d": []}}}),
        );
        check(json!({"a~/b": 1}), json!({"a~/b": 2, "x/y": 1}));
        check(json!([1]), json!({"a": 1}));
        check(
            json!({"c": [{"name": "a"}, {"name": "b"}]}),
            json!({"c": [{"name": "b"}, {"name": "a"}]}),
        );
    }
}
