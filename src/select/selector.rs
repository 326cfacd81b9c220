//! Label selectors, as Kubernetes evaluates them: from a rule's `LabelSelector`
//! (`matchLabels`, `matchExpressions`) or from kubectl's `-l` syntax (`app=web,tier in (a,b)`,
//! read in `label_syntax`), one requirement at a time so that `explain` can say which held.

use serde_json::{Map, Value};

use crate::json::Fields;

/// A label selector: the AND of its requirements.
#[derive(Debug, Clone, Default)]
pub(crate) struct Selector {
    requirements: Vec<Requirement>,
}

/// One requirement of a selector on one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Requirement {
    key: String,
    op: Operator,
    values: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Operator {
    /// `matchLabels`, `key=value`, `key==value`: the label is there with that value.
    Equals,
    In,
    /// Also `key!=value`: the label is not there, or has another value.
    NotIn,
    Exists,
    DoesNotExist,
    /// `key>value` (`-l` only): the label is there and, read as a 64-bit integer, greater.
    GreaterThan,
    /// `key<value` (`-l` only): the label is there and, read as a 64-bit integer, less.
    LessThan,
}

impl Requirement {
    pub(super) fn new(key: String, op: Operator, values: Vec<String>) -> Self {
        Requirement { key, op, values }
    }

    pub(crate) fn key(&self) -> &str {
        &self.key
    }

    /// Whether only an object that has the key can meet it (what asks for something: `In`,
    /// not `NotIn`).
    pub(crate) fn needs_the_key(&self) -> bool {
        !matches!(self.op, Operator::NotIn | Operator::DoesNotExist)
    }

    /// Whether `labels` meet this requirement: the one place selectors are evaluated.
    pub(crate) fn matches(&self, labels: &Map<String, Value>) -> bool {
        let value = labels.field(&self.key).and_then(Value::as_str);
        match self.op {
            Operator::Equals => value == self.values.first().map(String::as_str),
            Operator::In => value.is_some_and(|v| self.values.iter().any(|x| x == v)),
            Operator::NotIn => value.is_none_or(|v| self.values.iter().all(|x| x != v)),
            Operator::Exists => labels.contains_key(&self.key),
            Operator::DoesNotExist => !labels.contains_key(&self.key),
            Operator::GreaterThan | Operator::LessThan => {
                // Both sides as Go's `strconv.ParseInt(s, 10, 64)` reads them (a sign, ASCII
                // digits, in range: what `i64::from_str` takes); a label that is not an
                // integer does not match.
                let integer = |s: &str| s.parse::<i64>().ok();
                let (Some(v), Some(bound)) = (
                    value.and_then(integer),
                    self.values.first().and_then(|b| integer(b)),
                ) else {
                    return false;
                };
                if self.op == Operator::GreaterThan {
                    v > bound
                } else {
                    v < bound
                }
            }
        }
    }

    /// What `labels` hold for this requirement's key, as `key=value`; `None` when missing.
    pub(crate) fn actual(&self, labels: &Map<String, Value>) -> Option<String> {
        let value = labels.field(&self.key)?;
        let text = value
            .as_str()
            .map_or_else(|| value.to_string(), str::to_owned);
        Some(format!("{}={text}", self.key))
    }
}

/// The requirement in kubectl's selector syntax (`key=value`, `key in (a,b)`, `!key`).
impl std::fmt::Display for Requirement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (key, values) = (&self.key, self.values.join(","));
        match self.op {
            Operator::Equals => write!(f, "{key}={values}"),
            Operator::NotIn if self.values.len() == 1 => write!(f, "{key}!={values}"),
            Operator::In => write!(f, "{key} in ({values})"),
            Operator::NotIn => write!(f, "{key} notin ({values})"),
            Operator::Exists => write!(f, "{key}"),
            Operator::DoesNotExist => write!(f, "!{key}"),
            Operator::GreaterThan => write!(f, "{key}>{values}"),
            Operator::LessThan => write!(f, "{key}<{values}"),
        }
    }
}

impl Selector {
    /// Parses a `LabelSelector` value; the error says what is wrong.
    pub(crate) fn parse(value: &Value) -> Result<Self, String> {
        let mut s = Selector::default();
        if let Some(labels) = value.field("matchLabels").and_then(Value::as_object) {
            for (k, v) in labels {
                let v = v
                    .as_str()
                    .ok_or_else(|| format!("matchLabels `{k}` must be a string"))?;
                s.requirements.push(Requirement {
                    key: k.clone(),
                    op: Operator::Equals,
                    values: vec![v.to_owned()],
                });
            }
        }
        for expr in value
            .field("matchExpressions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            s.requirements.push(expression(expr)?);
        }
        Ok(s)
    }

    /// The selector of `requirements`, all of which must hold (none: it selects everything).
    pub(super) fn of(requirements: Vec<Requirement>) -> Self {
        Selector { requirements }
    }

    pub(crate) fn matches(&self, labels: &Map<String, Value>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }

    pub(crate) fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }
}

/// One `matchExpressions` item.
fn expression(expr: &Value) -> Result<Requirement, String> {
    let key = expr
        .field("key")
        .and_then(Value::as_str)
        .ok_or("a matchExpression needs a `key`")?;
    let op = match expr.field("operator").and_then(Value::as_str) {
        Some("In") => Operator::In,
        Some("NotIn") => Operator::NotIn,
        Some("Exists") => Operator::Exists,
        Some("DoesNotExist") => Operator::DoesNotExist,
        other => {
            return Err(format!(
                "operator {} is not one of In, NotIn, Exists, DoesNotExist",
                other.map_or_else(|| "(missing)".to_owned(), |o| format!("`{o}`"))
            ));
        }
    };
    let values: Vec<String> = expr
        .field("values")
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    match op {
        Operator::In | Operator::NotIn if values.is_empty() => {
            return Err(format!("operator {op:?} needs `values`"));
        }
        Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
            return Err(format!("operator {op:?} takes no `values`"));
        }
        _ => {}
    }
    Ok(Requirement {
        key: key.to_owned(),
        op,
        values,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn selectors_follow_kubernetes() {
        let sel = Selector::parse(&json!({"matchExpressions": [{"key": "sidecar.me/inject", "operator": "In", "values": ["true", "True"]}]})).unwrap();
        assert!(sel.matches(&labels(json!({"sidecar.me/inject": "True"}))));
        assert!(!sel.matches(&labels(json!({}))));
        let not_in = Selector::parse(
            &json!({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["x"]}]}),
        )
        .unwrap();
        assert!(not_in.matches(&labels(json!({}))));
        assert!(
            Selector::parse(&json!({"matchExpressions": [{"key": "a", "operator": "In"}]}))
                .is_err()
        );
        assert!(
            Selector::parse(
                &json!({"matchExpressions": [{"key": "a", "operator": "Equals", "values": ["x"]}]})
            )
            .is_err()
        );
    }
}
