use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{apply, spliced};
use crate::json::patch::diff;
use crate::yaml::parse_document;
use crate::yaml::style::Style;

/// Edits `text` into `target`, checks the result reads back as `target`, and that editing back
/// restores the original bytes.
fn edit(text: &str, target: &Value) -> String {
    let parsed = parse_document(text).unwrap();
    let ops = diff(&parsed.value, target);
    let style = Style::detect(text, parsed.root.as_ref());
    let out = apply(
        text,
        parsed.root.as_ref().unwrap(),
        &ops,
        target,
        &style,
        &BTreeMap::new(),
    )
    .map(|s| spliced(text, &s))
    .unwrap();
    let back = parse_document(&out).unwrap();
    assert_eq!(&back.value, target, "edited text:\n{out}");
    let undo = diff(&back.value, &parsed.value);
    let restored = apply(
        &out,
        back.root.as_ref().unwrap(),
        &undo,
        &parsed.value,
        &style,
        &BTreeMap::new(),
    )
    .map(|s| spliced(&out, &s))
    .unwrap();
    assert_eq!(restored, text, "undo of:\n{out}");
    out
}

fn with(text: &str, f: impl FnOnce(&mut Value)) -> String {
    let mut v = parse_document(text).unwrap().value;
    f(&mut v);
    edit(text, &v)
}

const DEPLOY: &str = "\
apiVersion: apps/v1
kind: Deployment # a comment
metadata:
  name: web
spec:
  template:
    metadata:
      labels: {app: web}
    spec:
      # the app
      containers:
      - name: app   # main
        image: 'nginx:1.25'
        # resources: {}
      volumes:
      - name: data
        emptyDir: {}
";

#[test]
fn appends_a_container_after_trailing_comments() {
    let out = with(DEPLOY, |v| {
        v["spec"]["template"]["spec"]["containers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "proxy", "image": "proxy:1", "args": ["--on", "on"]}));
    });
    assert!(
        out.contains(
            "        # resources: {}\n      - name: proxy\n        image: proxy:1\n        args:\
             \n        - --on\n        - 'on'\n      volumes:"
        ),
        "{out}"
    );
}

#[test]
fn prepends_before_leading_comments() {
    let out = with(DEPLOY, |v| {
        v["spec"]["template"]["spec"]["volumes"]
            .as_array_mut()
            .unwrap()
            .insert(0, json!({"name": "sock", "emptyDir": {}}));
    });
    assert!(
        out.contains(
            "      volumes:\n      - name: sock\n        emptyDir: {}\n      - name: data\n"
        ),
        "{out}"
    );
}

#[test]
fn adds_to_flow_maps_and_creates_missing_maps() {
    let out = with(DEPLOY, |v| {
        let md = &mut v["spec"]["template"]["metadata"];
        md["labels"]["sidecar"] = json!("yes");
        md["annotations"] = json!({"kinject.dev/status": "{\"a\":[\"b\"]}"});
    });
    assert!(
        out.contains(
            "labels: {app: web, sidecar: 'yes'}\n      annotations:\
             \n        kinject.dev/status: '{\"a\":[\"b\"]}'\n"
        ),
        "{out}"
    );
}

#[test]
fn new_keys_follow_target_order() {
    let text = "kind: Pod\nspec:\n  containers:\n  - name: a\n";
    let mut v = parse_document(text).unwrap().value;
    let spec = v["spec"].take();
    v.as_object_mut().unwrap().remove("spec");
    v["metadata"] = json!({"annotations": {"x": "1"}});
    v["spec"] = spec;
    let out = edit(text, &v);
    assert_eq!(
        out,
        "kind: Pod\nmetadata:\n  annotations:\n    x: \"1\"\nspec:\n  containers:\n  - name: a\n"
    );
}

#[test]
fn replaces_empty_and_null_values() {
    let text = "a: {}\nb:\nc: [] # none\nd: x\n";
    let out = with(text, |v| {
        v["a"] = json!({"k": "v"});
        v["b"] = json!(["i"]);
        v["c"] = json!([{"name": "m"}]);
    });
    // Empty flow collections become blocks; emptied again they are written `{}`/`[]`.
    assert_eq!(out, "a:\n  k: v\nb:\n- i\nc: # none\n- name: m\nd: x\n");
}

#[test]
fn keeps_crlf_and_missing_final_newline() {
    let text = "spec:\r\n  containers:\r\n  - name: a\r\n    image: b";
    let out = with(text, |v| {
        v["spec"]["containers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "c"}));
    });
    assert_eq!(
        out,
        "spec:\r\n  containers:\r\n  - name: a\r\n    image: b\r\n  - name: c"
    );
}

#[test]
fn four_space_indented_style() {
    let text =
        "spec:\n    containers:\n        -   name: a\n            image: b\n    volumes: []\n";
    let out = with(text, |v| {
        v["spec"]["containers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "c", "env": [{"name": "X", "value": "1"}]}));
        v["spec"]["extra"] = json!({"k": {"m": 1}});
    });
    assert_eq!(
        out,
        "spec:\n    containers:\n        -   name: a\n            image: b\n        -   name: c\n            env:\
         \n                -   name: X\n                    value: \"1\"\n    volumes: []\n    extra:\n        k:\
         \n            m: 1\n"
    );
}

#[test]
fn adds_keys_inside_an_item_and_before_its_first_key() {
    let text = "containers:\n- name: app\n  image: a\n";
    let out = with(text, |v| {
        let c = &mut v["containers"][0];
        c["volumeMounts"] = json!([{"name": "sock", "mountPath": "/s"}]);
    });
    assert_eq!(
        out,
        "containers:\n- name: app\n  image: a\n  volumeMounts:\n  - name: sock\n    mountPath: /s\n"
    );
    let mut v = parse_document(text).unwrap().value;
    let c = v["containers"][0].as_object_mut().unwrap();
    c.shift_insert(0, "first".into(), json!(1));
    let out = edit(text, &v);
    assert_eq!(out, "containers:\n- first: 1\n  name: app\n  image: a\n");
}

#[test]
fn multi_document_text_is_not_needed_but_block_scalars_are_kept() {
    let text = "data:\n  script: |\n    echo hi\n  other: x\nlist:\n- |\n  a\n";
    let out = with(text, |v| {
        v["data"]["new"] = json!("line1\nline2\n");
        v["list"].as_array_mut().unwrap().push(json!("z"));
    });
    assert_eq!(
        out,
        "data:\n  script: |\n    echo hi\n  other: x\n  new: |\n    line1\n    line2\nlist:\n- |\n  a\n- z\n"
    );
}

#[test]
fn replaces_scalars_and_keeps_comments() {
    let text = "spec:\n  serviceAccountName: default # sa\n  args: [a, b]\n";
    let out = with(text, |v| {
        v["spec"]["serviceAccountName"] = json!("proxy");
        v["spec"]["args"]
            .as_array_mut()
            .unwrap()
            .push(json!("--x=1"));
    });
    assert_eq!(
        out,
        "spec:\n  serviceAccountName: proxy # sa\n  args: [a, b, --x=1]\n"
    );
}

#[test]
fn anchors_are_refused() {
    let text = "a: &x\n  b: 1\nc: *x\n";
    let parsed = parse_document(text).unwrap();
    let mut target = parsed.value.clone();
    target["a"]["z"] = json!(2);
    let ops = diff(&parsed.value, &target);
    let style = Style::default();
    assert!(
        apply(
            text,
            parsed.root.as_ref().unwrap(),
            &ops,
            &target,
            &style,
            &BTreeMap::new()
        )
        .is_err()
    );
}
