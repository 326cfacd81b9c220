//! Why an object gets no sidecar (`Reason`) and why one rule did not match it (`Miss`): stable
//! codes, API that is never renamed, only added to.

use serde::Serialize;

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
    NotSelected,
    AlreadyInjected,
}

impl Reason {
    /// Every reason (docs/stable.txt lists their codes).
    pub const ALL: [Reason; 10] = [
        Reason::NotAWorkload,
        Reason::NoPodTemplate,
        Reason::NoContainers,
        Reason::OptedOut,
        Reason::HostNetwork,
        Reason::SystemNamespace,
        Reason::NoRuleMatched,
        Reason::JobNeedsNativeSidecar,
        Reason::NotSelected,
        Reason::AlreadyInjected,
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
            Reason::NotSelected => "not_selected",
            Reason::AlreadyInjected => "already_injected",
        }
    }

    /// Whether a person is shown a skip for it without `-v`: the configuration or the object's
    /// own annotation picked the object, which was then kept from its sidecars. The others
    /// (not a workload, no rule for it, a system namespace…) are most of any input and are
    /// only counted.
    pub fn shown_by_default(self) -> bool {
        matches!(self, Reason::OptedOut | Reason::JobNeedsNativeSidecar)
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
