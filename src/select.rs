//! Selection: which sidecars an object gets, or the stable reason it gets none. Also the
//! per-rule verdicts `kinject explain` prints.

use globset::{Glob, GlobMatcher};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::json::Fields;
use crate::model::{JobPolicy, Match};

/// The annotation that opts an object out (`"false"`) or requests sidecars (`"a,b"`).
pub(crate) const INJECT_ANNOTATION: &str = "kinject.dev/inject";

/// Why an object gets no sidecar. The codes are API: never renamed, only added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    NotAWorkload,
    NoPodTemplate,
    NoContainers,
    OptedOut,
    HostNetwork,
    SystemNamespace,
    NoRuleMatched,
    JobNeedsNativeSidecar,
}

impl Reason {
    /// Every reason (docs/stable.txt lists their codes).
    pub const ALL: [Reason; 8] = [
        Reason::NotAWorkload,
        Reason::NoPodTemplate,
        Reason::NoContainers,
        Reason::OptedOut,
        Reason::HostNetwork,
        Reason::SystemNamespace,
        Reason::NoRuleMatched,
        Reason::JobNeedsNativeSidecar,
    ];

    pub fn code(self) -> &'static str {
        match self {
            Reason::NotAWorkload => "not_a_workload",
            Reason::NoPodTemplate => "no_pod_template",
            Reason::NoContainers => "no_containers",
            Reason::OptedOut => "opted_out",
            Reason::HostNetwork => "host_network",
            Reason::SystemNamespace => "system_namespace",
            Reason::NoRuleMatched => "no_rule_matched",
            Reason::JobNeedsNativeSidecar => "job_needs_native_sidecar",
        }
    }
}

/// Why one rule did not match. Codes are API too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Miss {
    KindNotMatched,
    NamespaceNotMatched,
    NamespaceExcluded,
    NamespaceLabelsNotMatched,
    NameNotMatched,
    LabelsNotMatched,
    AnnotationsNotMatched,
    RunsToCompletionNotMatched,
}

impl Miss {
    /// Every miss (docs/stable.txt lists their codes).
    pub const ALL: [Miss; 8] = [
        Miss::KindNotMatched,
        Miss::NamespaceNotMatched,
        Miss::NamespaceExcluded,
        Miss::NamespaceLabelsNotMatched,
        Miss::NameNotMatched,
        Miss::LabelsNotMatched,
        Miss::AnnotationsNotMatched,
        Miss::RunsToCompletionNotMatched,
    ];

    pub fn code(self) -> &'static str {
        match self {
            Miss::KindNotMatched => "kind_not_matched",
            Miss::NamespaceNotMatched => "namespace_not_matched",
            Miss::NamespaceExcluded => "namespace_excluded",
            Miss::NamespaceLabelsNotMatched => "namespace_labels_not_matched",
            Miss::NameNotMatched => "name_not_matched",
            Miss::LabelsNotMatched => "labels_not_matched",
            Miss::AnnotationsNotMatched => "annotations_not_matched",
            Miss::RunsToCompletionNotMatched => "runs_to_completion_not_matched",
        }
    }
}

/// A label selector (`matchLabels` and `matchExpressions`), as Kubernetes evaluates it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Selector {
    labels: Vec<(String, String)>,
    expressions: Vec<(String, Operator, Vec<String>)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
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
                s.labels.push((k.clone(), v.to_owned()));
            }
        }
        for expr in value
            .field("matchExpressions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
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
            s.expressions.push((key.to_owned(), op, values));
        }
        Ok(s)
    }

    pub(crate) fn matches(&self, labels: &Map<String, Value>) -> bool {
        let get = |k: &str| labels.field(k).and_then(Value::as_str);
        self.labels.iter().all(|(k, v)| get(k) == Some(v.as_str()))
            && self.expressions.iter().all(|(k, op, values)| match op {
                Operator::In => get(k).is_some_and(|v| values.iter().any(|x| x == v)),
                Operator::NotIn => get(k).is_none_or(|v| values.iter().all(|x| x != v)),
                Operator::Exists => labels.contains_key(k),
                Operator::DoesNotExist => !labels.contains_key(k),
            })
    }
}

/// A rule's `match`, compiled.
#[derive(Debug, Clone, Default)]
pub struct Matcher {
    kinds: Vec<String>,
    namespaces: Vec<GlobMatcher>,
    exclude_namespaces: Vec<GlobMatcher>,
    names: Vec<GlobMatcher>,
    selector: Option<Selector>,
    namespace_selector: Option<Selector>,
    annotations: Vec<(String, GlobMatcher)>,
    annotation_lists: Vec<(String, String)>,
    annotation_selector: Option<Selector>,
    runs_to_completion: Option<bool>,
}

/// Compiles a glob, or says why it is not one.
pub(crate) fn glob(pattern: &str) -> Result<GlobMatcher, String> {
    Glob::new(pattern)
        .map(|g| g.compile_matcher())
        .map_err(|e| e.kind().to_string())
}

impl Matcher {
    pub fn compile(m: &Match) -> Result<Self, (String, String)> {
        let globs = |field: &str, patterns: &[String]| {
            patterns
                .iter()
                .map(|p| glob(p).map_err(|e| (field.to_owned(), e)))
                .collect::<Result<Vec<_>, _>>()
        };
        let selector = match &m.label_selector {
            Some(v) => Some(Selector::parse(v).map_err(|e| ("labelSelector".to_owned(), e))?),
            None => None,
        };
        let namespace_selector = match &m.namespace_selector {
            Some(v) => Some(Selector::parse(v).map_err(|e| ("namespaceSelector".to_owned(), e))?),
            None => None,
        };
        let annotation_selector = match &m.annotation_selector {
            Some(v) => Some(Selector::parse(v).map_err(|e| ("annotationSelector".to_owned(), e))?),
            None => None,
        };
        let annotations = m
            .annotations
            .iter()
            .map(|(k, v)| {
                let pattern = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                glob(&pattern)
                    .map(|g| (k.clone(), g))
                    .map_err(|e| ("annotations".to_owned(), e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Matcher {
            kinds: m.kinds.clone(),
            namespaces: globs("namespaces", &m.namespaces)?,
            exclude_namespaces: globs("excludeNamespaces", &m.exclude_namespaces)?,
            names: globs("names", &m.names)?,
            selector,
            namespace_selector,
            annotations,
            annotation_lists: m
                .annotation_lists
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            annotation_selector,
            runs_to_completion: m.runs_to_completion,
        })
    }

    /// `None` when the subject matches, else the first field that does not.
    pub fn check(&self, s: &Subject<'_>) -> Option<Miss> {
        self.check_with(s, true)
    }

    /// `check`, but for `annotationLists`: whether the subject is one the rule would take if
    /// its request annotation named it.
    pub(crate) fn check_but_lists(&self, s: &Subject<'_>) -> Option<Miss> {
        self.check_with(s, false)
    }

    /// The place of this rule's `annotationLists` item in the list the subject's annotation
    /// holds (the first key's), when it is there.
    pub(crate) fn list_position(&self, s: &Subject<'_>) -> Option<usize> {
        let (key, item) = self.annotation_lists.first()?;
        list_items(s.annotation(key)?).position(|x| x == item)
    }

    /// The keys and items of `annotationLists`.
    pub(crate) fn annotation_lists(&self) -> &[(String, String)] {
        &self.annotation_lists
    }

    fn check_with(&self, s: &Subject<'_>, lists: bool) -> Option<Miss> {
        if !self.kinds.is_empty() && !self.kinds.iter().any(|k| k == s.kind) {
            return Some(Miss::KindNotMatched);
        }
        if !self.namespaces.is_empty() && !self.namespaces.iter().any(|g| g.is_match(s.namespace)) {
            return Some(Miss::NamespaceNotMatched);
        }
        if self
            .exclude_namespaces
            .iter()
            .any(|g| g.is_match(s.namespace))
        {
            return Some(Miss::NamespaceExcluded);
        }
        if let Some(sel) = &self.namespace_selector
            && !sel.matches(&namespace_labels(s))
        {
            return Some(Miss::NamespaceLabelsNotMatched);
        }
        if !self.names.is_empty() && !self.names.iter().any(|g| g.is_match(s.name)) {
            return Some(Miss::NameNotMatched);
        }
        if let Some(sel) = &self.selector
            && !sel.matches(&s.labels)
        {
            return Some(Miss::LabelsNotMatched);
        }
        if self
            .runs_to_completion
            .is_some_and(|want| want != s.runs_to_completion)
        {
            return Some(Miss::RunsToCompletionNotMatched);
        }
        let annotations_match = self
            .annotations
            .iter()
            .all(|(k, g)| s.annotation(k).is_some_and(|v| g.is_match(v)));
        let lists_match = !lists
            || self.annotation_lists.iter().all(|(k, item)| {
                s.annotation(k)
                    .is_some_and(|v| list_items(v).any(|x| x == item))
            });
        let selector_match = self
            .annotation_selector
            .as_ref()
            .is_none_or(|sel| sel.matches(&s.annotations()));
        if !annotations_match || !lists_match || !selector_match {
            return Some(Miss::AnnotationsNotMatched);
        }
        None
    }
}

/// The items of a comma-separated list annotation, spaces trimmed (empty ones left out).
pub(crate) fn list_items(value: &str) -> impl Iterator<Item = &str> {
    value.split(',').map(str::trim).filter(|x| !x.is_empty())
}

/// What selection looks at in an object.
#[derive(Debug, Clone)]
pub struct Subject<'a> {
    pub kind: &'a str,
    pub name: &'a str,
    pub namespace: &'a str,
    /// Labels of the namespace, when known.
    pub namespace_labels: Option<&'a Map<String, Value>>,
    /// Pod template labels.
    pub labels: Map<String, Value>,
    /// Annotations by precedence: pod template first, then any intermediate template
    /// (a CronJob's `jobTemplate`), then the workload.
    pub annotation_levels: Vec<Map<String, Value>>,
    pub host_network: bool,
    pub runs_to_completion: bool,
}

impl Subject<'_> {
    /// The annotation's value from the nearest level that has it (strings only).
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotation_levels
            .iter()
            .find_map(|m| m.field(key))
            .and_then(Value::as_str)
    }

    /// Every annotation, each from the nearest level that has it.
    pub fn annotations(&self) -> Map<String, Value> {
        let mut all = Map::new();
        for level in self.annotation_levels.iter().rev() {
            for (k, v) in level {
                all.insert(k.clone(), v.clone());
            }
        }
        all
    }
}

/// The label the API server sets on every namespace, to its name; it cannot be changed.
pub(crate) const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// The labels of the subject's namespace as the cluster has them: those known (from a
/// Namespace object or `--namespace-labels`), and its name label, which the API server sets
/// whatever was written (unknown for an object that names no namespace).
fn namespace_labels<'a>(s: &Subject<'a>) -> std::borrow::Cow<'a, Map<String, Value>> {
    let mut labels = match s.namespace_labels {
        Some(known) => std::borrow::Cow::Borrowed(known),
        None => std::borrow::Cow::Owned(Map::new()),
    };
    let name = Value::String(s.namespace.to_owned());
    if !s.namespace.is_empty() && labels.get(NAMESPACE_NAME_LABEL) != Some(&name) {
        labels
            .to_mut()
            .insert(NAMESPACE_NAME_LABEL.to_owned(), name);
    }
    labels
}

/// Per-rule verdict for `explain`.
#[derive(Debug, Clone, Serialize)]
pub struct RuleVerdict {
    pub rule: String,
    pub matched: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
}

/// What the `kinject.dev/inject` annotation says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Request {
    None,
    OptOut,
    OptIn,
    Sidecars(Vec<String>),
}

pub(crate) fn request(subject: &Subject<'_>) -> Request {
    match subject.annotation(INJECT_ANNOTATION).map(str::trim) {
        None => Request::None,
        Some(v)
            if ["false", "disabled", "no", "off"].contains(&v.to_ascii_lowercase().as_str()) =>
        {
            Request::OptOut
        }
        Some(v)
            if ["true", "enabled", "yes", "on", ""].contains(&v.to_ascii_lowercase().as_str()) =>
        {
            Request::OptIn
        }
        Some(v) => Request::Sidecars(
            v.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
        ),
    }
}

/// Jobs policy to apply when `policy` is unset.
pub(crate) fn job_policy(rule: Option<JobPolicy>, default: Option<JobPolicy>) -> JobPolicy {
    rule.or(default).unwrap_or(JobPolicy::Skip)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn subject(labels: Value, annotations: Value) -> Subject<'static> {
        Subject {
            kind: "Deployment",
            name: "web",
            namespace: "prod",
            namespace_labels: None,
            labels: labels.as_object().cloned().unwrap_or_default(),
            annotation_levels: vec![annotations.as_object().cloned().unwrap_or_default()],
            host_network: false,
            runs_to_completion: false,
        }
    }

    #[test]
    fn selectors_follow_kubernetes() {
        let sel = Selector::parse(&json!({"matchExpressions": [{"key": "sidecar.me/inject", "operator": "In", "values": ["true", "True"]}]})).unwrap();
        assert!(sel.matches(json!({"sidecar.me/inject": "True"}).as_object().unwrap()));
        assert!(!sel.matches(json!({}).as_object().unwrap()));
        let not_in = Selector::parse(
            &json!({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["x"]}]}),
        )
        .unwrap();
        assert!(not_in.matches(json!({}).as_object().unwrap()));
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

    #[test]
    fn matcher_reports_first_miss() {
        let m = Matcher::compile(&Match {
            kinds: vec!["Deployment".into()],
            namespaces: vec!["pr*".into()],
            names: vec!["api-*".into()],
            ..Match::default()
        })
        .unwrap();
        assert_eq!(
            m.check(&subject(json!({}), json!({}))),
            Some(Miss::NameNotMatched)
        );
        let m = Matcher::compile(&Match {
            annotations: json!({"vault/inject": "true"})
                .as_object()
                .cloned()
                .unwrap(),
            ..Match::default()
        })
        .unwrap();
        assert_eq!(
            m.check(&subject(json!({}), json!({"vault/inject": "true"}))),
            None
        );
        assert_eq!(
            m.check(&subject(json!({}), json!({}))),
            Some(Miss::AnnotationsNotMatched)
        );
    }

    #[test]
    fn annotation_selector_reads_the_nearest_level() {
        let m = Matcher::compile(&Match {
            annotation_selector: Some(json!({"matchExpressions": [
                {"key": "x/status", "operator": "NotIn", "values": ["injected"]},
                {"key": "x/inject", "operator": "In", "values": ["true", "enabled"]},
            ]})),
            ..Match::default()
        })
        .unwrap();
        let mut s = subject(json!({}), json!({"x/inject": "enabled"}));
        assert_eq!(m.check(&s), None);
        // The pod template's value wins over the workload's; a key only the workload has
        // counts too.
        s.annotation_levels.push(
            json!({"x/inject": "false", "x/status": "pending"})
                .as_object()
                .cloned()
                .unwrap(),
        );
        assert_eq!(m.check(&s), None);
        s.annotation_levels[1].insert("x/status".into(), json!("injected"));
        assert_eq!(m.check(&s), Some(Miss::AnnotationsNotMatched));
    }

    #[test]
    fn inject_annotation() {
        let s = |v: &str| subject(json!({}), json!({INJECT_ANNOTATION: v}));
        assert_eq!(request(&s("false")), Request::OptOut);
        assert_eq!(request(&s("true")), Request::OptIn);
        assert_eq!(
            request(&s("a, b")),
            Request::Sidecars(vec!["a".into(), "b".into()])
        );
    }
}
