//! kinject as an Argo CD Config Management Plugin (`deploy/argocd/`): the plugin file's fields
//! as Argo CD reads them, its `generate` command run as the plugin's sidecar runs it, in an
//! application's source holding a planted configuration, and the example's Kubernetes objects
//! built with kustomize and validated with `kubernetes-validate --strict`.
//!
//! Argo CD is not run here (no cluster). What the tests rely on, read from argoproj/argo-cd:
//! `cmpserver/plugin/config.go` (`PluginConfig`: `apiVersion`, `kind`, `metadata`, `spec` with
//! `version`, `init`, `generate`, `discover`, `parameters`, `preserveFileMode`;
//! `ValidatePluginConfig`: a `metadata.name`, `kind: ConfigManagementPlugin`, a non-empty
//! `generate.command`; `discover` optional) and `cmpserver/plugin/plugin.go` (`runCommand`:
//! `command[0]` run with `command[1:]` then `args`, in the application's directory, with the
//! server's environment plus the request's; all of standard output is the manifests; a
//! non-zero exit is an error carrying standard error). Two stand-ins, and only these: the
//! sidecar's `/kinject/config` (the platform's ConfigMap) is a directory laid out as the
//! kubelet mounts a ConfigMap (`..data` links), and `kustomize build` is `kubectl kustomize`
//! (kubectl's built-in kustomize; no kustomize binary here).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::common;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

/// `deploy/argocd/plugin.yaml`, read as Kubernetes reads YAML.
fn plugin() -> Value {
    let text = std::fs::read_to_string(root().join("deploy/argocd/plugin.yaml")).expect("read");
    let mut documents = common::objects_of_documents(&text);
    assert_eq!(documents.len(), 1);
    documents.remove(0)
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

/// Where the sidecar mounts the platform's configuration (repo-server-patch.yaml).
const MOUNT: &str = "/kinject/config";

#[test]
fn the_plugin_file_has_the_fields_argo_cd_reads() {
    let p = plugin();
    for k in keys(&p) {
        assert!(
            ["apiVersion", "kind", "metadata", "spec"].contains(&k),
            "`{k}`"
        );
    }
    assert_eq!(p["apiVersion"], "argoproj.io/v1alpha1");
    assert_eq!(p["kind"], "ConfigManagementPlugin");
    assert_eq!(p["metadata"]["name"], "kinject");
    for k in keys(&p["spec"]) {
        let known = [
            "version",
            "init",
            "generate",
            "discover",
            "parameters",
            "preserveFileMode",
        ];
        assert!(
            known.contains(&k),
            "`spec.{k}` is not a PluginConfigSpec field"
        );
    }
    let generate = &p["spec"]["generate"];
    for k in keys(generate) {
        assert!(["command", "args"].contains(&k), "`generate.{k}`");
    }
    assert!(!generate["command"].as_array().expect("command").is_empty());
    assert!(
        p["spec"].get("discover").is_none(),
        "an Application uses the plugin by naming it, never by what its repository holds"
    );
    let script = generate_script();
    assert!(script.contains(&format!("-c {MOUNT}")) && script.contains("--no-discovery"));
    assert!(script.contains("pipefail"));
}

/// The `generate` command as argocd-cmp-server runs it: `command` then `args`.
fn generate_argv() -> Vec<String> {
    let generate = &plugin()["spec"]["generate"];
    generate["command"]
        .as_array()
        .into_iter()
        .chain(generate["args"].as_array())
        .flatten()
        .map(|a| a.as_str().expect("a string").to_owned())
        .collect()
}

/// The shell script of `generate` (`bash -c SCRIPT`).
fn generate_script() -> String {
    let argv = generate_argv();
    assert_eq!(argv[..2], ["bash", "-c"], "{argv:?}");
    argv[2].clone()
}

/// The platform's configuration, laid out as the kubelet mounts a ConfigMap: the file behind
/// `..data`, a link to it at the top.
fn mounted_configuration(dir: &Path) -> PathBuf {
    let mount = dir.join("kinject-config");
    let timestamped = mount.join("..2026_11_29_01_00_00.000000001");
    std::fs::create_dir_all(&timestamped).expect("mkdir");
    std::fs::copy(
        root().join("deploy/argocd/sidecars.yaml"),
        timestamped.join("sidecars.yaml"),
    )
    .expect("copy");
    std::os::unix::fs::symlink("..2026_11_29_01_00_00.000000001", mount.join("..data"))
        .expect("link");
    std::os::unix::fs::symlink("..data/sidecars.yaml", mount.join("sidecars.yaml")).expect("link");
    mount
}

/// A directory for `PATH`: kinject, and `kustomize build` as `kubectl kustomize`.
fn bin(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    if bin.exists() {
        return bin;
    }
    std::fs::create_dir_all(&bin).expect("bin");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kinject"), bin.join("kinject")).expect("ln");
    let kustomize = bin.join("kustomize");
    std::fs::write(
        &kustomize,
        format!(
            "#!/usr/bin/env bash\n# kubectl's built-in kustomize stands in for kustomize.\n\
             [ \"$1\" = build ] || exit 99\nshift\nexec {} kustomize \"$@\"\n",
            common::kubectl().display()
        ),
    )
    .expect("write");
    std::fs::set_permissions(&kustomize, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    bin
}

/// An application's source (testdata/argocd/app) with testdata/argocd/planted.yaml planted
/// as `.kinject.yaml` and `kinject.yaml`, in a git repository as the repo server checks it
/// out.
fn application(dir: &Path) -> PathBuf {
    let app = dir.join("app");
    std::fs::create_dir_all(&app).expect("mkdir");
    for name in ["kustomization.yaml", "deployment.yaml"] {
        std::fs::copy(
            root().join("testdata/argocd/app").join(name),
            app.join(name),
        )
        .expect("copy");
    }
    for name in [".kinject.yaml", "kinject.yaml"] {
        std::fs::copy(root().join("testdata/argocd/planted.yaml"), app.join(name)).expect("plant");
    }
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&app)
        .output()
        .expect("git");
    assert!(git.status.success());
    app
}

/// Runs `script` as argocd-cmp-server runs `generate`: `bash -c SCRIPT` in the application's
/// directory, with the request's ARGOCD_APP_NAMESPACE.
fn run_generate(dir: &Path, app: &Path, script: &str) -> Output {
    let path = format!(
        "{}:{}",
        bin(dir).display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("bash")
        .args(["-c", script])
        .current_dir(app)
        .env("PATH", path)
        .env("HOME", dir)
        .env("ARGOCD_APP_NAME", "web")
        .env("ARGOCD_APP_NAMESPACE", "prod")
        .env("NO_COLOR", "1")
        .output()
        .expect("bash")
}

/// The plugin's exact `generate` script, the mount path the only change (where this test put
/// the platform's configuration).
fn the_generate_script_here(mount: &Path) -> String {
    let script = generate_script();
    assert_eq!(script.matches(MOUNT).count(), 1, "{script}");
    script.replace(MOUNT, &mount.display().to_string())
}

#[test]
fn a_configuration_planted_in_the_application_is_never_read() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mount = mounted_configuration(tmp.path());
    let app = application(tmp.path());
    let out = run_generate(tmp.path(), &app, &the_generate_script_here(&mount));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    let objects = common::objects(&stdout);
    assert_eq!(objects.len(), 1, "{stdout}");
    assert_eq!(
        common::container_names(&objects[0]),
        ["web", "log-shipper"],
        "the platform's sidecar, matched in the destination namespace"
    );
    assert!(
        !stdout.contains("planted") && !stdout.contains("attacker"),
        "{stdout}"
    );
    assert!(
        !stderr.contains(".kinject.yaml") && !stderr.contains("planted"),
        "{stderr}"
    );
    // The plant is one kinject would read without the plugin's -c: the test would see it.
    let unguarded = run_generate(tmp.path(), &app, "kustomize build . | kinject inject");
    assert!(
        String::from_utf8_lossy(&unguarded.stdout).contains("attacker.example.com"),
        "the planted configuration is what a run without -c uses: {}",
        String::from_utf8_lossy(&unguarded.stderr)
    );
}

#[test]
fn a_failed_build_fails_the_generation() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mount = mounted_configuration(tmp.path());
    let app = application(tmp.path());
    std::fs::remove_file(app.join("deployment.yaml")).expect("rm");
    let out = run_generate(tmp.path(), &app, &the_generate_script_here(&mount));
    assert!(
        !out.status.success(),
        "kustomize failed, the generation must"
    );
    assert!(out.stdout.is_empty(), "no stream reaches Argo CD");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("deployment.yaml"),
        "kustomize's reason, which Argo CD shows"
    );
    // An injection error: the same.
    let app = application(&tmp.path().join("second"));
    let text = std::fs::read_to_string(app.join("deployment.yaml")).expect("read");
    std::fs::write(
        app.join("deployment.yaml"),
        text.replace("- name: web\n", "- name: log-shipper\n"),
    )
    .expect("write");
    let out = run_generate(tmp.path(), &app, &the_generate_script_here(&mount));
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("kinject::inject::conflict"));
}

/// `kubectl kustomize` of deploy/argocd, Argo CD's install manifests replaced by
/// testdata/argocd/ (their repo-server Deployment): every object valid for Kubernetes, the
/// sidecar as Argo CD's plugin docs require, the ConfigMaps holding the files beside it.
#[test]
fn the_example_manifests_are_valid_kubernetes_objects() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (deploy, install) = (tmp.path().join("argocd"), tmp.path().join("install"));
    for (from, to) in [
        (root().join("deploy/argocd"), &deploy),
        (root().join("testdata/argocd"), &install),
    ] {
        std::fs::create_dir_all(to).expect("mkdir");
        for name in common::entries(&from) {
            if from.join(&name).is_file() {
                std::fs::copy(from.join(&name), to.join(&name)).expect("copy");
            }
        }
    }
    let kustomization = std::fs::read_to_string(deploy.join("kustomization.yaml")).expect("read");
    let remote = kustomization
        .lines()
        .find(|l| l.contains("https://raw.githubusercontent.com/argoproj/argo-cd/"))
        .expect("Argo CD's install manifests");
    std::fs::write(
        deploy.join("kustomization.yaml"),
        kustomization.replace(remote, "- ../install"),
    )
    .expect("write");
    let built = Command::new(common::kubectl())
        .args(["kustomize"])
        .arg(&deploy)
        .output()
        .expect("kubectl kustomize");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let file = tmp.path().join("built.yaml");
    std::fs::write(&file, &built.stdout).expect("write");
    let valid = Command::new(common::kubernetes_validate())
        .arg("--strict")
        .arg(&file)
        .output()
        .expect("kubernetes-validate");
    assert!(
        valid.status.success(),
        "{}{}",
        String::from_utf8_lossy(&valid.stdout),
        String::from_utf8_lossy(&valid.stderr)
    );
    let objects = common::objects(&String::from_utf8_lossy(&built.stdout));
    let find = |kind: &str, name: &str| {
        objects
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("{kind}/{name}"))
    };
    assert!(
        objects
            .iter()
            .all(|o| o["metadata"]["namespace"] == "argocd")
    );
    for (config_map, key) in [
        ("kinject-cmp-plugin", "plugin.yaml"),
        ("kinject-config", "sidecars.yaml"),
    ] {
        let text = std::fs::read_to_string(root().join("deploy/argocd").join(key)).expect("r");
        assert_eq!(find("ConfigMap", config_map)["data"][key], text.as_str());
    }
    let pod = &find("Deployment", "argocd-repo-server")["spec"]["template"]["spec"];
    let mut names = common::container_names(find("Deployment", "argocd-repo-server"));
    names.sort_unstable();
    assert_eq!(names, ["argocd-repo-server", "kinject"]);
    let sidecar = pod["containers"]
        .as_array()
        .expect("containers")
        .iter()
        .find(|c| c["name"] == "kinject")
        .expect("the sidecar");
    assert_eq!(sidecar["command"][0], "/var/run/argocd/argocd-cmp-server");
    assert_eq!(sidecar["securityContext"]["runAsUser"], 999);
    let mounts: Vec<(&str, &str)> = sidecar["volumeMounts"]
        .as_array()
        .expect("mounts")
        .iter()
        .map(|m| {
            (
                m["mountPath"].as_str().expect("path"),
                m["name"].as_str().expect("name"),
            )
        })
        .collect();
    for wanted in [
        ("/var/run/argocd", "var-files"),
        ("/home/argocd/cmp-server/plugins", "plugins"),
        (
            "/home/argocd/cmp-server/config/plugin.yaml",
            "kinject-cmp-plugin",
        ),
        (MOUNT, "kinject-config"),
    ] {
        assert!(mounts.contains(&wanted), "{wanted:?} in {mounts:?}");
    }
    let volumes: Vec<&str> = pod["volumes"]
        .as_array()
        .expect("volumes")
        .iter()
        .map(|v| v["name"].as_str().expect("name"))
        .collect();
    assert!(mounts.iter().all(|(_, name)| volumes.contains(name)));
}
