//! `kinject serve --print-manifests`: what a cluster needs to run the server, made from the
//! configuration so the two cannot disagree. The configuration files go into a ConfigMap the
//! server reads (and re-reads when it changes); the webhook configuration sends what
//! `decide` derived from the rules. Objects are built as values and written as YAML, one
//! document each, in a fixed order.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::decide::{Namespaces, Webhook};
use crate::kinds::Resource;
use crate::yaml::emit::Emitter;
use crate::yaml::style::Style;

/// The name of every object (and the server's Service host `kinject.<namespace>.svc`).
const NAME: &str = "kinject";
/// Where the ConfigMap and the certificate's Secret are mounted.
const CONFIG_DIR: &str = "/etc/kinject/config";
const TLS_DIR: &str = "/etc/kinject/tls";
/// The image's user (Dockerfile: `USER 65532:65532`).
const USER: u32 = 65532;
/// The kubelet's `preStop` pause before the server hears SIGTERM: the time the API server's
/// endpoints take to stop sending requests to a terminating pod.
const PRE_STOP_SECONDS: u32 = 5;
/// Namespaces the webhook never sends, whatever the configuration: a webhook that fails
/// closed must not stand between the cluster and its own system pods.
const SYSTEM_NAMESPACES: [&str; 3] = ["kube-system", "kube-public", "kube-node-lease"];

/// How the manifests are made, beside the configuration: the flags of `--print-manifests`.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub image: String,
    pub namespace: String,
    pub replicas: u32,
    /// `Fail` or `Ignore`.
    pub failure_policy: &'static str,
    pub timeout_seconds: u32,
    pub cert_manager: bool,
    /// The server's HTTPS port (`--listen`) and its probe and metrics port (`--probe-listen`).
    pub port: u16,
    pub probe_port: u16,
    /// The path the API server posts to (`--path`).
    pub path: String,
    /// `--shutdown-timeout`, for the pod's `terminationGracePeriodSeconds`.
    pub shutdown_seconds: f64,
    /// More arguments of the server, after the configuration files (`--set`, and its flags
    /// given other than their defaults).
    pub args: Vec<String>,
}

/// The manifests, as one multi-document YAML text: Namespace, ServiceAccount, ConfigMap (the
/// `files`, each a name and its text, in the order the server reads them), cert-manager's
/// Issuers and Certificates (unless left out), Deployment, PodDisruptionBudget, Service,
/// MutatingWebhookConfiguration.
pub(crate) fn manifests(files: &[(String, Arc<str>)], webhook: &Webhook, o: &Options) -> String {
    let keys = config_keys(files);
    let mut documents = vec![
        namespace(o),
        service_account(o),
        config_map(files, &keys, o),
    ];
    if o.cert_manager {
        documents.extend(certificates(o));
    }
    documents.extend([
        deployment(&keys, o),
        disruption_budget(o),
        service(o),
        webhook_configuration(webhook, o),
    ]);
    let mut out = header(files, webhook, o);
    let style = Style::default();
    for Commented { comment, object } in documents {
        out.push_str("---\n");
        for line in comment.lines() {
            out.push_str(&format!("# {line}\n"));
        }
        let mut emitter = Emitter::new(&style);
        emitter.document(&object);
        out.push_str(&emitter.out);
    }
    out
}

/// The comment the text starts with: how it was made, what to apply first, what it sends.
fn header(files: &[(String, Arc<str>)], webhook: &Webhook, o: &Options) -> String {
    let names: Vec<String> = files
        .iter()
        .map(|(n, _)| crate::diagnostic::printable_name(n).into_owned())
        .collect();
    let made = format!(
        "kinject serve, the mutating webhook: made by `kinject serve --print-manifests` from {}, \
         which the ConfigMap {NAME}-config holds. Made again from a changed configuration and \
         applied, it is read again by the running servers (no restart). docs/serve.md explains \
         each object.",
        names.join(", ")
    );
    let mut lines = wrap(&made);
    if o.cert_manager {
        lines.push("Needs cert-manager (its Issuer and Certificate kinds) in the cluster.".into());
    } else {
        lines.extend([
            format!("Without cert-manager: create the Secret {NAME}-tls (tls.crt, tls.key) in"),
            format!(
                "{} for {NAME}.{}.svc, and set the webhook's caBundle",
                o.namespace, o.namespace
            ),
            "to its CA (docs/serve.md shows the openssl commands).".to_owned(),
        ]);
    }
    let resources: Vec<String> = webhook.resources.iter().map(resource_name).collect();
    lines.push(format!("The API server sends: {}.", resources.join(", ")));
    for r in webhook.resources.iter().filter(|r| r.guessed) {
        lines.push(format!(
            "`{}` is a custom kind's plural as Kubernetes guesses it: check its CRD.",
            r.resource
        ));
    }
    let mut out = String::new();
    for line in lines {
        out.push_str(&format!("# {line}\n"));
    }
    out
}

/// `text` in lines of at most 88 characters (longer words on lines of their own).
fn wrap(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if line.len() + 1 + word.len() <= 88 => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_owned()),
        }
    }
    lines
}

/// What the webhook intercepts and what happens when no server answers, said on stderr by
/// `--print-manifests` before anything is applied: `(lines, warning)`, where `warning` says
/// the webhook takes every namespace and why, with the `failurePolicy` trade-off.
pub(crate) fn scope(webhook: &Webhook, o: &Options) -> (Vec<String>, Option<String>) {
    let resources: Vec<String> = webhook.resources.iter().map(resource_name).collect();
    let excluded = {
        let mut e: Vec<String> = SYSTEM_NAMESPACES.map(str::to_owned).to_vec();
        e.push(o.namespace.clone());
        e.extend(
            webhook
                .skip_namespaces
                .iter()
                .filter(|n| !SYSTEM_NAMESPACES.contains(&n.as_str()) && **n != o.namespace)
                .cloned(),
        );
        e.join(", ")
    };
    let namespaces = match &webhook.namespaces {
        Namespaces::Named(names) => format!("in namespaces {}", names.join(", ")),
        _ => format!("in every namespace but {excluded}"),
    };
    let mut lines = vec![format!(
        "the webhook intercepts CREATE of {} {namespaces}",
        resources.join(", ")
    )];
    if let Some(selector) = &webhook.namespace_selector {
        lines.push(format!(
            "  whose labels the rules' namespaceSelector selects: {}",
            serde_json::to_string(selector).unwrap_or_default()
        ));
    }
    if let Some(selector) = &webhook.object_selector {
        lines.push(format!(
            "  objects whose labels select: {}",
            serde_json::to_string(selector).unwrap_or_default()
        ));
    }
    let down = if o.failure_policy == "Fail" {
        "no pod it intercepts is created while no server answers (`--failure-policy Ignore` creates them without \
            sidecars instead)"
    } else {
        "a pod it intercepts is created without its sidecars while no server answers (`--failure-policy Fail` refuses \
            it instead)"
    };
    lines.push(format!(
        "failurePolicy {}, timeoutSeconds {}: {down}",
        o.failure_policy, o.timeout_seconds
    ));
    let warning = match &webhook.namespaces {
        Namespaces::Named(_) => None,
        Namespaces::All(why) => Some(format!(
            "the webhook intercepts pods of every namespace but {excluded}, as {why}: to narrow it to the namespaces \
                your rules name, give every rule `namespaces:` by name and set `defaults.allowRequests: false`"
        )),
        Namespaces::Patterns(rule, patterns) => Some(format!(
            "rule `{rule}` names namespaces by pattern ({}), which a webhook's namespaceSelector cannot say: the \
                webhook intercepts pods of every namespace but {excluded}, and the server decides; to narrow it, name \
                the namespaces, or label them and select that label with the rules' namespaceSelector (the webhook \
                then uses it)",
            patterns.join(", ")
        )),
    };
    (lines, warning)
}

/// `deployments.apps`, `pods`.
fn resource_name(r: &Resource) -> String {
    if r.group.is_empty() {
        r.resource.clone()
    } else {
        format!("{}.{}", r.resource, r.group)
    }
}

/// The labels every object has, and the server's pods are selected by.
fn labels() -> Value {
    json!({"app.kubernetes.io/name": NAME, "app.kubernetes.io/component": "webhook"})
}

fn metadata(name: &str, o: &Options) -> Value {
    json!({"name": name, "namespace": o.namespace, "labels": labels()})
}

/// One object of the manifests, with the comment written above it (what it is for).
struct Commented {
    comment: String,
    object: Value,
}

impl Commented {
    fn new(comment: String, object: Value) -> Commented {
        Commented { comment, object }
    }
}

fn namespace(o: &Options) -> Commented {
    let mut labels = labels();
    // The server's pod meets the restricted Pod Security Standard.
    labels["pod-security.kubernetes.io/enforce"] = json!("restricted");
    Commented::new(
        "The server's namespace: the webhook never sends its objects (a server that is not\n\
         running could not admit its own pods)."
            .to_owned(),
        json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": o.namespace, "labels": labels}}),
    )
}

fn service_account(o: &Options) -> Commented {
    Commented::new(
        "The server calls no API: no token, no RBAC.".to_owned(),
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": metadata(NAME, o),
            "automountServiceAccountToken": false}),
    )
}

/// The ConfigMap key of each file: its base name, made a valid key, unique.
fn config_keys(files: &[(String, Arc<str>)]) -> Vec<String> {
    let mut keys: Vec<String> = Vec::with_capacity(files.len());
    for (name, _) in files {
        let base = std::path::Path::new(name)
            .file_name()
            .map_or_else(|| name.clone(), |b| b.to_string_lossy().into_owned());
        let mut key: String = base
            .chars()
            .map(|c| match c {
                'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' | '.' => c,
                _ => '-',
            })
            .collect();
        if key.trim_matches('.').is_empty() {
            key = "config.yaml".to_owned();
        }
        let mut unique = key.clone();
        let mut n = 2;
        while keys.contains(&unique) {
            unique = format!("{n}-{key}");
            n += 1;
        }
        keys.push(unique);
    }
    keys
}

fn config_map(files: &[(String, Arc<str>)], keys: &[String], o: &Options) -> Commented {
    let data: Map<String, Value> = keys
        .iter()
        .zip(files)
        .map(|(k, (_, text))| (k.clone(), json!(text.as_ref())))
        .collect();
    Commented::new(
        format!(
            "The configuration files, mounted at {CONFIG_DIR}: the server reads them again when\n\
             they change (the last good configuration keeps serving while a new one fails)."
        ),
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": metadata(&format!("{NAME}-config"), o), "data": data}),
    )
}

/// cert-manager: a self-signed issuer makes a CA, the CA issues the serving certificate. The
/// webhook's caBundle is the CA's, so the serving certificate rotates without changing it.
fn certificates(o: &Options) -> Vec<Commented> {
    let issuer = |name: &str, spec: Value| {
        json!({"apiVersion": "cert-manager.io/v1", "kind": "Issuer",
            "metadata": metadata(name, o), "spec": spec})
    };
    let issuer_ref =
        |name: &str| json!({"name": name, "kind": "Issuer", "group": "cert-manager.io"});
    let host = format!("{NAME}.{}.svc", o.namespace);
    vec![
        Commented::new(
            "cert-manager: a self-signed issuer, for the CA alone.".to_owned(),
            issuer(&format!("{NAME}-selfsigned"), json!({"selfSigned": {}})),
        ),
        Commented::new(
            "The CA the API server trusts (cert-manager's cainjector writes it into the\n\
             webhook's caBundle)."
                .to_owned(),
            json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
                "metadata": metadata(&format!("{NAME}-ca"), o),
                "spec": {"isCA": true, "commonName": format!("{NAME}-ca"),
                    "secretName": format!("{NAME}-ca"), "duration": "87600h",
                    "privateKey": {"algorithm": "ECDSA", "size": 256},
                    "issuerRef": issuer_ref(&format!("{NAME}-selfsigned"))}}),
        ),
        Commented::new(
            "The CA's issuer.".to_owned(),
            issuer(
                &format!("{NAME}-ca"),
                json!({"ca": {"secretName": format!("{NAME}-ca")}}),
            ),
        ),
        Commented::new(
            "The server's certificate, renewed by cert-manager before it expires; the server\n\
             reads the new files without a restart."
                .to_owned(),
            json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
                "metadata": metadata(&format!("{NAME}-serving"), o),
                "spec": {"secretName": format!("{NAME}-tls"),
                    "dnsNames": [host, format!("{host}.cluster.local")],
                    "privateKey": {"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always"},
                    "issuerRef": issuer_ref(&format!("{NAME}-ca"))}}),
        ),
    ]
}

/// The server's arguments: the configuration files as mounted, the certificate, the ports.
fn server_args(keys: &[String], o: &Options) -> Vec<String> {
    let mut args = vec!["serve".to_owned()];
    for key in keys {
        args.extend(["-c".to_owned(), format!("{CONFIG_DIR}/{key}")]);
    }
    args.extend([
        "--tls-cert-file".to_owned(),
        format!("{TLS_DIR}/tls.crt"),
        "--tls-private-key-file".to_owned(),
        format!("{TLS_DIR}/tls.key"),
        "--listen".to_owned(),
        format!("0.0.0.0:{}", o.port),
        "--probe-listen".to_owned(),
        format!("0.0.0.0:{}", o.probe_port),
    ]);
    if o.path != "/mutate" {
        args.extend(["--path".to_owned(), o.path.clone()]);
    }
    args.extend(o.args.iter().cloned());
    args
}

fn deployment(keys: &[String], o: &Options) -> Commented {
    let grace = o.shutdown_seconds.max(0.0).ceil() as u64 + u64::from(PRE_STOP_SECONDS) + 5;
    let container = json!({
        "name": NAME,
        "image": o.image,
        "args": server_args(keys, o),
        "ports": [
            {"name": "https", "containerPort": o.port},
            {"name": "metrics", "containerPort": o.probe_port},
        ],
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": "metrics"}, "periodSeconds": 5},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "metrics"},
            "periodSeconds": 10, "failureThreshold": 3},
        "lifecycle": {"preStop": {"sleep": {"seconds": PRE_STOP_SECONDS}}},
        "resources": {
            "requests": {"cpu": "100m", "memory": "64Mi"},
            "limits": {"cpu": "1", "memory": "256Mi"},
        },
        "securityContext": {
            "allowPrivilegeEscalation": false,
            "readOnlyRootFilesystem": true,
            "runAsNonRoot": true,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [
            {"name": "config", "mountPath": CONFIG_DIR, "readOnly": true},
            {"name": "tls", "mountPath": TLS_DIR, "readOnly": true},
        ],
    });
    let pod = json!({
        "metadata": {"labels": labels(), "annotations": {
            "prometheus.io/scrape": "true",
            "prometheus.io/port": o.probe_port.to_string(),
            "prometheus.io/path": "/metrics",
        }},
        "spec": {
            "serviceAccountName": NAME,
            "automountServiceAccountToken": false,
            "terminationGracePeriodSeconds": grace,
            "securityContext": {
                "runAsNonRoot": true,
                "runAsUser": USER,
                "runAsGroup": USER,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": {
                    "topologyKey": "kubernetes.io/hostname",
                    "labelSelector": {"matchLabels": labels()},
                }},
            ]}},
            "containers": [container],
            "volumes": [
                {"name": "config", "configMap": {"name": format!("{NAME}-config")}},
                {"name": "tls", "secret": {"secretName": format!("{NAME}-tls")}},
            ],
        },
    });
    Commented::new(
        format!(
            "The server: {} replicas on different nodes where it can, as the image's user\n\
             (non-root, read-only, no capabilities). Probes and metrics on {} in plain HTTP:\n\
             the webhook port may require the API server's client certificate. The preStop\n\
             pause lets the endpoints drop a terminating pod before it stops accepting.",
            o.replicas, o.probe_port
        ),
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata(NAME, o),
            "spec": {"replicas": o.replicas, "selector": {"matchLabels": labels()},
                "template": pod}}),
    )
}

fn disruption_budget(o: &Options) -> Commented {
    Commented::new(
        "A node drain takes one server at a time.".to_owned(),
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": metadata(NAME, o),
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": labels()}}}),
    )
}

fn service(o: &Options) -> Commented {
    Commented::new(
        "What the API server calls (443), and Prometheus scrapes (metrics).".to_owned(),
        json!({"apiVersion": "v1", "kind": "Service", "metadata": metadata(NAME, o),
        "spec": {"selector": labels(), "ports": [
            {"name": "https", "port": 443, "targetPort": "https"},
            {"name": "metrics", "port": o.probe_port, "targetPort": "metrics"},
        ]}}),
    )
}

/// The webhook's `rules`: CREATE of each resource, one entry per API group and version.
fn rules(resources: &[Resource]) -> Vec<Value> {
    let mut groups: Vec<(&str, &str, Vec<&str>)> = Vec::new();
    for r in resources {
        match groups
            .iter_mut()
            .find(|(g, v, _)| *g == r.group && *v == r.version)
        {
            Some((_, _, names)) => names.push(&r.resource),
            None => groups.push((&r.group, &r.version, vec![&r.resource])),
        }
    }
    groups
        .into_iter()
        .map(|(group, version, names)| {
            json!({"operations": ["CREATE"], "apiGroups": [group], "apiVersions": [version],
                "resources": names, "scope": "Namespaced"})
        })
        .collect()
}

/// The rules' namespaceSelector (when they have one) AND the namespaces they name (when
/// they name them all) AND not the system namespaces, the server's own, and those every rule
/// and request skips.
fn namespace_selector(webhook: &Webhook, o: &Options) -> Value {
    let mut excluded: Vec<String> = SYSTEM_NAMESPACES.map(str::to_owned).to_vec();
    excluded.push(o.namespace.clone());
    for n in &webhook.skip_namespaces {
        if !excluded.contains(n) {
            excluded.push(n.clone());
        }
    }
    let mut selector = webhook
        .namespace_selector
        .as_ref()
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut added = Vec::new();
    // The namespaces the rules name, when they name them all: no more is sent.
    if let Namespaces::Named(names) = &webhook.namespaces {
        let names: Vec<&String> = names.iter().filter(|n| !excluded.contains(n)).collect();
        if !names.is_empty() {
            added.push(
                json!({"key": crate::select::NAMESPACE_NAME_LABEL, "operator": "In",
                "values": names}),
            );
        }
    }
    added.push(
        json!({"key": crate::select::NAMESPACE_NAME_LABEL, "operator": "NotIn",
        "values": excluded}),
    );
    match selector
        .get_mut("matchExpressions")
        .and_then(Value::as_array_mut)
    {
        Some(expressions) => expressions.extend(added),
        None => {
            selector.insert("matchExpressions".to_owned(), Value::Array(added));
        }
    }
    Value::Object(selector)
}

fn webhook_configuration(webhook: &Webhook, o: &Options) -> Commented {
    let mut metadata = json!({"name": NAME, "labels": labels()});
    if o.cert_manager {
        metadata["annotations"] = json!({
            "cert-manager.io/inject-ca-from": format!("{}/{NAME}-serving", o.namespace),
        });
    }
    let mut hook = json!({
        "name": "sidecars.kinject.dev",
        "admissionReviewVersions": ["v1", "v1beta1"],
        "sideEffects": "None",
        "failurePolicy": o.failure_policy,
        "matchPolicy": "Equivalent",
        "reinvocationPolicy": "IfNeeded",
        "timeoutSeconds": o.timeout_seconds,
        "clientConfig": {"service": {"name": NAME, "namespace": o.namespace, "path": o.path,
            "port": 443}},
        "rules": rules(&webhook.resources),
        "namespaceSelector": namespace_selector(webhook, o),
    });
    if let Some(selector) = &webhook.object_selector {
        hook["objectSelector"] = selector.clone();
    }
    let ca = if o.cert_manager {
        "cert-manager's cainjector sets caBundle."
    } else {
        "Set clientConfig.caBundle to the base64 of your CA certificate (docs/serve.md)."
    };
    Commented::new(
        format!(
            "The webhook: pods (and the workloads the rules name) as they are created, in the\n\
             namespaces the rules can select. IfNeeded: called again when a later webhook\n\
             changed the object (kinject's answer to its own output is no change).\n{ca}"
        ),
        json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration", "metadata": metadata,
            "webhooks": [hook]}),
    )
}
