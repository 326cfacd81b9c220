//! Injection for one object: strip what an earlier run added (from the status annotation),
//! select sidecars, render them, add them, and record what was added. The result is the
//! object as it should be; `json::patch::diff` turns it into the edit operations every output uses.
//!
//! This file names the parts: what an injection is told is `settings.rs`, what it gives
//! `outcome.rs`, its error `error.rs`. The parts import each other, never this file.

mod apply;
mod choose;
mod error;
mod outcome;
mod plan;
mod pod;
mod settings;
mod shape;
mod sidecar;
mod status;
mod strip;
mod trust;

pub(crate) use error::InjectError;
pub(crate) use outcome::{Action, ActionKind, Outcome};
pub(crate) use plan::{plan_in_text, plan_shared};
pub(crate) use settings::NamespaceLabels;
pub use settings::{Mode, Settings};

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::{Mode, NamespaceLabels, Settings};
    use crate::config::load_texts;
    use crate::read::{Source, from_bytes};

    fn config(rules: &str) -> crate::config::Config {
        let text = format!(
            "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: s\n  containers:\n  - {{name: \
                s, image: s}}\nrules:\n- name: r\n  match:\n{rules}\n  inject: [s]\n"
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
