//! What an injection is told: the configuration, the mode, the namespace and the labels of
//! namespaces, the objects selected.

use serde_json::{Map, Value};

use super::sidecar::StaticRenders;
use crate::config::Config;

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
