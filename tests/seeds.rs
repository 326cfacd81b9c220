//! The seed documents' own examples, checked against what kinject produces.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::objects;

fn case(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/cases")
        .join(name)
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind}/{name}"))
}

/// The object without kinject's own status annotation (and the map if that empties it).
fn without_status(mut object: Value, pod_template: &str) -> Value {
    let metadata = object
        .pointer_mut(&format!("{pod_template}/metadata"))
        .expect("metadata");
    let annotations = metadata["annotations"]
        .as_object_mut()
        .expect("annotations");
    annotations.shift_remove("kinject.dev/status");
    if annotations.is_empty() {
        metadata
            .as_object_mut()
            .expect("metadata map")
            .shift_remove("annotations");
    }
    object
}

fn inject(case_dir: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kinject"))
        .args(args)
        .current_dir(case_dir)
        .output()
        .expect("run kinject");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// Karmada's KMS proposal: the injected plain API-server Deployment is the proposal's target.
#[test]
fn karmada_kms_target_deployment() {
    let target = objects(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/seeds/karmada-kms-target.yaml"),
        )
        .expect("the proposal's target"),
    );
    let want = find(&target, "Deployment", "kube-apiserver");

    let dir = case("kms-plugin");
    let output = inject(&dir, &["inject", "-c", "config.yaml", "input.yaml"]);
    let got = objects(&output);
    let deployment = without_status(
        find(&got, "Deployment", "kube-apiserver").clone(),
        "/spec/template",
    );
    assert_eq!(&deployment, want);
    // The ConfigMap passes through unchanged too.
    assert_eq!(
        find(&got, "ConfigMap", "encryption-config"),
        find(&target, "ConfigMap", "encryption-config")
    );
}

/// The webhook tutorial: labelled pods get the curl sidecar, as `add /spec/containers/-`.
#[test]
fn webhook_tutorial_patch() {
    let dir = case("webhook-curl");
    let patch = inject(
        &dir,
        &["inject", "-o", "patch", "-c", "config.yaml", "input.yaml"],
    );
    let entries: Vec<Value> = serde_json::from_str(&patch).expect("json");
    let pod = entries
        .iter()
        .find(|e| e["kind"] == "Pod" && e["name"] == "httpbin")
        .expect("pod");
    let add = pod["patch"]
        .as_array()
        .expect("ops")
        .iter()
        .find(|op| op["path"] == "/spec/containers/-")
        .expect("add /spec/containers/-");
    assert_eq!(add["op"], "add");
    assert_eq!(
        add["value"],
        serde_json::json!({"name": "curl", "image": "yauritux/busybox-curl:latest"})
    );
    let unlabelled = entries
        .iter()
        .find(|e| e["name"] == "not-labelled")
        .expect("unlabelled pod");
    assert_eq!(unlabelled["patch"], serde_json::json!([]));
}
