//! `kinject serve --print-manifests` for the README's configuration and each compat format's
//! example (testdata/examples): the built-in kinds pass `kubernetes-validate --strict`;
//! cert-manager's kinds, whose schemas it does not have (it warns "Couldn't find schema" and
//! passes them), get a structural check of their own here; and `kubectl kustomize` of a
//! kustomization listing the output gives the same objects. The golden cases `serve-*` hold
//! whole outputs and a refusal.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

/// The README's configuration, written where a run can name it.
fn readme_config(dir: &Path) {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    let after = readme
        .split("<!-- example: file sidecars.yaml")
        .nth(1)
        .expect("the README's configuration");
    let block = after
        .split("```yaml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("its YAML block");
    std::fs::write(dir.join("sidecars.yaml"), block).expect("write");
}

/// The manifests for `args` (the configuration flags) run in `dir`.
fn manifests(dir: &Path, args: &[&str]) -> String {
    let mut all = vec![
        "serve",
        "--print-manifests",
        "--image",
        "registry.example.com/kinject:0.1.0",
    ];
    all.extend(args);
    let out = common::kinject_with_stdin(dir, &all, b"");
    assert!(
        out.status.success(),
        "kinject {}: {}",
        all.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// Each configuration: where it runs, and its flags.
fn cases(readme_dir: &Path) -> Vec<(String, PathBuf, Vec<&'static str>)> {
    let examples = root().join("testdata/examples");
    vec![
        (
            "README".into(),
            readme_dir.to_owned(),
            vec!["-c", "sidecars.yaml"],
        ),
        (
            "README without cert-manager".into(),
            readme_dir.to_owned(),
            vec!["-c", "sidecars.yaml", "--without-cert-manager"],
        ),
        (
            "salesforce".into(),
            examples.clone(),
            vec!["-c", "sidecarconfigs.yaml", "-c", "mutationconfigs.yaml"],
        ),
        ("tumblr".into(), examples.clone(), vec!["-c", "sidecars/"]),
        (
            "expedia".into(),
            examples.clone(),
            vec!["-c", "sidecar-configmap.yaml"],
        ),
        ("kruise".into(), examples, vec!["-c", "sidecarset.yaml"]),
        // Rules that name their namespaces, requests off: the webhook selects them by name.
        (
            "named namespaces".into(),
            root().join("testdata/cases/serve-print-manifests-named-namespaces"),
            vec!["-c", "config.yaml"],
        ),
    ]
}

fn is_cert_manager(object: &Value) -> bool {
    object["apiVersion"]
        .as_str()
        .is_some_and(|v| v.starts_with("cert-manager.io/"))
}

/// `kubernetes-validate --strict` of the built-in kinds of `objects` (written to `dir`).
fn validate(dir: &Path, objects: &[&Value]) -> Result<(), String> {
    let text: String = objects
        .iter()
        .map(|o| format!("---\n{}\n", serde_json::to_string(o).expect("JSON")))
        .collect();
    let file = dir.join("built-in.yaml");
    std::fs::write(&file, text).expect("write");
    let out = Command::new(common::kubernetes_validate())
        .arg("--strict")
        .arg(&file)
        .output()
        .expect("kubernetes-validate runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // A kind it has no schema for passes with a warning: none may be among these.
    if !out.status.success() || said.contains("Couldn't find schema") {
        return Err(said);
    }
    Ok(())
}

/// The keys of `value` (an object) outside `known`.
fn unknown<'a>(value: &'a Value, known: &[&str]) -> Vec<&'a str> {
    value
        .as_object()
        .map(|m| {
            m.keys()
                .map(String::as_str)
                .filter(|k| !known.contains(k))
                .collect()
        })
        .unwrap_or_default()
}

/// cert-manager's kinds checked by hand, as strictly as their CRDs (cert-manager.io/v1) would:
/// only fields the CRDs define, the required ones there, each issuer reference naming an
/// Issuer of the output, and the serving certificate's Secret the one the server mounts and
/// the one the webhook's CA annotation names.
fn check_cert_manager(objects: &[Value]) -> Vec<String> {
    let mut problems = Vec::new();
    let of_kind = |kind: &str| -> Vec<&Value> {
        objects
            .iter()
            .filter(|o| is_cert_manager(o) && o["kind"] == kind)
            .collect()
    };
    let issuers: Vec<&str> = of_kind("Issuer")
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .collect();
    for issuer in of_kind("Issuer") {
        let spec = &issuer["spec"];
        let kinds = unknown(spec, &[]);
        if kinds.len() != 1 || !unknown(spec, &["selfSigned", "ca"]).is_empty() {
            problems.push(format!("an Issuer is one of selfSigned or ca: {spec}"));
        }
        if spec.get("ca").is_some() && !spec["ca"]["secretName"].is_string() {
            problems.push(format!("a ca Issuer names its secret: {spec}"));
        }
    }
    let mut serving = None;
    for cert in of_kind("Certificate") {
        let spec = &cert["spec"];
        let extra = unknown(
            spec,
            &[
                "secretName",
                "dnsNames",
                "isCA",
                "commonName",
                "duration",
                "renewBefore",
                "privateKey",
                "issuerRef",
                "usages",
            ],
        );
        if !extra.is_empty() {
            problems.push(format!("Certificate fields cert-manager lacks: {extra:?}"));
        }
        if !spec["secretName"].is_string() {
            problems.push(format!("a Certificate needs secretName: {spec}"));
        }
        let key = &spec["privateKey"];
        if !unknown(key, &["algorithm", "size", "rotationPolicy", "encoding"]).is_empty()
            || !matches!(key["algorithm"].as_str(), Some("RSA" | "ECDSA" | "Ed25519"))
        {
            problems.push(format!("privateKey: {key}"));
        }
        let by = &spec["issuerRef"];
        let named = by["name"].as_str().is_some_and(|n| issuers.contains(&n));
        if !named || by["kind"] != "Issuer" || by["group"] != "cert-manager.io" {
            problems.push(format!("issuerRef names no Issuer of the output: {by}"));
        }
        if spec["isCA"] != true {
            if spec["dnsNames"].as_array().is_none_or(Vec::is_empty) {
                problems.push("the serving certificate has no dnsNames".to_owned());
            }
            serving = Some(cert);
        }
    }
    let Some(serving) = serving else {
        problems.push("no serving certificate".to_owned());
        return problems;
    };
    let namespace = serving["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default();
    let name = serving["metadata"]["name"].as_str().unwrap_or_default();
    let webhook = objects
        .iter()
        .find(|o| o["kind"] == "MutatingWebhookConfiguration")
        .expect("a webhook configuration");
    let annotation = &webhook["metadata"]["annotations"]["cert-manager.io/inject-ca-from"];
    if annotation != &Value::from(format!("{namespace}/{name}")) {
        problems.push(format!(
            "inject-ca-from {annotation} is not {namespace}/{name}"
        ));
    }
    let service = &webhook["webhooks"][0]["clientConfig"]["service"];
    let host = format!(
        "{}.{}.svc",
        service["name"].as_str().unwrap_or_default(),
        namespace
    );
    if !serving["spec"]["dnsNames"]
        .as_array()
        .is_some_and(|d| d.contains(&Value::from(host.clone())))
    {
        problems.push(format!("the serving certificate is not for {host}"));
    }
    problems
}

/// The server's TLS Secret, as the Deployment mounts it.
fn mounted_secret(objects: &[Value]) -> Option<&str> {
    let deployment = objects.iter().find(|o| o["kind"] == "Deployment")?;
    deployment["spec"]["template"]["spec"]["volumes"]
        .as_array()?
        .iter()
        .find_map(|v| v["secret"]["secretName"].as_str())
}

/// Objects by kind and name, for comparing sets of them.
fn keyed(objects: Vec<Value>) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = objects
        .into_iter()
        .map(|o| (format!("{}/{}", o["kind"], o["metadata"]["name"]), o))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn manifests_are_valid_and_build_with_kustomize() {
    let readme = tempfile::tempdir().expect("tempdir");
    readme_config(readme.path());
    let mut failures = Vec::new();
    for (name, dir, args) in cases(readme.path()) {
        let text = manifests(&dir, &args);
        let objects = common::objects_of_documents(&text);
        let kinds: Vec<&str> = objects.iter().filter_map(|o| o["kind"].as_str()).collect();
        for kind in [
            "Namespace",
            "ServiceAccount",
            "ConfigMap",
            "Deployment",
            "PodDisruptionBudget",
            "Service",
            "MutatingWebhookConfiguration",
        ] {
            if !kinds.contains(&kind) {
                failures.push(format!("{name}: no {kind}"));
            }
        }
        let work = tempfile::tempdir().expect("tempdir");
        let built_in: Vec<&Value> = objects.iter().filter(|o| !is_cert_manager(o)).collect();
        if let Err(said) = validate(work.path(), &built_in) {
            failures.push(format!("{name}: kubernetes-validate --strict:\n{said}"));
        }
        let without = args.contains(&"--without-cert-manager");
        if without {
            if objects.iter().any(is_cert_manager) {
                failures.push(format!("{name}: cert-manager objects"));
            }
        } else {
            let problems = check_cert_manager(&objects);
            failures.extend(problems.into_iter().map(|p| format!("{name}: {p}")));
            let serving = objects
                .iter()
                .filter(|o| is_cert_manager(o) && o["kind"] == "Certificate")
                .find(|o| o["spec"]["isCA"] != true)
                .and_then(|c| c["spec"]["secretName"].as_str());
            if serving != mounted_secret(&objects) {
                failures.push(format!("{name}: the server mounts another Secret"));
            }
        }
        std::fs::write(work.path().join("serve.yaml"), &text).expect("write");
        std::fs::write(
            work.path().join("kustomization.yaml"),
            "resources: [serve.yaml]\n",
        )
        .expect("write");
        let built = Command::new(common::kubectl())
            .args(["kustomize"])
            .arg(work.path())
            .output()
            .expect("kubectl runs");
        if !built.status.success() {
            failures.push(format!(
                "{name}: kubectl kustomize: {}",
                String::from_utf8_lossy(&built.stderr)
            ));
            continue;
        }
        let built = common::objects_of_documents(&String::from_utf8_lossy(&built.stdout));
        if keyed(built) != keyed(objects) {
            failures.push(format!("{name}: kubectl kustomize gives other objects"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The server reads the configuration from the ConfigMap as it was given: every file, under
/// the name the Deployment's `-c` gives, in the order given.
#[test]
fn the_config_map_holds_the_files_in_order() {
    let examples = root().join("testdata/examples");
    let text = manifests(
        &examples,
        &["-c", "mutationconfigs.yaml", "-c", "sidecarconfigs.yaml"],
    );
    let objects = common::objects_of_documents(&text);
    let map = objects
        .iter()
        .find(|o| o["kind"] == "ConfigMap")
        .expect("ConfigMap");
    for file in ["mutationconfigs.yaml", "sidecarconfigs.yaml"] {
        let given = std::fs::read_to_string(examples.join(file)).expect("read");
        assert_eq!(map["data"][file], Value::from(given), "{file}");
    }
    let deployment = objects
        .iter()
        .find(|o| o["kind"] == "Deployment")
        .expect("Deployment");
    let args: Vec<&str> = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .expect("args")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        args[..5],
        [
            "serve",
            "-c",
            "/etc/kinject/config/mutationconfigs.yaml",
            "-c",
            "/etc/kinject/config/sidecarconfigs.yaml"
        ]
    );
}
