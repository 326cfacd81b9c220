//! A node replaced by a new value: its text laid out for its place (a mapping's value, a
//! sequence's item, inside a flow collection), quoted as the old one was, a comment on its
//! line kept.

use serde_json::Value;

use super::ctx::{Ctx, Place, trim_newline};
use super::splice::{Res, Splice, unsupported};
use crate::yaml::emit::{Emitter, flow_text, scalar};
use crate::yaml::node::{Node, NodeKind, ScalarKind};
use crate::yaml::style::Style;

impl Ctx<'_> {
    /// Text of a new value laid out for `place`, and whether it ends in a line break.
    pub(super) fn replace(
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
}

fn is_inline(node: &Node) -> bool {
    match &node.kind {
        NodeKind::Scalar(ScalarKind::Block) => false,
        NodeKind::Scalar(_) | NodeKind::Alias => true,
        NodeKind::Seq { flow, .. } | NodeKind::Map { flow, .. } => *flow,
    }
}

/// A new scalar's text, quoted as the one it replaces was when that was quoted (so that a
/// value put back later reads as it was written).
fn scalar_like(node: &Node, value: &Value, style: &Style) -> String {
    match (&node.kind, value) {
        (NodeKind::Scalar(ScalarKind::DoubleQuoted), Value::String(s)) => {
            crate::yaml::emit::double_quoted(s)
        }
        (NodeKind::Scalar(ScalarKind::SingleQuoted), Value::String(s))
            if crate::yaml::emit::single_quotable(s) =>
        {
            crate::yaml::emit::single_quoted(s)
        }
        _ => scalar(value, false, style.quote),
    }
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
