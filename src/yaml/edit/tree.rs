//! The virtual tree the operations shape over the parsed nodes: which original items stay,
//! which are removed, replaced or new.

use serde_json::Value;

use super::splice::{Res, Unsupported, unsupported};
use crate::json::Fields;
use crate::json::patch::{self, Op};
use crate::yaml::node::{Node, NodeKind};

/// The virtual tree: original nodes, or original collections with items added or removed.
pub(super) enum V<'t> {
    Orig(&'t Node),
    Seq(&'t Node, Vec<Child<'t>>, Vec<usize>),
    Map(&'t Node, Vec<Child<'t>>, Vec<usize>),
    Replaced(&'t Node, Value),
    New(Value),
}

/// An item or entry: `orig` is its index in the original collection (`None` when new).
pub(super) struct Child<'t> {
    pub(super) orig: Option<usize>,
    pub(super) key: String,
    pub(super) v: V<'t>,
}

fn touch<'t>(v: &mut V<'t>) -> Res<()> {
    if let V::Orig(node) = v {
        let node: &'t Node = node;
        if node.decorated {
            return unsupported("an edit inside an anchored or tagged node");
        }
        *v = match &node.kind {
            NodeKind::Seq { items, .. } => V::Seq(
                node,
                items
                    .iter()
                    .enumerate()
                    .map(|(i, n)| Child {
                        orig: Some(i),
                        key: String::new(),
                        v: V::Orig(n),
                    })
                    .collect(),
                Vec::new(),
            ),
            NodeKind::Map { entries, .. } => V::Map(
                node,
                entries
                    .iter()
                    .enumerate()
                    .map(|(i, e)| Child {
                        orig: Some(i),
                        key: e.key.clone(),
                        v: V::Orig(&e.value),
                    })
                    .collect(),
                Vec::new(),
            ),
            NodeKind::Alias => return unsupported("an edit through an alias"),
            NodeKind::Scalar(_) => return unsupported("an edit inside a scalar"),
        };
    }
    Ok(())
}

/// Applies `op` to the virtual tree; for a replacement of an original node, gives that
/// node's start.
pub(super) fn apply_op<'t>(
    v: &mut V<'t>,
    toks: &[String],
    depth: usize,
    op: &Op,
    target: &Value,
) -> Res<Option<usize>> {
    if let V::New(value) | V::Replaced(_, value) = v {
        let rest: String = toks[depth..]
            .iter()
            .map(|t| format!("/{}", crate::json::escape(t)))
            .collect();
        let relative = match op {
            Op::Add { value, .. } => Op::Add {
                path: rest,
                value: value.clone(),
            },
            Op::Remove { .. } => Op::Remove { path: rest },
            Op::Replace { value, .. } => Op::Replace {
                path: rest,
                value: value.clone(),
            },
        };
        return patch::apply(value, &[relative])
            .map(|()| None)
            .map_err(Unsupported);
    }
    touch(v)?;
    let token = &toks[depth];
    let last = depth + 1 == toks.len();
    let (children, removed, is_map) = match v {
        V::Seq(_, c, r) => (c, r, false),
        V::Map(_, c, r) => (c, r, true),
        _ => return unsupported("an edit inside a scalar"),
    };
    let found = if is_map {
        children.iter().rposition(|c| &c.key == token)
    } else if token == "-" {
        None
    } else {
        let i: usize = token
            .parse()
            .map_err(|_| Unsupported(format!("`{token}` is not an index")))?;
        (i < children.len()).then_some(i)
    };
    if !last {
        let Some(i) = found else {
            return unsupported(format!("no `{token}` to edit in"));
        };
        return apply_op(&mut children[i].v, toks, depth + 1, op, target);
    }
    match (op, found) {
        (Op::Remove { .. }, Some(i)) => {
            let child = children.remove(i);
            if let Some(o) = child.orig {
                removed.push(o);
            }
        }
        (Op::Replace { value, .. }, Some(i)) | (Op::Add { value, .. }, Some(i)) if is_map => {
            return Ok(replace_child(&mut children[i].v, value.clone()));
        }
        (Op::Replace { value, .. }, Some(i)) => {
            return Ok(replace_child(&mut children[i].v, value.clone()));
        }
        (Op::Add { value, .. }, _) if is_map => {
            let at = key_position(children, toks, depth, target);
            children.insert(
                at,
                Child {
                    orig: None,
                    key: token.clone(),
                    v: V::New(value.clone()),
                },
            );
        }
        (Op::Add { value, .. }, _) => {
            let at = if token == "-" {
                children.len()
            } else {
                token.parse().unwrap_or(children.len()).min(children.len())
            };
            children.insert(
                at,
                Child {
                    orig: None,
                    key: String::new(),
                    v: V::New(value.clone()),
                },
            );
        }
        _ => return unsupported(format!("nothing at `{token}`")),
    }
    Ok(None)
}

/// Replaces `v` by `value`; gives the start of the original node replaced, if any.
fn replace_child(v: &mut V<'_>, value: Value) -> Option<usize> {
    let (next, start) = match v {
        V::Orig(n) | V::Seq(n, ..) | V::Map(n, ..) | V::Replaced(n, _) => {
            (V::Replaced(n, value), Some(n.start))
        }
        V::New(_) => (V::New(value), None),
    };
    *v = next;
    start
}

/// Where a new key goes: before the first existing key that follows it in `target`.
fn key_position(children: &[Child<'_>], toks: &[String], depth: usize, target: &Value) -> usize {
    let mut map = target;
    for t in &toks[..depth] {
        map = match map {
            Value::Object(m) => m.field(t).unwrap_or(&Value::Null),
            Value::Array(a) => t
                .parse::<usize>()
                .ok()
                .and_then(|i| a.get(i))
                .unwrap_or(&Value::Null),
            _ => &Value::Null,
        };
    }
    if let Value::Object(m) = map
        && let Some(pos) = m.keys().position(|k| k == &toks[depth])
    {
        for (k, _) in m.iter().skip(pos + 1) {
            if let Some(i) = children.iter().position(|c| &c.key == k) {
                return i;
            }
        }
    }
    children.len()
}

pub(super) fn is_empty_collection(node: &Node) -> bool {
    match &node.kind {
        NodeKind::Seq { items, .. } => items.is_empty(),
        NodeKind::Map { entries, .. } => entries.is_empty(),
        _ => false,
    }
}

/// The value of a collection whose children are all new.
pub(super) fn new_value(node: &Node, children: &[Child<'_>]) -> Res<Value> {
    let values = children.iter().map(|c| match &c.v {
        V::New(v) => Ok((c.key.clone(), v.clone())),
        _ => unsupported("an original item in an empty collection"),
    });
    if matches!(node.kind, NodeKind::Seq { .. }) {
        values
            .map(|r| r.map(|(_, v)| v))
            .collect::<Res<Vec<_>>>()
            .map(Value::Array)
    } else {
        values
            .collect::<Res<serde_json::Map<_, _>>>()
            .map(Value::Object)
    }
}
