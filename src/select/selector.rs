//! Label selectors, as Kubernetes evaluates them: from a rule's `LabelSelector`
//! (`matchLabels`, `matchExpressions`) or from kubectl's `-l` syntax (`app=web,tier in (a,b)`),
//! one requirement at a time so that `explain` can say which held.

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
enum Operator {
    /// `matchLabels`, `key=value`: the label is there with that value.
    Equals,
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

impl Requirement {
    /// Whether `labels` meet this requirement: the one place selectors are evaluated.
    pub(crate) fn matches(&self, labels: &Map<String, Value>) -> bool {
        let value = labels.field(&self.key).and_then(Value::as_str);
        match self.op {
            Operator::Equals => value == self.values.first().map(String::as_str),
            Operator::In => value.is_some_and(|v| self.values.iter().any(|x| x == v)),
            Operator::NotIn => value.is_none_or(|v| self.values.iter().all(|x| x != v)),
            Operator::Exists => labels.contains_key(&self.key),
            Operator::DoesNotExist => !labels.contains_key(&self.key),
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

    /// Parses kubectl's `-l/--selector` syntax: requirements separated by commas, each
    /// `key=value` (or `==`), `key!=value`, `key in (a,b)`, `key notin (a,b)`, `key` or `!key`.
    pub(crate) fn parse_kubectl(text: &str) -> Result<Self, String> {
        let mut s = Selector::default();
        for term in top_level_terms(text)? {
            s.requirements.push(kubectl_term(term.trim())?);
        }
        if s.requirements.is_empty() {
            return Err("the selector is empty".to_owned());
        }
        Ok(s)
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

/// `text` split at the commas outside parentheses.
fn top_level_terms(text: &str) -> Result<Vec<&str>, String> {
    let (mut terms, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| format!("`{text}`: a `)` without its `(`"))?;
            }
            ',' if depth == 0 => {
                terms.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(format!("`{text}`: a `(` without its `)`"));
    }
    terms.push(&text[start..]);
    Ok(terms)
}

/// One requirement in kubectl's syntax.
fn kubectl_term(term: &str) -> Result<Requirement, String> {
    let req = |key: &str, op, values: Vec<String>| -> Result<Requirement, String> {
        let key = key.trim();
        if key.is_empty() || key.contains(char::is_whitespace) || key.contains(['=', '!', '(']) {
            return Err(format!(
                "`{term}` is not a requirement: write key=value, key!=value, `key in (a,b)`, `key notin (a,b)`, key or !key"
            ));
        }
        Ok(Requirement {
            key: key.to_owned(),
            op,
            values,
        })
    };
    if let Some(open) = term.find('(') {
        let Some(inner) = term[open + 1..].strip_suffix(')') else {
            return req("", Operator::In, Vec::new());
        };
        let values = inner.split(',').map(|v| v.trim().to_owned()).collect();
        let head = term[..open].trim_end();
        return match head.rsplit_once(char::is_whitespace) {
            Some((key, "in")) => req(key, Operator::In, values),
            Some((key, "notin")) => req(key, Operator::NotIn, values),
            _ => req("", Operator::In, Vec::new()),
        };
    }
    if let Some(key) = term.strip_prefix('!') {
        return req(key, Operator::DoesNotExist, Vec::new());
    }
    if let Some((key, value)) = term.split_once("!=") {
        return req(key, Operator::NotIn, vec![value.trim().to_owned()]);
    }
    if let Some((key, value)) = term.split_once("==").or_else(|| term.split_once('=')) {
        return req(key, Operator::Equals, vec![value.trim().to_owned()]);
    }
    req(term, Operator::Exists, Vec::new())
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

    /// kubectl's syntax gives the same requirements as the rule's, and prints back as written.
    #[test]
    fn kubectl_syntax() {
        let sel =
            Selector::parse_kubectl("app=web, tier in (a, b),env!=prod,!legacy,team").unwrap();
        let shown: Vec<String> = sel.requirements().iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            ["app=web", "tier in (a,b)", "env!=prod", "!legacy", "team"]
        );
        let ok = labels(json!({"app": "web", "tier": "b", "team": "x"}));
        assert!(sel.matches(&ok));
        let mut bad = ok.clone();
        bad.insert("env".into(), json!("prod"));
        assert!(!sel.matches(&bad));
        let notin = Selector::parse_kubectl("tier notin (a,b)").unwrap();
        assert!(notin.matches(&labels(json!({}))));
        assert!(Selector::parse_kubectl("app==web").unwrap().matches(&ok));
        for wrong in ["", "tier in (a", "tier has (a)", "=web", "a b=c", "x)"] {
            assert!(Selector::parse_kubectl(wrong).is_err(), "{wrong}");
        }
    }
}
