//! One object through injection: find its pod template, check and strip what an earlier run
//! added, choose and render the sidecars, add them, and record what was added.

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::Arc;

use serde_json::Value;

use super::choose::{Choice, Chosen, choose};
use super::error::InjectError;
use super::outcome::{Action, Outcome};
use super::settings::{Mode, Settings};
use super::status::{Record, STATUS_ANNOTATION, Status};
use super::status::{Spelling, note_nulls, status_holder, within, write_status};
use super::{apply, pod, shape, strip, trust};
use crate::diagnostic::codes;
use crate::json::{Fields, Pointer};
use crate::kinds::{WorkloadKind, workload_kind};
use crate::select::{Reason, Verdicts};
use crate::template::{self, Source};

/// Decides and performs injection (or uninjection) for one object read from text:
/// `null_text` gives, for a pointer of the object, how a null there is written when that is
/// not empty (`null`, `~`), so that the status can record it and `uninject` write it so
/// again. With `explain`, the outcome keeps every rule's verdict on the object (`kinject
/// explain`).
pub(crate) fn plan_in_text(
    object: &Value,
    settings: &Settings<'_>,
    explain: bool,
    null_text: &dyn Fn(&str) -> Option<String>,
) -> Result<Outcome, InjectError> {
    plan(object, None, settings, explain, null_text)
}

/// `plan_in_text` for an object its holder shares: templates read it in place, where
/// otherwise the parts they read are copied (`kinject admission` and `serve`, whose object
/// may be as large as the request).
pub(crate) fn plan_shared(
    object: &Arc<Value>,
    settings: &Settings<'_>,
    null_text: &dyn Fn(&str) -> Option<String>,
) -> Result<Outcome, InjectError> {
    plan(object, Some(object), settings, false, null_text)
}

fn plan(
    object: &Value,
    shared: Option<&Arc<Value>>,
    settings: &Settings<'_>,
    explain: bool,
    null_text: &dyn Fn(&str) -> Option<String>,
) -> Result<Outcome, InjectError> {
    if let Some(selector) = &settings.selector {
        let labels = object
            .at_pointer("/metadata/labels")
            .and_then(Value::as_object);
        if !selector.matches(labels.unwrap_or(&serde_json::Map::new())) {
            return Ok(Outcome::new(Action::Skipped(Reason::NotSelected)));
        }
    }
    let found = match find_pod_template(object, settings)? {
        Ok(found) => Found { shared, ..found },
        Err(outcome) => return Ok(outcome),
    };
    let wk = &found.wk;
    // Nothing of an earlier run to take out: an object no sidecar is for stays as it is,
    // uncopied.
    let mut chosen = None;
    if !found.has_status {
        match choose_uncopied(&found, settings, explain)? {
            ControlFlow::Break(outcome) => return Ok(outcome),
            ControlFlow::Continue(choice) => chosen = Some(choice),
        }
    }
    let mut target = object.clone();
    let pod = target
        .at_pointer_mut(&wk.pod_template)
        .ok_or_else(|| internal("pod template vanished"))?;
    let status = read_status(pod, &wk.pod_template)?;
    if let Some(st) = &status {
        check_status(&found, st, settings)?;
    }
    let earlier = strip_earlier(pod, status.as_ref(), settings);
    if status.is_some() {
        let _ = found.stripped.set(Arc::new(pod.clone()));
    }
    let pod0 = found.before();
    // Only the pod template is edited: the rest of the object need not be compared.
    let changed = |target: &Value| {
        !target
            .at_pointer(&wk.pod_template)
            .is_some_and(|p| crate::json::patch::equal(p, found.pod))
    };
    let Earlier {
        previous,
        kept,
        respelled,
        stripped,
    } = earlier;
    if settings.mode.uninjects() {
        let action = if stripped.is_empty() {
            Action::NotInjected
        } else {
            Action::Uninjected(stripped)
        };
        let mut o = Outcome::new(action);
        if changed(&target) {
            o.target = Some(Box::new(target));
            o.null_as = within(&wk.pod_template, respelled);
        }
        return Ok(o);
    }
    let spelling = Spelling {
        respelled: &respelled,
        before: pod0,
        text: found.pod,
        prefix: &wk.pod_template,
        null_text,
        containers: Default::default(),
    };
    let Choice {
        verdicts,
        selection,
        warnings,
    } = match chosen {
        Some(c) => c,
        None => choose(object, pod0, wk, &found.namespace, settings, explain)?,
    };
    let mut outcome = match selection {
        Err(reason) => {
            write_status(pod, kept, Vec::new(), &spelling);
            Outcome::new(Action::Skipped(reason))
        }
        Ok(selected) => add_sidecars(&found, settings, pod, selected, kept, &previous, &spelling)?,
    };
    outcome.warnings.splice(0..0, warnings);
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

/// For an object without an earlier run's record, before it is copied: the outcome when it
/// stays as it is, else the rules' verdicts and the sidecars it gets.
fn choose_uncopied<'c>(
    found: &Found<'_>,
    settings: &Settings<'c>,
    explain: bool,
) -> Result<ControlFlow<Outcome, Choice<'c>>, InjectError> {
    if settings.mode.uninjects() {
        return Ok(ControlFlow::Break(Outcome::new(Action::NotInjected)));
    }
    if found.containers == shape::Containers::Absent {
        let skipped = Action::Skipped(Reason::NoContainers);
        return Ok(ControlFlow::Break(Outcome::new(skipped)));
    }
    let (object, wk) = (found.object, &found.wk);
    let choice = choose(object, found.pod, wk, &found.namespace, settings, explain)?;
    if let Err(reason) = choice.selection {
        let mut o = Outcome::new(Action::Skipped(reason));
        o.warnings = choice.warnings;
        if explain {
            o.verdicts = choice.verdicts;
        }
        return Ok(ControlFlow::Break(o));
    }
    Ok(ControlFlow::Continue(choice))
}

/// Where in `object` (within `depth` levels) a mapping holds `containers` as a list: a pod
/// spec written at another level than the kind's pod template (`spec.spec`, a template
/// without its `spec`), the pointer of that mapping.
fn containers_elsewhere(object: &Value, depth: usize) -> Option<String> {
    let Value::Object(map) = object else {
        return None;
    };
    if map.get("containers").is_some_and(Value::is_array) {
        return Some(String::new());
    }
    if depth == 0 {
        return None;
    }
    map.iter().find_map(|(key, value)| {
        let inner = containers_elsewhere(value, depth - 1)?;
        Some(format!("/{}{inner}", crate::json::escape(key)))
    })
}

/// Whether `object` is an AdmissionReview (`admission.k8s.io`), which `kinject admission`
/// answers and `inject` would pass on untouched.
fn is_admission_review(object: &Value) -> bool {
    object.field("kind").and_then(Value::as_str) == Some("AdmissionReview")
        && object
            .field("apiVersion")
            .and_then(Value::as_str)
            .is_some_and(|v| v.starts_with("admission.k8s.io/"))
}

/// An object's pod template, found, and what is known of it before anything is changed.
struct Found<'a> {
    object: &'a Value,
    wk: WorkloadKind,
    /// The pod template, as the object has it.
    pod: &'a Value,
    containers: shape::Containers,
    /// The object's namespace, or the run's (`--namespace`).
    namespace: String,
    /// Whether the pod template holds a status annotation (an earlier run's record).
    has_status: bool,
    /// The object, when its holder shares it: templates read it in place.
    shared: Option<&'a Arc<Value>>,
    /// The pod template without an earlier run's sidecars, once they are taken out (when
    /// there were some).
    stripped: OnceCell<Arc<Value>>,
}

impl Found<'_> {
    /// The pod template as templates read it: without sidecars of earlier runs (the
    /// object's own when there were none).
    fn before(&self) -> &Value {
        self.stripped.get().map_or(self.pod, |p| p.as_ref())
    }

    /// The template context for the object, with its pod template as `before` has it.
    fn context(&self, values: &serde_json::Map<String, Value>) -> minijinja::Value {
        let pod = match (self.stripped.get(), self.shared) {
            (Some(stripped), _) => Source::Shared(stripped, ""),
            (None, Some(object)) => Source::Shared(object, &self.wk.pod_template),
            (None, None) => Source::Borrowed(self.pod),
        };
        let workload = self
            .shared
            .map_or(Source::Borrowed(self.object), |o| Source::Shared(o, ""));
        template::context_of(pod, workload, &self.namespace, values)
    }
}

/// The pod template of `object`, or the outcome of an object that has none (or none
/// Kubernetes would accept).
fn find_pod_template<'a>(
    object: &'a Value,
    settings: &Settings<'_>,
) -> Result<Result<Found<'a>, Outcome>, InjectError> {
    // `uninject` needs no configuration: a pod template of an unknown kind is found by the
    // status annotation kinject wrote into it.
    let found = workload_kind(object, &settings.config.kinds).or_else(|| {
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
        let mut outcome = Outcome::new(Action::Skipped(Reason::NotAWorkload));
        if is_admission_review(object) {
            outcome.warnings.push(
                "this is an AdmissionReview: use `kinject admission` to answer it (`inject` takes manifests)"
                    .to_owned(),
            );
        }
        return Ok(Err(outcome));
    };
    let Some(pod) = object
        .at_pointer(&wk.pod_template)
        .filter(|p| p.field("spec").is_some_and(Value::is_object))
    else {
        if settings.mode.uninjects() {
            return Ok(Err(Outcome::new(Action::NotInjected)));
        }
        let mut outcome = Outcome::new(Action::Skipped(Reason::NoPodTemplate));
        if let Some(found) = containers_elsewhere(object, 5) {
            outcome.warnings.push(format!(
                "no pod template at `{}/spec`, but `containers` is at `{found}/containers`: written at another level \
                    (its indentation)?",
                wk.pod_template
            ));
        }
        return Ok(Err(outcome));
    };
    // Nothing is read or changed in a workload Kubernetes would refuse for its types.
    let containers = shape::check(object, &wk.pod_template)?;
    let namespace = object
        .at_pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| settings.namespace.clone())
        .unwrap_or_default();
    let has_status = pod
        .at_pointer("/metadata/annotations")
        .and_then(|a| a.field(STATUS_ANNOTATION))
        .is_some();
    Ok(Ok(Found {
        object,
        wk,
        pod,
        containers,
        namespace,
        has_status,
        shared: None,
        stripped: OnceCell::new(),
    }))
}

/// Pointer, in the object, of the status annotation of the pod template at `pod_template`.
fn status_at(pod_template: &str) -> String {
    format!(
        "{pod_template}/metadata/annotations/{}",
        crate::json::escape(STATUS_ANNOTATION)
    )
}

/// The status annotation of `pod` (the pod template at `pod_template`), when it has one.
fn read_status(pod: &Value, pod_template: &str) -> Result<Option<Status>, InjectError> {
    Status::read(pod).map_err(|message| {
        InjectError::new(codes::INJECT_STATUS, message)
            .help(format!(
                "remove the `{STATUS_ANNOTATION}` annotation if kinject did not write it"
            ))
            .at(status_at(pod_template))
    })
}

/// Checks an earlier run's record (the manifest's word) before anything is done on it: it
/// may only claim what its sidecars would add, and `uninject` removes only what a given
/// configuration defines.
fn check_status(
    found: &Found<'_>,
    st: &Status,
    settings: &Settings<'_>,
) -> Result<(), InjectError> {
    let config = settings.config;
    let at = status_at(&found.wk.pod_template);
    let ctx = OnceCell::new();
    let ctx = || ctx.get_or_init(|| found.context(&config.values));
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
    trust::check(found.pod, st, &mut adds, &at)?;
    if settings.mode == Mode::Uninject
        && let Some(r) = st
            .sidecars
            .iter()
            .find(|r| config.sidecar(&r.name).is_none())
    {
        return Err(InjectError::new(
            codes::INJECT_UNVERIFIED_STATUS,
            format!(
                "the `{STATUS_ANNOTATION}` annotation says sidecar `{}` added {}, and no configuration given defines \
                    `{}`: kinject cannot check that it did",
                r.name,
                trust::claims(r),
                r.name
            ),
        )
        .help(format!("give the configuration that defines `{}` (-c FILE); or, having read the annotation, \
            `--trust-status` removes what it says on its word", r.name))
        .at(at));
    }
    Ok(())
}

/// What an earlier run added, once taken out of the pod template.
struct Earlier {
    /// The sidecars its record names.
    previous: Vec<Record>,
    /// The records of sidecars left in (`uninject` takes every one out; `inject` those the
    /// configuration defines, to add them again).
    kept: Vec<Record>,
    /// How the nulls the sidecars filled were written, by pointer of the pod template.
    respelled: BTreeMap<String, String>,
    /// The names of the sidecars taken out.
    stripped: Vec<String>,
}

/// Takes what the earlier run recorded in `status` out of `pod`.
fn strip_earlier(pod: &mut Value, status: Option<&Status>, settings: &Settings<'_>) -> Earlier {
    let config = settings.config;
    let previous = status.map(|s| s.sidecars.clone()).unwrap_or_default();
    let mut kept = Vec::new();
    let mut respelled = BTreeMap::new();
    if let Some(st) = status {
        (kept, respelled) = strip::strip(pod, st, |r| {
            settings.mode.uninjects() || config.sidecar(&r.name).is_some()
        });
    }
    let stripped: Vec<String> = previous
        .iter()
        .filter(|r| !kept.iter().any(|k| k.name == r.name))
        .map(|r| r.name.clone())
        .collect();
    Earlier {
        previous,
        kept,
        respelled,
        stripped,
    }
}

/// Renders the sidecars chosen for the object and adds them to `pod`, with the status
/// annotation that records them (and the `kept` records of an earlier run).
fn add_sidecars(
    found: &Found<'_>,
    settings: &Settings<'_>,
    pod: &mut Value,
    (selected, mut left_out): (Vec<Chosen<'_>>, Vec<String>),
    kept: Vec<Record>,
    previous: &[Record],
    spelling: &Spelling<'_>,
) -> Result<Outcome, InjectError> {
    let config = settings.config;
    let pod_template = &found.wk.pod_template;
    // The template context, made only when a sidecar has templates.
    let ctx = OnceCell::new();
    let ctx = || ctx.get_or_init(|| found.context(&config.values));
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
        write_status(pod, kept, Vec::new(), spelling);
        return Ok(Outcome::new(Action::Skipped(Reason::JobNeedsNativeSidecar)));
    }
    let (mut records, notes) = apply::apply(pod, &rendered, config.defaults.sort_init_containers)
        .map_err(|mut e| {
        e.at = e.at.map(|p| format!("{pod_template}{p}"));
        e
    })?;
    let names: Vec<String> = records.iter().map(|r| r.name.clone()).collect();
    let mut o = Outcome::new(Action::Injected(names));
    o.overridden = records
        .iter()
        .flat_map(|r| r.overrides.keys().cloned())
        .collect();
    o.warnings = drift(
        found.object.at_pointer(pod_template),
        pod,
        previous,
        &records,
    );
    if found.containers == shape::Containers::Empty {
        // As the anchors do (a webhook is called before Kubernetes validates), but
        // said: an empty container list is more often a mistake upstream.
        o.warnings
            .push("the pod template had no containers: the sidecars are its only ones".to_owned());
    }
    o.warnings.extend(notes);
    o.warnings.extend(left_out.iter().map(|name| {
        format!("sidecar `{name}` is left out: the pod runs to completion and its containers would keep it running \
            (the rule's `jobs: skip`; `jobs: native` makes them native sidecars)")
    }));
    note_nulls(spelling, &mut records);
    write_status(pod, kept, records, spelling);
    Ok(o)
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
    verdicts: Option<Verdicts>,
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

fn internal(message: &str) -> InjectError {
    InjectError::new(codes::INJECT_INTERNAL, message)
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
