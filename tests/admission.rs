//! `kinject admission`: AdmissionReview requests in, the responses a mutating webhook returns
//! out. Applying a returned patch to the request's object gives what `kinject inject` gives.

use std::path::{Path, PathBuf};
use std::process::Output;

use base64::Engine;
use serde_json::{Value, json};

use crate::common;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/admission")
}

fn kinject(args: &[&str], stdin: &[u8]) -> Output {
    common::kinject_with_stdin(&dir(), args, stdin)
}

fn review(request: &Value) -> (Option<i32>, Value) {
    let out = kinject(
        &["admission", "-c", "config.yaml"],
        request.to_string().as_bytes(),
    );
    let response: Value =
        serde_json::from_slice(&out.stdout).expect("a JSON AdmissionReview, always");
    assert_eq!(response["kind"], "AdmissionReview");
    assert_eq!(response["apiVersion"], "admission.k8s.io/v1");
    (out.status.code(), response["response"].clone())
}

fn load(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir().join(name)).expect("read")).expect("json")
}

/// The object with the response's patch applied.
fn patched(request: &Value, response: &Value) -> Value {
    assert_eq!(response["patchType"], "JSONPatch");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(response["patch"].as_str().expect("patch"))
        .expect("base64");
    let ops: json_patch::Patch = serde_json::from_slice(&bytes).expect("RFC 6902");
    let mut object = request["request"]["object"].clone();
    json_patch::patch(&mut object, &ops).expect("patch applies");
    object
}

/// What `kinject inject -o json` makes of the same object.
fn injected(object: &Value) -> Value {
    let out = kinject(
        &[
            "inject",
            "-q",
            "-o",
            "json",
            "-n",
            "default",
            "-c",
            "config.yaml",
            "-",
        ],
        object.to_string().as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

#[test]
fn labelled_pod_gets_the_sidecar() {
    let request = load("pod.json");
    let (code, response) = review(&request);
    assert_eq!(code, Some(0));
    assert_eq!(response["uid"], "075a1336-0165-41e0-b0ac-8705883f1c41");
    assert_eq!(response["allowed"], true);
    let object = patched(&request, &response);
    assert_eq!(
        object["spec"]["containers"][1],
        json!({"name": "curl", "image": "yauritux/busybox-curl:latest"})
    );
    assert_eq!(object, injected(&request["request"]["object"]));
}

#[test]
fn deployment_gets_the_sidecar() {
    let request = load("deployment.json");
    let (code, response) = review(&request);
    assert_eq!(code, Some(0));
    assert_eq!(response["uid"], request["request"]["uid"]);
    let object = patched(&request, &response);
    assert_eq!(object, injected(&request["request"]["object"]));
}

#[test]
fn already_injected_pod_needs_no_patch() {
    let first = load("pod.json");
    let (_, response) = review(&first);
    let mut again = first.clone();
    again["request"]["uid"] = json!("5f0c1d2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f");
    again["request"]["object"] = patched(&first, &response);
    let (code, response) = review(&again);
    assert_eq!(code, Some(0));
    assert_eq!(
        response,
        json!({"uid": "5f0c1d2e-3a4b-4c5d-8e6f-7a8b9c0d1e2f", "allowed": true})
    );
}

#[test]
fn unlabelled_pods_and_updates_are_allowed_unchanged() {
    let mut request = load("pod.json");
    request["request"]["object"]["metadata"]["labels"] = json!({"app": "other"});
    assert_eq!(
        review(&request).1,
        json!({"uid": request["request"]["uid"], "allowed": true})
    );
    let mut update = load("pod.json");
    update["request"]["operation"] = json!("UPDATE");
    assert_eq!(
        review(&update).1,
        json!({"uid": update["request"]["uid"], "allowed": true})
    );
}

#[test]
fn malformed_requests_get_a_refusal_not_a_crash() {
    let broken = std::fs::read(dir().join("malformed.json")).expect("read");
    let out = kinject(&["admission", "-c", "config.yaml"], &broken);
    assert_eq!(out.status.code(), Some(2));
    let response: Value = serde_json::from_slice(&out.stdout).expect("a response");
    assert_eq!(response["response"]["allowed"], false);
    assert_eq!(response["response"]["status"]["code"], 400);
    for bad in [
        json!({"kind": "AdmissionReview"}),
        json!({"kind": "Pod"}),
        json!({"kind": "AdmissionReview", "request": {"uid": "u"}}),
        json!([1, 2]),
    ] {
        let (code, response) = review(&bad);
        assert_eq!(code, Some(2), "{bad}");
        assert_eq!(response["allowed"], false, "{bad}");
        assert_eq!(response["status"]["code"], 400, "{bad}");
    }
}

/// A malformed request is said on stderr too, not only in the response.
#[test]
fn a_malformed_request_is_said_on_stderr() {
    let broken = std::fs::read(dir().join("malformed.json")).expect("read");
    let out = kinject(&["admission", "-c", "config.yaml"], &broken);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "error: the request cannot be answered: the AdmissionReview is not valid JSON"
        ),
        "{stderr}"
    );
}

/// A configuration that cannot be loaded still answers the request (a webhook wrapper has a
/// response to return): refused with code 500 and the located error, exit 2, the diagnostic
/// on stderr. A request without a `uid` cannot be answered: nothing on stdout.
#[test]
fn a_broken_configuration_refuses_with_the_located_error() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let config = scratch.path().join("bad.yaml");
    std::fs::write(
        &config,
        "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars: [{name: x, containerz: []}]\n",
    )
    .expect("write");
    let config = config.to_str().expect("utf-8");
    let pod = std::fs::read(dir().join("pod.json")).expect("read");
    for config in [config, "missing.yaml"] {
        let out = kinject(&["admission", "-c", config], &pod);
        assert_eq!(out.status.code(), Some(2));
        let response: Value = serde_json::from_slice(&out.stdout).expect("a response");
        let response = &response["response"];
        assert_eq!(response["uid"], load("pod.json")["request"]["uid"]);
        assert_eq!(response["allowed"], false);
        assert_eq!(response["status"]["code"], 500);
        let message = response["status"]["message"].as_str().expect("message");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(message.contains(&format!("{config}:")), "{message}");
        assert!(stderr.contains("kinject::config::"), "{stderr}");
    }
    let out = kinject(
        &["admission", "-c", config],
        br#"{"kind": "AdmissionReview"}"#,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no `uid`"));
}

/// The request can be a file, as a PATH or `-f`, like every other subcommand's input.
#[test]
fn the_request_can_be_a_file() {
    let from_stdin = kinject(
        &["admission", "-c", "config.yaml"],
        &std::fs::read(dir().join("pod.json")).expect("read"),
    );
    assert!(from_stdin.status.success());
    for args in [
        &["admission", "-c", "config.yaml", "pod.json"][..],
        &["admission", "-c", "config.yaml", "-f", "pod.json"],
    ] {
        let out = kinject(args, b"");
        assert!(out.status.success(), "{args:?}");
        assert_eq!(out.stdout, from_stdin.stdout, "{args:?}");
    }
}

#[test]
fn a_conflict_refuses_the_pod_with_the_reason() {
    let mut request = load("pod.json");
    request["request"]["object"]["spec"]["initContainers"] =
        json!([{"name": "curl", "image": "busybox"}]);
    let (code, response) = review(&request);
    assert_eq!(code, Some(0));
    assert_eq!(response["allowed"], false);
    assert!(
        response["status"]["message"]
            .as_str()
            .expect("message")
            .contains("curl"),
        "{response}"
    );
}

/// The request with its object's `apiVersion` and `kind` left out, as hand-made reviews do.
fn without_type_meta(request: &mut Value) {
    let object = request["request"]["object"]
        .as_object_mut()
        .expect("object");
    object.shift_remove("apiVersion");
    object.shift_remove("kind");
}

#[test]
fn an_object_without_type_meta_is_of_the_requests_kind() {
    // Hand-made reviews (tumblr's and Expedia's own test requests) leave `apiVersion` and
    // `kind` out of the object; the API server and the webhooks go by `request.kind`.
    let mut request = load("pod.json");
    without_type_meta(&mut request);
    let (code, response) = review(&request);
    assert_eq!(code, Some(0));
    assert!(response.get("warnings").is_none(), "{response}");
    let object = patched(&request, &response);
    assert_eq!(
        object["spec"]["containers"][1],
        json!({"name": "curl", "image": "yauritux/busybox-curl:latest"})
    );
}

#[test]
fn an_object_of_no_known_kind_is_said_so() {
    let mut request = load("pod.json");
    without_type_meta(&mut request);
    request["request"]
        .as_object_mut()
        .expect("request")
        .shift_remove("kind");
    let out = kinject(
        &["admission", "-c", "config.yaml"],
        request.to_string().as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let response = &answer["response"];
    assert_eq!(response["allowed"], true);
    assert!(response.get("patch").is_none(), "{response}");
    let warning = response["warnings"][0].as_str().expect("a warning");
    assert!(warning.contains("no `kind`"), "{warning}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: ") && stderr.contains("no `kind`"),
        "{stderr}"
    );
}

/// A `dryRun` request is answered as the real one: kinject has no side effects to leave out
/// (the webhook configuration says `sideEffects: None`).
#[test]
fn a_dry_run_is_answered_as_the_real_request() {
    let request = load("pod.json");
    let mut dry = request.clone();
    dry["request"]["dryRun"] = json!(true);
    let (real_code, real) = review(&request);
    let (dry_code, dry_response) = review(&dry);
    assert_eq!((real_code, dry_code), (Some(0), Some(0)));
    assert!(real.get("patch").is_some());
    assert_eq!(real, dry_response);
}

/// The pods of a workload injected before (by CI, or by the webhook when the workload was
/// created) carry its sidecars and status: admitting them must not take the sidecars away,
/// though no rule selects a Pod (the rules select the workload's kind) or the rules now
/// select fewer sidecars. The webhook adds and updates; it never removes.
#[test]
fn pods_of_an_injected_workload_keep_their_sidecars() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("config.yaml"),
        "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: curl\n  containers:\n  - name: curl\n    image: curl:8\n- name: shipper\n  containers:\n  - name: shipper\n    image: shipper:1\nrules:\n- name: deployments\n  match:\n    kinds: [Deployment]\n  inject: [curl]\n- name: everything\n  inject: [shipper]\n",
    )
    .expect("write");
    let answer = |request: &Value| {
        let out = common::kinject_with_stdin(
            dir.path(),
            &["admission", "-c", "config.yaml"],
            request.to_string().as_bytes(),
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let response: Value = serde_json::from_slice(&out.stdout).expect("json");
        response["response"].clone()
    };
    let deployment = load("deployment.json");
    let injected = patched(&deployment, &answer(&deployment));
    let template = &injected["spec"]["template"];
    let names = |spec: &Value| -> Vec<String> {
        spec["containers"]
            .as_array()
            .expect("containers")
            .iter()
            .map(|c| c["name"].as_str().expect("name").to_owned())
            .collect()
    };
    assert!(names(&template["spec"]).contains(&"curl".to_owned()));
    assert!(names(&template["spec"]).contains(&"shipper".to_owned()));
    let mut metadata = template["metadata"].clone();
    metadata["generateName"] = json!("web-5d8f7c-");
    metadata["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d8f7c", "uid": "1f9c0c5e-0b3a-4c59-9d8e-2a1b3c4d5e6f", "controller": true}]);
    let pod =
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": template["spec"]});
    let request = json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "9a2b3c4d-0000-4000-8000-000000000001",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "namespace": "default",
            "operation": "CREATE",
            "object": pod,
        }
    });
    let response = answer(&request);
    assert_eq!(
        response,
        json!({"uid": "9a2b3c4d-0000-4000-8000-000000000001", "allowed": true}),
        "the pod is admitted as its template made it"
    );
}

/// A pod that names a sidecar of another injector's format in `kinject.dev/inject` gets it at
/// admission only where that injector would inject it: OpenKruise's SidecarSet injects by its
/// selector and namespaceSelector, and a pod of another namespace asking for its privileged
/// debugger by name is admitted unchanged, with a warning (the review found the patch adding
/// it). A pod the set selects gets it, as `kinject inject` gives it.
#[test]
fn a_request_does_not_reach_a_sidecar_set_beyond_its_selectors() {
    let config = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/cases/compat-kruise-request/config.yaml");
    let config = config.to_str().expect("utf-8");
    let pod = |namespace: &str, app: &str| {
        json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": format!("0d1e2f3a-0000-4000-8000-{namespace:0>12}"),
                "kind": {"group": "", "version": "v1", "kind": "Pod"},
                "namespace": namespace,
                "operation": "CREATE",
                "object": {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "generateName": "q-",
                        "labels": {"app": app},
                        "annotations": {"kinject.dev/inject": "node-debugger"},
                    },
                    "spec": {"containers": [{"name": "app", "image": "example.com/app:1"}]},
                },
            },
        })
    };
    let answer = |request: &Value| {
        let out = kinject(&["admission", "-c", config], request.to_string().as_bytes());
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        let review: Value = serde_json::from_slice(&out.stdout).expect("json");
        (review["response"].clone(), stderr)
    };
    for (namespace, app) in [("dev", "debug-target"), ("dev", "web"), ("ops", "web")] {
        let request = pod(namespace, app);
        let (response, stderr) = answer(&request);
        assert_eq!(response["allowed"], true, "{response}");
        assert!(
            response.get("patch").is_none(),
            "{namespace} {app}: {response}"
        );
        let warning = response["warnings"][0].as_str().expect("a warning");
        assert!(
            warning.contains("node-debugger") && warning.contains("sidecarset/node-debugger"),
            "{warning}"
        );
        assert!(stderr.contains("node-debugger"), "{stderr}");
    }
    let request = pod("ops", "debug-target");
    let (response, _) = answer(&request);
    let object = patched(&request, &response);
    assert_eq!(object["spec"]["containers"][0]["name"], "debugger");
    assert_eq!(
        object["spec"]["containers"][0]["securityContext"]["privileged"],
        true
    );
    let out = kinject(
        &["inject", "-q", "-o", "json", "-n", "ops", "-c", config, "-"],
        request["request"]["object"].to_string().as_bytes(),
    );
    assert!(out.status.success());
    let injected: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(object, injected);
}
