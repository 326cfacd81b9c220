//! Adding rendered sidecars to a pod template, recording each addition, and refusing
//! conflicts instead of silently replacing anything.

mod context;
mod prepare;
pub(crate) mod resources;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::error::InjectError;
use super::pod::{TOKEN_MOUNT, list_field, name_of, object_field, overlay, position};
use super::sidecar::{Rendered, canonical};
use super::status::{AppRecord, Previous, Record};
use crate::config::{AnnotationPolicy, Position, SameName, ServiceAccountPolicy};
use crate::diagnostic::codes;
use crate::json::Fields;

use context::Ctx;
use prepare::{AppView, prepare};

/// Which sidecar added which item, to tell a conflict between two sidecars from a clash
/// with the pod's own item.
#[derive(Default)]
struct Owners(HashMap<(&'static str, String), String>);

impl Owners {
    fn get(&self, kind: &'static str, key: &str) -> Option<&String> {
        self.0.get(&(kind, key.to_owned()))
    }

    fn set(&mut self, kind: &'static str, key: &str, sidecar: &str) {
        self.0.insert((kind, key.to_owned()), sidecar.to_owned());
    }
}

/// Where each app container's entry is in the `app_containers` of the record being made:
/// searched while they are few, then found by name (`Record::app` searched them for every
/// addition: quadratic in the pod's containers).
#[derive(Default)]
struct AppEntries(HashMap<String, usize>);

impl AppEntries {
    /// The entry of `container` in `rec`, added when it has none.
    fn of<'r>(&mut self, rec: &'r mut Record, container: &str) -> &'r mut AppRecord {
        let apps = &mut rec.app_containers;
        let found = if apps.len() <= FEW {
            apps.iter().position(|a| a.name == container)
        } else {
            if self.0.is_empty() {
                self.0 = apps
                    .iter()
                    .enumerate()
                    .map(|(i, a)| (a.name.clone(), i))
                    .rev()
                    .collect();
            }
            self.0.get(container).copied()
        };
        let i = found.unwrap_or_else(|| {
            apps.push(AppRecord {
                name: container.to_owned(),
                ..AppRecord::default()
            });
            if !self.0.is_empty() {
                self.0.insert(container.to_owned(), apps.len() - 1);
            }
            apps.len() - 1
        });
        &mut apps[i]
    }
}

/// Up to this many names, a search costs less than a set or map.
const FEW: usize = 16;

/// A set of container names: a list while they are few.
enum Names {
    Few(Vec<String>),
    Many(HashSet<String>),
}

impl Names {
    fn of(containers: &[Value]) -> Self {
        let names = containers.iter().map(|c| name_of(c).to_owned());
        if containers.len() <= FEW {
            Names::Few(names.collect())
        } else {
            Names::Many(names.collect())
        }
    }

    fn contains(&self, name: &str) -> bool {
        match self {
            Names::Few(names) => names.iter().any(|n| n == name),
            Names::Many(names) => names.contains(name),
        }
    }
}

/// How to settle a sidecar's volume (or other pod-level item) that the pod defines otherwise.
fn pod_item_help(field: &str, name: &str, sidecar: &str) -> String {
    if field == "volumes" {
        format!(
            "rename the pod's volume `{name}`; or, when the sidecar should mount the pod's own volume, say so with \
                `keepPodVolumes: true` on sidecar `{sidecar}`"
        )
    } else {
        format!("rename the pod's `{name}`, or the one sidecar `{sidecar}` defines")
    }
}

fn conflict(message: String) -> InjectError {
    InjectError::new(codes::INJECT_CONFLICT, message)
}

/// Adds `sidecars` to `pod` (a pod template: `metadata` and `spec`). Returns one record per
/// sidecar, and warnings for the report.
pub(crate) fn apply(
    pod: &mut Value,
    sidecars: &[Cow<'_, Rendered>],
    sort_inits: bool,
) -> Result<(Vec<Record>, Vec<String>), InjectError> {
    let Value::Object(pod) = pod else {
        return Err(conflict("the pod template is not a mapping".to_owned()));
    };
    let mut owners = Owners::default();
    // Lent out of the pod while its spec is edited, and put back in its place: a pod's
    // metadata may hold a request's worth of annotations, not to be copied.
    let metadata = pod.get_mut("metadata").map(std::mem::take);
    let ctx = Ctx {
        metadata: metadata.as_ref().unwrap_or(&Value::Null),
        sort_inits,
        warnings: std::cell::RefCell::default(),
    };
    let records = add_to_spec(
        object_field(pod, "spec", &mut false),
        sidecars,
        &mut owners,
        &ctx,
    );
    let warnings = ctx.warnings.into_inner();
    if let (Some(lent), Some(slot)) = (metadata, pod.get_mut("metadata")) {
        *slot = lent;
    }
    let mut records = records?;
    for (s, rec) in sidecars.iter().zip(records.iter_mut()) {
        add_metadata(pod, s, &mut owners, rec)?;
    }
    Ok((records, warnings))
}

fn add_to_spec(
    spec: &mut Map<String, Value>,
    sidecars: &[Cow<'_, Rendered>],
    owners: &mut Owners,
    ctx: &Ctx<'_>,
) -> Result<Vec<Record>, InjectError> {
    let mut records = Vec::new();
    let mut lists = Containers::take(spec);
    let own = Own::of(spec, &lists, sidecars);
    let mut init_owner: Option<usize> = None;
    for s in sidecars {
        let mut rec = Record {
            name: s.name.clone(),
            hash: s.hash.clone(),
            ..Record::default()
        };
        add_sidecar(spec, s, &mut lists, &own, owners, ctx, &mut rec)?;
        if !lists.had_inits && !rec.init_containers.is_empty() && init_owner.is_none() {
            init_owner = Some(records.len());
        }
        records.push(rec);
    }
    lists.put_back(spec, ctx.sort_inits);
    if let Some(i) = init_owner {
        records[i].created.push("/spec/initContainers".to_owned());
    }
    Ok(records)
}

/// The pod's containers and init containers while sidecars are added: the pod's own lists
/// (`app`, `inits`), and the sidecars' containers that go before and after each.
struct Containers {
    app: Vec<Value>,
    inits: Vec<Value>,
    before: Vec<Value>,
    after: Vec<Value>,
    init_before: Vec<Value>,
    init_after: Vec<Value>,
    /// Whether the pod had an `initContainers` list (else one made here is recorded as created).
    had_inits: bool,
}

impl Containers {
    /// Takes the pod's container lists out of `spec`, to be put back by `put_back`.
    fn take(spec: &mut Map<String, Value>) -> Self {
        let app = take_list(spec, "containers");
        let had_inits = matches!(spec.field("initContainers"), Some(Value::Array(_)));
        let inits = take_list(spec, "initContainers");
        Containers {
            app,
            inits,
            before: Vec::new(),
            after: Vec::new(),
            init_before: Vec::new(),
            init_after: Vec::new(),
            had_inits,
        }
    }

    /// Puts the lists back into `spec` in pod order (`initContainers` only when the pod had
    /// the list or a sidecar adds to it).
    fn put_back(self, spec: &mut Map<String, Value>, sort_inits: bool) {
        let Containers {
            app,
            inits,
            before,
            after,
            mut init_before,
            mut init_after,
            had_inits,
        } = self;
        if sort_inits {
            init_before.sort_by(|a, b| name_of(a).cmp(name_of(b)));
            init_after.sort_by(|a, b| name_of(a).cmp(name_of(b)));
        }
        let containers: Vec<Value> = before.into_iter().chain(app).chain(after).collect();
        spec.insert("containers".to_owned(), Value::Array(containers));
        let all_inits: Vec<Value> = init_before
            .into_iter()
            .chain(inits)
            .chain(init_after)
            .collect();
        if had_inits || !all_inits.is_empty() {
            insert_before(
                spec,
                "initContainers",
                Value::Array(all_inits),
                "containers",
            );
        }
    }
}

/// The pod as it was before any sidecar: what each sidecar is added against.
struct Own {
    /// Names of the pod's own containers and init containers (the app containers).
    app_names: Names,
    init_names: Names,
    /// The app's own containers and init containers (for shared mounts and devices,
    /// transferred env and resources policies, the only things `prepare` reads them for;
    /// empty when no sidecar does any; the init containers only for resources policies).
    originals: Vec<Value>,
    original_inits: Vec<Value>,
    /// The names that are no app container to a resources policy: every container the
    /// sidecars add and the names they say (`notAppContainers`); empty when no sidecar has a
    /// resources policy.
    not_app: Vec<String>,
    service_account: Option<String>,
}

impl Own {
    /// What `prepare` reads of the pod as it was.
    fn app_view(&self) -> AppView<'_> {
        AppView {
            containers: &self.originals,
            init_containers: &self.original_inits,
            not_app: &self.not_app,
        }
    }

    fn of(spec: &Map<String, Value>, lists: &Containers, sidecars: &[Cow<'_, Rendered>]) -> Self {
        let reads_app = |s: &Cow<'_, Rendered>| {
            !s.spec.share_volume_mounts.is_empty()
                || !s.spec.share_volume_devices.is_empty()
                || !s.spec.transfer_env.is_empty()
                || !s.resources.is_empty()
        };
        let originals = if sidecars.iter().any(reads_app) {
            lists.app.clone()
        } else {
            Vec::new()
        };
        let has_policy = sidecars.iter().any(|s| !s.resources.is_empty());
        let original_inits = if has_policy {
            lists.inits.clone()
        } else {
            Vec::new()
        };
        let not_app = if has_policy {
            not_app_containers(sidecars)
        } else {
            Vec::new()
        };
        let service_account = spec
            .field("serviceAccountName")
            .or_else(|| spec.field("serviceAccount"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        Own {
            app_names: Names::of(&lists.app),
            init_names: Names::of(&lists.inits),
            originals,
            original_inits,
            not_app,
            service_account,
        }
    }
}

/// The names a resources policy leaves out of a pod's app containers, as OpenKruise's
/// getTargetContainers leaves out every matched set's containers: those of every sidecar
/// going into the pod, and the names each says are no app container.
fn not_app_containers(sidecars: &[Cow<'_, Rendered>]) -> Vec<String> {
    let mut names: Vec<String> = sidecars
        .iter()
        .flat_map(|s| {
            let added = s.body.containers.iter().chain(&s.body.init_containers);
            added
                .map(|c| name_of(c).to_owned())
                .chain(s.spec.not_app_containers.iter().cloned())
        })
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Adds one sidecar to the pod's spec and its containers, recording what it adds in `rec`.
fn add_sidecar(
    spec: &mut Map<String, Value>,
    s: &Rendered,
    lists: &mut Containers,
    own: &Own,
    owners: &mut Owners,
    ctx: &Ctx<'_>,
    rec: &mut Record,
) -> Result<(), InjectError> {
    let mut apps = AppEntries::default();
    place_containers(s, lists, own, owners, ctx, rec)?;
    merge_named(spec, "volumes", &s.body.volumes, owners, rec, s)?;
    merge_named(
        spec,
        "imagePullSecrets",
        &s.body.image_pull_secrets,
        owners,
        rec,
        s,
    )?;
    add_to_targets(s, lists, own, owners, rec, &mut apps)?;
    if let Some(sa) = &s.body.service_account_name {
        let original = own.service_account.as_deref();
        let set = set_service_account(spec, sa, s, original, owners, rec)?;
        if set && s.spec.remove_token_mounts {
            for c in lists.app.iter_mut().chain(lists.inits.iter_mut()) {
                remove_token_mounts(c, rec, &mut apps);
            }
        }
    }
    add_host_settings(spec, s, rec);
    Ok(())
}

/// Places the sidecar's init containers and containers (a native sidecar's among the init
/// containers), each prepared for this pod.
fn place_containers(
    s: &Rendered,
    lists: &mut Containers,
    own: &Own,
    owners: &mut Owners,
    ctx: &Ctx<'_>,
    rec: &mut Record,
) -> Result<(), InjectError> {
    // A sidecar's own init containers run before its native containers.
    for c in &s.body.init_containers {
        claim(owners, name_of(c), &s.name)?;
        let c = &prepare(c, s, &own.app_view(), ctx)?;
        let init_position = s
            .spec
            .positions
            .get(name_of(c))
            .copied()
            .unwrap_or(s.init_position);
        place_init(c, init_position, lists, rec, s)?;
    }
    for c in &s.body.containers {
        let n = name_of(c).to_owned();
        claim(owners, &n, &s.name)?;
        let c = &prepare(c, s, &own.app_view(), ctx)?;
        if s.native {
            let mut c = c.clone();
            if let Value::Object(m) = &mut c {
                m.insert(
                    "restartPolicy".to_owned(),
                    Value::String("Always".to_owned()),
                );
            }
            place_init(&c, s.init_position, lists, rec, s)?;
        } else {
            let position = s.spec.positions.get(&n).copied().unwrap_or(s.position);
            let side = if position == Position::Before {
                &mut lists.before
            } else {
                &mut lists.after
            };
            place(
                c,
                &mut lists.app,
                &lists.inits,
                side,
                rec,
                PodList::Containers,
                s,
            )?;
        }
    }
    Ok(())
}

/// Adds the sidecar's env, mounts and arguments to the app containers it targets, and
/// (`targetEarlierSidecars`) to the containers earlier sidecars added.
fn add_to_targets(
    s: &Rendered,
    lists: &mut Containers,
    own: &Own,
    owners: &mut Owners,
    rec: &mut Record,
    apps: &mut AppEntries,
) -> Result<(), InjectError> {
    let no_names = Names::Few(Vec::new());
    let own_inits = if s.spec.target_init_containers {
        &own.init_names
    } else {
        &no_names
    };
    for (list, names) in [
        (&mut lists.app, &own.app_names),
        (&mut lists.inits, own_inits),
    ] {
        for c in list.iter_mut() {
            let cname = name_of(c);
            let is_app = names.contains(cname) && owners.get("container", cname).is_none();
            let targeted = s.targets.is_empty() || s.targets.iter().any(|g| g.is_match(cname));
            if is_app && targeted {
                add_to_app_container(c, s, owners, rec, apps)?;
            }
        }
    }
    if s.spec.target_earlier_sidecars {
        // In the order they sit in the pod: init containers, then containers.
        let in_pod_order = [
            &mut lists.init_before,
            &mut lists.inits,
            &mut lists.init_after,
            &mut lists.before,
            &mut lists.app,
            &mut lists.after,
        ];
        for list in in_pod_order {
            for c in list.iter_mut() {
                let owner = owners.get("container", name_of(c));
                if owner.is_some_and(|o| *o != s.name) {
                    add_to_app_container(c, s, owners, rec, apps)?;
                }
            }
        }
    }
    Ok(())
}

/// Adds a sidecar's pod annotations and labels; the pod's own values win.
fn add_metadata(
    pod: &mut Map<String, Value>,
    s: &Rendered,
    owners: &mut Owners,
    rec: &mut Record,
) -> Result<(), InjectError> {
    for (field, items) in [
        ("annotations", &s.body.annotations),
        ("labels", &s.body.labels),
    ] {
        if items.is_empty() {
            continue;
        }
        let created_md = !matches!(pod.field("metadata"), Some(Value::Object(_)));
        if created_md {
            pod.shift_insert(0, "metadata".to_owned(), Value::Object(Map::new()));
            rec.created.push("/metadata".to_owned());
        }
        let mut created = false;
        let metadata = object_field(pod, "metadata", &mut false);
        let map = object_field(metadata, field, &mut created);
        if created {
            rec.created.push(format!("/metadata/{field}"));
        }
        for (k, v) in items {
            add_metadata_item(map, field, k, v, s, owners, rec)?;
        }
    }
    Ok(())
}

/// Adds annotation or label `k` to `map` (the pod's `field`): set when the pod has none, else
/// kept, overwritten or combined as the sidecar's annotation policy says.
fn add_metadata_item(
    map: &mut Map<String, Value>,
    field: &'static str,
    k: &String,
    v: &Value,
    s: &Rendered,
    owners: &mut Owners,
    rec: &mut Record,
) -> Result<(), InjectError> {
    let policy = if field == "labels" {
        AnnotationPolicy::Keep
    } else {
        s.spec
            .annotation_policies
            .get(k)
            .copied()
            .or(s.spec.annotation_policy)
            .unwrap_or_default()
    };
    let Some(existing) = map.field(k).cloned() else {
        map.insert(k.clone(), v.clone());
        owners.set(field, k, &s.name);
        if field == "annotations" {
            rec.annotations.push(k.clone());
        } else {
            rec.labels.push(k.clone());
        }
        return Ok(());
    };
    let combined = match policy {
        AnnotationPolicy::Keep => {
            if &existing != v
                && let Some(other) = owners.get(field, k)
            {
                return Err(conflict(format!(
                    "{} `{k}` is set differently by sidecar `{other}` and sidecar `{}`",
                    field.trim_end_matches('s'),
                    s.name
                )));
            }
            return Ok(());
        }
        AnnotationPolicy::Overwrite => {
            // Two sidecars overwriting one key differently: which one wins would
            // depend on their order (Kruise refuses such SidecarSets).
            if &existing != v
                && let Some(other) = owners.get(field, k)
                && *other != s.name
            {
                return Err(conflict(format!(
                    "{} `{k}` is overwritten differently by sidecar `{other}` and sidecar `{}`",
                    field.trim_end_matches('s'),
                    s.name
                )));
            }
            v.clone()
        }
        AnnotationPolicy::MergeJson => merge_json(&existing, v).ok_or_else(|| {
            conflict(format!(
                "annotation `{k}`: sidecar `{}` merges JSON into a value that is not a JSON object",
                s.name
            ))
        })?,
        AnnotationPolicy::AppendList => append_list(&existing, v, false),
        AnnotationPolicy::AppendSortedList => append_list(&existing, v, true),
        AnnotationPolicy::SidecarSetHash => merge_hash_records(&existing, v).ok_or_else(|| {
            conflict(format!(
                "annotation `{k}` is not a JSON map of SidecarSet names to hashes (OpenKruise refuses the pod)"
            ))
        })?,
    };
    if combined != existing {
        map.insert(k.clone(), combined);
        owners.set(field, k, &s.name);
        rec.replaced_annotations.insert(k.clone(), existing);
    }
    Ok(())
}

/// The pod's JSON object `existing` with the sidecar's `ours` applied as an RFC 7386 merge
/// patch, keys sorted at every level, as Kruise's `jsonpatch.MergePatch` writes it. An empty
/// value takes the sidecar's as it is.
fn merge_json(existing: &Value, ours: &Value) -> Option<Value> {
    if existing.as_str() == Some("") {
        return Some(ours.clone());
    }
    let parse = |v: &Value| -> Option<Value> {
        serde_json::from_str::<Value>(v.as_str()?)
            .ok()
            .filter(Value::is_object)
    };
    let mut merged = parse(existing)?;
    merge_patch(&mut merged, &parse(ours)?);
    Some(Value::String(canonical(&merged).to_string()))
}

/// RFC 7386: `patch` applied to `target`.
fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(t) = target else {
        return;
    };
    for (k, v) in patch {
        if v.is_null() {
            t.shift_remove(k);
        } else {
            merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}

/// OpenKruise's hash annotation (`kruise.io/sidecarset-hash`): the pod's map of set name to
/// record, with the sidecar's records put in by name, written as Kruise writes it (names
/// sorted, each record in `SidecarSetUpgradeSpec`'s field order). A record of Kruise's older
/// form, a bare hash, becomes `{hash, sidecarSetName, sidecarList: null}`, as Kruise's
/// buildSidecars converts it. `updateTimestamp`, the time of an admission, is never written
/// here (a record that has one keeps it).
fn merge_hash_records(existing: &Value, ours: &Value) -> Option<Value> {
    let parse = |v: &Value| -> Option<Map<String, Value>> {
        match serde_json::from_str(v.as_str()?).ok()? {
            Value::Object(m) => Some(m),
            _ => None,
        }
    };
    let mut records = std::collections::BTreeMap::new();
    let theirs = if existing.as_str() == Some("") {
        Map::new()
    } else {
        parse(existing)?
    };
    // Kruise reads the map as records, or else as bare hashes; a mix is neither.
    let old_form = theirs.values().all(Value::is_string);
    for (name, record) in theirs {
        let record = match record {
            Value::String(hash) if old_form => serde_json::json!({
                "hash": hash, "sidecarSetName": name, "sidecarList": null,
            }),
            Value::Object(r) => upgrade_spec(&r),
            _ => return None,
        };
        records.insert(name, record);
    }
    for (name, record) in parse(ours)? {
        records.insert(name, record);
    }
    Some(Value::String(serde_json::to_string(&records).ok()?))
}

/// A record of the pod's hash annotation as Go writes a `SidecarSetUpgradeSpec` it read.
fn upgrade_spec(r: &Map<String, Value>) -> Value {
    let mut out = Map::new();
    let field = |k: &str, zero: Value| r.get(k).cloned().unwrap_or(zero);
    if let Some(time) = r.get("updateTimestamp") {
        out.insert("updateTimestamp".into(), time.clone());
    }
    out.insert("hash".into(), field("hash", Value::String(String::new())));
    out.insert(
        "sidecarSetName".into(),
        field("sidecarSetName", Value::String(String::new())),
    );
    out.insert("sidecarList".into(), field("sidecarList", Value::Null));
    if let Some(v) = r
        .get("controllerRevision")
        .filter(|v| v.as_str() != Some(""))
    {
        out.insert("controllerRevision".into(), v.clone());
    }
    Value::Object(out)
}

/// Comma-separated lists joined, without repeating an item (`sort`: as a sorted set).
fn append_list(existing: &Value, ours: &Value, sort: bool) -> Value {
    let mut items: Vec<String> = existing
        .as_str()
        .unwrap_or_default()
        .split(',')
        .filter(|x| !x.is_empty())
        .map(str::to_owned)
        .collect();
    for item in ours
        .as_str()
        .unwrap_or_default()
        .split(',')
        .filter(|x| !x.is_empty())
    {
        if !items.iter().any(|x| x == item) {
            items.push(item.to_owned());
        }
    }
    if sort {
        items.sort();
        items.dedup();
    }
    Value::String(items.join(","))
}

fn take_list(spec: &mut Map<String, Value>, key: &str) -> Vec<Value> {
    match spec.field_mut(key) {
        Some(Value::Array(a)) => std::mem::take(a),
        _ => Vec::new(),
    }
}

fn insert_before(map: &mut Map<String, Value>, key: &str, value: Value, before: &str) {
    if map.contains_key(key) {
        map.insert(key.to_owned(), value);
        return;
    }
    let at = map.keys().position(|k| k == before).unwrap_or(map.len());
    map.shift_insert(at, key.to_owned(), value);
}

fn claim(owners: &mut Owners, name: &str, sidecar: &str) -> Result<(), InjectError> {
    if let Some(other) = owners.get("container", name) {
        if other == sidecar {
            return Err(conflict(format!(
                "sidecar `{sidecar}` injects two containers named `{name}`"
            ))
            .help("a pod's container and init container names are unique together; the API server refuses the pod"));
        }
        return Err(conflict(format!(
            "container `{name}` is injected by both sidecar `{other}` and sidecar `{sidecar}`"
        )));
    }
    owners.set("container", name, sidecar);
    Ok(())
}

/// Puts a sidecar's init container (or native sidecar container) among the pod's init
/// containers, before or after the pod's own as `position` says.
fn place_init(
    c: &Value,
    position: Position,
    lists: &mut Containers,
    rec: &mut Record,
    s: &Rendered,
) -> Result<(), InjectError> {
    let side = if position == Position::Before {
        &mut lists.init_before
    } else {
        &mut lists.init_after
    };
    place(
        c,
        &mut lists.inits,
        &lists.app,
        side,
        rec,
        PodList::InitContainers,
        s,
    )
}

/// Which of the pod's two lists of containers a sidecar container goes into.
#[derive(Clone, Copy)]
enum PodList {
    Containers,
    InitContainers,
}

impl PodList {
    /// Its field in a pod spec, and the other list's.
    fn fields(self) -> (&'static str, &'static str) {
        match self {
            PodList::Containers => ("containers", "initContainers"),
            PodList::InitContainers => ("initContainers", "containers"),
        }
    }
}

/// Puts a sidecar container into `list` (the pod's own containers or init containers, as
/// `into` says; `other` is the pod's other list): a same-name container of the pod is a user
/// override, merged over the sidecar's in place.
fn place(
    c: &Value,
    list: &mut [Value],
    other: &[Value],
    side: &mut Vec<Value>,
    rec: &mut Record,
    into: PodList,
    s: &Rendered,
) -> Result<(), InjectError> {
    let sidecar = s.name.as_str();
    let n = name_of(c).to_owned();
    let (here, there) = into.fields();
    if let Some(i) = position(list, &n) {
        if s.spec.same_name.unwrap_or_default() == SameName::Error {
            return Err(conflict(format!(
                "sidecar `{sidecar}` would replace the pod's own container `{n}`"
            ))
            .help(format!("rename the pod's container (or the sidecar's); a configuration that lets pods override this \
                sidecar says so with `sameName: override` on sidecar `{sidecar}` (OpenKruise replaced the app's \
                container silently: openkruise/kruise#565)"))
            .at(format!("/spec/{here}/{i}")));
        }
        let user = list[i].clone();
        list[i] = overlay(c, &user);
        rec.overrides.insert(n.clone(), user);
    } else if let Some(j) = position(other, &n) {
        return Err(conflict(format!(
            "sidecar `{sidecar}` injects `{n}` into {here}, but the pod has a container `{n}` \
            in {there}"
        ))
        .help(format!(
            "move the pod's own `{n}` to {here} to override the sidecar, or rename it"
        ))
        .at(format!("/spec/{there}/{j}")));
    } else {
        side.push(c.clone());
    }
    match into {
        PodList::InitContainers => rec.init_containers.push(n),
        PodList::Containers => rec.containers.push(n),
    }
    Ok(())
}

/// Merges named pod-level items (volumes, pull secrets): identical ones are shared, different
/// ones under one name are a conflict.
fn merge_named(
    spec: &mut Map<String, Value>,
    field: &'static str,
    items: &[Value],
    owners: &mut Owners,
    rec: &mut Record,
    s: &Rendered,
) -> Result<(), InjectError> {
    let sidecar = s.name.as_str();
    if items.is_empty() {
        return Ok(());
    }
    let mut created = false;
    let list = list_field(spec, field, &mut created);
    if created {
        rec.created.push(format!("/spec/{field}"));
    }
    let singular = if field == "volumes" {
        "volume"
    } else {
        "image pull secret"
    };
    let recorded = |rec: &mut Record, n: String| {
        if field == "volumes" {
            rec.volumes.push(n);
        } else {
            rec.image_pull_secrets.push(n);
        }
    };
    for item in items {
        let n = name_of(item).to_owned();
        match position(list, &n) {
            Some(i) if &list[i] == item => {
                if owners.get(field, &n).is_some() {
                    recorded(rec, n);
                }
            }
            // The pod's own volume of that name stays, and the sidecar's mounts use it.
            Some(_)
                if field == "volumes"
                    && s.spec.keep_pod_volumes
                    && owners.get(field, &n).is_none() => {}
            Some(_) => {
                return Err(match owners.get(field, &n) {
                    Some(other) => conflict(format!(
                        "{singular} `{n}` is defined differently by sidecar `{other}` and sidecar `{sidecar}`"
                    )),
                    None => conflict(format!(
                        "sidecar `{sidecar}` defines {singular} `{n}` differently from the pod's own {singular} `{n}`"
                    ))
                    .help(pod_item_help(field, &n, sidecar))
                    .at(format!("/spec/{field}/{}", position(list, &n).unwrap_or_default())),
                });
            }
            None => {
                list.push(item.clone());
                owners.set(field, &n, sidecar);
                recorded(rec, n);
            }
        }
    }
    Ok(())
}

/// Adds the sidecar's env, volume mounts, arguments and command words to app container `c`.
fn add_to_app_container(
    c: &mut Value,
    s: &Rendered,
    owners: &mut Owners,
    rec: &mut Record,
    apps: &mut AppEntries,
) -> Result<(), InjectError> {
    let cname = name_of(c).to_owned();
    let Value::Object(cm) = c else { return Ok(()) };
    add_env(cm, &cname, s, owners, rec, apps)?;
    add_mounts(cm, &cname, s, owners, rec, apps)?;
    // Creating `args` is always possible, so this cannot fail.
    let args = &s.body.append_args;
    let _ = append_words(cm, "args", args, (rec, apps), &cname, true);
    let command = &s.body.append_command;
    append_words(cm, "command", command, (rec, apps), &cname, false).map_err(|_| {
        InjectError::new(
            codes::INJECT_NO_COMMAND,
            format!(
                "sidecar `{}` appends to the command of container `{cname}`, which has none (it runs the image's \
                    entrypoint)",
                s.name
            ),
        )
        .help("use `appendArgs`, or limit the sidecar with `targetContainers`")
    })?;
    Ok(())
}

/// Adds the sidecar's env vars to app container `cname`; its own value of a name wins.
fn add_env(
    cm: &mut Map<String, Value>,
    cname: &str,
    s: &Rendered,
    owners: &mut Owners,
    rec: &mut Record,
    apps: &mut AppEntries,
) -> Result<(), InjectError> {
    for e in &s.body.env {
        let n = name_of(e).to_owned();
        let key = format!("{cname}/{n}");
        let mut created = false;
        let list = list_field(cm, "env", &mut created);
        match position(list, &n) {
            Some(i) if &list[i] == e => {
                if owners.get("env", &key).is_some() {
                    apps.of(rec, cname).env.push(n);
                }
            }
            Some(_) => {
                if let Some(other) = owners.get("env", &key) {
                    return Err(conflict(format!(
                        "env `{n}` of container `{cname}` is set differently by sidecar `{other}` and sidecar `{}`",
                        s.name
                    )));
                }
                // The app's own value wins.
            }
            None => {
                list.push(e.clone());
                owners.set("env", &key, &s.name);
                let a = apps.of(rec, cname);
                a.env.push(n);
                if created {
                    a.created.push("env".to_owned());
                }
            }
        }
    }
    Ok(())
}

/// Adds the sidecar's volume mounts to app container `cname`; a different mount at one of
/// their paths is a conflict.
fn add_mounts(
    cm: &mut Map<String, Value>,
    cname: &str,
    s: &Rendered,
    owners: &mut Owners,
    rec: &mut Record,
    apps: &mut AppEntries,
) -> Result<(), InjectError> {
    // Volume names the container mounted before this sidecar (with `mountsByName` only).
    let mounted: Vec<String> = if s.spec.mounts_by_name {
        cm.field("volumeMounts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|m| name_of(m).to_owned())
            .collect()
    } else {
        Vec::new()
    };
    for m in &s.body.volume_mounts {
        if mounted.iter().any(|n| n == name_of(m)) {
            continue;
        }
        let path = m
            .field("mountPath")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let key = format!("{cname}/{path}");
        let mut created = false;
        let list = list_field(cm, "volumeMounts", &mut created);
        let existing = list
            .iter()
            .position(|x| x.field("mountPath").and_then(Value::as_str) == Some(path.as_str()));
        match existing {
            Some(i) if &list[i] == m => {
                if owners.get("mount", &key).is_some() {
                    apps.of(rec, cname).volume_mounts.push(path);
                }
            }
            Some(_) => {
                return Err(conflict(match owners.get("mount", &key) {
                    Some(other) => format!(
                        "sidecars `{other}` and `{}` mount different volumes at `{path}` in container `{cname}`",
                        s.name
                    ),
                    None => format!(
                        "sidecar `{}` mounts `{}` at `{path}`, where container `{cname}` already mounts something else",
                        s.name,
                        name_of(m)
                    ),
                }));
            }
            None => {
                list.push(m.clone());
                owners.set("mount", &key, &s.name);
                let a = apps.of(rec, cname);
                a.volume_mounts.push(path);
                if created {
                    a.created.push("volumeMounts".to_owned());
                }
            }
        }
    }
    Ok(())
}

fn append_words(
    cm: &mut Map<String, Value>,
    field: &str,
    words: &[String],
    (rec, apps): (&mut Record, &mut AppEntries),
    cname: &str,
    may_create: bool,
) -> Result<(), ()> {
    if words.is_empty() {
        return Ok(());
    }
    if !may_create && !matches!(cm.field(field), Some(Value::Array(_))) {
        return Err(());
    }
    let mut created = false;
    let list = list_field(cm, field, &mut created);
    let mut added = Vec::new();
    for w in words {
        if !list.iter().any(|x| x.as_str() == Some(w)) {
            list.push(Value::String(w.clone()));
            added.push(w.clone());
        }
    }
    let a = apps.of(rec, cname);
    if field == "args" {
        a.args.extend(added);
    } else {
        a.command.extend(added);
    }
    if created {
        a.created.push(field.to_owned());
    }
    Ok(())
}

fn set_service_account(
    spec: &mut Map<String, Value>,
    sa: &str,
    s: &Rendered,
    original: Option<&str>,
    owners: &mut Owners,
    rec: &mut Record,
) -> Result<bool, InjectError> {
    let current = spec
        .field("serviceAccountName")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Some(other) = owners.get("serviceAccount", "") {
        if current.as_deref() != Some(sa) {
            return Err(InjectError::new(
                codes::INJECT_SERVICE_ACCOUNT_CONFLICT,
                format!(
                    "sidecars `{other}` and `{}` want different service accounts (`{}` and `{sa}`)",
                    s.name,
                    current.unwrap_or_default()
                ),
            )
            .help("a pod has one service account; give both sidecars the same one"));
        }
        return Ok(false);
    }
    let unset = original.is_none_or(|o| o.is_empty() || o == "default");
    let set = match s.service_account_policy {
        ServiceAccountPolicy::Never => false,
        ServiceAccountPolicy::IfUnset => unset,
        ServiceAccountPolicy::Force => true,
    };
    if set && current.as_deref() != Some(sa) {
        insert_before(
            spec,
            "serviceAccountName",
            Value::String(sa.to_owned()),
            "containers",
        );
        owners.set("serviceAccount", "", &s.name);
        rec.service_account_name = Some(Previous { previous: current });
        return Ok(true);
    }
    Ok(false)
}

/// Removes the old service account's token mount from a container (tumblr's behaviour), so the
/// admission controller mounts the new account's; recorded to be put back on strip.
fn remove_token_mounts(c: &mut Value, rec: &mut Record, apps: &mut AppEntries) {
    let cname = name_of(c).to_owned();
    let Some(Value::Array(mounts)) = c.field_mut("volumeMounts") else {
        return;
    };
    let mut removed = Vec::new();
    let mut i = 0;
    while i < mounts.len() {
        if mounts[i].field("mountPath").and_then(Value::as_str) == Some(TOKEN_MOUNT) {
            removed.push(super::status::RemovedMount {
                index: i + removed.len(),
                mount: mounts.remove(i),
            });
        } else {
            i += 1;
        }
    }
    if !removed.is_empty() {
        apps.of(rec, &cname).removed_mounts.extend(removed);
    }
}

/// Host aliases (appended), `hostNetwork` and `hostPID`, each recorded.
fn add_host_settings(spec: &mut Map<String, Value>, s: &Rendered, rec: &mut Record) {
    if !s.body.host_aliases.is_empty() {
        let mut created = false;
        let list = list_field(spec, "hostAliases", &mut created);
        if created {
            rec.created.push("/spec/hostAliases".to_owned());
        }
        list.extend(s.body.host_aliases.iter().cloned());
        rec.host_aliases.extend(s.body.host_aliases.iter().cloned());
    }
    for (field, wanted, slot) in [
        ("hostNetwork", s.body.host_network, &mut rec.host_network),
        ("hostPID", s.body.host_pid, &mut rec.host_pid),
    ] {
        let current = spec.field(field).and_then(Value::as_bool);
        if wanted && current != Some(true) {
            spec.insert(field.to_owned(), Value::Bool(true));
            *slot = Some(super::status::PreviousBool { previous: current });
        }
    }
}
