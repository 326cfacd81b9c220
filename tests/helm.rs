//! kinject as Helm's post-renderer: the Helm 4 plugin `helm-plugin/plugin.yaml` checked against
//! the rules of Helm's own plugin loader, and kinject run exactly as Helm runs a post-renderer.
//!
//! Helm itself is not run: there is no `helm` binary on this machine, and it is not in a
//! package registry this project may install from (it is downloaded from get.helm.sh or
//! GitHub). So this file holds what Helm relies on, read from Helm's source (helm/helm at
//! e9b85e4, Helm 4; Helm 3 at v3.19.5):
//!
//! - loading the plugin (internal/plugin/loader.go `loadMetadataV1`): `plugin.yaml` decoded
//!   with `KnownFields(true)` into `MetadataV1` (metadata_v1.go: `apiVersion`, `name`, `type`,
//!   `runtime`, `version`, `sourceURL`, `config`, `runtimeConfig`), then `MetadataV1.Validate`
//!   (name `^[A-Za-z0-9_-]+$` from plugin.go, a strict semantic `version`, `apiVersion: v1`,
//!   `type` and `runtime` set) and `Metadata.Validate` (metadata.go); `config` decoded, again
//!   strictly, into the type's config (config.go `unmarshalConfig`; `postrenderer/v1`'s
//!   `ConfigPostRendererV1` has no field, plugin_type_registry.go); `runtimeConfig` into
//!   `RuntimeConfigSubprocess` (runtime_subprocess.go: `platformCommand`, `platformHooks`,
//!   `protocolCommands`), each `PlatformCommand` being `os`, `arch`, `command`, `args`
//!   (subprocess_commands.go);
//! - running it (runtime_subprocess.go `runPostrenderer`, subprocess_commands.go
//!   `getPlatformCommand` and `PrepareCommands`): the entry for the platform (one with no `os`
//!   and `arch` serves all), its `command` split on spaces, `$VAR`s expanded from the
//!   environment, then its `args`, then every `--post-renderer-args` in order; the rendered
//!   chart on standard input; all of standard output is the result; a non-zero exit is an
//!   error; standard error is captured and not shown. pkg/postrenderer/postrenderer.go also
//!   refuses an empty output;
//! - Helm 3's `--post-renderer PATH` (pkg/postrender/exec.go): the executable run with the
//!   `--post-renderer-args`, the same streams, standard error shown only on failure.
//!
//! The rendered stream differs between the two. Helm 3 writes `helm template`'s shape, `---`
//! then `# Source: CHART/templates/…` before each document (testdata/helm/rendered.yaml).
//! Helm 4 (pkg/action/action.go `annotateAndMerge`) re-serializes each template's documents
//! with kyaml, files in sorted order, annotates each with
//! `postrenderer.helm.sh/postrender-filename: 'CHART/templates/…'`, and after the
//! post-renderer splits its output back into files by that annotation and removes it
//! (`splitAndDeannotate`): every document must come back with its annotation
//! (testdata/helm/rendered-helm4.yaml, the same chart in that shape).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::common;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

/// The plugin manifest, read as Kubernetes reads YAML (go-yaml, as Helm).
fn plugin() -> Value {
    let text = std::fs::read_to_string(root().join("helm-plugin/plugin.yaml")).expect("read");
    let mut documents = common::objects_of_documents(&text);
    assert_eq!(documents.len(), 1, "plugin.yaml is one document");
    documents.remove(0)
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

/// Masterminds semver's `StrictNewVersion`: `X.Y.Z` without a `v`, no leading zeros, then an
/// optional `-pre` and `+build`.
fn strict_semver(s: &str) -> bool {
    let end = s.find(['-', '+']).unwrap_or(s.len());
    let (core, extra) = s.split_at(end);
    let numbers: Vec<&str> = core.split('.').collect();
    let ident = |p: &str| {
        p.split('.')
            .all(|x| !x.is_empty() && x.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    };
    numbers.len() == 3
        && numbers.iter().all(|n| {
            !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_digit())
                && (*n == "0" || !n.starts_with('0'))
        })
        && (extra.is_empty()
            || extra
                .strip_prefix(['-', '+'])
                .is_some_and(|e| e.split('+').all(ident)))
}

#[test]
fn the_plugin_manifest_is_what_helm_4_loads_as_a_postrenderer() {
    let p = plugin();
    let allowed = [
        "apiVersion",
        "name",
        "type",
        "runtime",
        "version",
        "sourceURL",
        "config",
        "runtimeConfig",
    ];
    for k in keys(&p) {
        assert!(allowed.contains(&k), "`{k}` is not a field of MetadataV1");
    }
    assert_eq!(p["apiVersion"], "v1");
    assert_eq!(p["type"], "postrenderer/v1");
    assert_eq!(p["runtime"], "subprocess");
    let name = p["name"].as_str().expect("name");
    assert!(
        !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
        "name `{name}`"
    );
    assert_eq!(name, "kinject", "`--post-renderer kinject` names it");
    let version = p["version"].as_str().expect("version");
    assert!(strict_semver(version), "version `{version}`");
    assert!(!strict_semver("v0.1.0") && !strict_semver("0.1") && strict_semver("1.2.3-rc.1"));
    assert_eq!(
        version,
        env!("CARGO_PKG_VERSION"),
        "the plugin's version is kinject's"
    );
    // ConfigPostRendererV1 has no field: `config` absent or empty.
    assert!(p.get("config").is_none_or(|c| keys(c).is_empty()));
    let runtime = &p["runtimeConfig"];
    for k in keys(runtime) {
        assert!(
            ["platformCommand", "platformHooks", "protocolCommands"].contains(&k),
            "`{k}` is not a field of RuntimeConfigSubprocess"
        );
    }
    let commands = runtime["platformCommand"]
        .as_array()
        .expect("platformCommand");
    for c in commands {
        for k in keys(c) {
            assert!(["os", "arch", "command", "args"].contains(&k), "`{k}`");
        }
    }
    // One entry serves every platform Helm runs on (getPlatformCommand's last fallback).
    assert!(
        commands
            .iter()
            .any(|c| c.get("os").is_none() && c.get("arch").is_none()),
        "an entry with no os and arch"
    );
    let (program, args) = prepare_commands(&p, &[]);
    assert_eq!(program, "kinject", "found on PATH (exec.LookPath)");
    assert_eq!(args, ["inject", "--no-discovery"]);
}

/// Helm's `PrepareCommands` for this platform: the command, then its args, then `extra` (the
/// `--post-renderer-args`), each `$VAR` and `${VAR}` expanded (from `HELM_PLUGIN_DIR` and
/// `HELM_PLUGIN_NAME` here; the manifest uses none).
fn prepare_commands(plugin: &Value, extra: &[&str]) -> (String, Vec<String>) {
    let entries = plugin["runtimeConfig"]["platformCommand"]
        .as_array()
        .expect("platformCommand");
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    let chosen = entries
        .iter()
        .find(|c| c.get("os").and_then(Value::as_str) == Some(os) && c.get("arch").is_some())
        .or_else(|| {
            entries.iter().find(|c| {
                c.get("os").and_then(Value::as_str) == Some(os) && c.get("arch").is_none()
            })
        })
        .or_else(|| {
            entries
                .iter()
                .find(|c| c.get("os").is_none() && c.get("arch").is_none())
        })
        .expect("a command for this platform");
    let expand = |s: &str| {
        s.replace(
            "${HELM_PLUGIN_DIR}",
            &root().join("helm-plugin").display().to_string(),
        )
        .replace("${HELM_PLUGIN_NAME}", "kinject")
    };
    let mut parts = chosen["command"].as_str().expect("command").split(' ');
    let program = expand(parts.next().expect("a program"));
    let mut args: Vec<String> = parts.map(expand).collect();
    if let Some(list) = chosen.get("args").and_then(Value::as_array) {
        args.extend(list.iter().map(|a| expand(a.as_str().expect("a string"))));
    }
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    (program, args)
}

/// What Helm gets back from a post-renderer run: its exit, its standard output, its
/// standard error (which Helm 4 does not show).
fn post_render(dir: &Path, program: &str, args: &[String], rendered: &[u8]) -> Output {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let _ = std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kinject"), bin.join("kinject"));
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = Command::new(if program == "kinject" {
        bin.join("kinject")
    } else {
        PathBuf::from(program)
    })
    .args(args)
    .current_dir(dir)
    .env("PATH", path)
    .env("HELM_PLUGIN_NAME", "kinject")
    .env("HELM_PLUGIN_DIR", root().join("helm-plugin"))
    .env("NO_COLOR", "1")
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("spawn");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(rendered).expect("write the rendered chart");
    }
    child.wait_with_output().expect("wait")
}

/// A directory holding the configuration of testdata/helm/, where Helm would run.
fn workdir() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::copy(
        root().join("testdata/helm/sidecars.yaml"),
        tmp.path().join("sidecars.yaml"),
    )
    .expect("copy");
    tmp
}

/// The chart as Helm 3 renders it for a post-renderer.
fn rendered() -> Vec<u8> {
    std::fs::read(root().join("testdata/helm/rendered.yaml")).expect("read")
}

/// The same chart as Helm 4 hands it to a `postrenderer/v1` plugin.
fn rendered_helm4() -> Vec<u8> {
    std::fs::read(root().join("testdata/helm/rendered-helm4.yaml")).expect("read")
}

/// `stdout` is the golden file `name` of testdata/helm/ (`KINJECT_BLESS=1` rewrites it).
fn check_golden(name: &str, stdout: &str) {
    let path = root().join("testdata/helm").join(name);
    if std::env::var_os("KINJECT_BLESS").is_some() {
        std::fs::write(&path, stdout).expect("write golden");
    }
    assert_eq!(
        stdout,
        std::fs::read_to_string(&path).expect("read golden"),
        "stdout is the golden stream {name} (KINJECT_BLESS=1 to rewrite it)"
    );
}

/// `kind/name` of each object, in order.
fn names(objects: &[Value]) -> Vec<String> {
    objects
        .iter()
        .map(|o| format!("{}/{}", o["kind"], o["metadata"]["name"]))
        .collect()
}

const FILENAME: &str = "postrenderer.helm.sh/postrender-filename";

const ARGS: [&str; 2] = ["--config=sidecars.yaml", "--namespace=prod"];

#[test]
fn helm_4_runs_the_plugin_and_all_of_stdout_is_the_injected_stream() {
    let dir = workdir();
    let (program, args) = prepare_commands(&plugin(), &ARGS);
    let out = post_render(dir.path(), &program, &args, &rendered_helm4());
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).expect("utf-8"),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    check_golden("expected-helm4.yaml", &stdout);
    // The same documents, in order, each with the file annotation Helm splits the output by,
    // unchanged; the workload injected.
    let (input, output) = (
        common::objects_of_documents(&String::from_utf8(rendered_helm4()).expect("utf-8")),
        common::objects_of_documents(&stdout),
    );
    assert_eq!(names(&input), names(&output));
    for (i, o) in input.iter().zip(&output) {
        let file = |v: &Value| v["metadata"]["annotations"][FILENAME].clone();
        assert!(file(i).is_string(), "{i}");
        assert_eq!(file(i), file(o), "{}", names(std::slice::from_ref(o))[0]);
    }
    assert_eq!(
        common::container_names(&output[0]),
        ["web", "log-shipper"],
        "the tier=web Deployment"
    );
    assert_eq!(
        common::container_names(&output[2]),
        ["worker"],
        "the other one"
    );
    // The report is on standard error, and only there.
    assert!(
        stderr.contains("deployment/web injected: log-shipper"),
        "{stderr}"
    );
    assert!(stderr.contains("summary: 1 injected"), "{stderr}");
    assert!(!stdout.contains("summary:") && !stdout.contains("injected:"));
}

#[test]
fn helm_3_runs_kinject_as_an_executable_and_all_of_stdout_is_the_injected_stream() {
    let dir = workdir();
    let args: Vec<String> = ["inject"]
        .iter()
        .chain(&ARGS)
        .map(|a| (*a).to_owned())
        .collect();
    let out = post_render(dir.path(), "kinject", &args, &rendered());
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).expect("utf-8"),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    check_golden("expected.yaml", &stdout);
    let (input, output) = (
        common::objects_of_documents(&String::from_utf8(rendered()).expect("utf-8")),
        common::objects_of_documents(&stdout),
    );
    assert_eq!(names(&input), names(&output));
    assert_eq!(common::container_names(&output[1]), ["web", "log-shipper"]);
    assert!(stdout.contains("# Source: web/templates/deployment.yaml"));
    assert!(stderr.contains("summary: 1 injected"), "{stderr}");
    // The Helm 4 plugin gives the same bytes for the same stream.
    let (program, args) = prepare_commands(&plugin(), &ARGS);
    let helm4 = post_render(dir.path(), &program, &args, &rendered());
    assert_eq!(stdout.as_bytes(), helm4.stdout);
}

/// Every failure Helm can meet: a non-zero exit (Helm fails the install or upgrade), nothing on
/// stdout (no partial stream reaches the cluster), the reason on stderr.
#[test]
fn on_an_error_helm_gets_a_non_zero_exit_and_nothing_on_stdout() {
    let good = String::from_utf8(rendered()).expect("utf-8");
    let broken_yaml = good.replace("  replicas: 2\n", "  replicas: 2\n\tpaused: true\n");
    let clash = good.replace("        - name: worker\n", "        - name: log-shipper\n");
    let clash = clash.replace(
        "        app.kubernetes.io/name: web-worker\n    spec:",
        "        app.kubernetes.io/name: web-worker\n        tier: web\n    spec:",
    );
    let unrendered =
        format!("{good}---\n# Source: web/templates/x.yaml\nname: {{{{ .Values.name }}}}\n");
    let cases: [(&str, String, &[&str], &str); 5] = [
        (
            "a document that is not YAML",
            broken_yaml,
            &ARGS,
            "kinject::input::syntax",
        ),
        (
            "a sidecar clashing with the pod's container",
            clash,
            &ARGS,
            "kinject::inject::conflict",
        ),
        (
            "a template left unrendered",
            unrendered,
            &ARGS,
            "kinject::input::template",
        ),
        (
            "a configuration that is not there",
            good.clone(),
            &["--config=nope.yaml"],
            "kinject::config::io",
        ),
        // With the plugin, no configuration is ever looked for beside the chart (a
        // .kinject.yaml is planted in each run's directory).
        ("no --config", good, &["--namespace=prod"], "--no-discovery"),
    ];
    for (what, input, extra, why) in cases {
        let dir = workdir();
        std::fs::copy(
            dir.path().join("sidecars.yaml"),
            dir.path().join(".kinject.yaml"),
        )
        .expect("plant");
        let (program, args) = prepare_commands(&plugin(), extra);
        let out = post_render(dir.path(), &program, &args, input.as_bytes());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
        assert!(out.stdout.is_empty(), "{what}: something on stdout");
        assert!(stderr.contains(why), "{what}: {stderr}");
    }
}
