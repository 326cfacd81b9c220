//! What `kinject serve` can decide alone, checked when it starts. An AdmissionReview carries
//! the object and the name of its namespace (`request.namespace`), not the namespace's labels;
//! and a pod a controller creates has no name when it is admitted, only `generateName`. A rule
//! that needs either is refused, at the rule, unless the webhook configuration answers for it
//! (one `namespaceSelector` every rule shares). Also what the webhook configuration is made
//! of, derived from the rules: its selectors and the resources the API server must send.
//!
//! Everything else a rule, its `skips` or the `defaults` look at is in the request: the kind,
//! the namespace's name (`namespaces`, `excludeNamespaces`, a `namespaceSelector` on
//! `kubernetes.io/metadata.name` alone, `skipNamespaces`), the pod's labels and annotations,
//! `hostNetwork`, `restartPolicy`.

use serde_json::Value;

use crate::config::{Config, RuleDef};
use crate::diagnostic::{Located, codes};
use crate::json::Fields;
use crate::kinds::{self, Resource};
use crate::select::NAMESPACE_NAME_LABEL;

/// What the webhook configuration says, derived from the rules.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Webhook {
    /// The `namespaceSelector` every rule has, unchanged (`None` when no rule needs namespace
    /// labels). The server takes it as matched (`Settings::with_namespace_selector_holding`);
    /// a pod of another namespace is not sent, whatever it requests by annotation.
    pub namespace_selector: Option<Value>,
    /// The `labelSelector` every rule has, when the API server sends nothing but pods and no
    /// pod can request sidecars by annotation; `None` otherwise (the server decides alone).
    pub object_selector: Option<Value>,
    /// What the API server must send: pods, then each kind the rules name in `match.kinds`.
    pub resources: Vec<Resource>,
    /// Namespaces nothing is injected into whatever the object (every rule skips them, and
    /// so do requests while they are allowed): the webhook need not send their objects.
    pub skip_namespaces: Vec<String>,
    /// The namespaces the rules (and requests) can inject into, as far as a selector on the
    /// namespace's name can say them.
    pub namespaces: Namespaces,
}

/// Which namespaces a configuration can inject into, as a webhook's `namespaceSelector` can
/// say them: the webhook sends no more than that (its blast radius is the rules' scope).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Namespaces {
    /// These, by name (`kubernetes.io/metadata.name In …`): every rule names its namespaces
    /// exactly, and pods cannot request sidecars elsewhere.
    Named(Vec<String>),
    /// Every namespace but the skipped ones, and why (a rule that names none, requests by
    /// annotation allowed).
    All(String),
    /// Every namespace but the skipped ones: a rule names namespaces by patterns a selector
    /// cannot say (`prod-*`); the server decides. The rule and its patterns.
    Patterns(String, Vec<String>),
}

/// The webhook configuration for `config`, or why a rule cannot be decided (each at its rule).
pub(crate) fn decide(config: &Config) -> Result<Webhook, Vec<Located>> {
    let mut refused = Vec::new();
    let namespace_selector = namespace_selector(config, &mut refused);
    for rule in config.rules.iter().filter(|r| names_pods(r)) {
        refused.push(
            undecidable(
                rule,
                "matches `names`, and it can match Pods: a pod a controller creates (a \
                 Deployment's, a Job's) has no name when it is admitted, only `generateName`",
            )
            .help(
                "select the pods by their labels (`labelSelector`), or name the kinds whose \
                 objects have names at admission (`kinds: [Deployment]`)",
            ),
        );
    }
    if !refused.is_empty() {
        return Err(refused);
    }
    let resources = resources(config);
    let object_selector = object_selector(config, &resources);
    let skip_namespaces = skip_namespaces(config);
    Ok(Webhook {
        namespace_selector,
        object_selector,
        resources,
        namespaces: namespaces(config, &skip_namespaces),
        skip_namespaces,
    })
}

/// The namespaces `config` can inject into, those every rule skips (`skipped`) left out.
fn namespaces(config: &Config, skipped: &[String]) -> Namespaces {
    if config.defaults.allow_requests {
        return Namespaces::All(
            "pods may request sidecars by annotation in any namespace \
             (`defaults.allowRequests`, on by default)"
                .to_owned(),
        );
    }
    let mut named: Vec<String> = Vec::new();
    for rule in &config.rules {
        let name = &rule.spec.name;
        let Some(names) = named_namespaces(&rule.spec.matches) else {
            return Namespaces::All(format!("rule `{name}` matches every namespace"));
        };
        let patterns: Vec<String> = names.iter().filter(|n| is_pattern(n)).cloned().collect();
        if !patterns.is_empty() {
            return Namespaces::Patterns(name.clone(), patterns);
        }
        for n in names {
            if !named.contains(&n) && !skipped.contains(&n) {
                named.push(n);
            }
        }
    }
    if named.is_empty() {
        return Namespaces::All("the rules name no namespace they can inject into".to_owned());
    }
    named.sort();
    Namespaces::Named(named)
}

/// The namespaces a rule's `match` names (`namespaces`, or a namespaceSelector on the
/// namespace's name alone, `In` it); `None` when it matches any namespace.
fn named_namespaces(m: &crate::model::Match) -> Option<Vec<String>> {
    if !m.namespaces.is_empty() {
        return Some(m.namespaces.clone());
    }
    let selector = m.namespace_selector.as_ref()?;
    let by_label = selector
        .field("matchLabels")
        .and_then(|l| l.field(NAMESPACE_NAME_LABEL))
        .and_then(Value::as_str)
        .map(|n| vec![n.to_owned()]);
    let by_expression = selector
        .field("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|e| {
            e.field("key").and_then(Value::as_str) == Some(NAMESPACE_NAME_LABEL)
                && e.field("operator").and_then(Value::as_str) == Some("In")
        })
        .and_then(|e| e.field("values").and_then(Value::as_array))
        .map(|v| {
            v.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        });
    by_label.or(by_expression)
}

/// Whether a namespace pattern of a rule is a glob rather than a name (`prod-*`, `team-?`).
fn is_pattern(pattern: &str) -> bool {
    pattern.contains(['*', '?', '[', '{'])
}

/// The namespaces every rule's skips (its own, or the defaults') and the requests' (the
/// defaults', while requests are allowed) name, those that are namespace names.
fn skip_namespaces(config: &Config) -> Vec<String> {
    let defaults = &config.defaults.skip_namespaces;
    let mut lists: Vec<&Vec<String>> = config
        .rules
        .iter()
        .map(|r| r.spec.skips.as_ref().map_or(defaults, |s| &s.namespaces))
        .collect();
    if config.defaults.allow_requests || lists.is_empty() {
        lists.push(defaults);
    }
    let valid = |n: &str| {
        n.len() <= 63
            && n.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !n.starts_with('-')
            && !n.ends_with('-')
            && !n.is_empty()
    };
    let mut out: Vec<String> = Vec::new();
    for n in lists[0] {
        if valid(n) && lists.iter().all(|l| l.contains(n)) && !out.contains(n) {
            out.push(n.clone());
        }
    }
    out
}

/// The diagnostic for a rule the server cannot decide.
fn undecidable(rule: &RuleDef, why: &str) -> Located {
    let name = &rule.spec.name;
    rule.origin.error(
        codes::SERVE_UNDECIDABLE,
        format!("kinject serve cannot decide rule `{name}`: it {why}"),
    )
}

/// The rules' one `namespaceSelector` when one needs namespace labels; the rules that need
/// them refused when the webhook configuration cannot answer for them.
fn namespace_selector(config: &Config, refused: &mut Vec<Located>) -> Option<Value> {
    let needing: Vec<&RuleDef> = config
        .rules
        .iter()
        .filter(|r| selector(r).is_some_and(needs_labels))
        .collect();
    let first = selector(needing.first()?)?;
    if config.rules.iter().any(|r| selector(r) != Some(first)) {
        for rule in needing {
            refused.push(
                undecidable(
                    rule,
                    "selects namespaces by their labels, which an AdmissionReview does not \
                     carry; the webhook configuration can filter by one namespaceSelector only \
                     when every rule has that same one",
                )
                .help(
                    "select namespaces by name (`namespaces:`, or `kubernetes.io/metadata.name` \
                     in the namespaceSelector), or give every rule the same namespaceSelector",
                ),
            );
        }
        return None;
    }
    Some(first.clone())
}

fn selector(rule: &RuleDef) -> Option<&Value> {
    rule.spec.matches.namespace_selector.as_ref()
}

/// Whether a `LabelSelector` on namespaces reads a label other than the namespace's name
/// (which the request says: `request.namespace`).
fn needs_labels(selector: &Value) -> bool {
    let label_keys = selector
        .field("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|m| m.keys().map(String::as_str));
    let expression_keys = selector
        .field("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| e.field("key").and_then(Value::as_str).unwrap_or_default());
    label_keys
        .chain(expression_keys)
        .any(|k| k != NAMESPACE_NAME_LABEL)
}

/// Whether a rule matches names and can match a Pod (its `kinds` are unset or name Pod).
fn names_pods(rule: &RuleDef) -> bool {
    let m = &rule.spec.matches;
    !m.names.is_empty() && (m.kinds.is_empty() || m.kinds.iter().any(|k| k == "Pod"))
}

/// Pods, then the kinds the rules name, once each, in the order the rules name them.
fn resources(config: &Config) -> Vec<Resource> {
    let mut out: Vec<Resource> = kinds::resource("Pod", &[]).into_iter().collect();
    let named = config.rules.iter().flat_map(|r| &r.spec.matches.kinds);
    for resource in named.filter_map(|k| kinds::resource(k, &config.kinds)) {
        if !out.contains(&resource) {
            out.push(resource);
        }
    }
    out
}

/// The `labelSelector` every rule has, as the webhook's objectSelector, when the API server
/// sends pods alone (a workload's own labels are not its pods'), and no pod may request
/// sidecars by annotation (such a pod must reach the server whatever its labels).
fn object_selector(config: &Config, resources: &[Resource]) -> Option<Value> {
    if resources.len() != 1 || config.defaults.allow_requests {
        return None;
    }
    let mut selectors = config
        .rules
        .iter()
        .map(|r| r.spec.matches.label_selector.as_ref());
    let first = selectors.next()??;
    selectors.all(|s| s == Some(first)).then(|| first.clone())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    /// A configuration of one sidecar, `defaults` (YAML lines, indented) and `rules` (each
    /// rule's `match`, as YAML lines indented under it).
    fn config(defaults: &str, rules: &[&str]) -> Config {
        let mut text =
            "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: s\n  \
            containers:\n  - {name: s, image: s}\n"
                .to_owned();
        if !defaults.is_empty() {
            text.push_str(&format!("defaults:\n{defaults}\n"));
        }
        text.push_str("rules:\n");
        for (i, m) in rules.iter().enumerate() {
            text.push_str(&format!("- name: r{i}\n  match:\n{m}\n  inject: [s]\n"));
        }
        crate::config::load_texts(&[("c.yaml".to_owned(), Arc::from(text))], &[]).expect("config")
    }

    fn refusals(config: &Config) -> Vec<(String, String)> {
        decide(config)
            .expect_err("refused")
            .into_iter()
            .map(|e| {
                assert_eq!(e.code, codes::SERVE_UNDECIDABLE);
                (e.location, e.message)
            })
            .collect()
    }

    #[test]
    fn decided_from_the_request() {
        let c = config(
            "",
            &[
                "    kinds: [Deployment, CronJob]\n    names: [web-*]\n    namespaces: [prod]",
                "    namespaceSelector:\n      matchExpressions:\n      - \
                    {key: kubernetes.io/metadata.name, operator: In, values: [a]}",
                "    labelSelector:\n      matchLabels: {tier: web}\n    annotations: {x/inject: \"true\"}",
            ],
        );
        let webhook = decide(&c).expect("decided");
        assert_eq!(webhook.namespace_selector, None);
        assert_eq!(webhook.object_selector, None);
        let resources: Vec<(&str, &str)> = webhook
            .resources
            .iter()
            .map(|r| (r.group.as_str(), r.resource.as_str()))
            .collect();
        assert_eq!(
            resources,
            [("", "pods"), ("apps", "deployments"), ("batch", "cronjobs")]
        );
    }

    #[test]
    fn one_namespace_selector_goes_to_the_webhook() {
        let selector = "    namespaceSelector:\n      matchLabels: {mesh: enabled}";
        let c = config("", &[selector, &format!("{selector}\n    kinds: [Pod]")]);
        let webhook = decide(&c).expect("decided");
        assert_eq!(
            webhook.namespace_selector,
            Some(json!({"matchLabels": {"mesh": "enabled"}}))
        );
    }

    #[test]
    fn namespace_labels_refused_when_rules_differ() {
        let c = config(
            "  allowRequests: false",
            &[
                "    namespaceSelector:\n      matchLabels: {mesh: enabled}",
                "    namespaces: [prod]",
            ],
        );
        let refused = refusals(&c);
        assert_eq!(refused.len(), 1);
        // Line 10: `- name: r0`, after the sidecar and the defaults.
        assert_eq!(refused[0].0, "c.yaml:10:3");
        assert!(refused[0].1.contains("rule `r0`"), "{}", refused[0].1);
        assert!(refused[0].1.contains("every rule has that same one"));
    }

    #[test]
    fn skipped_by_every_rule_and_request() {
        let c = config(
            "  skipNamespaces: [kube-system, legacy, Bad_Name]",
            &["    kinds: [Pod]"],
        );
        assert_eq!(
            decide(&c).expect("decided").skip_namespaces,
            ["kube-system", "legacy"]
        );
        let mut c = c;
        c.rules[0].spec.skips = Some(crate::model::Skips {
            host_network: false,
            namespaces: vec!["legacy".into()],
            ..Default::default()
        });
        assert_eq!(decide(&c).expect("decided").skip_namespaces, ["legacy"]);
    }

    #[test]
    fn names_of_pods_refused() {
        let c = config(
            "",
            &[
                "    names: [web-*]",
                "    kinds: [Pod, Deployment]\n    names: [web-*]",
                "    kinds: [Deployment]\n    names: [web-*]",
            ],
        );
        let refused = refusals(&c);
        let rules: Vec<bool> = ["r0", "r1", "r2"]
            .iter()
            .map(|r| refused.iter().any(|(_, m)| m.contains(&format!("`{r}`"))))
            .collect();
        assert_eq!(rules, [true, true, false]);
        assert!(refused[0].1.contains("generateName"));
    }

    /// The namespaces the webhook may narrow to: named by every rule with requests off; any
    /// rule without names, a pattern, or requests allowed keep every namespace.
    #[test]
    fn namespaces_the_rules_name() {
        let off = "  allowRequests: false";
        let name_selector = "    namespaceSelector:\n      matchExpressions:\n      - \
            {key: kubernetes.io/metadata.name, operator: In, values: [b, a]}";
        let named = decide(&config(off, &["    namespaces: [prod]", name_selector]));
        assert_eq!(
            named.expect("decided").namespaces,
            Namespaces::Named(vec!["a".into(), "b".into(), "prod".into()])
        );
        let patterns = decide(&config(off, &["    namespaces: [prod, prod-*]"]));
        assert_eq!(
            patterns.expect("decided").namespaces,
            Namespaces::Patterns("r0".into(), vec!["prod-*".into()])
        );
        for c in [
            config("", &["    namespaces: [prod]"]),
            config(off, &["    namespaces: [prod]", "    kinds: [Pod]"]),
        ] {
            let all = decide(&c).expect("decided").namespaces;
            assert!(matches!(all, Namespaces::All(_)), "{all:?}");
        }
        // A namespace every rule skips is not selected.
        let skipped = decide(&config(
            "  allowRequests: false\n  skipNamespaces: [prod]",
            &["    namespaces: [prod, qa]"],
        ));
        assert_eq!(
            skipped.expect("decided").namespaces,
            Namespaces::Named(vec!["qa".into()])
        );
    }

    #[test]
    fn object_selector_when_pods_alone_cannot_request() {
        let labels = "    labelSelector:\n      matchLabels: {tier: web}";
        let off = "  allowRequests: false";
        let webhook = decide(&config(off, &[labels, labels])).expect("decided");
        assert_eq!(
            webhook.object_selector,
            Some(json!({"matchLabels": {"tier": "web"}}))
        );
        // Requests allowed, selectors that differ, or workloads sent: the server decides.
        let cases = [
            config("", &[labels]),
            config(off, &[labels, "    namespaces: [a]"]),
            config(off, &[&format!("{labels}\n    kinds: [Deployment]")]),
        ];
        for c in &cases {
            assert_eq!(decide(c).expect("decided").object_selector, None);
        }
    }
}
