//! Other injectors' configuration files, end to end over real inputs.

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;

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
    let back = kinject(&["uninject", "-q", "-"], output.as_bytes());
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
            "testdata/formats/kruise/sidecarset.yaml",
            "testdata/formats/kruise/samples-sidecarset.yaml",
        ],
        "../shared/corpus/openkruise",
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
