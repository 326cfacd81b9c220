//! Selection: which sidecars an object gets, or the stable reason it gets none. Also the
//! per-rule verdicts `kinject explain` prints. The stable codes (`Reason`, `Miss`) are
//! `select/reason.rs`; the parts import each other, never this file.

mod criterion;
mod label_rules;
mod label_syntax;
mod reason;
mod selector;

pub(crate) use criterion::Criterion;
pub(crate) use criterion::Trace;
pub(crate) use label_syntax::kubectl_selector;
pub use reason::{Miss, Reason};
pub(crate) use selector::Selector;

use globset::{Glob, GlobMatcher};
use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::json::Fields;
use crate::model::{JobPolicy, Match};

/// The annotation that opts an object out (`"false"`) or requests sidecars (`"a,b"`).
pub(crate) const INJECT_ANNOTATION: &str = "kinject.dev/inject";

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
    /// `podAnnotationsOnly`: the annotations are read from the pod template only.
    pod_only: bool,
}

/// Compiles a glob, or says why it is not one (without the pattern: the caller names it).
pub(crate) fn glob(pattern: &str) -> Result<GlobMatcher, globset::ErrorKind> {
    Glob::new(pattern)
        .map(|g| g.compile_matcher())
        .map_err(|e| e.kind().clone())
}

impl Matcher {
    pub fn compile(m: &Match) -> Result<Self, (String, String)> {
        let globs = |field: &str, patterns: &[String]| {
            patterns
                .iter()
                .map(|p| glob(p).map_err(|e| (field.to_owned(), e.to_string())))
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
                    .map_err(|e| ("annotations".to_owned(), e.to_string()))
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
            pod_only: m.pod_annotations_only,
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

    /// `check` of everything but the annotations (`annotations`, `annotationLists`,
    /// `annotationSelector`): whether the rule's reach holds for the subject, whatever it asks.
    pub(crate) fn check_but_annotations(&self, s: &Subject<'_>) -> Option<Miss> {
        let mut trace = Trace::first_miss_only();
        let _ = self.walk_object(s, &mut trace);
        trace.misses.first().copied()
    }

    /// Every criterion but the annotations', as `explain` shows them.
    pub(crate) fn object_criteria(&self, s: &Subject<'_>) -> Vec<Criterion> {
        let mut trace = Trace::every_criterion();
        let _ = self.walk_object(s, &mut trace);
        trace.criteria.unwrap_or_default()
    }

    /// Whether the rule selects only objects that ask for it by annotation: one without any
    /// annotation fails its `annotations`, `annotationLists` or `annotationSelector`.
    pub(crate) fn asks_for_annotations(&self) -> bool {
        !self.annotations.is_empty()
            || !self.annotation_lists.is_empty()
            || self
                .annotation_selector
                .as_ref()
                .is_some_and(|sel| !sel.matches(&Map::new()))
    }

    /// The place of this rule's `annotationLists` item in the list the subject's annotation
    /// holds (the first key's), when it is there.
    pub(crate) fn list_position(&self, s: &Subject<'_>) -> Option<usize> {
        let (key, item) = self.annotation_lists.first()?;
        list_items(s.annotation_in(key, self.pod_only)?).position(|x| x == item)
    }

    /// The first annotation the rule reads (its request's, for a rule read from another
    /// injector's format).
    pub(crate) fn first_annotation(&self) -> Option<&str> {
        self.annotation_lists
            .first()
            .map(|(k, _)| k.as_str())
            .or_else(|| self.annotations.first().map(|(k, _)| k.as_str()))
            .or_else(|| {
                let selector = self.annotation_selector.as_ref()?;
                let asks = selector.requirements().iter().find(|r| r.needs_the_key());
                asks.map(|r| r.key())
            })
    }

    /// Whether the rule reads only the pod template's annotations and the subject misses it
    /// for that: read from the workload's own too, they would match.
    pub(crate) fn asked_outside_the_pod(&self, s: &Subject<'_>) -> bool {
        if !self.pod_only
            || s.annotation_levels
                .iter()
                .skip(1)
                .all(|level| level.is_empty())
        {
            return false;
        }
        let mut trace = Trace::first_miss_only();
        self.walk(s, true, false, &mut trace);
        trace.misses.is_empty() && self.check(s).is_some()
    }

    /// Whether the subject asks for the rule by annotation (its annotation criteria hold, read
    /// where the rule reads them) but its namespace keeps it out: a rule for another
    /// injector's ConfigMap of another namespace, which that injector's webhook never finds
    /// for the pod.
    pub(crate) fn asked_from_another_namespace(&self, s: &Subject<'_>) -> bool {
        if !self.asks_for_annotations() || self.namespaces.is_empty() {
            return false;
        }
        let mut trace = Trace::first_miss_only();
        let _ = self.walk_annotations(s, true, self.pod_only, &mut trace);
        trace.misses.is_empty() && self.check_but_annotations(s) == Some(Miss::NamespaceNotMatched)
    }

    /// The keys and items of `annotationLists`.
    pub(crate) fn annotation_lists(&self) -> &[(String, String)] {
        &self.annotation_lists
    }

    fn check_with(&self, s: &Subject<'_>, lists: bool) -> Option<Miss> {
        let mut trace = Trace::first_miss_only();
        self.walk(s, lists, self.pod_only, &mut trace);
        trace.misses.first().copied()
    }

    /// Every criterion of the rule on the subject, and the fields that did not match (`explain`).
    pub(crate) fn criteria(&self, s: &Subject<'_>) -> (Vec<Miss>, Vec<Criterion>) {
        let mut trace = Trace::every_criterion();
        self.walk(s, true, self.pod_only, &mut trace);
        (trace.misses, trace.criteria.unwrap_or_default())
    }

    /// Checks each criterion in turn, noting each in `trace` (which says when to stop): the one
    /// implementation of matching, for `inject` and `explain` alike.
    /// `pod_only`: the annotations read are the pod template's only.
    fn walk(&self, s: &Subject<'_>, lists: bool, pod_only: bool, t: &mut Trace) {
        let _ = self
            .walk_object(s, t)
            .and_then(|()| self.walk_annotations(s, lists, pod_only, t));
    }

    /// Kind, namespace, name, labels and whether the pod runs to completion.
    fn walk_object(&self, s: &Subject<'_>, t: &mut Trace) -> Option<()> {
        let namespace = (!s.namespace.is_empty()).then(|| s.namespace.to_owned());
        let no_namespace = namespace
            .is_none()
            .then_some("the object has no namespace: pass -n NAMESPACE");
        if !self.kinds.is_empty() {
            let ok = self.kinds.iter().any(|k| k == s.kind);
            let d = || Criterion::new("kinds", ok, Some(s.kind.to_owned()), one_of(&self.kinds));
            stop(t.note(Miss::KindNotMatched, ok, d))?;
        }
        if !self.namespaces.is_empty() {
            let ok = self.namespaces.iter().any(|g| g.is_match(s.namespace));
            let d = || {
                Criterion::new(
                    "namespaces",
                    ok,
                    namespace.clone(),
                    globs("one of", &self.namespaces),
                )
                .hint(no_namespace.filter(|_| !ok))
            };
            stop(t.note(Miss::NamespaceNotMatched, ok, d))?;
        }
        if !self.exclude_namespaces.is_empty() {
            let ok = !self
                .exclude_namespaces
                .iter()
                .any(|g| g.is_match(s.namespace));
            let d = || {
                let want = globs("none of", &self.exclude_namespaces);
                Criterion::new("excludeNamespaces", ok, namespace.clone(), want)
            };
            stop(t.note(Miss::NamespaceExcluded, ok, d))?;
        }
        if let Some(sel) = &self.namespace_selector
            && s.namespace_selector_holds
        {
            // The API server sent the object because the webhook's namespaceSelector (this
            // one, every rule's: `serve::decide`) selects its namespace.
            let d = || {
                let want: Vec<String> = sel.requirements().iter().map(|r| r.to_string()).collect();
                Criterion::new(
                    "namespaceSelector",
                    true,
                    Some("selected by the webhook's namespaceSelector".to_owned()),
                    want.join(","),
                )
            };
            stop(t.note(Miss::NamespaceLabelsNotMatched, true, d))?;
        } else if let Some(sel) = &self.namespace_selector {
            let labels = namespace_labels(s);
            let hint = no_namespace.or(Some(
                "namespace labels come from Namespace objects in the input and --namespace-labels",
            ));
            walk_selector(
                t,
                Miss::NamespaceLabelsNotMatched,
                "namespaceSelector",
                sel,
                &labels,
                hint,
            )?;
        }
        if !self.names.is_empty() {
            let ok = self.names.iter().any(|g| g.is_match(s.name));
            let d = || {
                Criterion::new(
                    "names",
                    ok,
                    Some(s.name.to_owned()),
                    globs("one of", &self.names),
                )
            };
            stop(t.note(Miss::NameNotMatched, ok, d))?;
        }
        if let Some(sel) = &self.selector {
            walk_selector(
                t,
                Miss::LabelsNotMatched,
                "labelSelector",
                sel,
                &s.labels,
                None,
            )?;
        }
        if let Some(want) = self.runs_to_completion {
            let ok = want == s.runs_to_completion;
            let d = || {
                let actual = Some(s.runs_to_completion.to_string());
                Criterion::new("runsToCompletion", ok, actual, want.to_string())
            };
            stop(t.note(Miss::RunsToCompletionNotMatched, ok, d))?;
        }
        Some(())
    }

    /// `annotations`, `annotationLists` (when `lists`) and `annotationSelector`, read from
    /// the pod template only when `pod_only`.
    fn walk_annotations(
        &self,
        s: &Subject<'_>,
        lists: bool,
        pod_only: bool,
        t: &mut Trace,
    ) -> Option<()> {
        let miss = Miss::AnnotationsNotMatched;
        let annotation = |k: &str| s.annotation_in(k, pod_only);
        let actual = |k: &str| annotation(k).map(|v| format!("{k}={v}"));
        for (k, g) in &self.annotations {
            let ok = annotation(k).is_some_and(|v| g.is_match(v));
            let d = || Criterion::new("annotations", ok, actual(k), format!("{k}={}", g.glob()));
            stop(t.note(miss, ok, d))?;
        }
        for (k, item) in self.annotation_lists.iter().filter(|_| lists) {
            let ok = annotation(k).is_some_and(|v| list_items(v).any(|x| x == item));
            let d = || {
                Criterion::new(
                    "annotationLists",
                    ok,
                    actual(k),
                    format!("{k} listing {item}"),
                )
            };
            stop(t.note(miss, ok, d))?;
        }
        if let Some(sel) = &self.annotation_selector {
            let read = s.annotations_read_by(sel, pod_only);
            walk_selector(t, miss, "annotationSelector", sel, &read, None)?;
        }
        Some(())
    }
}

/// `None` (stop the walk) when `done`.
fn stop(done: bool) -> Option<()> {
    (!done).then_some(())
}

/// A selector's requirements, one criterion each when recording (else the selector as one).
fn walk_selector(
    t: &mut Trace,
    miss: Miss,
    field: &'static str,
    sel: &Selector,
    labels: &Map<String, Value>,
    hint: Option<&'static str>,
) -> Option<()> {
    if t.criteria.is_none() {
        return stop(t.note(miss, sel.matches(labels), || unreachable_criterion(field)));
    }
    for r in sel.requirements() {
        let ok = r.matches(labels);
        let d = || {
            Criterion::new(field, ok, r.actual(labels), r.to_string()).hint(hint.filter(|_| !ok))
        };
        stop(t.note(miss, ok, d))?;
    }
    Some(())
}

/// A criterion never shown: `Trace::note` describes only when it records.
fn unreachable_criterion(field: &'static str) -> Criterion {
    Criterion::new(field, false, None, String::new())
}

/// `one of a, b`.
fn one_of(items: &[String]) -> String {
    format!("one of {}", items.join(", "))
}

/// Patterns after `what` (`one of prod-*, staging`).
fn globs(what: &str, patterns: &[GlobMatcher]) -> String {
    let patterns: Vec<&str> = patterns.iter().map(|g| g.glob().glob()).collect();
    format!("{what} {}", patterns.join(", "))
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
    /// A rule's `namespaceSelector` holds whatever the labels: the webhook configuration
    /// that sent the object selects its namespace with it (`kinject serve`).
    pub namespace_selector_holds: bool,
    /// Pod template labels (the object's own: a pod's may hold a request's worth).
    pub labels: Cow<'a, Map<String, Value>>,
    /// Annotations by precedence: pod template first, then any intermediate template
    /// (a CronJob's `jobTemplate`), then the workload.
    pub annotation_levels: Vec<Cow<'a, Map<String, Value>>>,
    pub host_network: bool,
    pub runs_to_completion: bool,
}

impl Subject<'_> {
    /// The annotation's value from the nearest level that has it (strings only).
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotation_in(key, false)
    }

    /// `annotation`, from the pod template's annotations only when `pod_only`.
    pub(crate) fn annotation_in(&self, key: &str, pod_only: bool) -> Option<&str> {
        self.levels(pod_only)
            .iter()
            .find_map(|m| m.field(key))
            .and_then(Value::as_str)
    }

    /// The annotation levels read: all, or the pod template's only (`pod_only`).
    fn levels(&self, pod_only: bool) -> &[Cow<'_, Map<String, Value>>] {
        let levels = &self.annotation_levels[..];
        if pod_only {
            &levels[..levels.len().min(1)]
        } else {
            levels
        }
    }

    /// The keys of every annotation, in the order of a mapping of the levels from the
    /// workload's to the pod template's.
    pub fn annotation_keys(&self) -> Vec<&str> {
        let mut seen = std::collections::HashSet::new();
        self.annotation_levels
            .iter()
            .rev()
            .flat_map(|level| level.keys())
            .map(String::as_str)
            .filter(|k| seen.insert(*k))
            .collect()
    }

    /// The annotations `selector` reads, each from the nearest level that has it (of the pod
    /// template's only, when `pod_only`).
    fn annotations_read_by(&self, selector: &Selector, pod_only: bool) -> Map<String, Value> {
        selector
            .requirements()
            .iter()
            .filter_map(|r| {
                let value = self
                    .levels(pod_only)
                    .iter()
                    .find_map(|m| m.field(r.key()))?;
                Some((r.key().to_owned(), value.clone()))
            })
            .collect()
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
    /// The first field that did not match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    /// Every field that did not match (`explain` only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<&'static str>,
    /// Every criterion, matched or not (`explain` only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub criteria: Vec<Criterion>,
}

/// Everything `explain` shows of how an object was chosen: each rule's verdict, and the
/// policies (its own annotation, the skips) that decide beside the rules.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Verdicts {
    pub rules: Vec<RuleVerdict>,
    pub policy: Vec<Criterion>,
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
            namespace_selector_holds: false,
            labels: Cow::Owned(labels.as_object().cloned().unwrap_or_default()),
            annotation_levels: vec![Cow::Owned(
                annotations.as_object().cloned().unwrap_or_default(),
            )],
            host_network: false,
            runs_to_completion: false,
        }
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
        s.annotation_levels.push(Cow::Owned(
            json!({"x/inject": "false", "x/status": "pending"})
                .as_object()
                .cloned()
                .unwrap(),
        ));
        assert_eq!(m.check(&s), None);
        s.annotation_levels[1]
            .to_mut()
            .insert("x/status".into(), json!("injected"));
        assert_eq!(m.check(&s), Some(Miss::AnnotationsNotMatched));
    }

    #[test]
    fn namespace_selector_held_by_the_webhook() {
        let m = Matcher::compile(&Match {
            namespace_selector: Some(json!({"matchLabels": {"mesh": "enabled"}})),
            ..Match::default()
        })
        .unwrap();
        let mut s = subject(json!({}), json!({}));
        assert_eq!(m.check(&s), Some(Miss::NamespaceLabelsNotMatched));
        s.namespace_selector_holds = true;
        assert_eq!(m.check(&s), None);
        let (misses, criteria) = m.criteria(&s);
        assert!(misses.is_empty());
        assert_eq!(
            criteria,
            vec![Criterion::new(
                "namespaceSelector",
                true,
                Some("selected by the webhook's namespaceSelector".to_owned()),
                "mesh=enabled".to_owned()
            )]
        );
    }

    /// Rules that select only objects asking for them by annotation (an opt-out can decline
    /// them), and rules that select objects whatever they ask (an opt-out cannot).
    #[test]
    fn rules_asking_for_annotations() {
        let asks = |m: Match| Matcher::compile(&m).unwrap().asks_for_annotations();
        let selector = |v: Value| Some(v);
        assert!(asks(Match {
            annotations: json!({"x/inject": "true"}).as_object().cloned().unwrap(),
            ..Match::default()
        }));
        assert!(asks(Match {
            annotation_lists: [("x/inject".to_owned(), "a".to_owned())].into(),
            ..Match::default()
        }));
        // salesforce: a trigger that must be present, and a status that must not be.
        assert!(asks(Match {
            annotation_selector: selector(json!({"matchExpressions": [
                {"key": "x/inject", "operator": "In", "values": ["true"]},
                {"key": "x/status", "operator": "NotIn", "values": ["injected"]},
            ]})),
            ..Match::default()
        }));
        // Only a status that must not be there: any object without annotations is selected.
        assert!(!asks(Match {
            annotation_selector: selector(json!({"matchExpressions": [
                {"key": "x/status", "operator": "NotIn", "values": ["injected"]},
            ]})),
            ..Match::default()
        }));
        // OpenKruise: labels and namespaces only.
        assert!(!asks(Match {
            label_selector: selector(json!({"matchLabels": {"app": "web"}})),
            namespace_selector: selector(json!({"matchLabels": {"team": "ops"}})),
            ..Match::default()
        }));
    }

    /// A rule's reach leaves its annotations out, and says what keeps the subject out.
    #[test]
    fn reach_leaves_annotations_out() {
        let m = Matcher::compile(&Match {
            namespaces: vec!["ops".into()],
            annotation_lists: [("x/inject".to_owned(), "a".to_owned())].into(),
            ..Match::default()
        })
        .unwrap();
        let mut s = subject(json!({}), json!({}));
        assert_eq!(m.check(&s), Some(Miss::NamespaceNotMatched));
        assert_eq!(m.check_but_annotations(&s), Some(Miss::NamespaceNotMatched));
        let missed: Vec<&str> = m
            .object_criteria(&s)
            .iter()
            .filter(|c| !c.matched)
            .map(|c| c.field)
            .collect();
        assert_eq!(missed, ["namespaces"]);
        s.namespace = "ops";
        assert_eq!(m.check(&s), Some(Miss::AnnotationsNotMatched));
        assert_eq!(m.check_but_annotations(&s), None);
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
