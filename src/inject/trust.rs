//! The status annotation comes from the manifest, which kinject does not trust: before
//! anything is taken out or put back on its word, its records are checked. Every record must
//! be one kinject could have written for this pod (its claims consistent with each other and
//! with the pod), and a record of a sidecar the configuration defines may claim only what that
//! sidecar adds. A forged record could otherwise make `inject` (as an upgrade) or `uninject`
//! delete the pod's own containers, volumes, env or arguments, or another configuration's
//! sidecar, or put back a "previous" `hostNetwork`, service account or annotation it never had.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde_json::Value;

use super::error::InjectError;
use super::pod::name_of;
use super::sidecar::Rendered;
use super::status::{Record, STATUS_ANNOTATION, Status};
use crate::config::SameName;
use crate::diagnostic::codes;
use crate::json::{Fields, Pointer};

/// Where kinject mounts nothing but takes out: a service account's token (see
/// `removeTokenMounts`); the only mounts a record may put back.
const TOKEN_MOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// Pod-template fields a sidecar's record may say it created (and so remove when empty).
const RECORD_CREATES: &[&str] = &[
    "/metadata",
    "/metadata/annotations",
    "/metadata/labels",
    "/spec/initContainers",
    "/spec/volumes",
    "/spec/imagePullSecrets",
    "/spec/hostAliases",
];

/// Fields the status itself may say it created.
const STATUS_CREATES: &[&str] = &["/metadata", "/metadata/annotations", "/spec/containers"];

/// Fields of an app container a record may say it created.
const APP_CREATES: &[&str] = &["volumeMounts", "env", "args", "command"];

/// What a sidecar, as the configuration now defines it, adds to a pod: by name.
#[derive(Debug, Default)]
pub(crate) struct Adds {
    containers: BTreeSet<String>,
    volumes: BTreeSet<String>,
    pull_secrets: BTreeSet<String>,
    annotations: BTreeSet<String>,
    labels: BTreeSet<String>,
    env: BTreeSet<String>,
    mounts: BTreeSet<String>,
    args: BTreeSet<String>,
    command: BTreeSet<String>,
    host_aliases: Vec<Value>,
    service_account: bool,
    host_network: bool,
    host_pid: bool,
    overrides: bool,
}

impl Adds {
    /// What a rendered sidecar adds.
    pub(crate) fn of(r: &Rendered) -> Self {
        let body = serde_json::to_value(&r.body).unwrap_or_default();
        Adds::in_body(&body, r.spec.same_name)
    }

    /// What a sidecar adds, read from its fields (`body`: rendered, or the definition as
    /// written when it cannot be rendered, where templated names then match nothing).
    pub(crate) fn in_body(body: &Value, same_name: Option<SameName>) -> Self {
        let list = |field: &str| {
            body.field(field)
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice)
        };
        let names = |field: &str| -> BTreeSet<String> {
            list(field).iter().map(|i| name_of(i).to_owned()).collect()
        };
        let words = |field: &str| -> BTreeSet<String> {
            list(field)
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        };
        let keys = |field: &str| -> BTreeSet<String> {
            body.field(field)
                .and_then(Value::as_object)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default()
        };
        let set = |field: &str| {
            body.field(field)
                .is_some_and(|v| !v.is_null() && v != &Value::Bool(false))
        };
        Adds {
            containers: names("containers")
                .into_iter()
                .chain(names("initContainers"))
                .collect(),
            volumes: names("volumes"),
            pull_secrets: names("imagePullSecrets"),
            annotations: keys("annotations"),
            labels: keys("labels"),
            env: names("env"),
            mounts: list("volumeMounts")
                .iter()
                .filter_map(|m| m.field("mountPath").and_then(Value::as_str))
                .map(str::to_owned)
                .collect(),
            args: words("appendArgs"),
            command: words("appendCommand"),
            host_aliases: list("hostAliases").to_vec(),
            service_account: set("serviceAccountName"),
            host_network: set("hostNetwork"),
            host_pid: set("hostPID"),
            overrides: same_name == Some(SameName::Override),
        }
    }
}

/// Checks `status`, read from `pod`, before anything is done on its word. `adds` gives, for a
/// record's sidecar that the configuration defines, what it adds. `at` is the annotation's
/// pointer in the object, for the error.
pub(crate) fn check(
    pod: &Value,
    status: &Status,
    adds: &mut dyn FnMut(&str) -> Result<Option<Adds>, InjectError>,
    at: &str,
) -> Result<(), InjectError> {
    let refuse = |message: String| {
        InjectError::new(codes::INJECT_UNTRUSTED_STATUS, format!("the `{STATUS_ANNOTATION}` annotation {message}"))
            .help("kinject removes only what it added: if an earlier definition of the sidecar added it, remove it by \
                hand (or with `kinject uninject` and that configuration); if kinject did not write this annotation, \
                delete the annotation")
            .at(at)
    };
    for p in &status.created {
        if !STATUS_CREATES.contains(&p.as_str()) {
            return Err(refuse(format!(
                "says it created `{p}`, which kinject never creates for it"
            )));
        }
    }
    let mut owner: BTreeMap<&str, &str> = BTreeMap::new();
    let own = own_mounts(pod, status);
    for r in &status.sidecars {
        consistent(&own, r, &mut owner).map_err(&refuse)?;
        if let Some(adds) = adds(&r.name)? {
            defined(r, &adds).map_err(&refuse)?;
        }
    }
    Ok(())
}

/// What a record may claim whatever the configuration: fields kinject creates, containers no
/// other record claims, mounts it puts back that are token mounts, overrides of its own
/// containers, and volumes no container of the pod's own mounts.
fn consistent<'s>(
    own: &OwnMounts,
    r: &'s Record,
    owner: &mut BTreeMap<&'s str, &'s str>,
) -> Result<(), String> {
    let sidecar = &r.name;
    for p in &r.created {
        if !RECORD_CREATES.contains(&p.as_str()) {
            return Err(format!(
                "says sidecar `{sidecar}` created `{p}`, which a sidecar never creates"
            ));
        }
    }
    for n in r.containers.iter().chain(&r.init_containers) {
        if let Some(other) = owner.insert(n, sidecar) {
            return Err(format!(
                "says both sidecar `{other}` and sidecar `{sidecar}` added container `{n}`"
            ));
        }
    }
    for n in r.overrides.keys() {
        if !r.containers.contains(n) && !r.init_containers.contains(n) {
            return Err(format!(
                "holds an override of container `{n}` for sidecar `{sidecar}`, which does not say it added `{n}`"
            ));
        }
    }
    for app in &r.app_containers {
        if let Some(f) = app
            .created
            .iter()
            .find(|f| !APP_CREATES.contains(&f.as_str()))
        {
            return Err(format!(
                "says sidecar `{sidecar}` created `{f}` in container `{}`, which a sidecar never creates",
                app.name
            ));
        }
        if let Some(m) = app
            .removed_mounts
            .iter()
            .find(|m| m.mount.field("mountPath").and_then(Value::as_str) != Some(TOKEN_MOUNT))
        {
            return Err(format!(
                "says sidecar `{sidecar}` took mount `{}` out of container `{}`; kinject takes out only service \
                    account token mounts",
                m.mount, app.name
            ));
        }
    }
    // A volume the pod's own containers mount (with mounts no record added) is the pod's.
    for v in &r.volumes {
        if let Some((c, path)) = own.get(v.as_str()) {
            return Err(format!(
                "says sidecar `{sidecar}` added volume `{v}`, which the pod's own container `{c}` mounts at `{path}`"
            ));
        }
    }
    Ok(())
}

/// By volume, the first mount of it by a container no record claims that no record added:
/// the container and the mount path (containers, then init containers, in order).
type OwnMounts<'p> = HashMap<&'p str, (&'p str, &'p str)>;

/// The pod's own mounts (`OwnMounts`), found once for all the records: a search of every
/// record's additions for every mount of the pod took time quadratic in its containers.
fn own_mounts<'p>(pod: &'p Value, status: &'p Status) -> OwnMounts<'p> {
    let claimed: HashSet<&str> = status
        .sidecars
        .iter()
        .flat_map(|r| r.containers.iter().chain(&r.init_containers))
        .map(String::as_str)
        .collect();
    let added: HashSet<(&str, &str)> = status
        .sidecars
        .iter()
        .flat_map(|r| &r.app_containers)
        .flat_map(|a| {
            a.volume_mounts
                .iter()
                .map(|p| (a.name.as_str(), p.as_str()))
        })
        .collect();
    let mut own = HashMap::new();
    for list in ["/spec/containers", "/spec/initContainers"] {
        let Some(Value::Array(containers)) = pod.at_pointer(list) else {
            continue;
        };
        for c in containers {
            let cname = name_of(c);
            if claimed.contains(cname) {
                continue;
            }
            let Some(Value::Array(mounts)) = c.field("volumeMounts") else {
                continue;
            };
            for m in mounts {
                let path = m.field("mountPath").and_then(Value::as_str).unwrap_or("");
                if !added.contains(&(cname, path)) {
                    own.entry(name_of(m)).or_insert((cname, path));
                }
            }
        }
    }
    own
}

/// What a record of a sidecar the configuration defines may claim: what that sidecar adds.
fn defined(r: &Record, adds: &Adds) -> Result<(), String> {
    names_defined(r, adds)?;
    settings_defined(r, adds)
}

/// The names the record claims (containers, volumes, pull secrets, annotations, labels, and
/// what it added to app containers).
fn names_defined(r: &Record, adds: &Adds) -> Result<(), String> {
    let sidecar = &r.name;
    let beyond = |what: &str, claimed: &[String], known: &BTreeSet<String>| {
        claimed.iter().find(|n| !known.contains(*n)).map(|n| {
            format!("says sidecar `{sidecar}` added {what} `{n}`, which sidecar `{sidecar}` does not add")
        })
    };
    let annotations: Vec<String> = r.replaced_annotations.keys().cloned().collect();
    let found = beyond("container", &r.containers, &adds.containers)
        .or_else(|| beyond("init container", &r.init_containers, &adds.containers))
        .or_else(|| beyond("volume", &r.volumes, &adds.volumes))
        .or_else(|| {
            beyond(
                "image pull secret",
                &r.image_pull_secrets,
                &adds.pull_secrets,
            )
        })
        .or_else(|| beyond("annotation", &r.annotations, &adds.annotations))
        .or_else(|| beyond("annotation", &annotations, &adds.annotations))
        .or_else(|| beyond("label", &r.labels, &adds.labels));
    if let Some(message) = found {
        return Err(message);
    }
    for app in &r.app_containers {
        let c = &app.name;
        let found = beyond(&format!("to container `{c}` env"), &app.env, &adds.env)
            .or_else(|| {
                beyond(
                    &format!("to container `{c}` the mount at"),
                    &app.volume_mounts,
                    &adds.mounts,
                )
            })
            .or_else(|| {
                beyond(
                    &format!("to container `{c}` the argument"),
                    &app.args,
                    &adds.args,
                )
            })
            .or_else(|| {
                beyond(
                    &format!("to container `{c}` the command word"),
                    &app.command,
                    &adds.command,
                )
            });
        if let Some(message) = found {
            return Err(message);
        }
        if !app.removed_mounts.is_empty() && !adds.service_account {
            return Err(format!(
                "says sidecar `{sidecar}` took the token mount out of container `{c}`, which sidecar `{sidecar}` does \
                    not do"
            ));
        }
    }
    Ok(())
}

/// The pod settings (service account, `hostNetwork`, `hostPID`, overrides) and host aliases
/// the record claims.
fn settings_defined(r: &Record, adds: &Adds) -> Result<(), String> {
    let sidecar = &r.name;
    let settings = [
        (
            "the service account",
            r.service_account_name.is_some(),
            adds.service_account,
        ),
        ("`hostNetwork`", r.host_network.is_some(), adds.host_network),
        ("`hostPID`", r.host_pid.is_some(), adds.host_pid),
        (
            "an override of its containers",
            !r.overrides.is_empty(),
            adds.overrides,
        ),
    ];
    if let Some((what, _, _)) = settings
        .iter()
        .find(|(_, claimed, known)| *claimed && !known)
    {
        return Err(format!(
            "says sidecar `{sidecar}` set {what}, which sidecar `{sidecar}` does not set"
        ));
    }
    if let Some(a) = r
        .host_aliases
        .iter()
        .find(|a| !adds.host_aliases.contains(a))
    {
        return Err(format!(
            "says sidecar `{sidecar}` added host alias {a}, which sidecar `{sidecar}` does not add"
        ));
    }
    Ok(())
}

/// What a record says its sidecar added, in words: `containers `a`, `b` and volume `v``.
pub(crate) fn claims(r: &Record) -> String {
    let mut parts = Vec::new();
    for (one, many, names) in [
        ("container", "containers", &r.containers),
        ("init container", "init containers", &r.init_containers),
        ("volume", "volumes", &r.volumes),
        (
            "image pull secret",
            "image pull secrets",
            &r.image_pull_secrets,
        ),
        ("annotation", "annotations", &r.annotations),
        ("label", "labels", &r.labels),
    ] {
        if !names.is_empty() {
            let list: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            let word = if names.len() == 1 { one } else { many };
            parts.push(format!("{word} {}", list.join(", ")));
        }
    }
    for app in &r.app_containers {
        let n = app.env.len() + app.volume_mounts.len() + app.args.len() + app.command.len();
        if n > 0 {
            parts.push(format!("{n} item(s) to container `{}`", app.name));
        }
    }
    if parts.is_empty() {
        "nothing".to_owned()
    } else {
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod() -> Value {
        json!({
            "metadata": {"annotations": {}},
            "spec": {
                "containers": [
                    {"name": "app", "image": "a", "env": [{"name": "E", "value": "1"}],
                     "volumeMounts": [{"name": "data", "mountPath": "/data"},
                                      {"name": "logs", "mountPath": "/logs"}]},
                    {"name": "s", "image": "s"},
                ],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "d"}},
                            {"name": "logs", "emptyDir": {}}],
            },
        })
    }

    /// Sidecar `s` as configured: container `s`, volume `logs` mounted into the app at `/logs`,
    /// env `E`, argument `--s`.
    fn adds() -> Adds {
        Adds::in_body(
            &json!({"containers": [{"name": "s"}], "volumes": [{"name": "logs"}],
                    "volumeMounts": [{"name": "logs", "mountPath": "/logs"}],
                    "env": [{"name": "E"}], "appendArgs": ["--s"],
                    "annotations": {"s/a": "1"}}),
            None,
        )
    }

    fn verdict(status: Value, configured: bool) -> Result<(), String> {
        let status: Status = serde_json::from_value(status).expect("a status");
        let mut lookup = |name: &str| Ok((configured && name == "s").then(adds));
        check(&pod(), &status, &mut lookup, "/x").map_err(|e| e.message)
    }

    fn record(extra: Value) -> Value {
        let mut r = json!({"name": "s", "hash": "0", "containers": ["s"]});
        for (k, v) in extra.as_object().expect("fields") {
            r[k] = v.clone();
        }
        json!({"version": 1, "sidecars": [r]})
    }

    #[test]
    fn a_record_of_what_the_sidecar_adds_passes() {
        let r = record(json!({"volumes": ["logs"], "annotations": ["s/a"],
            "appContainers": [{"name": "app", "env": ["E"], "volumeMounts": ["/logs"], "args": ["--s"]}]}));
        assert_eq!(verdict(r.clone(), true), Ok(()));
        assert_eq!(verdict(r, false), Ok(()));
    }

    #[test]
    fn claims_beyond_the_configured_sidecar_are_refused() {
        for (extra, names) in [
            (json!({"containers": ["app"]}), "container `app`"),
            (json!({"initContainers": ["init"]}), "init container `init`"),
            (json!({"volumes": ["data"]}), "volume `data`"),
            (
                json!({"imagePullSecrets": ["regcred"]}),
                "image pull secret `regcred`",
            ),
            (json!({"annotations": ["team"]}), "annotation `team`"),
            (
                json!({"replacedAnnotations": {"team": "x"}}),
                "annotation `team`",
            ),
            (json!({"labels": ["tier"]}), "label `tier`"),
            (
                json!({"appContainers": [{"name": "app", "env": ["PGDATA"]}]}),
                "env `PGDATA`",
            ),
            (
                json!({"appContainers": [{"name": "app", "volumeMounts": ["/data"]}]}),
                "`/data`",
            ),
            (
                json!({"appContainers": [{"name": "app", "args": ["--fsync"]}]}),
                "`--fsync`",
            ),
            (
                json!({"appContainers": [{"name": "app", "command": ["run"]}]}),
                "`run`",
            ),
            (json!({"hostNetwork": {"previous": true}}), "`hostNetwork`"),
            (json!({"hostPid": {"previous": true}}), "`hostPID`"),
            (
                json!({"serviceAccountName": {"previous": "admin"}}),
                "service account",
            ),
            (
                json!({"overrides": {"s": {"name": "s", "image": "evil"}}}),
                "override",
            ),
            (json!({"hostAliases": [{"ip": "1.2.3.4"}]}), "host alias"),
        ] {
            let message = verdict(record(extra.clone()), true).expect_err(names);
            assert!(message.contains(names), "{extra}: {message}");
            // Without the configuration, only consistency is checked.
            if !names.contains("volume `data`") {
                assert_eq!(verdict(record(extra), false), Ok(()), "{names}");
            }
        }
    }

    #[test]
    fn inconsistent_records_are_refused_whatever_the_configuration() {
        let two = json!({"version": 1, "sidecars": [
            {"name": "a", "hash": "0", "containers": ["s"]},
            {"name": "b", "hash": "0", "initContainers": ["s"]}]});
        for (status, says) in [
            (two, "both sidecar `a` and sidecar `b` added container `s`"),
            (record(json!({"created": ["/spec"]})), "created `/spec`"),
            (
                json!({"version": 1, "sidecars": [], "created": ["/spec/volumes"]}),
                "created `/spec/volumes`",
            ),
            (
                record(json!({"overrides": {"app": {}}})),
                "override of container `app`",
            ),
            (
                record(json!({"appContainers": [{"name": "app", "created": ["image"]}]})),
                "created `image`",
            ),
            (
                record(json!({"appContainers": [{"name": "app", "removedMounts": [
                    {"index": 0, "mount": {"name": "data", "mountPath": "/data"}}]}]})),
                "took mount",
            ),
            // The app mounts `data` itself: the volume is the pod's.
            (
                record(json!({"volumes": ["data"]})),
                "own container `app` mounts at `/data`",
            ),
        ] {
            for configured in [false, true] {
                let message = verdict(status.clone(), configured).expect_err(says);
                assert!(message.contains(says), "{says}: {message}");
            }
        }
        // A mount a record added does not make the volume the pod's.
        let r = record(json!({"volumes": ["logs"],
            "appContainers": [{"name": "app", "volumeMounts": ["/logs"]}]}));
        assert_eq!(verdict(r, false), Ok(()));
    }
}
