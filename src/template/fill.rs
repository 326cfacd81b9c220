//! The values a whole template printed, put back where it printed them: each `{{ }}` prints
//! a placeholder, the text is read as YAML, and each placeholder is then replaced by its
//! value (a node where it stands alone as a plain scalar, else text inside the scalar or key).

use serde_json::Value;

use super::error::{RENDER, TemplateError};
use super::limits::MAX_OUTPUT;
use crate::diagnostic::codes;

/// The marks around a placeholder in a whole template's rendered text (`MARK_OPEN`, the
/// number of the printed value, `MARK_CLOSE`): private-use characters, which YAML reads as
/// ordinary characters in every context (plain, quoted and block scalars, keys, flow and
/// block collections) and which a template's own text may not hold (refused at load).
pub(super) const MARK_OPEN: char = '\u{E000}';
pub(super) const MARK_CLOSE: char = '\u{E001}';

/// What the `{{ }}` of one render of a whole template printed, in order: placeholder `n`
/// stands for entry `n`.
#[derive(Default)]
pub(super) struct Printed(Vec<minijinja::Value>);

/// How a whole template prints a value: as a placeholder for it. Text the template made
/// itself (a `set` block's, a macro's: marked safe, holding placeholders already) is written
/// as it is.
pub(super) fn placeholder(
    out: &mut minijinja::Output,
    state: &mut minijinja::State,
    value: &minijinja::Value,
) -> Result<(), minijinja::Error> {
    let written = match value.as_str() {
        Some(own) if value.is_safe() && own.contains(MARK_OPEN) => out.write_str(own),
        _ => {
            let printed = state.get_or_insert_extension(Printed::default());
            printed.0.push(value.clone());
            write!(out, "{MARK_OPEN}{}{MARK_CLOSE}", printed.0.len() - 1)
        }
    };
    written.map_err(|_| minijinja::Error::new(minijinja::ErrorKind::WriteFailure, "output"))
}

/// The fields a whole template's `text` gives: the text read as YAML, each placeholder then
/// replaced by what it stands for (`printed`).
pub(super) fn fill_in(text: &str, printed: &Printed) -> Result<Value, TemplateError> {
    let fail = |message: String| TemplateError {
        code: RENDER,
        pointer: "/template".to_owned(),
        message,
    };
    let parsed = crate::yaml::parse_document(text).map_err(|e| {
        let shown: String = text
            .get(e.offset..)
            .unwrap_or_default()
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .map(|c| match c {
                MARK_OPEN => '{',
                MARK_CLOSE => '}',
                c => c,
            })
            .collect();
        let (line, column) = line_column(text, e.offset);
        TemplateError {
            code: codes::TEMPLATE_INVALID_YAML,
            pointer: "/template".to_owned(),
            message: format!(
                "the template's own text is not YAML at line {line}, column {column} of what it rendered (`{}`, a \
                 printed value shown as `{{n}}`): {}",
                shown.trim(),
                e.message
            ),
        }
    })?;
    let mut value = parsed.value;
    let mut budget = MAX_OUTPUT;
    let mut filler = Filler {
        printed,
        budget: &mut budget,
    };
    filler
        .fill(&mut value, parsed.root.as_ref())
        .map_err(fail)?;
    Ok(value)
}

/// Line and column (1-based, in characters) of byte `offset` of `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

/// Puts printed values where their placeholders are.
struct Filler<'a> {
    printed: &'a Printed,
    /// Bytes the values may still add: what is put in counts against the output limit.
    budget: &'a mut usize,
}

impl Filler<'_> {
    fn fill(&mut self, value: &mut Value, node: Option<&crate::yaml::Node>) -> Result<(), String> {
        use crate::yaml::{NodeKind, ScalarKind};
        match value {
            Value::String(s) if s.contains(MARK_OPEN) => {
                let plain = node.is_some_and(|n| n.kind == NodeKind::Scalar(ScalarKind::Plain));
                *value = match lone_placeholder(s) {
                    Some(n) if plain => self.node(n)?,
                    _ => Value::String(self.text(s)?),
                };
            }
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    let child = node.and_then(|n| match &n.kind {
                        NodeKind::Seq { items, .. } => items.get(i),
                        _ => None,
                    });
                    self.fill(item, child)?;
                }
            }
            Value::Object(map) => {
                let keyed = map.keys().any(|k| k.contains(MARK_OPEN));
                let entries = std::mem::take(map);
                for (key, mut v) in entries {
                    self.fill(&mut v, node.and_then(|n| n.get(&key)))?;
                    let key = if keyed && key.contains(MARK_OPEN) {
                        self.text(&key)?
                    } else {
                        key
                    };
                    if map.contains_key(&key) {
                        return Err(format!(
                            "two keys read `{key}` once the printed values were put in"
                        ));
                    }
                    map.insert(key, v);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn charge(&mut self, bytes: usize) -> Result<(), String> {
        *self.budget = self.budget.checked_sub(bytes).ok_or_else(|| {
            format!("the values the template printed are larger than {MAX_OUTPUT} bytes")
        })?;
        Ok(())
    }

    /// Printed value `n` as a node: a value with its type; text the configuration vouched
    /// for (`values`, `| safe`, `| tojson`: marked safe) read as YAML, as if written there.
    fn node(&mut self, n: usize) -> Result<Value, String> {
        let v = self.entry(n)?;
        if let (true, Some(text)) = (v.is_safe(), v.as_str()) {
            self.charge(text.len())?;
            return crate::yaml::parse_value(text).map_err(|e| {
                format!(
                    "a printed value marked safe is not YAML: {} (in `{}`)",
                    e.message,
                    text.escape_debug()
                )
            });
        }
        let value = serde_json::to_value(&v).map_err(|e| e.to_string())?;
        self.charge(value_size(&value))?;
        Ok(value)
    }

    /// `s` with every placeholder replaced by the text of its value.
    fn text(&mut self, s: &str) -> Result<String, String> {
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(open) = rest.find(MARK_OPEN) {
            out.push_str(&rest[..open]);
            let after = &rest[open + MARK_OPEN.len_utf8()..];
            let close = after.find(MARK_CLOSE).ok_or_else(cut)?;
            let n = after[..close].parse::<usize>().map_err(|_| cut())?;
            let v = self.entry(n)?;
            let text = match v.kind() {
                minijinja::value::ValueKind::Map
                | minijinja::value::ValueKind::Seq
                | minijinja::value::ValueKind::Iterable => {
                    serde_json::to_string(&v).map_err(|e| e.to_string())?
                }
                _ => v.to_string(),
            };
            self.charge(text.len())?;
            out.push_str(&text);
            rest = &after[close + MARK_CLOSE.len_utf8()..];
        }
        if rest.contains(MARK_CLOSE) {
            return Err(cut());
        }
        out.push_str(rest);
        Ok(out)
    }

    fn entry(&self, n: usize) -> Result<minijinja::Value, String> {
        let v = self.printed.0.get(n).cloned().ok_or_else(cut)?;
        if !v.is_safe() && v.as_str().is_some_and(holds_placeholder) {
            return Err(
                "the text of a macro or a `set` block went through a filter that made it a plain string, its printed \
                 values in it: print it as it is".to_owned(),
            );
        }
        Ok(v)
    }
}

/// A placeholder that does not stand for a printed value: something cut one apart.
fn cut() -> String {
    "a printed value was cut apart (by a filter applied to a `set` block's or a macro's text?)"
        .to_owned()
}

/// Whether `s` holds a placeholder (a template's own text, not a value's).
fn holds_placeholder(s: &str) -> bool {
    s.split(MARK_OPEN).skip(1).any(|after| {
        after
            .split_once(MARK_CLOSE)
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// `Some(n)` when `s` is placeholder `n` and nothing else.
fn lone_placeholder(s: &str) -> Option<usize> {
    s.strip_prefix(MARK_OPEN)?
        .strip_suffix(MARK_CLOSE)?
        .parse()
        .ok()
}

/// About how many bytes `value` takes written out.
fn value_size(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len() + 2,
        Value::Array(items) => items.iter().map(value_size).sum::<usize>() + 2,
        Value::Object(m) => {
            m.iter()
                .map(|(k, v)| k.len() + 4 + value_size(v))
                .sum::<usize>()
                + 2
        }
        _ => 8,
    }
}
