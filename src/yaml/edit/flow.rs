//! Flow collections rewritten on one line, each original item's text kept.

use serde_json::Value;

use super::ctx::{Ctx, Place};
use super::splice::{Res, Splice, arrange, spliced, unsupported};
use super::tree::{Child, V};
use crate::yaml::emit::{flow_text, scalar};
use crate::yaml::node::{Node, NodeKind};

impl Ctx<'_> {
    /// Flow collections are rewritten on one line, keeping each original item's text.
    pub(super) fn render_flow(
        &self,
        node: &Node,
        children: &[Child<'_>],
        out: &mut Vec<Splice>,
    ) -> Res<()> {
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
}
