//! Applies RFC 6902 operations to a document's text. Ops first shape a virtual tree over the
//! parsed nodes (which original items stay, which are new); rendering turns that into splices,
//! so every byte outside an edited spot is the author's. New lines follow the document's style.

mod block;
mod ctx;
mod flow;
mod replace;
mod splice;
mod tree;

use std::collections::BTreeMap;

use serde_json::Value;

use super::Node;
use super::style::Style;
use crate::json::patch::Op;
use ctx::{Ctx, Place};
use splice::{Res, arrange, match_line_endings, unsupported};
pub(crate) use splice::{Splice, Unsupported, spliced};
use tree::{V, apply_op};

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

#[cfg(test)]
mod tests;
