//! Applies RFC 6902 operations to a document's text. Ops first shape a virtual tree over the
//! parsed nodes (which original items stay, which are new); rendering turns that into splices,
//! so every byte outside an edited spot is the author's. New lines follow the document's style.

use std::collections::BTreeMap;

use serde_json::Value;

use super::emit::{Emitter, flow_text, scalar};
use super::node::{Node, NodeKind, ScalarKind};
use super::parse::dash_before;
use super::style::{Style, column, line_start};
use crate::json::Fields;
use crate::json::patch::{self, Op};

/// The document's layout is one the editor does not change in place (an anchor, an alias, a
/// merge key, a first key sharing its line with a `-`…). The caller re-emits the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unsupported(pub String);

type Res<T> = Result<T, Unsupported>;

fn unsupported<T>(why: impl Into<String>) -> Res<T> {
    Err(Unsupported(why.into()))
}

/// Applies `ops` (paths relative to the document root) to `text`: the splices that make the
/// edited text, in order, none overlapping (`spliced` writes it). `target` is the value after
/// all ops; it decides where new mapping keys go among existing ones.
///
/// A null that replaces a value is written `key:` alone, or with the text `null_as` gives
/// for its path (`null`, `~`: how it was written before kinject filled it).
pub(crate) fn apply(
    text: &str,
    root: &Node,
    ops: &[Op],
    target: &Value,
    style: &Style,
    null_as: &BTreeMap<String, String>,
) -> Res<Vec<Splice>> {
    let mut tree = V::Orig(root);
    // How a null is written, by the start of the node it replaces.
    let mut spelled = BTreeMap::new();
    for op in ops {
        let toks = crate::json::tokens(op.path());
        if toks.is_empty() {
            return unsupported("the whole document is replaced");
        }
        let replaced = apply_op(&mut tree, &toks, 0, op, target)?;
        if let (Op::Replace { path, value }, Some(start)) = (op, replaced)
            && value.is_null()
            && let Some(s) = null_as.get(path)
        {
            spelled.insert(start, s.as_str());
        }
    }
    let ctx = Ctx {
        text,
        style,
        spelled,
    };
    let mut splices = Vec::new();
    ctx.render(&tree, Place::Root, &mut splices)?;
    let mut splices = arrange(text, splices)?;
    if style.crlf {
        match_line_endings(text, &mut splices);
    }
    Ok(splices)
}

/// In a document whose lines end both ways, each inserted text's line breaks as the line it
/// goes into ends: the style's CRLF was written into the part of a file that ends lines
/// with LF alone.
fn match_line_endings(text: &str, splices: &mut [Splice]) {
    let bytes = text.as_bytes();
    let bare_lf = memchr::memchr_iter(b'\n', bytes).any(|i| i == 0 || bytes[i - 1] != b'\r');
    if !bare_lf {
        return;
    }
    for s in splices.iter_mut().filter(|s| s.text.contains("\r\n")) {
        // The break of the line the text goes into: the one before it when it starts a line.
        let at_line_start = s.start > 0 && bytes[s.start - 1] == b'\n';
        let lf = if at_line_start {
            s.start < 2 || bytes[s.start - 2] != b'\r'
        } else {
            memchr::memchr(b'\n', &bytes[s.start..])
                .map(|i| s.start + i)
                .is_some_and(|i| i == 0 || bytes[i - 1] != b'\r')
        };
        if lf {
            s.text = s.text.replace("\r\n", "\n");
        }
    }
}

/// The virtual tree: original nodes, or original collections with items added or removed.
enum V<'t> {
    Orig(&'t Node),
    Seq(&'t Node, Vec<Child<'t>>, Vec<usize>),
    Map(&'t Node, Vec<Child<'t>>, Vec<usize>),
    Replaced(&'t Node, Value),
    New(Value),
}

/// An item or entry: `orig` is its index in the original collection (`None` when new).
struct Child<'t> {
    orig: Option<usize>,
    key: String,
    v: V<'t>,
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
fn apply_op<'t>(
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

/// How a node sits in its parent, which decides how replacement text is laid out.
#[derive(Clone, Copy)]
enum Place<'k> {
    Root,
    MapValue {
        key: &'k str,
        key_col: usize,
        colon: usize,
    },
    SeqItem {
        dash_col: usize,
        content_col: usize,
    },
    Flow,
}

/// `start..end` of a text replaced by `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Splice {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// `splices` in order, back-to-back deletions joined; an error when two overlap.
fn arrange(text: &str, mut splices: Vec<Splice>) -> Res<Vec<Splice>> {
    // Stable: insertions at one spot keep their order, and come before a deletion there.
    splices.sort_by_key(|s| (s.start, s.end));
    let splices = merge_deletions(text, splices);
    if splices.windows(2).any(|w| w[1].start < w[0].end) {
        return unsupported("two edits overlap");
    }
    Ok(splices)
}

/// `text` with `splices` (as `arrange` leaves them) applied.
pub(crate) fn spliced(text: &str, splices: &[Splice]) -> String {
    let extra: usize = splices.iter().map(|s| s.text.len()).sum();
    let mut out = String::with_capacity(text.len() + extra);
    let mut pos = 0;
    for s in splices {
        out.push_str(&text[pos..s.start]);
        out.push_str(&s.text);
        pos = s.end;
    }
    out.push_str(&text[pos..]);
    out
}

/// Joins back-to-back deletions. A deletion that reaches the end of a text without a final
/// line break takes the break before it instead, so the text still ends the way it did.
fn merge_deletions(text: &str, splices: Vec<Splice>) -> Vec<Splice> {
    let mut out: Vec<Splice> = Vec::with_capacity(splices.len());
    for s in splices {
        match out.last_mut() {
            Some(prev) if prev.text.is_empty() && s.text.is_empty() && s.start <= prev.end => {
                prev.end = prev.end.max(s.end);
            }
            _ => out.push(s),
        }
    }
    if let Some(last) = out.last_mut() {
        let at_end = last.text.is_empty() && last.end == text.len() && last.start > 0;
        if at_end && !text.ends_with('\n') && text[..last.start].ends_with('\n') {
            last.start -= if text[..last.start].ends_with("\r\n") {
                2
            } else {
                1
            };
        }
    }
    out
}

struct Ctx<'a> {
    text: &'a str,
    style: &'a Style,
    /// How a null that replaces the node starting at an offset is written, when not empty.
    spelled: BTreeMap<usize, &'a str>,
}

impl Ctx<'_> {
    fn render(&self, v: &V<'_>, place: Place<'_>, out: &mut Vec<Splice>) -> Res<()> {
        match v {
            V::Orig(_) => Ok(()),
            V::New(_) => unsupported("a new node without a parent"),
            V::Replaced(node, value) => self.replace(node, value, place, out),
            V::Seq(node, children, removed) | V::Map(node, children, removed)
                if children.is_empty() =>
            {
                let empty = if matches!(node.kind, NodeKind::Seq { .. }) {
                    Value::Array(Vec::new())
                } else {
                    Value::Object(serde_json::Map::new())
                };
                let _ = removed;
                self.replace(node, &empty, place, out)
            }
            V::Seq(node, children, removed) | V::Map(node, children, removed) => {
                let flow = matches!(
                    node.kind,
                    NodeKind::Seq { flow: true, .. } | NodeKind::Map { flow: true, .. }
                );
                if flow && is_empty_collection(node) {
                    // `{}` or `[]` that receives content becomes a block (and an emptied block
                    // is written `{}`/`[]` again, so removing the content restores it).
                    self.replace(node, &new_value(node, children)?, place, out)
                } else if flow {
                    self.render_flow(node, children, out)
                } else if matches!(node.kind, NodeKind::Seq { .. }) {
                    self.render_block_seq(node, children, removed, out)
                } else {
                    self.render_block_map(node, children, removed, out)
                }
            }
        }
    }

    fn emitter(&self) -> Emitter<'_> {
        Emitter::new(self.style)
    }

    /// Text of a new value laid out for `place`, and whether it ends in a line break.
    fn replace(
        &self,
        node: &Node,
        value: &Value,
        place: Place<'_>,
        out: &mut Vec<Splice>,
    ) -> Res<()> {
        let inline_old = is_inline(node);
        let inline_new = match value {
            Value::String(s) => !s.contains('\n'),
            Value::Array(a) => a.is_empty(),
            Value::Object(m) => m.is_empty(),
            _ => true,
        };
        match place {
            Place::Root => unsupported("the whole document is replaced"),
            Place::Flow => {
                out.push(Splice {
                    start: node.start,
                    end: node.end,
                    text: flow_text(value, self.style.quote),
                });
                Ok(())
            }
            Place::MapValue {
                key,
                key_col,
                colon,
            } => {
                if inline_old && inline_new {
                    let text = match self.spelled.get(&node.start) {
                        Some(s) if value.is_null() => (*s).to_owned(),
                        _ => scalar_like(node, value, self.style),
                    };
                    let (start, text) = if matches!(node.kind, NodeKind::Scalar(ScalarKind::Empty))
                    {
                        (colon + 1, format!(" {text}"))
                    } else {
                        (node.start, text)
                    };
                    out.push(Splice {
                        start,
                        end: node.end.max(start),
                        text,
                    });
                    return Ok(());
                }
                let mut e = self.emitter();
                if value.is_null() {
                    // `key:` alone is how a null is most often written, unless this one was
                    // written otherwise before.
                    if let Some(s) = self.spelled.get(&node.start) {
                        e.out.push(' ');
                        e.out.push_str(s);
                    }
                    e.out.push_str(self.style.newline());
                } else {
                    e.after_key(key, value, key_col);
                }
                let end = self.last_line_end(node, colon);
                let comment = self.comment_in(colon + 1, end, node, inline_old);
                out.push(Splice {
                    start: colon + 1,
                    end,
                    text: join_comment(e.out, &comment, self.style),
                });
                Ok(())
            }
            Place::SeqItem {
                dash_col,
                content_col,
            } => {
                if inline_old && inline_new {
                    out.push(Splice {
                        start: node.start,
                        end: node.end,
                        text: scalar_like(node, value, self.style),
                    });
                    return Ok(());
                }
                let mut style = self.style.clone();
                style.item_offset = content_col - dash_col;
                let mut e = Emitter::new(&style);
                e.inline_value(value, content_col);
                let end = self.last_line_end(node, node.start);
                let text = trim_newline(e.out, self.style);
                out.push(Splice {
                    start: node.start,
                    end,
                    text,
                });
                Ok(())
            }
        }
    }

    /// End of the last line holding `node`'s content, before its line break.
    fn last_line_end(&self, node: &Node, fallback: usize) -> usize {
        let last = if node.end > node.start {
            node.end - 1
        } else {
            fallback
        };
        let last = if self.text.as_bytes().get(last) == Some(&b'\n') && last > node.start {
            last - 1
        } else {
            last
        };
        line_end(self.text, last)
    }

    /// A `# comment` on the key's line that must survive a replacement, with its lead space.
    fn comment_in(&self, from: usize, to: usize, node: &Node, inline_old: bool) -> String {
        let line_end_pos = line_end(self.text, from).min(to);
        let scan_from = if inline_old { node.end.max(from) } else { from };
        if scan_from >= line_end_pos {
            return String::new();
        }
        let rest = &self.text[scan_from..line_end_pos];
        match rest.find('#') {
            Some(i) if rest[..i].trim().is_empty() => format!(" {}", rest[i..].trim_end()),
            _ => String::new(),
        }
    }

    fn render_block_map(
        &self,
        node: &Node,
        children: &[Child<'_>],
        removed: &[usize],
        out: &mut Vec<Splice>,
    ) -> Res<()> {
        let NodeKind::Map { entries, .. } = &node.kind else {
            return unsupported("not a mapping");
        };
        let key_col = column(self.text, entries[0].key_start);
        for &r in removed {
            let e = &entries[r];
            if self.starts_line(e.key_start) {
                let end = self.last_line_end(&e.value, e.key_start);
                out.push(self.removal(line_start(self.text, e.key_start), end));
            } else if let Some(next) = entries.get(r + 1) {
                // The first key of a `- ` item: the next key moves up onto the dash line.
                out.push(Splice {
                    start: e.key_start,
                    end: next.key_start,
                    text: String::new(),
                });
            } else {
                return unsupported("removing the only key of a `- ` item");
            }
        }
        let mut pending: Vec<(&str, &Value)> = Vec::new();
        for c in children {
            match (c.orig, &c.v) {
                (None, V::New(value)) => pending.push((&c.key, value)),
                (Some(i), v) => {
                    let e = &entries[i];
                    if !pending.is_empty() {
                        self.insert_entries_before(e.key_start, key_col, &pending, out);
                        pending.clear();
                    }
                    let colon = self.colon_after(e)?;
                    let place = Place::MapValue {
                        key: &e.key,
                        key_col,
                        colon,
                    };
                    self.render(v, place, out)?;
                }
                (None, _) => return unsupported("a new entry that is not new"),
            }
        }
        if !pending.is_empty() {
            let at = self.trailing_end(node.end, key_col);
            let mut e = self.emitter();
            for (k, v) in &pending {
                e.entry(k, v, key_col, false);
            }
            out.push(self.insertion(at, e.out));
        }
        Ok(())
    }

    fn insert_entries_before(
        &self,
        key_start: usize,
        key_col: usize,
        new: &[(&str, &Value)],
        out: &mut Vec<Splice>,
    ) {
        let mut e = self.emitter();
        if self.starts_line(key_start) {
            for (k, v) in new {
                e.entry(k, v, key_col, false);
            }
            let at = self.leading_comments_start(line_start(self.text, key_start), key_col);
            out.push(Splice {
                start: at,
                end: at,
                text: e.out,
            });
        } else {
            // The first key of a `- ` item: the new keys take its place on the dash line.
            for (i, (k, v)) in new.iter().enumerate() {
                e.entry(k, v, key_col, i == 0);
            }
            e.out.extend(std::iter::repeat_n(' ', key_col));
            out.push(Splice {
                start: key_start,
                end: key_start,
                text: e.out,
            });
        }
    }

    fn render_block_seq(
        &self,
        node: &Node,
        children: &[Child<'_>],
        removed: &[usize],
        out: &mut Vec<Splice>,
    ) -> Res<()> {
        let NodeKind::Seq { items, .. } = &node.kind else {
            return unsupported("not a sequence");
        };
        let dash_col = column(self.text, node.start);
        let dash_of = |i: usize| -> Res<usize> {
            let d = if i == 0 {
                Some(node.start)
            } else {
                dash_before(self.text, items[i].start)
            };
            d.ok_or_else(|| Unsupported("a sequence item without a dash".to_owned()))
        };
        let content_col = if self.same_line(node.start, items[0].start) {
            column(self.text, items[0].start)
        } else {
            dash_col + self.style.item_offset
        };
        let mut style = self.style.clone();
        style.item_offset = content_col - dash_col;
        for &r in removed {
            let dash = dash_of(r)?;
            if !self.starts_line(dash) {
                return unsupported("removing an item that shares its line");
            }
            let end = self.last_line_end(&items[r], dash);
            out.push(self.removal(line_start(self.text, dash), end));
        }
        let mut pending: Vec<&Value> = Vec::new();
        let flush =
            |pending: &mut Vec<&Value>, at: Option<usize>, out: &mut Vec<Splice>| -> Res<()> {
                if pending.is_empty() {
                    return Ok(());
                }
                let mut e = Emitter::new(&style);
                for v in pending.iter() {
                    e.item(v, dash_col, false);
                }
                pending.clear();
                match at {
                    Some(dash) => {
                        if !self.starts_line(dash) {
                            return unsupported("inserting before an item that shares its line");
                        }
                        let at = self.leading_comments_start(line_start(self.text, dash), dash_col);
                        out.push(Splice {
                            start: at,
                            end: at,
                            text: e.out,
                        });
                    }
                    None => {
                        let at = self.trailing_end(node.end, dash_col);
                        out.push(self.insertion(at, e.out));
                    }
                }
                Ok(())
            };
        for c in children {
            match (c.orig, &c.v) {
                (None, V::New(value)) => pending.push(value),
                (Some(i), v) => {
                    flush(&mut pending, Some(dash_of(i)?), out)?;
                    self.render(
                        v,
                        Place::SeqItem {
                            dash_col,
                            content_col,
                        },
                        out,
                    )?;
                }
                (None, _) => return unsupported("a new item that is not new"),
            }
        }
        flush(&mut pending, None, out)
    }

    /// Flow collections are rewritten on one line, keeping each original item's text.
    fn render_flow(&self, node: &Node, children: &[Child<'_>], out: &mut Vec<Splice>) -> Res<()> {
        let (open, close, entries) = match &node.kind {
            NodeKind::Seq { .. } => ('[', ']', None),
            NodeKind::Map { entries, .. } => ('{', '}', Some(entries)),
            _ => return unsupported("not a collection"),
        };
        let items: Vec<&Node> = match &node.kind {
            NodeKind::Seq { items, .. } => items.iter().collect(),
            _ => Vec::new(),
        };
        let mut parts = Vec::new();
        for c in children {
            match (c.orig, &c.v) {
                (None, V::New(value)) => parts.push(match entries {
                    Some(_) => format!(
                        "{}: {}",
                        scalar(&Value::String(c.key.clone()), true, self.style.quote),
                        flow_text(value, self.style.quote)
                    ),
                    None => flow_text(value, self.style.quote),
                }),
                (Some(i), v) => {
                    let (start, value_node) = match entries {
                        Some(es) => (es[i].key_start, &es[i].value),
                        None => (items[i].start, items[i]),
                    };
                    let mut inner = Vec::new();
                    self.render(v, Place::Flow, &mut inner)?;
                    let end = value_node.end;
                    let shifted = inner
                        .into_iter()
                        .map(|s| Splice {
                            start: s.start - start,
                            end: s.end - start,
                            text: s.text,
                        })
                        .collect();
                    let text = &self.text[start..end];
                    parts.push(spliced(text, &arrange(text, shifted)?));
                }
                (None, _) => return unsupported("a new item that is not new"),
            }
        }
        let original = &self.text[node.start..node.end];
        let items_before = match &node.kind {
            NodeKind::Seq { items, .. } => items.len(),
            NodeKind::Map { entries, .. } => entries.len(),
            _ => 0,
        };
        let sep = if items_before > 1 && !original.contains(", ") && original.contains(',') {
            ","
        } else {
            ", "
        };
        out.push(Splice {
            start: node.start,
            end: node.end,
            text: format!("{open}{}{close}", parts.join(sep)),
        });
        Ok(())
    }

    /// Deletes whole lines from `start` through the line ending at `end`.
    fn removal(&self, start: usize, end: usize) -> Splice {
        Splice {
            start,
            end: after_newline(self.text, end),
            text: String::new(),
        }
    }

    /// Text inserted at `at`; at the end of a document without a final line break, the break
    /// moves to the front so the document still ends the way it did.
    fn insertion(&self, at: usize, text: String) -> Splice {
        let text = if at == self.text.len() && !self.text.is_empty() && !self.text.ends_with('\n') {
            format!("{}{}", self.style.newline(), trim_newline(text, self.style))
        } else {
            text
        };
        Splice {
            start: at,
            end: at,
            text,
        }
    }

    /// After the line holding offset `end - 1`, plus the comment lines indented deeper than
    /// `col` that follow it (they belong to the last item).
    fn trailing_end(&self, end: usize, col: usize) -> usize {
        let last = end.saturating_sub(1);
        let mut pos = if self.text.as_bytes().get(last) == Some(&b'\n') {
            end
        } else {
            after_newline(self.text, line_end(self.text, last))
        };
        while pos < self.text.len() {
            let next = after_newline(self.text, line_end(self.text, pos));
            let line = &self.text[pos..next];
            let indent = line.len() - line.trim_start_matches(' ').len();
            if line.trim_start().starts_with('#') && indent > col {
                pos = next;
            } else {
                break;
            }
        }
        pos
    }

    /// The start of the comment lines at exactly `col` directly above `line`.
    fn leading_comments_start(&self, line: usize, col: usize) -> usize {
        let mut at = line;
        while at > 0 {
            let prev = line_start(self.text, at - 1);
            let l = &self.text[prev..at];
            let indent = l.len() - l.trim_start_matches(' ').len();
            if l.trim_start().starts_with('#') && indent == col {
                at = prev;
            } else {
                break;
            }
        }
        at
    }

    fn starts_line(&self, offset: usize) -> bool {
        self.text[line_start(self.text, offset)..offset]
            .trim()
            .is_empty()
    }

    fn same_line(&self, a: usize, b: usize) -> bool {
        !self.text[a.min(b)..a.max(b)].contains('\n')
    }

    /// The `:` after an entry's key.
    fn colon_after(&self, e: &super::Entry) -> Res<usize> {
        let from = e.key_start;
        let to = e.value.start.max(from);
        // The key may be quoted and contain `:`; the separator is the last `:` before the value
        // that is followed by a blank, a line break, or the value itself.
        let region = &self.text[from..to];
        let bytes = region.as_bytes();
        let mut found = None;
        for (i, b) in bytes.iter().enumerate() {
            if *b == b':' {
                let next = bytes.get(i + 1).copied();
                if next.is_none_or(|n| matches!(n, b' ' | b'\t' | b'\n' | b'\r'))
                    || from + i + 1 == to
                {
                    found = Some(from + i);
                }
            }
        }
        if matches!(e.value.kind, NodeKind::Scalar(ScalarKind::Empty)) && found.is_none() {
            // An empty value's span sits on the colon itself.
            if self.text.as_bytes().get(e.value.start) == Some(&b':') {
                return Ok(e.value.start);
            }
        }
        found.ok_or_else(|| Unsupported("a key without a `:`".to_owned()))
    }
}

fn is_empty_collection(node: &Node) -> bool {
    match &node.kind {
        NodeKind::Seq { items, .. } => items.is_empty(),
        NodeKind::Map { entries, .. } => entries.is_empty(),
        _ => false,
    }
}

/// The value of a collection whose children are all new.
fn new_value(node: &Node, children: &[Child<'_>]) -> Res<Value> {
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

fn is_inline(node: &Node) -> bool {
    match &node.kind {
        NodeKind::Scalar(ScalarKind::Block) => false,
        NodeKind::Scalar(_) | NodeKind::Alias => true,
        NodeKind::Seq { flow, .. } | NodeKind::Map { flow, .. } => *flow,
    }
}

/// Offset of the line break ending the line that holds `offset` (or the text's end).
fn line_end(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    // Bytes, not characters: `offset` may be anywhere (found by fuzzing).
    let end = memchr::memchr(b'\n', &text.as_bytes()[offset..]).map_or(text.len(), |i| offset + i);
    if end > offset && text.as_bytes()[end - 1] == b'\r' {
        end - 1
    } else {
        end
    }
}

/// Just past the line break at or after `offset`.
fn after_newline(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    memchr::memchr(b'\n', &text.as_bytes()[offset..]).map_or(text.len(), |i| offset + i + 1)
}

/// A new scalar's text, quoted as the one it replaces was when that was quoted (so that a
/// value put back later reads as it was written).
fn scalar_like(node: &Node, value: &Value, style: &Style) -> String {
    match (&node.kind, value) {
        (NodeKind::Scalar(ScalarKind::DoubleQuoted), Value::String(s)) => {
            super::emit::double_quoted(s)
        }
        (NodeKind::Scalar(ScalarKind::SingleQuoted), Value::String(s))
            if super::emit::single_quotable(s) =>
        {
            super::emit::single_quoted(s)
        }
        _ => scalar(value, false, style.quote),
    }
}

fn trim_newline(mut s: String, style: &Style) -> String {
    if s.ends_with(style.newline()) {
        s.truncate(s.len() - style.newline().len());
    } else if s.ends_with('\n') {
        s.pop();
    }
    s
}

/// Emitted `after_key` text (starting with a blank or a line break) with a kept comment.
fn join_comment(emitted: String, comment: &str, style: &Style) -> String {
    let body = trim_newline(emitted, style);
    if comment.is_empty() {
        body
    } else if let Some(rest) = body.strip_prefix(style.newline()) {
        format!("{comment}{}{rest}", style.newline())
    } else {
        format!("{body}{comment}")
    }
}

#[cfg(test)]
mod tests;
