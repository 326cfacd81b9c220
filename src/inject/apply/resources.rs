//! A sidecar container's resources from the app containers' (OpenKruise `resourcesPolicy`,
//! `pkg/webhook/pod/mutating/sidecarset_resources.go`): the target containers' limits and
//! requests gathered by sum or max, then each expression worked out (`calculator.rs`).

use regex::Regex;
use serde_json::{Map, Value};

use crate::calculator::{self, Expr, Val};
use crate::json::Fields;
use crate::model::{ResourcesPolicy, TargetContainersMode};
use crate::quantity::Quantity;

/// A `resourcesPolicy` ready to apply: its regular expression compiled, its expressions
/// parsed.
#[derive(Debug, Clone)]
pub(crate) struct Compiled {
    mode: TargetContainersMode,
    regex: Regex,
    /// The expressions of limits then requests, each `cpu` then `memory`, with their text.
    exprs: [[Option<(String, Expr)>; 2]; 2],
}

const RESOURCES: [&str; 2] = ["cpu", "memory"];

/// Compiles `policy`; an error says which part is wrong.
pub(crate) fn compile(policy: &ResourcesPolicy) -> Result<Compiled, String> {
    let pattern = policy
        .target_containers_name_regex
        .as_deref()
        .unwrap_or(".*");
    let regex = calculator::container_regex(pattern)
        .map_err(|e| format!("`targetContainersNameRegex` `{pattern}`: {e}"))?;
    let mut exprs: [[Option<(String, Expr)>; 2]; 2] = Default::default();
    let lists = [
        &policy.resources_expr.limits,
        &policy.resources_expr.requests,
    ];
    for (l, list) in lists.into_iter().enumerate() {
        let Some(list) = list else { continue };
        for (r, text) in [&list.cpu, &list.memory].into_iter().enumerate() {
            let Some(text) = text.as_ref().filter(|t| !t.is_empty()) else {
                continue;
            };
            let expr = calculator::parse(text).map_err(|e| format!("`{text}`: {e}"))?;
            exprs[l][r] = Some((text.clone(), expr));
        }
    }
    Ok(Compiled {
        mode: policy.target_containers_mode,
        regex,
        exprs,
    })
}

impl Compiled {
    /// The `resources` of a sidecar container: from the pod's `containers` and its native
    /// sidecars among `init_containers`, whose names `regex` matches and are none of
    /// `not_app` (the sidecars' containers, sorted). None when it sets nothing; an error when
    /// no container matches or an expression cannot be worked out, as Kruise refuses the pod
    /// then.
    pub(crate) fn resources<S: AsRef<str>>(
        &self,
        init_containers: &[Value],
        containers: &[Value],
        not_app: &[S],
    ) -> Result<Option<Value>, String> {
        let native = init_containers
            .iter()
            .filter(|c| c.field("restartPolicy").and_then(Value::as_str) == Some("Always"));
        let targets: Vec<&Value> = native
            .chain(containers)
            .filter(|c| {
                let name = c.field("name").and_then(Value::as_str).unwrap_or_default();
                let sidecar = not_app.binary_search_by(|n| n.as_ref().cmp(name)).is_ok();
                !sidecar && self.regex.is_match(name)
            })
            .collect();
        if targets.is_empty() {
            return Err(format!(
                "no container's name matches the regular expression `{}`",
                self.regex.as_str()
            ));
        }
        let mut out = Map::new();
        for (l, list) in ["limits", "requests"].into_iter().enumerate() {
            let mut values = Map::new();
            for (r, resource) in RESOURCES.into_iter().enumerate() {
                let Some((text, expr)) = &self.exprs[l][r] else {
                    continue;
                };
                let gathered = gather(&targets, list, resource, self.mode)?;
                let value = match (gathered, l) {
                    (Some(q), _) => q,
                    // No limit gathered: none set. No request: 0.
                    (None, 0) => continue,
                    (None, _) => Quantity::decimal(0),
                };
                let result = evaluate(text, expr, value)
                    .map_err(|e| format!("{list}.{resource} `{text}`: {e}"))?;
                values.insert(resource.to_owned(), Value::String(result.to_string()));
            }
            if !values.is_empty() {
                out.insert(list.to_owned(), Value::Object(values));
            }
        }
        Ok((!out.is_empty()).then_some(Value::Object(out)))
    }
}

/// The targets' `list` (`limits`, `requests`) of `resource` gathered by `mode`: None for
/// limits when a target has none (no limit), and for requests when the sum is zero or none
/// has one (aggregateResourcesBySum and …ByMax).
fn gather(
    targets: &[&Value],
    list: &str,
    resource: &str,
    mode: TargetContainersMode,
) -> Result<Option<Quantity>, String> {
    let limits = list == "limits";
    let mut gathered: Option<Quantity> = None;
    for c in targets {
        let Some(text) = c
            .field("resources")
            .and_then(|r| r.field(list))
            .and_then(|l| l.field(resource))
        else {
            if limits {
                return Ok(None);
            }
            continue;
        };
        let text = match text {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let name = c.field("name").and_then(Value::as_str).unwrap_or_default();
        let q = Quantity::parse(&text).ok_or_else(|| {
            format!("container `{name}`: {list}.{resource} `{text}` is not a quantity")
        })?;
        gathered = Some(match (gathered, mode) {
            (None, TargetContainersMode::Sum) => Quantity::decimal(0)
                .add(&q)
                .ok_or("the sum is out of range")?,
            (None, TargetContainersMode::Max) => q,
            (Some(acc), TargetContainersMode::Sum) => {
                acc.add(&q).ok_or("the sum is out of range")?
            }
            (Some(acc), TargetContainersMode::Max) => {
                let greater = q.compare(&acc) == Some(std::cmp::Ordering::Greater);
                if greater { q } else { acc }
            }
        });
    }
    // A sum of requests that is zero is not set (and reads as 0).
    Ok(gathered.filter(|q| limits || mode == TargetContainersMode::Max || !q.is_zero()))
}

/// `expr` (its `text`) worked out as evaluateResourceExpression does: its variable is
/// `memory` when the text names it, else `cpu`; a number result is thousandths of a core for
/// `cpu`, whole bytes for `memory`; a negative one is an error.
fn evaluate(text: &str, expr: &Expr, value: Quantity) -> Result<Quantity, String> {
    let variable = if names_memory(text) { "memory" } else { "cpu" };
    let result = expr.eval(variable, &Val::Quantity(value))?;
    if calculator::negative(&result) {
        return Err("the result is negative".into());
    }
    match result {
        Val::Quantity(q) => Ok(q),
        Val::Number(n) if variable == "cpu" => {
            Ok(Quantity::decimal_milli(calculator::truncated(n * 1000.0)?))
        }
        Val::Number(n) => Ok(Quantity::decimal(calculator::truncated(n)?)),
    }
}

/// Whether `text` has the word `memory` (Go's `\bmemory\b`, ASCII word boundaries).
fn names_memory(text: &str) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = text.as_bytes();
    text.match_indices("memory").any(|(at, m)| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + m.len()).copied();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(value: Value) -> Compiled {
        compile(&serde_json::from_value(value).expect("a policy")).expect("compiles")
    }

    #[test]
    fn sums_and_takes_the_largest() {
        let containers = [
            json!({"name": "app1", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}}}),
            json!({"name": "app2", "resources": {"limits": {"cpu": "2", "memory": "512Mi"}}}),
        ];
        let sum = policy(json!({"targetContainersMode": "sum", "resourcesExpr": {
            "limits": {"cpu": "cpu*50%", "memory": "memory*25%"},
            "requests": {"cpu": "cpu*50%", "memory": "max(memory, 10Mi)"}}}));
        assert_eq!(
            sum.resources::<&str>(&[], &containers, &[]),
            Ok(Some(json!({"limits": {"cpu": "1500m", "memory": "384Mi"},
                           "requests": {"cpu": "250m", "memory": "10Mi"}})))
        );
        let max = policy(json!({"targetContainersMode": "max", "resourcesExpr": {
            "limits": {"cpu": "cpu", "memory": "memory"}}}));
        assert_eq!(
            max.resources::<&str>(&[], &containers, &[]),
            Ok(Some(json!({"limits": {"cpu": "2", "memory": "1Gi"}})))
        );
    }

    #[test]
    fn a_missing_limit_is_none() {
        let containers = [
            json!({"name": "a", "resources": {"limits": {"cpu": "1"}}}),
            json!({"name": "b"}),
        ];
        let p = policy(
            json!({"targetContainersMode": "sum", "resourcesExpr": {"limits": {"cpu": "cpu"}}}),
        );
        assert_eq!(p.resources::<&str>(&[], &containers, &[]), Ok(None));
    }

    #[test]
    fn targets_by_regex_native_sidecars_not_own() {
        let inits = [
            json!({"name": "app-init", "resources": {"limits": {"cpu": "8"}}}),
            json!({"name": "app-proxy", "restartPolicy": "Always", "resources": {"limits": {"cpu": "1"}}}),
        ];
        let containers = [
            json!({"name": "app", "resources": {"limits": {"cpu": "2"}}}),
            json!({"name": "db", "resources": {"limits": {"cpu": "4"}}}),
            json!({"name": "app-sidecar", "resources": {"limits": {"cpu": "16"}}}),
        ];
        let p = policy(
            json!({"targetContainersMode": "sum", "targetContainersNameRegex": "^app",
                              "resourcesExpr": {"limits": {"cpu": "cpu"}}}),
        );
        assert_eq!(
            p.resources(&inits, &containers, &["app-sidecar"]),
            Ok(Some(json!({"limits": {"cpu": "3"}})))
        );
        let none = policy(
            json!({"targetContainersMode": "sum", "targetContainersNameRegex": "^x$",
                                 "resourcesExpr": {"limits": {"cpu": "cpu"}}}),
        );
        assert!(none.resources::<&str>(&inits, &containers, &[]).is_err());
    }

    #[test]
    fn manifest_quantities_are_checked() {
        let containers = [json!({"name": "a", "resources": {"limits": {"cpu": "1e-999999999"}}})];
        let p = policy(
            json!({"targetContainersMode": "sum", "resourcesExpr": {"limits": {"cpu": "cpu"}}}),
        );
        assert!(p.resources::<&str>(&[], &containers, &[]).is_err());
        let containers = [json!({"name": "a", "resources": {"limits": {"cpu": 2}}})];
        assert_eq!(
            p.resources::<&str>(&[], &containers, &[]),
            Ok(Some(json!({"limits": {"cpu": "2"}})))
        );
    }

    #[test]
    fn memory_is_a_word() {
        assert!(names_memory("max(memory*20%, 1Gi)"));
        assert!(!names_memory("memory_x"));
        assert!(!names_memory("cpu"));
    }
}
