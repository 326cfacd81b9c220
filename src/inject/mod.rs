//! Injection for one object: strip what an earlier run added (from the status annotation),
//! select sidecars, render them, add them, and record what was added. The result is the
//! object as it should be; `json::patch::diff` turns it into the edit operations every output uses.

mod apply;
mod pod;
mod shape;
mod status;
mod strip;
mod trust;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

pub use apply::Rendered;
pub use status::{AppRecord, Previous, Record, STATUS_ANNOTATION, Status};

use crate::config::{Config, JobPolicy, Position, ServiceAccountPolicy, SidecarBody, SidecarDef};
use crate::json::{Fields, Pointer};
use crate::kinds::{WorkloadKind, workload_kind};
use crate::model::schema::{ViolationKind, body_schema, validate};
use crate::select::{self, Reason, Request, RuleVerdict, Subject};
use crate::template;

/// A problem injecting into one object; the caller adds where the object is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectError {
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
    /// Labels of namespaces, for rules' `namespaceSelector` (from `Namespace` objects in the
    /// input and `--namespace-labels`).
    pub namespace_labels: std::collections::HashMap<String, Map<String, Value>>,
    pub mode: Mode,
}

impl<'c> Settings<'c> {
    pub fn new(config: &'c Config, namespace: Option<String>, mode: Mode) -> Self {
        Settings {
            config,
            renders: StaticRenders::of(config),
            namespace,
            namespace_labels: std::collections::HashMap::new(),
            mode,
        }
    }
}

/// The rendering of each sidecar without templates, the same for every object: made once in a
/// run, when first needed, as a plain and as a native sidecar; by the sidecar's place in the
/// configuration. Kept beside the settings, not in the configuration, which stays plain data.
pub(crate) struct StaticRenders(Vec<StaticRender>);

#[derive(Default)]
struct StaticRender {
    plain: OnceLock<Result<Rendered, InjectError>>,
    native: OnceLock<Result<Rendered, InjectError>>,
}

impl StaticRenders {
    fn of(config: &Config) -> Self {
        StaticRenders(
            config
                .sidecars
                .iter()
                .map(|_| StaticRender::default())
                .collect(),
        )
    }

    /// `def` rendered for an object, as a plain or a native sidecar: a sidecar without
    /// templates once in the run, and lent; one with templates for this object, from its
    /// template context (`ctx`, made when first needed).
    fn render<'s>(
        &'s self,
        config: &Config,
        def: &SidecarDef,
        native: bool,
        ctx: impl FnOnce() -> &'s minijinja::Value,
    ) -> Result<Cow<'s, Rendered>, InjectError> {
        if !config.templates.is_static(&def.spec.name) {
            return render(def, config, ctx(), native).map(Cow::Owned);
        }
        let slot = &self.0[def.index];
        let made = if native { &slot.native } else { &slot.plain };
        match made.get_or_init(|| render(def, config, ctx(), native)) {
            Ok(r) => Ok(Cow::Borrowed(r)),
            Err(e) => Err(e.clone()),
        }
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
    pub verdicts: Vec<RuleVerdict>,
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
            verdicts: Vec::new(),
            null_as: BTreeMap::new(),
        }
    }
}

/// Decides and performs injection (or uninjection) for one object.
pub fn plan(object: &Value, settings: &Settings<'_>) -> Result<Outcome, InjectError> {
    plan_in_text(object, settings, false, &|_| None)
}

/// `plan` for an object read from text: `null_text` gives, for a pointer of the object, how
/// a null there is written when that is not empty (`null`, `~`), so that the status can
/// record it and `uninject` write it so again. With `explain`, the outcome keeps every
/// rule's verdict on the object (`kinject explain`).
pub fn plan_in_text(
    object: &Value,
    settings: &Settings<'_>,
    explain: bool,
    null_text: &dyn Fn(&str) -> Option<String>,
) -> Result<Outcome, InjectError> {
    let config = settings.config;
    // `uninject` needs no configuration: a pod template of an unknown kind is found by the
    // status annotation kinject wrote into it.
    let found = workload_kind(object, &config.kinds).or_else(|| {
        (settings.mode.uninjects())
            .then(|| status_holder(object, String::new()))
            .flatten()
            .map(|pod_template| WorkloadKind {
                kind: object
                    .field("kind")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                pod_template,
                runs_to_completion: false,
            })
    });
    let Some(wk) = found else {
        return Ok(Outcome::new(Action::Skipped(Reason::NotAWorkload)));
    };
    let Some(pod_in) = object
        .at_pointer(&wk.pod_template)
        .filter(|p| p.field("spec").is_some_and(Value::is_object))
    else {
        return Ok(Outcome::new(if settings.mode.uninjects() {
            Action::NotInjected
        } else {
            Action::Skipped(Reason::NoPodTemplate)
        }));
    };
    // Nothing is read or changed in a workload Kubernetes would refuse for its types.
    let containers = shape::check(object, &wk.pod_template)?;
    let namespace = object
        .at_pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| settings.namespace.clone())
        .unwrap_or_default();
    let has_status = pod_in
        .at_pointer("/metadata/annotations")
        .and_then(|a| a.field(STATUS_ANNOTATION))
        .is_some();
    // Nothing of an earlier run to take out: an object no sidecar is for stays as it is,
    // uncopied.
    let mut chosen = None;
    if !has_status {
        if settings.mode.uninjects() {
            return Ok(Outcome::new(Action::NotInjected));
        }
        if containers == shape::Containers::Absent {
            return Ok(Outcome::new(Action::Skipped(Reason::NoContainers)));
        }
        let (verdicts, selection) = choose(object, pod_in, &wk, &namespace, settings, explain)?;
        if let Err(reason) = selection {
            let mut o = Outcome::new(Action::Skipped(reason));
            if explain {
                o.verdicts = verdicts;
            }
            return Ok(o);
        }
        chosen = Some((verdicts, selection));
    }
    let mut target = object.clone();
    let pod = target
        .at_pointer_mut(&wk.pod_template)
        .ok_or_else(|| internal("pod template vanished"))?;
    let status = Status::read(pod).map_err(|message| {
        InjectError::new("kinject::inject::status", message)
            .help(format!(
                "remove the `{STATUS_ANNOTATION}` annotation if kinject did not write it"
            ))
            .at(format!(
                "{}/metadata/annotations/{}",
                wk.pod_template,
                crate::json::escape(STATUS_ANNOTATION)
            ))
    })?;
    if let Some(st) = &status {
        // The record is the manifest's word: checked before anything is done on it.
        let at = format!(
            "{}/metadata/annotations/{}",
            wk.pod_template,
            crate::json::escape(STATUS_ANNOTATION)
        );
        let ctx = std::cell::OnceCell::new();
        let ctx =
            || ctx.get_or_init(|| template::context(pod_in, object, &namespace, &config.values));
        let mut adds = |name: &str| -> Result<Option<trust::Adds>, InjectError> {
            let Some(def) = config.sidecar(name) else {
                return Ok(None);
            };
            let rendered = settings
                .renders
                .render(config, def, false, ctx)
                .ok()
                .map(|r| trust::Adds::of(&r));
            // A definition that does not render here (a value only `--set` gives) is read as
            // written: its literal names count, its templated ones match nothing.
            Ok(Some(rendered.unwrap_or_else(|| {
                trust::Adds::in_body(&def.definition, def.spec.same_name)
            })))
        };
        trust::check(pod_in, st, &mut adds, &at)?;
        if settings.mode == Mode::Uninject
            && let Some(r) = st
                .sidecars
                .iter()
                .find(|r| config.sidecar(&r.name).is_none())
        {
            return Err(InjectError::new(
                "kinject::inject::unverified_status",
                format!(
                    "the `{STATUS_ANNOTATION}` annotation says sidecar `{}` added {}, and no configuration given defines `{}`: kinject cannot check that it did",
                    r.name,
                    trust::claims(r),
                    r.name
                ),
            )
            .help(format!("give the configuration that defines `{}` (-c FILE); or, having read the annotation, `--trust-status` removes what it says on its word", r.name))
            .at(at));
        }
    }
    let previous = status
        .as_ref()
        .map(|s| s.sidecars.clone())
        .unwrap_or_default();
    let mut kept = Vec::new();
    let mut respelled = BTreeMap::new();
    if let Some(st) = &status {
        (kept, respelled) = strip::strip(pod, st, |r| {
            settings.mode.uninjects() || config.sidecar(&r.name).is_some()
        });
    }
    let stripped: Vec<String> = previous
        .iter()
        .filter(|r| !kept.iter().any(|k| k.name == r.name))
        .map(|r| r.name.clone())
        .collect();
    // The pod template without sidecars of earlier runs: the object's own when there were
    // none (nothing was taken out).
    let pod0 = if status.is_some() {
        Cow::Owned(pod.clone())
    } else {
        Cow::Borrowed(pod_in)
    };
    // Only the pod template is edited: the rest of the object need not be compared.
    let changed = |target: &Value| {
        !target
            .at_pointer(&wk.pod_template)
            .is_some_and(|p| crate::json::patch::equal(p, pod_in))
    };
    if settings.mode.uninjects() {
        let mut o = Outcome::new(if stripped.is_empty() {
            Action::NotInjected
        } else {
            Action::Uninjected(stripped)
        });
        if changed(&target) {
            o.target = Some(Box::new(target));
            o.null_as = within(&wk.pod_template, respelled);
        }
        return Ok(o);
    }
    let spelling = Spelling {
        respelled: &respelled,
        before: &pod0,
        text: pod_in,
        prefix: &wk.pod_template,
        null_text,
        containers: Default::default(),
    };
    let (verdicts, selection) = match chosen {
        Some(c) => c,
        None => choose(object, &pod0, &wk, &namespace, settings, explain)?,
    };
    let outcome = match selection {
        Err(reason) => {
            write_status(pod, kept, Vec::new(), &spelling);
            Outcome::new(Action::Skipped(reason))
        }
        Ok((selected, mut left_out)) => {
            // The template context, made only when a sidecar has templates.
            let ctx = std::cell::OnceCell::new();
            let ctx =
                || ctx.get_or_init(|| template::context(&pod0, object, &namespace, &config.values));
            let mut rendered = Vec::with_capacity(selected.len());
            for c in &selected {
                let (def, native) = (c.def, c.native);
                let r = settings.renders.render(config, def, native, ctx)?;
                if c.skip_if_long_running && !r.body.containers.is_empty() {
                    left_out.push(def.spec.name.clone());
                } else {
                    rendered.push(r);
                }
            }
            if rendered.is_empty() {
                write_status(pod, kept, Vec::new(), &spelling);
                return finish(
                    Outcome::new(Action::Skipped(Reason::JobNeedsNativeSidecar)),
                    Finish {
                        stripped,
                        target,
                        changed: &changed,
                        pod_template: &wk.pod_template,
                        respelled,
                        verdicts: explain.then_some(verdicts),
                    },
                );
            }
            let mut records = apply::apply(pod, &rendered, config.defaults.sort_init_containers)
                .map_err(|mut e| {
                    e.at = e.at.map(|p| format!("{}{p}", wk.pod_template));
                    e
                })?;
            let names: Vec<String> = records.iter().map(|r| r.name.clone()).collect();
            let mut o = Outcome::new(Action::Injected(names));
            o.overridden = records
                .iter()
                .flat_map(|r| r.overrides.keys().cloned())
                .collect();
            o.warnings = drift(
                object.at_pointer(&wk.pod_template),
                pod,
                &previous,
                &records,
            );
            if containers == shape::Containers::Empty {
                // As the anchors do (a webhook is called before Kubernetes validates), but
                // said: an empty container list is more often a mistake upstream.
                o.warnings.push(
                    "the pod template had no containers: the sidecars are its only ones".to_owned(),
                );
            }
            o.warnings.extend(left_out.iter().map(|name| {
                format!("sidecar `{name}` is left out: the pod runs to completion and its containers would keep it running (the rule's `jobs: skip`; `jobs: native` makes them native sidecars)")
            }));
            note_nulls(&spelling, &mut records);
            write_status(pod, kept, records, &spelling);
            o
        }
    };
    finish(
        outcome,
        Finish {
            stripped,
            target,
            changed: &changed,
            pod_template: &wk.pod_template,
            respelled,
            verdicts: explain.then_some(verdicts),
        },
    )
}

/// What an injection run leaves to settle once its action is known.
struct Finish<'a> {
    /// Sidecars of an earlier run that were taken out.
    stripped: Vec<String>,
    /// The object as it should be.
    target: Value,
    /// Whether `target`'s pod template differs from the object's.
    changed: &'a dyn Fn(&Value) -> bool,
    pod_template: &'a str,
    respelled: BTreeMap<String, String>,
    verdicts: Option<Vec<RuleVerdict>>,
}

/// The outcome with what was removed, whether anything changed, and the verdicts.
fn finish(mut outcome: Outcome, f: Finish<'_>) -> Result<Outcome, InjectError> {
    outcome.removed = match &outcome.action {
        Action::Injected(names) => f
            .stripped
            .into_iter()
            .filter(|n| !names.contains(n))
            .collect(),
        _ => f.stripped,
    };
    if !(f.changed)(&f.target) {
        if let Action::Injected(names) = &outcome.action {
            outcome.action = Action::Unchanged(names.clone());
        }
    } else {
        outcome.target = Some(Box::new(f.target));
        outcome.null_as = within(f.pod_template, f.respelled);
    }
    if let Some(verdicts) = f.verdicts {
        outcome.verdicts = verdicts;
    }
    Ok(outcome)
}

/// The rules' verdicts for an object whose pod template is `pod`, and the sidecars it gets
/// (or why none).
fn choose<'c>(
    object: &Value,
    pod: &Value,
    wk: &WorkloadKind,
    namespace: &str,
    settings: &Settings<'c>,
    explain: bool,
) -> Result<(Vec<RuleVerdict>, Selection<'c>), InjectError> {
    let config = settings.config;
    let mut subject = subject(object, pod, wk, namespace);
    subject.namespace_labels = settings.namespace_labels.get(namespace);
    let verdicts: Vec<RuleVerdict> = config
        .rules
        .iter()
        .map(|r| {
            let miss = r.matcher.check(&subject);
            RuleVerdict {
                // Names only for `explain`: other runs keep no verdicts.
                rule: if explain {
                    r.spec.name.clone()
                } else {
                    String::new()
                },
                matched: miss.is_none(),
                reason: miss.map(|m| m.code()),
            }
        })
        .collect();
    let selection = select_sidecars(config, &subject, &verdicts).map_err(|e| {
        // The request annotation sits on the pod template, or on the workload.
        let key = crate::json::escape(select::INJECT_ANNOTATION);
        let on_pod = pod
            .at_pointer("/metadata/annotations")
            .and_then(|a| a.field(select::INJECT_ANNOTATION))
            .is_some();
        let at = if on_pod {
            format!("{}/metadata/annotations/{key}", wk.pod_template)
        } else {
            format!("/metadata/annotations/{key}")
        };
        if e.code == "kinject::inject::unknown_sidecar" {
            e.at(at)
        } else {
            e
        }
    })?;
    Ok((verdicts, selection))
}

/// Pointer of the first mapping under `value` whose annotations hold kinject's status.
fn status_holder(value: &Value, pointer: String) -> Option<String> {
    match value {
        Value::Object(m) => {
            let has_status = m
                .field("metadata")
                .and_then(|md| md.field("annotations"))
                .and_then(|a| a.field(STATUS_ANNOTATION))
                .is_some();
            if has_status && m.field("spec").is_some_and(Value::is_object) {
                return Some(pointer);
            }
            m.iter()
                .find_map(|(k, v)| status_holder(v, crate::json::push(&pointer, k)))
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| status_holder(v, crate::json::push(&pointer, &i.to_string()))),
        _ => None,
    }
}

fn internal(message: &str) -> InjectError {
    InjectError::new("kinject::inject::internal", message)
}

fn subject<'a>(
    object: &'a Value,
    pod: &Value,
    wk: &'a WorkloadKind,
    namespace: &'a str,
) -> Subject<'a> {
    let map = |v: Option<&Value>| v.and_then(Value::as_object).cloned().unwrap_or_default();
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
        labels: map(pod.at_pointer("/metadata/labels")),
        annotation_levels: levels,
        host_network: pod.at_pointer("/spec/hostNetwork") == Some(&Value::Bool(true)),
        runs_to_completion: wk.runs_to_completion || matches!(restart, Some("Never" | "OnFailure")),
    }
}

/// A sidecar chosen for an object.
#[derive(Clone, Copy)]
struct Chosen<'c> {
    def: &'c SidecarDef,
    /// Its containers become native sidecars (init containers that keep running).
    native: bool,
    /// A whole template in a pod that runs to completion under `jobs: skip`: whether it is
    /// long-running is known once it is rendered; if it is, it is left out.
    skip_if_long_running: bool,
}

/// The sidecars an object gets, and those a pod that runs to completion leaves out (by
/// name); or why it gets none.
type Selection<'c> = Result<(Vec<Chosen<'c>>, Vec<String>), Reason>;

/// The sidecars to inject, each with whether it becomes native, or the reason for none.
fn select_sidecars<'c>(
    config: &'c Config,
    s: &Subject<'_>,
    verdicts: &[RuleVerdict],
) -> Result<Selection<'c>, InjectError> {
    let request = select::request(s);
    if request == Request::OptOut {
        return Ok(Err(Reason::OptedOut));
    }
    let skip = |host_network: bool, namespaces: &[String]| {
        if s.host_network && host_network {
            Some(Reason::HostNetwork)
        } else if namespaces.iter().any(|n| n == s.namespace) {
            Some(Reason::SystemNamespace)
        } else {
            None
        }
    };
    let default_skip = skip(
        config.defaults.skip_host_network,
        &config.defaults.skip_namespaces,
    );
    // The first skip that kept a matching rule (or a request) out.
    let mut skipped = None;
    let mut chosen: Vec<(&SidecarDef, JobPolicy)> = Vec::new();
    for (rule, verdict) in config.rules.iter().zip(verdicts) {
        if !verdict.matched {
            continue;
        }
        let rule_skip = match &rule.spec.skips {
            Some(own) => skip(own.host_network, &own.namespaces),
            None => default_skip,
        };
        if let Some(reason) = rule_skip {
            skipped.get_or_insert(reason);
            continue;
        }
        let policy = select::job_policy(rule.spec.jobs, Some(config.defaults.jobs));
        for name in &rule.spec.inject {
            if let Some(def) = config.sidecar(name)
                && !chosen.iter().any(|(d, _)| d.spec.name == *name)
            {
                chosen.push((def, policy));
            }
        }
    }
    if let (Request::Sidecars(_), Some(reason)) = (&request, default_skip) {
        // Requests follow the run's skips.
        skipped.get_or_insert(reason);
    } else if let Request::Sidecars(names) = &request {
        for name in names {
            let Some(def) = config.sidecar(name) else {
                let known: Vec<String> = config
                    .sidecars
                    .iter()
                    .map(|s| format!("`{}`", s.spec.name))
                    .collect();
                return Err(InjectError::new(
                    "kinject::inject::unknown_sidecar",
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
            if config.defaults.allow_requests && !chosen.iter().any(|(d, _)| d.spec.name == *name) {
                chosen.push((def, config.defaults.jobs));
            }
        }
    }
    if chosen.is_empty() {
        return Ok(Err(skipped
            .or(default_skip)
            .unwrap_or(Reason::NoRuleMatched)));
    }
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
        if s.runs_to_completion && long_running && !def.spec.native {
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
    if out.is_empty() {
        return Ok(Err(Reason::JobNeedsNativeSidecar));
    }
    Ok(Ok((out, left_out)))
}

/// Renders one sidecar's templates for this object and checks the result.
fn render(
    def: &SidecarDef,
    config: &Config,
    ctx: &minijinja::Value,
    native: bool,
) -> Result<Rendered, InjectError> {
    let name = &def.spec.name;
    let (file, line, column) = def.origin.position();
    let defined = format!("sidecar `{name}` is defined at {file}:{line}:{column}");
    let fail =
        |code: &'static str, message: String| InjectError::new(code, message).help(defined.clone());
    let value = match config.templates.render_whole(name, ctx) {
        Some(value) => {
            let value = value
                .map_err(|e| fail(e.code, format!("sidecar `{name}`: template: {}", e.message)))?;
            if value.is_null() {
                Value::Object(Map::new())
            } else {
                value
            }
        }
        None => config
            .templates
            .render_fields(name, &def.definition, ctx)
            .map_err(|e| {
                fail(
                    "kinject::template::render",
                    format!("sidecar `{name}` at `{}`: {}", e.pointer, e.message),
                )
            })?,
    };
    if let Some(v) = validate(body_schema(), "", &value).into_iter().next() {
        let path = v.path.join(".");
        let what = match v.kind {
            ViolationKind::UnknownField { field, .. } => format!("unknown field `{field}`"),
            ViolationKind::WrongType { expected, found } => {
                format!("`{path}` must be {expected}, found {found}")
            }
            ViolationKind::Missing { field } => format!("missing field `{field}` in `{path}`"),
            ViolationKind::NotAllowed { allowed } => {
                format!("`{path}` must be one of {}", allowed.join(", "))
            }
        };
        return Err(fail(
            "kinject::inject::invalid_sidecar",
            format!("sidecar `{name}` rendered to an invalid definition: {what}"),
        ));
    }
    let body: SidecarBody = serde_json::from_value(value).map_err(|e| {
        fail(
            "kinject::inject::invalid_sidecar",
            format!("sidecar `{name}`: {e}"),
        )
    })?;
    for c in body.containers.iter().chain(&body.init_containers) {
        check_container(name, c)?;
    }
    let native = native || def.spec.native;
    let position = def.spec.position.unwrap_or(Position::After);
    let init_position = def.spec.init_position.unwrap_or(if native {
        Position::Before
    } else {
        Position::After
    });
    let targets = def
        .spec
        .target_containers
        .iter()
        .filter_map(|p| select::glob(p).ok())
        .collect();
    // Everything that decides the result: what is added (rendered) and how (the settings).
    let mut settings = serde_json::to_value(&def.spec).unwrap_or_default();
    if let Value::Object(m) = &mut settings {
        let body_fields = body_schema()["properties"].as_object();
        m.retain(|k, _| {
            k != "description" && k != "template" && !body_fields.is_some_and(|f| f.contains_key(k))
        });
        m.insert("native".to_owned(), Value::Bool(native));
    }
    let hash_input = serde_json::json!({"body": body, "settings": settings});
    // Key order is how the configuration was written, not what it means: hash sorted keys.
    let digest = Sha256::digest(canonical(&hash_input).to_string().as_bytes());
    let hash: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    Ok(Rendered {
        name: name.clone(),
        spec: def.spec.clone(),
        body,
        native,
        position,
        init_position,
        service_account_policy: def
            .spec
            .service_account_policy
            .unwrap_or(ServiceAccountPolicy::IfUnset),
        targets,
        hash,
    })
}

/// `value` with every mapping's keys sorted.
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), canonical(&m[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// A container must have a name and an image and read as a Kubernetes `Container`.
fn check_container(sidecar: &str, c: &Value) -> Result<(), InjectError> {
    let fail = |message: String| InjectError::new("kinject::inject::invalid_sidecar", message);
    let name = c.field("name").and_then(Value::as_str).unwrap_or_default();
    if name.is_empty() {
        return Err(fail(format!(
            "sidecar `{sidecar}` has a container without a name"
        )));
    }
    serde_json::from_value::<k8s_openapi::api::core::v1::Container>(c.clone()).map_err(|e| {
        fail(format!(
            "sidecar `{sidecar}`: container `{name}` is not a valid Kubernetes container: {e}"
        ))
    })?;
    Ok(())
}

/// Pod-template pointers as pointers of the object, whose pod template is at `prefix`.
fn within(prefix: &str, by_pointer: BTreeMap<String, String>) -> BTreeMap<String, String> {
    by_pointer
        .into_iter()
        .map(|(p, s)| (format!("{prefix}{p}"), s))
        .collect()
}

/// How the nulls of the pod template `before` this run's sidecars were written, where that
/// was not empty: as recorded for those an earlier run's sidecars filled (and `strip` made
/// null again), else as the object's text writes them.
struct Spelling<'a> {
    /// From `strip`, by pointer of `before`.
    respelled: &'a BTreeMap<String, String>,
    before: &'a Value,
    /// The pod template as the text holds it (with an earlier run's sidecars).
    text: &'a Value,
    /// Where the pod template is in the object.
    prefix: &'a str,
    null_text: &'a dyn Fn(&str) -> Option<String>,
    /// Where the containers of `before` and of `text` are, made when first asked.
    containers: [std::cell::OnceCell<pod::ContainerIndex>; 2],
}

impl Spelling<'_> {
    fn before_containers(&self) -> &pod::ContainerIndex {
        self.containers[0].get_or_init(|| pod::ContainerIndex::of(self.before))
    }

    fn text_containers(&self) -> &pod::ContainerIndex {
        self.containers[1].get_or_init(|| pod::ContainerIndex::of(self.text))
    }

    /// Of the pod-template pointers `null`, how each was written where not empty.
    fn pod(&self, null: &[String]) -> BTreeMap<String, String> {
        null.iter()
            .filter_map(|p| {
                let s = self.respelled.get(p).cloned();
                let s = s.or_else(|| (self.null_text)(&format!("{}{p}", self.prefix)))?;
                Some((p.clone(), s))
            })
            .collect()
    }

    /// Of the fields `null` of the app container `name`, how each was written where not
    /// empty.
    fn app(&self, name: &str, null: &[String]) -> BTreeMap<String, String> {
        null.iter()
            .filter_map(|f| {
                let s = self
                    .before_containers()
                    .field(self.before, name, f)
                    .and_then(|p| self.respelled.get(&p).cloned());
                let s = s.or_else(|| {
                    let p = self.text_containers().field(self.text, name, f)?;
                    (self.null_text)(&format!("{}{p}", self.prefix))
                })?;
                Some((f.clone(), s))
            })
            .collect()
    }
}

/// Writes the status annotation for `records` (or leaves none when there are none).
fn write_status(pod: &mut Value, kept: Vec<Record>, records: Vec<Record>, spelling: &Spelling) {
    let before = spelling.before;
    let sidecars: Vec<Record> = kept.into_iter().chain(records).collect();
    if sidecars.is_empty() {
        return;
    }
    let Value::Object(pod) = pod else { return };
    let mut status = Status {
        version: 1,
        sidecars,
        created: Vec::new(),
        null: Vec::new(),
        null_as: BTreeMap::new(),
    };
    // A null container list becomes one: it is null again once its sidecars are gone.
    if before
        .at_pointer("/spec/containers")
        .is_some_and(Value::is_null)
    {
        status.created.push("/spec/containers".to_owned());
    }
    if !matches!(pod.field("metadata"), Some(Value::Object(_))) {
        pod.shift_insert(0, "metadata".to_owned(), Value::Object(Map::new()));
        status.created.push("/metadata".to_owned());
    }
    let Some(Value::Object(metadata)) = pod.field_mut("metadata") else {
        return;
    };
    if !matches!(metadata.field("annotations"), Some(Value::Object(_))) {
        metadata.insert("annotations".to_owned(), Value::Object(Map::new()));
        status.created.push("/metadata/annotations".to_owned());
    }
    status.null = nulls(before, &status.created);
    status.null_as = spelling.pod(&status.null);
    if let Some(Value::Object(a)) = metadata.field_mut("annotations") {
        a.insert(
            STATUS_ANNOTATION.to_owned(),
            Value::String(status.to_annotation()),
        );
    }
}

/// Of the pod-template pointers `created`, those that were null in the pod `before`.
fn nulls(before: &Value, created: &[String]) -> Vec<String> {
    created
        .iter()
        .filter(|p| before.at_pointer(p).is_some_and(Value::is_null))
        .cloned()
        .collect()
}

/// Notes in each record which of the fields it created were null in the pod before, and how
/// they were written.
fn note_nulls(spelling: &Spelling, records: &mut [Record]) {
    let before = spelling.before;
    for r in records {
        r.null = nulls(before, &r.created);
        r.null_as = spelling.pod(&r.null);
        for app in &mut r.app_containers {
            let container = spelling
                .before_containers()
                .at(before, &app.name)
                .and_then(|(list, i)| before.at_pointer(list)?.get(i));
            if let Some(Value::Object(c)) = container {
                app.null = app
                    .created
                    .iter()
                    .filter(|f| c.field(f.as_str()).is_some_and(Value::is_null))
                    .cloned()
                    .collect();
                app.null_as = spelling.app(&app.name, &app.null);
            }
        }
    }
}

/// Containers an earlier run injected with the same definition that differ now: hand edits,
/// which this run reverts.
fn drift(
    before: Option<&Value>,
    after: &Value,
    previous: &[Record],
    records: &[Record],
) -> Vec<String> {
    let Some(before) = before else {
        return Vec::new();
    };
    let mut warnings = Vec::new();
    for r in records {
        let Some(old) = previous.iter().find(|p| p.name == r.name) else {
            continue;
        };
        if old.hash != r.hash {
            continue;
        }
        for (pointer, names) in [
            ("/spec/containers", &r.containers),
            ("/spec/initContainers", &r.init_containers),
        ] {
            for n in names {
                let find = |pod: &Value| {
                    pod.at_pointer(pointer)
                        .and_then(Value::as_array)
                        .and_then(|l| l.iter().find(|c| pod::name_of(c) == n).cloned())
                };
                if find(before) != find(after) {
                    warnings.push(format!(
                        "container `{n}` of sidecar `{}` was edited after injection; restored",
                        r.name
                    ));
                }
            }
        }
    }
    warnings
}
