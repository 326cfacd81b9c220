//! Other injectors' configuration files over real inputs (the corpus): injected, injected
//! again and uninjected; and OpenKruise's CRD read whole. The injectors' own tests are
//! `testdata/compat/` (`tests/compat.rs`).

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::common;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

fn kinject(args: &[&str], stdin: &[u8]) -> Output {
    common::kinject_with_stdin(&root(), args, stdin)
}

/// Injects with `configs` over `dir`, checks it succeeds, that injecting again changes nothing
/// and that `uninject` gives the input back; returns the output.
fn round_trip(configs: &[&str], dir: &str) -> String {
    let mut args = vec!["inject", "-q"];
    for c in configs {
        args.extend(["-c", c]);
    }
    args.push(dir);
    let out = kinject(&args, b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let output = String::from_utf8(out.stdout).expect("utf-8");
    let mut again_args = args.clone();
    *again_args.last_mut().expect("path") = "-";
    let again = kinject(&again_args, output.as_bytes());
    assert_eq!(
        String::from_utf8_lossy(&again.stdout),
        output,
        "injecting again changed the output"
    );
    let input = kinject(
        &[
            "inject",
            "-q",
            "-c",
            "testdata/corpus/inject-nothing.yaml",
            dir,
        ],
        b"",
    );
    let mut uninject = vec!["uninject", "-q"];
    for c in configs {
        uninject.extend(["-c", c]);
    }
    uninject.push("-");
    let back = kinject(&uninject, output.as_bytes());
    assert_eq!(
        String::from_utf8_lossy(&back.stdout),
        String::from_utf8_lossy(&input.stdout),
        "uninject did not restore the input"
    );
    output
}

#[test]
fn kruise_sidecarsets_over_the_openkruise_samples() {
    let output = round_trip(
        &[
            "testdata/compat/kruise/samples/sidecarset.yaml",
            "testdata/compat/kruise/samples/samples-sidecarset.yaml",
        ],
        "testdata/corpus/manifests/openkruise",
    );
    let objects = common::objects(&output);
    let injected: Vec<String> = objects
        .iter()
        .filter(|o| {
            o.pointer("/spec/template/spec/containers")
                .and_then(|c| c.as_array())
                .is_some_and(|c| c.iter().any(|c| c["name"] == "log-agent"))
        })
        .map(|o| {
            format!(
                "{}/{}",
                o["kind"].as_str().unwrap_or_default(),
                o["metadata"]["name"].as_str().unwrap_or_default()
            )
        })
        .collect();
    // The samples labelled app: sample: a CloneSet and an Advanced StatefulSet.
    assert_eq!(injected, ["CloneSet/sample", "StatefulSet/sample"]);
    let cloneset = objects
        .iter()
        .find(|o| o["kind"] == "CloneSet")
        .expect("cloneset");
    let annotations = &cloneset["spec"]["template"]["metadata"]["annotations"];
    assert_eq!(
        annotations["kruise.io/sidecarset-injected-list"],
        "sample-logging"
    );
    assert_eq!(annotations["fluentbit.io/parser"], "json");
    let agent = &cloneset["spec"]["template"]["spec"]["containers"][1];
    assert_eq!(
        agent["env"][0],
        serde_json::json!({"name": "IS_INJECTED", "value": "true"})
    );
}

#[test]
fn tumblr_example_configmap_over_the_tumblr_corpus() {
    // tumblr's examples/kubernetes: the sidecar ConfigMap, and the debug pod that requests it.
    let output = round_trip(
        &["testdata/corpus/manifests/tumblr-k8s-sidecar-injector/configmap-sidecar-test.yaml"],
        "testdata/corpus/manifests/tumblr-k8s-sidecar-injector",
    );
    let objects = common::objects(&output);
    let injected: Vec<&str> = objects
        .iter()
        .filter(|o| {
            o.pointer("/metadata/annotations/injector.tumblr.com~1status")
                .is_some()
        })
        .filter_map(|o| o.pointer("/metadata/name").and_then(Value::as_str))
        .collect();
    assert_eq!(injected, ["debian-debug"]);
    let pod = objects
        .iter()
        .find(|o| o["metadata"]["name"] == "debian-debug")
        .expect("the debug pod");
    let containers = &pod["spec"]["containers"];
    assert_eq!(containers[1]["name"], "sidecar-nginx");
    // env and volumeMounts reach every container, the sidecar's own env first.
    for c in containers.as_array().expect("containers") {
        assert!(
            c["env"]
                .as_array()
                .is_some_and(|e| e.iter().any(|e| e["name"] == "HELLO")),
            "{c}"
        );
        assert_eq!(c["volumeMounts"][0]["mountPath"], "/tmp/test", "{c}");
    }
}

/// A value of every field `schema` (an OpenAPI schema from a CRD) describes, of its type.
fn every_field(schema: &Value, depth: usize) -> Value {
    if depth > 12 {
        return json!({});
    }
    if schema.get("x-kubernetes-int-or-string") == Some(&json!(true)) {
        return json!(1);
    }
    if let Some(first) = schema.get("enum").and_then(|e| e.get(0)) {
        return first.clone();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => match schema.get("properties").and_then(Value::as_object) {
            Some(props) => Value::Object(
                props
                    .iter()
                    .map(|(k, s)| (k.clone(), every_field(s, depth + 1)))
                    .collect(),
            ),
            None => json!({}),
        },
        Some("array") => json!([every_field(&schema["items"], depth + 1)]),
        Some("integer") | Some("number") => json!(1),
        Some("boolean") => json!(false),
        _ => json!("x"),
    }
}

#[test]
fn kruise_sidecarset_fields_are_all_known() {
    // OpenKruise's CRD: a SidecarSet that sets every field of each version is read without
    // an `unknown_field`: kinject knows every field Kruise has (those it cannot honour are
    // refused by name, see docs/compat.md).
    let crd = std::fs::read_to_string(
        root().join("testdata/corpus/manifests/openkruise/apps.kruise.io_sidecarsets.yaml"),
    )
    .expect("the OpenKruise CRD in the corpus");
    let crd = &common::objects_of_documents(&crd)[0];
    for version in crd["spec"]["versions"].as_array().expect("versions") {
        let name = version["name"].as_str().expect("version name");
        let spec = every_field(
            &version["schema"]["openAPIV3Schema"]["properties"]["spec"],
            0,
        );
        let set = json!({"apiVersion": format!("apps.kruise.io/{name}"), "kind": "SidecarSet",
            "metadata": {"name": "every-field"}, "spec": spec});
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("sidecarset.json");
        std::fs::write(&path, set.to_string()).expect("write");
        let out = kinject(
            &[
                "inject",
                "-q",
                "-c",
                path.to_str().expect("utf-8 path"),
                "-",
            ],
            b"",
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("unknown_field"),
            "{name}: a field of the CRD is unknown to kinject:\n{stderr}"
        );
        // The made-up values break other rules (enums, types): the schema was checked.
        assert!(stderr.contains("kinject::config::"), "{stderr}");
    }
}
