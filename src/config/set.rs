//! Values given on the command line: `--set KEY=VALUE` (a string, as Helm's `--set-string`)
//! and `--set-json KEY=JSON` (a typed value), each checked against the `values.*` paths the
//! configuration's templates read, so a typo is an error instead of a value nobody reads.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::diagnostic::{Located, codes};
use crate::template::suggest_value;

/// One `--set` or `--set-json` argument, as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Set {
    /// Whether the value is JSON (`--set-json`); else it is a string.
    pub json: bool,
    /// `KEY=VALUE`.
    pub arg: String,
}

impl Set {
    /// `--set KEY=VALUE`: the value is the string written.
    pub fn string(arg: impl Into<String>) -> Self {
        Set {
            json: false,
            arg: arg.into(),
        }
    }

    /// `--set-json KEY=JSON`: the value is read as JSON.
    pub fn json(arg: impl Into<String>) -> Self {
        Set {
            json: true,
            arg: arg.into(),
        }
    }

    fn flag(&self) -> &'static str {
        if self.json { "--set-json" } else { "--set" }
    }

    /// A diagnostic about this argument, pointing at bytes `span` of it.
    fn error(&self, span: (usize, usize), message: impl Into<String>) -> Located {
        let text: Arc<str> = Arc::from(self.arg.as_str());
        Located::new(codes::CONFIG_SET, self.flag(), &text, span, message)
    }

    /// The key's path inside `values` (a leading `values.` dropped, as templates write
    /// `values.x`), and the value.
    fn parse(&self, values: &Map<String, Value>) -> Result<(Vec<String>, Value), Box<Located>> {
        let Some((key, raw)) = self.arg.split_once('=') else {
            return Err(Box::new(
                self.error((0, self.arg.len()), "expected KEY=VALUE")
                    .help(format!("for example `{} version=1.2`", self.flag())),
            ));
        };
        let key = match key.strip_prefix("values.") {
            Some(rest) if !values.contains_key("values") => rest,
            _ => key,
        };
        let path: Vec<String> = key.split('.').map(str::to_owned).collect();
        if path.iter().any(String::is_empty) {
            return Err(Box::new(self.error(
                (0, key.len()),
                "empty key (or an empty part of a dotted key)",
            )));
        }
        let value = if self.json {
            serde_json::from_str(raw).map_err(|e| {
                    let at = self.arg.len() - raw.len();
                    Box::new(self.error((at, self.arg.len()), format!("not JSON: {e}"))
                    .help("a JSON string is quoted (`--set-json 'k=\"text\"'`); for a string, `--set k=text` is \
                           simpler"))
                })?
        } else {
            Value::String(raw.to_owned())
        };
        Ok((path, value))
    }
}

/// Applies `sets` to `values` in the order Helm does (`--set-json` first, then `--set`; each in
/// the order given). A key no template reads (`read`: the `values.*` paths templates read, as
/// dotted paths inside `values`, `""` for `values` as a whole) is an error.
pub(crate) fn apply(
    values: &mut Map<String, Value>,
    sets: &[Set],
    read: &[String],
) -> Vec<Located> {
    let defined = defined_paths(values);
    let mut errors = Vec::new();
    let ordered = sets
        .iter()
        .filter(|s| s.json)
        .chain(sets.iter().filter(|s| !s.json));
    for set in ordered {
        match set.parse(values) {
            Ok((path, value)) => match unread(set, &path, read, &defined) {
                Some(e) => errors.push(e),
                None => insert(values, &path, value),
            },
            Err(e) => errors.push(*e),
        }
    }
    errors
}

/// The error for a key that no template reads, if it is one.
fn unread(set: &Set, path: &[String], read: &[String], defined: &[String]) -> Option<Located> {
    let key = path.join(".");
    let covered = |r: &String| {
        r.is_empty()
            || *r == key
            || key.starts_with(&format!("{r}."))
            || r.starts_with(&format!("{key}."))
    };
    if read.iter().any(covered) {
        return None;
    }
    let key_len = set.arg.find('=').unwrap_or(set.arg.len());
    let e = set.error(
        (0, key_len),
        format!("no template reads `values.{key}`, so it would change nothing"),
    );
    let mut candidates: Vec<&str> = read.iter().chain(defined).map(String::as_str).collect();
    candidates.sort_unstable();
    candidates.dedup();
    // Said the way it was written: with `values.` when the key had it.
    let prefix = if set.arg.starts_with("values.") {
        "values."
    } else {
        ""
    };
    let candidates: Vec<String> = candidates.into_iter().map(str::to_owned).collect();
    let help = match suggest_value(&key, &candidates) {
        Some(h) => h.replacen('`', &format!("`{prefix}"), 1),
        None if read.is_empty() => "no template reads `values` at all".to_owned(),
        None => format!(
            "templates read: {}",
            read.iter()
                .map(|r| format!("`values.{r}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Some(e.help(help))
}

/// Every value defined in `values` that is not a mapping, dotted (`image.tag`).
fn defined_paths(values: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in values {
        match v {
            Value::Object(inner) if !inner.is_empty() => {
                out.extend(defined_paths(inner).into_iter().map(|p| format!("{k}.{p}")));
            }
            _ => out.push(k.clone()),
        }
    }
    out
}

/// Sets `path` in `values` to `value`, making the mappings on the way (replacing what is not
/// one).
fn insert(values: &mut Map<String, Value>, path: &[String], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut map = values;
    for p in parents {
        let slot = map
            .entry(p.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        if !slot.is_object() {
            *slot = Value::Object(Map::new());
        }
        let Value::Object(inner) = slot else { return };
        map = inner;
    }
    map.insert(last.clone(), value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(sets: &[Set], read: &[&str]) -> (Value, Vec<Located>) {
        let mut values = json!({"version": "2.1", "image": {"repo": "r"}})
            .as_object()
            .cloned()
            .unwrap();
        let read: Vec<String> = read.iter().map(|s| (*s).to_owned()).collect();
        let errors = apply(&mut values, sets, &read);
        (Value::Object(values), errors)
    }

    #[test]
    fn strings_stay_strings_and_json_is_typed() {
        let (v, e) = run(
            &[
                Set::string("version=3.10"),
                Set::json("image={\"repo\": \"x\", \"tag\": 3}"),
                Set::string("values.image.tag=3.0"),
            ],
            &["version", "image.repo", "image.tag"],
        );
        assert!(e.is_empty(), "{e:?}");
        // `--set-json` first, then `--set`, whatever the order given.
        assert_eq!(
            v,
            json!({"version": "3.10", "image": {"repo": "x", "tag": "3.0"}})
        );
    }

    #[test]
    fn keys_no_template_reads_are_errors_with_a_suggestion() {
        let (v, e) = run(&[Set::string("values.verison=3.0")], &["version"]);
        assert_eq!(v["version"], "2.1");
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].code, "kinject::config::set");
        assert_eq!(e[0].location, "--set:1:1");
        assert_eq!(e[0].help.as_deref(), Some("did you mean `values.version`?"));
        let e = run(&[Set::string("verison=3.0")], &["version"]).1;
        assert_eq!(e[0].help.as_deref(), Some("did you mean `version`?"));
        // A template reading `values` whole, or a parent or child of the key, reads it.
        assert!(run(&[Set::string("anything=1")], &[""]).1.is_empty());
        assert!(run(&[Set::string("image.tag=1")], &["image"]).1.is_empty());
        assert!(run(&[Set::json("image={}")], &["image.tag"]).1.is_empty());
        let none = run(&[Set::string("x=1")], &[]).1;
        assert_eq!(
            none[0].help.as_deref(),
            Some("no template reads `values` at all")
        );
    }

    #[test]
    fn malformed_arguments() {
        let e = run(
            &[
                Set::string("novalue"),
                Set::json("a=[1"),
                Set::string("a..b=1"),
            ],
            &[""],
        )
        .1;
        assert_eq!(e.len(), 3, "{e:?}");
        assert!(e.iter().any(|e| e.message.starts_with("not JSON")), "{e:?}");
    }
}
