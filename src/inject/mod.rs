//! Injection for one object: strip what an earlier run added (from the status annotation),
//! select sidecars, render them, add them, and record what was added. The result is the
//! object as it should be; `json::patch::diff` turns it into the edit operations every output uses.

mod apply;
mod choose;
mod plan;
mod pod;
mod shape;
mod sidecar;
mod status;
mod strip;
mod trust;

use std::collections::BTreeMap;

use serde_json::{Map, Value};

pub(crate) use apply::Rendered;
pub(crate) use plan::{plan_in_text, plan_shared};
pub(crate) use sidecar::StaticRenders;
pub(crate) use status::{Record, STATUS_ANNOTATION, Status};

use crate::config::Config;
use crate::select::{Reason, Verdicts};

/// A problem injecting into one object; the caller adds where the object is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InjectError {
    /// Stable code (`kinject::inject::conflict`).
    pub code: &'static str,
    pub message: String,
    pub help: Option<String>,
    /// JSON pointer, in the object, of what the error is about (when there is one place).
    pub at: Option<String>,
}

impl InjectError {
    pub(crate) fn new(code: &'static str, message: impl Into<String>) -> Self {
        InjectError {
            code,
            message: message.into(),
            help: None,
            at: None,
        }
    }

    pub(crate) fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub(crate) fn at(mut self, pointer: impl Into<String>) -> Self {
        self.at = Some(pointer.into());
        self
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Inject,
    /// Removes every sidecar the status annotation records. A record of a sidecar the
    /// configuration does not define is refused: kinject cannot check what it added.
    Uninject,
    /// `Uninject`, removing on the word of the status annotation what the records of sidecars
    /// the configuration does not define say (`--trust-status`): only checked to be
    /// consistent.
    UninjectTrustingStatus,
}

impl Mode {
    pub fn uninjects(self) -> bool {
        matches!(self, Mode::Uninject | Mode::UninjectTrustingStatus)
    }
}

pub struct Settings<'c> {
    pub config: &'c Config,
    /// The sidecars without templates, rendered once in the run.
    pub(crate) renders: StaticRenders,
    /// Namespace of objects that name none (`--namespace`).
    pub namespace: Option<String>,
    /// Labels of namespaces, for rules' `namespaceSelector` (`with_namespace_labels`).
    pub namespace_labels: NamespaceLabels,
    pub mode: Mode,
    /// Only objects whose labels this selects are acted on (`-l/--selector`); the others
    /// are skipped as `not_selected`.
    pub(crate) selector: Option<crate::select::Selector>,
    /// Every rule's `namespaceSelector` counts as matched: the webhook configuration holds
    /// it, so the API server sends only objects of the namespaces it selects
    /// (`with_namespace_selector_holding`).
    pub(crate) namespace_selector_holds: bool,
}

/// Labels of namespaces, by namespace name.
pub(crate) type NamespaceLabels = std::collections::HashMap<String, Map<String, Value>>;

impl<'c> Settings<'c> {
    pub fn new(config: &'c Config, namespace: Option<String>, mode: Mode) -> Self {
        Settings {
            config,
            renders: StaticRenders::of(config),
            namespace,
            namespace_labels: std::collections::HashMap::new(),
            mode,
            selector: None,
            namespace_selector_holds: false,
        }
    }

    /// The settings for `kinject serve` when the webhook configuration filters by the rules'
    /// one `namespaceSelector` (`serve::decide` put it there): an AdmissionReview carries no
    /// namespace labels, and the API server sent the object because its namespace is selected.
    pub(crate) fn with_namespace_selector_holding(mut self) -> Self {
        self.namespace_selector_holds = true;
        self
    }

    /// The settings with the labels of namespaces, the one way every front-end gives them:
    /// those of the `Namespace` objects among `inputs` (looked for only when a rule selects
    /// on namespace labels), then `given` (`--namespace-labels`), which win key by key.
    pub fn with_namespace_labels<'i>(
        mut self,
        inputs: impl IntoIterator<Item = &'i crate::read::Input>,
        given: NamespaceLabels,
    ) -> Self {
        if self.config.selects_on_namespace_labels() {
            self.namespace_labels = crate::read::namespace_labels(inputs);
        }
        for (namespace, labels) in given {
            self.namespace_labels
                .entry(namespace)
                .or_default()
                .extend(labels);
        }
        self
    }
}

/// What happened to an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Sidecars were added or updated.
    Injected(Vec<String>),
    /// The object already had exactly these sidecars.
    Unchanged(Vec<String>),
    Skipped(Reason),
    /// `uninject` removed these sidecars.
    Uninjected(Vec<String>),
    /// `uninject` found nothing of kinject's.
    NotInjected,
}

impl Action {
    /// The word the report, `--report json` and KRM results give it (docs/stability.md).
    pub fn code(&self) -> &'static str {
        match self {
            Action::Injected(_) => "injected",
            Action::Unchanged(_) => "unchanged",
            Action::Skipped(_) => "skipped",
            Action::Uninjected(_) => "uninjected",
            Action::NotInjected => "not_injected",
        }
    }

    /// The sidecars it names (none for a skip).
    pub fn sidecars(&self) -> &[String] {
        match self {
            Action::Injected(n) | Action::Unchanged(n) | Action::Uninjected(n) => n,
            Action::Skipped(_) | Action::NotInjected => &[],
        }
    }

    /// Why nothing was injected, for a skip.
    pub fn reason(&self) -> Option<Reason> {
        match self {
            Action::Skipped(r) => Some(*r),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Outcome {
    pub action: Action,
    /// The object as it should be; `None` when it stays as it is.
    pub target: Option<Box<Value>>,
    /// Sidecars from an earlier run that this run removed (no longer selected).
    pub removed: Vec<String>,
    /// Sidecar containers the pod's own same-name containers override (`sameName: override`).
    pub overridden: Vec<String>,
    pub warnings: Vec<String>,
    pub verdicts: Verdicts,
    /// Nulls of `target` that were written other than empty before kinject filled them
    /// (`null`, `~`), and how, by pointer: a text editor writes them so again.
    pub null_as: BTreeMap<String, String>,
}

impl Outcome {
    fn new(action: Action) -> Self {
        Outcome {
            action,
            target: None,
            removed: Vec::new(),
            overridden: Vec::new(),
            warnings: Vec::new(),
            verdicts: Verdicts::default(),
            null_as: BTreeMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::{Mode, NamespaceLabels, Settings};
    use crate::config::load_texts;
    use crate::read::{Source, from_bytes};

    fn config(rules: &str) -> crate::config::Config {
        let text = format!(
            "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: s\n  containers:\n  - {{name: s, image: s}}\nrules:\n- name: r\n  match:\n{rules}\n  inject: [s]\n"
        );
        load_texts(&[("c.yaml".to_owned(), Arc::from(text))], &[]).expect("config")
    }

    /// With the webhook's namespaceSelector holding, a rule's namespaceSelector matches
    /// whatever labels are known; without it, nothing changes.
    #[test]
    fn namespace_selector_holding_matches_without_labels() {
        let config = config("    namespaceSelector:\n      matchLabels: {mesh: enabled}");
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "a"},
            "spec": {"containers": [{"name": "app", "image": "app"}]}});
        let plain = Settings::new(&config, None, Mode::Inject);
        let outcome = super::plan_in_text(&pod, &plain, false, &|_| None).expect("plan");
        assert_eq!(
            outcome.action,
            super::Action::Skipped(crate::select::Reason::NoRuleMatched)
        );
        let holding = Settings::new(&config, None, Mode::Inject).with_namespace_selector_holding();
        let outcome = super::plan_in_text(&pod, &holding, false, &|_| None).expect("plan");
        assert_eq!(
            outcome.action,
            super::Action::Injected(vec!["s".to_owned()])
        );
    }

    /// Every front-end gets namespace labels the same way: from the inputs' Namespace
    /// objects when a rule selects on them, then the given ones, which win key by key.
    #[test]
    fn namespace_labels_come_from_the_inputs_then_the_given_ones() {
        let input = from_bytes(
            Source::stdin(),
            b"kind: Namespace\nmetadata:\n  name: a\n  labels: {mesh: enabled, tier: web}\n",
        )
        .expect("input");
        let given: NamespaceLabels = [
            ("a".to_owned(), json!({"tier": "api"})),
            ("b".to_owned(), json!({"mesh": "enabled"})),
        ]
        .into_iter()
        .map(|(n, l)| (n, l.as_object().cloned().unwrap_or_default()))
        .collect();
        let selecting = config("    namespaceSelector:\n      matchLabels: {mesh: enabled}");
        let settings = Settings::new(&selecting, None, Mode::Inject)
            .with_namespace_labels([&input], given.clone());
        assert_eq!(
            settings.namespace_labels["a"],
            *json!({"mesh": "enabled", "tier": "api"})
                .as_object()
                .unwrap()
        );
        assert_eq!(settings.namespace_labels["b"], given["b"]);
        // No rule reads them: the inputs are not searched for Namespace objects.
        let other = config("    kinds: [Deployment]");
        let settings =
            Settings::new(&other, None, Mode::Inject).with_namespace_labels([&input], given);
        assert_eq!(
            settings.namespace_labels["a"],
            *json!({"tier": "api"}).as_object().unwrap()
        );
    }
}
