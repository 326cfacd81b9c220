//! Block mappings and sequences edited in place: removed entries and items take their lines
//! with them, new ones are written before the original that follows them (or after the
//! last), each original rendered in its place.

use serde_json::Value;

use super::ctx::{Ctx, Place};
use super::splice::{Res, Splice, Unsupported, unsupported};
use super::tree::{Child, V};
use crate::yaml::emit::Emitter;
use crate::yaml::node::{Node, NodeKind};
use crate::yaml::parse::dash_before;
use crate::yaml::style::{column, line_start};

impl Ctx<'_> {
    pub(super) fn render_block_map(
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

    pub(super) fn render_block_seq(
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
}
