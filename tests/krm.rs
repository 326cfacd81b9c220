//! kinject as a KRM function: ResourceLists shaped like the KRM Functions Specification's
//! examples (items annotated with their path and index, a functionConfig) go through
//! `kinject krm`, plain `kinject` (how kustomize and kpt run exec functions) and `kinject
//! inject` (which detects a ResourceList on stdin).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common;

fn krm_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/krm")
}

fn run(args: &[&str], file: &str) -> Output {
    let input = std::fs::File::open(krm_dir().join(file)).expect("input");
    Command::new(env!("CARGO_BIN_EXE_kinject"))
        .args(args)
        .stdin(Stdio::from(input))
        .output()
        .expect("run kinject")
}

fn list(out: &Output) -> Value {
    let text = String::from_utf8(out.stdout.clone()).expect("utf-8");
    let objs = common::objects_of_documents(&text);
    assert_eq!(objs.len(), 1, "one ResourceList out:\n{text}");
    objs.into_iter().next().expect("list")
}

fn input_list(file: &str) -> Value {
    let text = std::fs::read_to_string(krm_dir().join(file)).expect("read");
    common::objects_of_documents(&text)
        .into_iter()
        .next()
        .expect("list")
}

#[test]
fn injects_items_and_reports_results() {
    let first = run(&["krm"], "resource-list.yaml");
    assert_eq!(
        first.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    for args in [&[][..], &["inject"][..]] {
        let other = run(args, "resource-list.yaml");
        assert_eq!(
            other.stdout, first.stdout,
            "kinject {args:?} differs from kinject krm"
        );
    }
    let text = String::from_utf8_lossy(&first.stdout);
    assert!(
        text.contains("- name: web   # the shop's storefront\n"),
        "comments are kept:\n{text}"
    );

    let out = list(&first);
    let inp = input_list("resource-list.yaml");
    let items = out["items"].as_array().expect("items");
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["kind"], "Deployment", "item order is kept");
    assert_eq!(
        items[0]["metadata"], inp["items"][0]["metadata"],
        "path/index annotations are kept"
    );
    let containers: Vec<&Value> = items[0]["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("c")
        .iter()
        .map(|c| &c["name"])
        .collect();
    assert_eq!(containers, ["web", "log-shipper"]);
    assert_eq!(items[1], inp["items"][1], "the Service is unchanged");
    assert_eq!(out["functionConfig"], inp["functionConfig"]);

    let results = out["results"].as_array().expect("results");
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["severity"], "info");
    assert_eq!(
        results[0]["resourceRef"],
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "shop"})
    );
    assert_eq!(
        results[0]["file"],
        json!({"path": "k8s/web.yaml", "index": 0})
    );
    assert_eq!(results[1]["tags"]["reason"], "not_a_workload");
    assert_eq!(results[1]["file"]["index"], 1);
}

#[test]
fn json_resource_lists_come_back_as_json() {
    let out = run(&["krm"], "resource-list.json");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let value: Value = serde_json::from_slice(&out.stdout).expect("JSON out");
    assert_eq!(
        value["items"][0]["spec"]["template"]["spec"]["containers"][1]["name"],
        "log-shipper"
    );
    assert_eq!(value["results"].as_array().map(Vec::len), Some(2));
}

#[test]
fn a_bad_function_config_is_an_error_result() {
    let out = run(&["krm"], "bad-function-config.yaml");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown field `imagee`"), "{stderr}");
    let list = list(&out);
    assert_eq!(
        list["items"],
        input_list("bad-function-config.yaml")["items"],
        "items unchanged"
    );
    let result = &list["results"][0];
    assert_eq!(result["severity"], "error");
    assert!(
        result["message"]
            .as_str()
            .expect("message")
            .contains(":49:7:"),
        "{result}"
    );
}

#[test]
fn a_resource_list_without_function_config_is_an_error_result() {
    let out = run(&["krm"], "no-function-config.yaml");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("<stdin>:1:1: the ResourceList has no functionConfig"),
        "{stderr}"
    );
    let list = list(&out);
    assert_eq!(
        list["items"],
        input_list("no-function-config.yaml")["items"],
        "items unchanged"
    );
    let result = &list["results"][0];
    assert_eq!(result["severity"], "error");
    assert_eq!(result["tags"]["code"], "kinject::krm::no_function_config");
}

#[test]
fn an_object_error_names_the_resource_and_field() {
    let out = run(&["krm"], "object-error.yaml");
    assert_eq!(out.status.code(), Some(2));
    let list = list(&out);
    let result = &list["results"][0];
    assert_eq!(result["severity"], "error");
    assert_eq!(result["resourceRef"]["name"], "web");
    assert_eq!(
        result["field"]["path"],
        r#"spec.template.metadata.annotations["kinject.dev/inject"]"#
    );
    assert_eq!(
        list["items"],
        input_list("object-error.yaml")["items"],
        "nothing injected"
    );
}

#[test]
fn a_config_map_function_config_is_a_warning_and_an_error_result() {
    let out = run(&["krm"], "config-map-function-config.yaml");
    assert_eq!(out.status.code(), Some(2));
    let list = list(&out);
    assert_eq!(
        list["items"],
        input_list("config-map-function-config.yaml")["items"],
        "items unchanged"
    );
    let results: Vec<(&str, &str)> = list["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            (
                r["severity"].as_str().expect("severity"),
                r["tags"]["code"].as_str().expect("code"),
            )
        })
        .collect();
    assert_eq!(
        results,
        [
            ("warning", "kinject::config::not_a_sidecar_config"),
            ("error", "kinject::config::empty")
        ]
    );
}

/// Manifests given to `kinject` without a subcommand (`… | kinject | kubectl apply -f -`,
/// `inject` forgotten), or to `kinject krm`: nothing on stdout, so the next command of the
/// pipe gets no manifests, and an error that says what to run. They were written back with
/// `results:` spliced into the first object.
#[test]
fn input_that_is_not_a_resource_list_writes_nothing() {
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: example.com/app:1\n";
    let list = std::fs::read_to_string(krm_dir().join("resource-list.yaml")).expect("read");
    let inputs = [
        ("a Deployment", deployment.to_owned()),
        ("two Deployments", format!("{deployment}---\n{deployment}")),
        (
            "a ResourceList and more",
            format!("{list}---\n{deployment}"),
        ),
        ("nothing", String::new()),
        ("a scalar", "hello\n".to_owned()),
    ];
    for (what, text) in inputs {
        for args in [&[][..], &["krm"][..]] {
            let dir = tempfile::tempdir().expect("tempdir");
            let out = common::kinject_with_stdin(dir.path(), args, text.as_bytes());
            assert_eq!(out.status.code(), Some(2), "{what}, {args:?}");
            assert!(out.stdout.is_empty(), "{what}, {args:?}: something written");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                stderr.contains("kinject::krm::not_a_resource_list")
                    && stderr.contains("run `kinject inject`"),
                "{what}, {args:?}: {stderr}"
            );
        }
    }
}
