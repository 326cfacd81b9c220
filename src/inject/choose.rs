//! Which sidecars an object gets: every rule's verdict on it, its own requests (a sidecar of
//! another injector's format only where that format's rules reach the object) and opt-out
//! (of what it can decline), the skips, and what a pod that runs to completion does with
//! long-running sidecars.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::error::InjectError;
use super::settings::Settings;
use crate::config::{Config, JobPolicy, RuleDef, SidecarDef};
use crate::diagnostic::codes;
use crate::json::{Fields, Pointer};
use crate::kinds::WorkloadKind;
use crate::model::{RequestList, Skips};
use crate::select::{self, Criterion, Reason, Request, RuleVerdict, Subject, Verdicts};

/// The rules' verdicts for an object whose pod template is `pod`, the sidecars it gets (or
/// why none), and warnings about its requests.
pub(super) fn choose<'c>(
    object: &Value,
    pod: &Value,
    wk: &WorkloadKind,
    namespace: &str,
    settings: &Settings<'c>,
    explain: bool,
) -> Result<Choice<'c>, InjectError> {
    let config = settings.config;
    let mut subject = subject(object, pod, wk, namespace);
    subject.namespace_labels = settings.namespace_labels.get(namespace);
    subject.namespace_selector_holds = settings.namespace_selector_holds;
    let mut verdicts = Verdicts {
        rules: config
            .rules
            .iter()
            .map(|r| verdict(config, r, &subject, explain))
            .collect(),
        policy: if explain {
            policy(config, &subject)
        } else {
            Vec::new()
        },
    };
    // A request annotation sits on the pod template, or on the workload.
    let at = |annotation: &str| {
        let key = crate::json::escape(annotation);
        let on_pod = pod
            .at_pointer("/metadata/annotations")
            .and_then(|a| a.field(annotation))
            .is_some();
        if on_pod {
            format!("{}/metadata/annotations/{key}", wk.pod_template)
        } else {
            format!("/metadata/annotations/{key}")
        }
    };
    let mut warnings = Vec::new();
    for unlisted in unlisted_requests(config, &subject) {
        let message = format!(
            "`{}` names `{}`, which no configuration defines",
            unlisted.annotation, unlisted.name
        );
        if unlisted.level == RequestList::Error {
            return Err(InjectError::new(codes::INJECT_UNKNOWN_SIDECAR, message)
                .help(format!("names defined: {}", unlisted.known))
                .at(at(&unlisted.annotation)));
        }
        warnings.push(message);
    }
    let mut notes = Notes::default();
    let selection =
        select_sidecars(config, &subject, &verdicts.rules, &mut notes).map_err(|e| {
            if e.code == codes::INJECT_UNKNOWN_SIDECAR {
                e.at(at(select::INJECT_ANNOTATION))
            } else {
                e
            }
        })?;
    warnings.append(&mut notes.warnings);
    if let Ok((chosen, _)) = &selection {
        warnings.extend(unread_annotations(chosen, &subject));
    }
    if explain {
        verdicts.policy.append(&mut notes.policy);
    }
    Ok(Choice {
        verdicts,
        selection,
        warnings,
    })
}

/// What selection says beside its result: warnings, and the policies that decided it, for
/// `explain`.
#[derive(Default)]
struct Notes {
    warnings: Vec<String>,
    policy: Vec<Criterion>,
}

impl Notes {
    /// `name`, which `rule` selects, is kept although the object opts out (`opt_out`: the
    /// annotation's value).
    fn not_declined(&mut self, rule: &RuleDef, name: &str, opt_out: &str) {
        let rule = &rule.spec.name;
        self.warnings.push(format!(
            "`{}: {opt_out:?}` does not leave out `{name}`: rule `{rule}`, read from another injector's configuration, \
                selects the object without its asking, and that injector gives an object no say",
            select::INJECT_ANNOTATION
        ));
        let actual = format!(
            "{name}: rule `{rule}`, of another injector's format, selects the object without its asking"
        );
        self.policy.push(
            Criterion::new(
                select::INJECT_ANNOTATION,
                false,
                Some(actual),
                "every sidecar left out".to_owned(),
            )
            .hint(Some("kept: that injector gives an object no say")),
        );
    }

    /// `rule` reads the pod template's annotations only, and the workload's own (a `kind`)
    /// ask for it: said once per annotation.
    fn asked_outside_the_pod(&mut self, rule: &RuleDef, kind: &str) {
        let key = rule
            .matcher
            .first_annotation()
            .unwrap_or("the request annotation");
        let warning = format!(
            "`{key}` on the {kind}'s own metadata asks for nothing: rule `{}`, read from another \
                injector's configuration, reads the pod template's annotations only, as that \
                injector's webhook sees pods; put it in the pod template's annotations",
            rule.spec.name
        );
        if !self
            .warnings
            .iter()
            .any(|w| w.starts_with(&format!("`{key}` on the")))
        {
            self.warnings.push(warning);
        }
    }

    /// `rule`, read from another injector's configuration, is asked for by the object's
    /// annotation, but its namespace keeps it out (the injector reads the pod's namespace's
    /// configuration only): said with the namespaces it wants.
    fn asked_from_another_namespace(&mut self, rule: &RuleDef, s: &Subject<'_>) {
        let Some(key) = rule.matcher.first_annotation() else {
            return;
        };
        let missed = rule
            .matcher
            .object_criteria(s)
            .into_iter()
            .find(|c| !c.matched);
        let what = wants_has(missed);
        let warning = format!(
            "`{key}` asks for `{}`, left out: read from another injector's configuration, it goes only into pods of \
                its namespace, as that injector reads the pod's namespace's configuration{what}",
            rule.spec.inject.join("`, `")
        );
        if !self.warnings.contains(&warning) {
            self.warnings.push(warning);
        }
    }

    /// `name` is left out: `rule`, which injects into the object, replaces it.
    fn replaced(&mut self, name: &str, rule: &str) {
        self.policy.push(
            Criterion::new(
                "replaces",
                false,
                Some(format!("{name} (rule `{rule}` replaces it)")),
                "no sidecar an injecting rule replaces".to_owned(),
            )
            .hint(Some("left out")),
        );
    }

    /// `name`, which the object requests, is left out: it was read from another injector's
    /// format, and no rule injecting it reaches the object (`why`).
    fn out_of_reach(&mut self, name: &str, why: &str) {
        self.warnings.push(format!(
            "`{}` asks for `{name}`, left out: a sidecar of another injector's configuration goes only where its rules \
                select the object, and {why}",
            select::INJECT_ANNOTATION
        ));
        let expected =
            "sidecars of other injectors' formats only where their rules select the object";
        self.policy.push(
            Criterion::new(
                select::INJECT_ANNOTATION,
                false,
                Some(format!("{name}: {why}")),
                expected.to_owned(),
            )
            .hint(Some("requested, left out")),
        );
    }
}

/// The warnings for annotations of the subject that the chosen sidecars' formats would read
/// into them, left unread (the configuration's `formats` does not turn that on).
fn unread_annotations(chosen: &[Chosen<'_>], s: &Subject<'_>) -> Vec<String> {
    if chosen.iter().all(|c| c.def.unread.is_empty()) {
        return Vec::new();
    }
    let annotations = s.annotation_keys();
    let mut out = Vec::new();
    for c in chosen {
        for unread in &c.def.unread {
            let keys: Vec<String> = annotations
                .iter()
                .filter(|k| unread.keys.holds(k))
                .map(|k| format!("`{k}`"))
                .collect();
            if keys.is_empty() {
                continue;
            }
            out.push(format!(
                "{} not read: {} of sidecar `{}`'s containers, which lets a manifest change the sidecar; `{}: true` in \
                    a native configuration turns that on",
                keys.join(", "),
                unread.effect,
                c.def.spec.name,
                unread.flag
            ));
        }
    }
    out
}

/// One rule's verdict on the subject; with `explain`, its name, every criterion and the skip
/// that keeps it out when one does.
fn verdict(config: &Config, rule: &RuleDef, s: &Subject<'_>, explain: bool) -> RuleVerdict {
    if !explain {
        let miss = rule.matcher.check(s);
        return RuleVerdict {
            rule: String::new(),
            matched: miss.is_none(),
            reason: miss.map(|m| m.code()),
            reasons: Vec::new(),
            criteria: Vec::new(),
        };
    }
    let (misses, mut criteria) = rule.matcher.criteria(s);
    // The defaults' skips are the object's policy; a rule's own are its criteria.
    if misses.is_empty()
        && rule.spec.skips.is_some()
        && let Some(skip) = rule_skip(config, rule, s)
    {
        criteria.push(skip_criterion(s, skip, rule.spec.skips.as_ref()));
    }
    RuleVerdict {
        rule: rule.spec.name.clone(),
        matched: misses.is_empty(),
        reason: misses.first().map(|m| m.code()),
        reasons: misses.iter().map(|m| m.code()).collect(),
        criteria,
    }
}

/// The policies beside the rules that decide for the subject: its `kinject.dev/inject`
/// annotation, and the configuration's skips when they apply to it.
fn policy(config: &Config, s: &Subject<'_>) -> Vec<Criterion> {
    let mut out = Vec::new();
    let request = select::request(s);
    if request != Request::None {
        let value = s.annotation(select::INJECT_ANNOTATION).map(str::to_owned);
        let (ok, expected, hint) = match &request {
            Request::OptOut => (false, "anything but false", "the object opts out"),
            Request::OptIn => (true, "true", "the rules that match inject"),
            _ => (true, "sidecar names", "these are injected too"),
        };
        let fact = Criterion::new(select::INJECT_ANNOTATION, ok, value, expected.to_owned());
        out.push(fact.hint(Some(hint)));
    }
    let defaults = &config.defaults;
    if let Some(skip) = skip_reason(s, defaults.skip_host_network, &defaults.skip_namespaces) {
        out.push(skip_criterion(s, skip, None));
    }
    out
}

/// The skip that keeps the subject out, as a criterion: of the rule's own `skips`, or of the
/// configuration's `defaults`.
fn skip_criterion(s: &Subject<'_>, skip: Reason, own: Option<&Skips>) -> Criterion {
    let (host_network, namespaces) = if own.is_some() {
        (
            "the rule's skips.hostNetwork",
            "the rule's skips.namespaces",
        )
    } else {
        ("defaults.skipHostNetwork", "defaults.skipNamespaces")
    };
    match skip {
        Reason::HostNetwork => Criterion::new(
            "skipHostNetwork",
            false,
            Some("hostNetwork: true".to_owned()),
            format!("a pod not on the host network ({host_network})"),
        ),
        Reason::AlreadyInjected => {
            let (key, value) = own.and_then(|o| injected_by(s, o)).unwrap_or_default();
            Criterion::new(
                "skips.injected",
                false,
                Some(format!("{key}: {value}")),
                "a pod not injected already (the rule's skips.injected)".to_owned(),
            )
        }
        _ => Criterion::new(
            "skipNamespaces",
            false,
            Some(s.namespace.to_owned()),
            format!("a namespace not skipped ({namespaces})"),
        ),
    }
}

/// A name a request list (`requestList`) asks for that no rule lists.
struct Unlisted {
    annotation: String,
    name: String,
    level: RequestList,
    /// The names the rules list, for the message's help.
    known: String,
}

/// The names the object's request-list annotations ask for that no rule saying so lists,
/// among the rules that would take the object were it named (so a pod that opts out, or a
/// namespace the rules do not serve, is not asked about). `error` when one of those rules
/// says so.
fn unlisted_requests(config: &Config, s: &Subject<'_>) -> Vec<Unlisted> {
    let mut out = Vec::new();
    let request_rules: Vec<&RuleDef> = config
        .rules
        .iter()
        .filter(|r| r.spec.request_list.is_some())
        .collect();
    let mut annotations: Vec<&str> = Vec::new();
    for rule in &request_rules {
        for (key, _) in rule.matcher.annotation_lists() {
            if !annotations.contains(&key.as_str()) {
                annotations.push(key);
            }
        }
    }
    for annotation in annotations {
        let Some(value) = s.annotation(annotation) else {
            continue;
        };
        let in_scope: Vec<&RuleDef> = request_rules
            .iter()
            .copied()
            .filter(|r| {
                r.matcher
                    .annotation_lists()
                    .iter()
                    .any(|(k, _)| k == annotation)
            })
            .filter(|r| r.matcher.check_but_lists(s).is_none() && rule_skip(config, r, s).is_none())
            .collect();
        if in_scope.is_empty() {
            continue;
        }
        let listed: Vec<&str> = in_scope
            .iter()
            .flat_map(|r| r.matcher.annotation_lists())
            .filter(|(k, _)| k == annotation)
            .map(|(_, item)| item.as_str())
            .collect();
        let level = if in_scope
            .iter()
            .any(|r| r.spec.request_list == Some(RequestList::Error))
        {
            RequestList::Error
        } else {
            RequestList::Warn
        };
        for name in select::list_items(value) {
            if !listed.contains(&name) {
                out.push(Unlisted {
                    annotation: annotation.to_owned(),
                    name: name.to_owned(),
                    level,
                    known: listed
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
        }
    }
    out
}

/// Why a pod or namespace skip keeps `rule` from the subject, if one does.
fn rule_skip(config: &Config, rule: &RuleDef, s: &Subject<'_>) -> Option<Reason> {
    match &rule.spec.skips {
        Some(own) => skip_reason(s, own.host_network, &own.namespaces)
            .or_else(|| injected_by(s, own).map(|_| Reason::AlreadyInjected)),
        None => skip_reason(
            s,
            config.defaults.skip_host_network,
            &config.defaults.skip_namespaces,
        ),
    }
}

/// `already_injected` when a rule that skips pods injected already (`skips.injected`) selects
/// the subject on everything but its annotations and skips it for that, whatever the subject
/// asks for: the injector decides so before it reads a request (tumblr checks its status
/// annotation first). Its other skips come first, as they do in tumblr.
fn injected_already(config: &Config, s: &Subject<'_>) -> Option<Reason> {
    config
        .rules
        .iter()
        .filter(|r| {
            r.spec
                .skips
                .as_ref()
                .is_some_and(|k| !k.injected.is_empty())
        })
        .filter(|r| r.matcher.check_but_annotations(s).is_none())
        .find_map(|r| rule_skip(config, r, s).filter(|k| *k == Reason::AlreadyInjected))
}

/// The annotation of `skips.injected` saying the subject was injected already, and its value.
fn injected_by<'s>(s: &'s Subject<'_>, skips: &'s Skips) -> Option<(&'s str, &'s str)> {
    skips.injected.iter().find_map(|(key, value)| {
        let found = s.annotation(key)?;
        found
            .eq_ignore_ascii_case(value)
            .then_some((key.as_str(), found))
    })
}

/// The skip for a subject on the host network (when `host_network` skips those) or in one of
/// `namespaces`.
fn skip_reason(s: &Subject<'_>, host_network: bool, namespaces: &[String]) -> Option<Reason> {
    if s.host_network && host_network {
        Some(Reason::HostNetwork)
    } else if namespaces.iter().any(|n| n == s.namespace) {
        Some(Reason::SystemNamespace)
    } else {
        None
    }
}

fn subject<'a>(
    object: &'a Value,
    pod: &'a Value,
    wk: &'a WorkloadKind,
    namespace: &'a str,
) -> Subject<'a> {
    // Borrowed, not copied: a pod's labels and annotations may hold a request's worth.
    let map = |v: Option<&'a Value>| {
        v.and_then(Value::as_object)
            .map_or_else(|| Cow::Owned(Map::new()), Cow::Borrowed)
    };
    let mut levels = vec![map(pod.at_pointer("/metadata/annotations"))];
    if wk.kind == "CronJob" {
        levels.push(map(
            object.at_pointer("/spec/jobTemplate/metadata/annotations")
        ));
    }
    if !wk.pod_template.is_empty() {
        levels.push(map(object.at_pointer("/metadata/annotations")));
    }
    let restart = pod
        .at_pointer("/spec/restartPolicy")
        .and_then(Value::as_str);
    Subject {
        kind: &wk.kind,
        name: object
            .at_pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default(),
        namespace,
        namespace_labels: None,
        namespace_selector_holds: false,
        labels: map(pod.at_pointer("/metadata/labels")),
        annotation_levels: levels,
        host_network: pod.at_pointer("/spec/hostNetwork") == Some(&Value::Bool(true)),
        runs_to_completion: wk.runs_to_completion || matches!(restart, Some("Never" | "OnFailure")),
    }
}

/// A sidecar chosen for an object.
#[derive(Clone, Copy)]
pub(super) struct Chosen<'c> {
    pub(super) def: &'c SidecarDef,
    /// Its containers become native sidecars (init containers that keep running).
    pub(super) native: bool,
    /// A whole template in a pod that runs to completion under `jobs: skip`: whether it is
    /// long-running is known once it is rendered; if it is, it is left out.
    pub(super) skip_if_long_running: bool,
}

/// The sidecars an object gets, and those a pod that runs to completion leaves out (by
/// name); or why it gets none.
pub(super) type Selection<'c> = Result<(Vec<Chosen<'c>>, Vec<String>), Reason>;

/// What `choose` decides for an object.
pub(super) struct Choice<'c> {
    /// The rules' verdicts (and, for `explain`, the policies').
    pub(super) verdicts: Verdicts,
    pub(super) selection: Selection<'c>,
    /// Warnings about its requests.
    pub(super) warnings: Vec<String>,
}

/// The sidecars to inject, each with whether it becomes native, or the reason for none. An
/// object that opts out keeps only what it cannot decline (`declinable`); what it requests
/// is added where `add_requested` says. Both say so in `notes`.
fn select_sidecars<'c>(
    config: &'c Config,
    s: &Subject<'_>,
    verdicts: &[RuleVerdict],
    notes: &mut Notes,
) -> Result<Selection<'c>, InjectError> {
    let request = select::request(s);
    let opted_out = request == Request::OptOut;
    let default_skip = skip_reason(
        s,
        config.defaults.skip_host_network,
        &config.defaults.skip_namespaces,
    );
    // The first skip that kept a matching rule (or a request) out.
    let mut skipped = None;
    let mut chosen: Vec<(&SidecarDef, JobPolicy)> = Vec::new();
    // For each of `chosen`, its place in a request list, when its rule is one's.
    let mut places: Vec<Option<usize>> = Vec::new();
    // Sidecars the rules that inject replace (`replaces`), and by which rule.
    let mut replaced: Vec<(&str, &str)> = Vec::new();
    for (rule, verdict) in config.rules.iter().zip(verdicts) {
        if !verdict.matched {
            if rule.matcher.asked_outside_the_pod(s) {
                notes.asked_outside_the_pod(rule, s.kind);
            } else if rule.converted && rule.matcher.asked_from_another_namespace(s) {
                notes.asked_from_another_namespace(rule, s);
            }
            continue;
        }
        if let Some(reason) = rule_skip(config, rule, s) {
            skipped.get_or_insert(reason);
            continue;
        }
        if opted_out && declinable(rule) {
            continue;
        }
        for name in &rule.spec.replaces {
            replaced.push((name, &rule.spec.name));
        }
        let policy = select::job_policy(rule.spec.jobs, Some(config.defaults.jobs));
        let place = rule
            .spec
            .request_list
            .and_then(|_| rule.matcher.list_position(s));
        for name in &rule.spec.inject {
            if let Some(def) = config.sidecar(name)
                && !chosen.iter().any(|(d, _)| d.spec.name == *name)
            {
                chosen.push((def, policy));
                places.push(place);
                if opted_out {
                    let value = s.annotation(select::INJECT_ANNOTATION).unwrap_or_default();
                    notes.not_declined(rule, name, value);
                }
            }
        }
    }
    if opted_out && chosen.is_empty() {
        return Ok(Err(Reason::OptedOut));
    }
    in_request_order(&mut chosen, &places);
    if let (Request::Sidecars(_), Some(reason)) = (&request, default_skip) {
        // Requests follow the run's skips.
        skipped.get_or_insert(reason);
    } else if let Request::Sidecars(names) = &request {
        add_requested(config, s, names, &mut chosen, notes)?;
    }
    leave_out_replaced(&mut chosen, &replaced, notes);
    if chosen.is_empty() {
        return Ok(Err(skipped
            .or_else(|| injected_already(config, s))
            .or(default_skip)
            .unwrap_or(Reason::NoRuleMatched)));
    }
    let (out, left_out) = place_for_pod(config, s.runs_to_completion, chosen);
    if out.is_empty() {
        return Ok(Err(Reason::JobNeedsNativeSidecar));
    }
    Ok(Ok((out, left_out)))
}

/// Leaves out of `chosen` the sidecars a rule that injects replaces (`replaced`: each with
/// that rule's name), as OpenKruise leaves out the base of a canary SidecarSet that selects
/// the pod (`sidecarset.go`, `IsCanarySidecarSet`).
fn leave_out_replaced(
    chosen: &mut Vec<(&SidecarDef, JobPolicy)>,
    replaced: &[(&str, &str)],
    notes: &mut Notes,
) {
    if replaced.is_empty() {
        return;
    }
    chosen.retain(|(def, _)| {
        let name = def.spec.name.as_str();
        let by = replaced.iter().find(|(n, _)| *n == name);
        if let Some((_, rule)) = by {
            notes.replaced(name, rule);
        }
        by.is_none()
    });
}

/// Puts the sidecars of request-list rules (those with a place) in the order their request
/// list names them, in the slots they hold; the others stay where the rules put them.
fn in_request_order<T: Copy>(chosen: &mut [T], places: &[Option<usize>]) {
    let slots: Vec<usize> = (0..chosen.len()).filter(|&i| places[i].is_some()).collect();
    let mut listed: Vec<(usize, T)> = slots
        .iter()
        .map(|&i| (places[i].unwrap_or_default(), chosen[i]))
        .collect();
    listed.sort_by_key(|(place, _)| *place);
    for (slot, (_, item)) in slots.into_iter().zip(listed) {
        chosen[slot] = item;
    }
}

/// Whether an object that opts out (`kinject.dev/inject: "false"`) declines what `rule`
/// selects: always for kinject's own rules; for a rule read from another injector's format,
/// only when it selects objects that ask for it by annotation (salesforce, tumblr, Expedia:
/// an object need not ask). A rule that selects objects without their asking (an OpenKruise
/// SidecarSet's selectors) gives them no say, as in that injector.
fn declinable(rule: &RuleDef) -> bool {
    !rule.converted || rule.matcher.asks_for_annotations()
}

/// Where a requested sidecar read from another injector's format (`def`) may go: the job
/// policy of the first rule injecting it that reaches the subject (annotations aside, its
/// skips included), or why none does.
fn reach(config: &Config, def: &SidecarDef, s: &Subject<'_>) -> Result<JobPolicy, String> {
    let name = &def.spec.name;
    let mut why = Vec::new();
    for rule in config.rules.iter().filter(|r| r.spec.inject.contains(name)) {
        let holds = rule.matcher.check_but_annotations(s).is_none();
        let skip = rule_skip(config, rule, s);
        if holds && skip.is_none() {
            return Ok(select::job_policy(
                rule.spec.jobs,
                Some(config.defaults.jobs),
            ));
        }
        let missed = rule
            .matcher
            .object_criteria(s)
            .into_iter()
            .find(|c| !c.matched)
            .or_else(|| skip.map(|skip| skip_criterion(s, skip, rule.spec.skips.as_ref())));
        let what = wants_has(missed);
        why.push(format!("rule `{}` does not{what}", rule.spec.name));
    }
    if why.is_empty() {
        Err("no rule injects it".to_owned())
    } else {
        Err(why.join("; "))
    }
}

/// What the criterion `missed` (when one did) wants and what the object has, as a warning says
/// it: ` (namespaces wants one of ops, has dev)`.
fn wants_has(missed: Option<Criterion>) -> String {
    missed.map_or_else(String::new, |c| {
        format!(
            " ({} wants {}, has {})",
            c.field,
            c.expected,
            c.actual.as_deref().unwrap_or("none")
        )
    })
}

/// The sidecars an object requests by annotation (`names`), added to `chosen` when requests
/// are allowed: kinject's own anywhere the run's skips leave, those read from another
/// injector's format only where a rule injecting them reaches the object (`reach`; else said
/// in `notes`). A name the configuration does not define is an error.
fn add_requested<'c>(
    config: &'c Config,
    s: &Subject<'_>,
    names: &[String],
    chosen: &mut Vec<(&'c SidecarDef, JobPolicy)>,
    notes: &mut Notes,
) -> Result<(), InjectError> {
    for name in names {
        let Some(def) = config.sidecar(name) else {
            let known: Vec<String> = config
                .sidecars
                .iter()
                .map(|s| format!("`{}`", s.spec.name))
                .collect();
            return Err(InjectError::new(
                codes::INJECT_UNKNOWN_SIDECAR,
                format!(
                    "`{}` requests unknown sidecar `{name}`",
                    select::INJECT_ANNOTATION
                ),
            )
            .help(format!(
                "sidecars in the configuration: {}",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            )));
        };
        if !config.defaults.allow_requests || chosen.iter().any(|(d, _)| d.spec.name == *name) {
            continue;
        }
        if !def.converted {
            chosen.push((def, config.defaults.jobs));
            continue;
        }
        match reach(config, def, s) {
            Ok(policy) => chosen.push((def, policy)),
            Err(why) => notes.out_of_reach(name, &why),
        }
    }
    Ok(())
}

/// How each chosen sidecar goes into the pod: as it is defined, or, in a pod that runs to
/// completion, as its rule's `jobs` policy says (native, left out, or left out once it
/// renders long-running containers); and the names of those left out.
fn place_for_pod<'c>(
    config: &'c Config,
    runs_to_completion: bool,
    chosen: Vec<(&'c SidecarDef, JobPolicy)>,
) -> (Vec<Chosen<'c>>, Vec<String>) {
    let mut out = Vec::new();
    let mut left_out = Vec::new();
    for (def, policy) in chosen {
        let plain = |native| Chosen {
            def,
            native,
            skip_if_long_running: false,
        };
        // A whole template may render containers: it is long-running until rendered.
        let whole = config.templates.has_whole(&def.spec.name);
        let long_running = whole
            || !def
                .definition
                .field("containers")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty);
        if runs_to_completion && long_running && !def.spec.native {
            match policy {
                JobPolicy::Skip if whole => out.push(Chosen {
                    skip_if_long_running: true,
                    ..plain(false)
                }),
                JobPolicy::Skip => left_out.push(def.spec.name.clone()),
                JobPolicy::Native => out.push(plain(true)),
                JobPolicy::Inject => out.push(plain(false)),
            }
        } else {
            out.push(plain(def.spec.native));
        }
    }
    (out, left_out)
}

#[cfg(test)]
mod tests {
    use super::in_request_order;

    /// Request-list sidecars take the order of their places, in the slots they hold; the
    /// others do not move.
    #[test]
    fn request_list_sidecars_follow_the_list_in_their_slots() {
        let mut chosen = [
            "native-a",
            "expedia-x",
            "native-b",
            "expedia-y",
            "expedia-z",
        ];
        let places = [None, Some(2), None, Some(0), Some(1)];
        in_request_order(&mut chosen, &places);
        assert_eq!(
            chosen,
            [
                "native-a",
                "expedia-y",
                "native-b",
                "expedia-z",
                "expedia-x"
            ]
        );
    }
}
