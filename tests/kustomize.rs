//! kinject inside the real kustomize (`kubectl kustomize --enable-alpha-plugins`), as a legacy
//! exec transformer plugin: the kinject binary is linked into the plugin directory under the
//! name kustomize looks for, `InjectionConfig`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::{self, objects};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

/// An XDG config home holding kinject as the `InjectionConfig` plugin.
fn plugin_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("tempdir");
    let dir = home
        .path()
        .join("kustomize/plugin/kinject.dev/v1alpha1/injectionconfig");
    std::fs::create_dir_all(&dir).expect("plugin dir");
    #[cfg(unix)]
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kinject"), dir.join("InjectionConfig"))
        .expect("symlink");
    home
}

fn kustomize(dir: &Path, home: &Path) -> String {
    kustomize_with(dir, home, &[])
}

/// `kustomize` with the environment variables `env` set.
fn kustomize_with(dir: &Path, home: &Path, env: &[(&str, &Path)]) -> String {
    let out = Command::new(common::kubectl())
        .args(["kustomize", "--enable-alpha-plugins"])
        .arg(dir)
        .env("XDG_CONFIG_HOME", home)
        .envs(env.iter().copied())
        .output()
        .expect("run kubectl");
    assert!(
        out.status.success(),
        "kubectl kustomize failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn transformer_plugin_injects() {
    let home = plugin_home();
    let output = kustomize(&root().join("testdata/kustomize/transformer"), home.path());
    let objs = objects(&output);
    let deployment = objs
        .iter()
        .find(|o| o["kind"] == "Deployment")
        .expect("deployment");
    assert_eq!(
        deployment["metadata"]["name"], "shop-web",
        "kustomize's own transformers still ran"
    );
    assert_eq!(common::container_names(deployment), ["web", "log-shipper"]);
    assert!(
        deployment["spec"]["template"]["metadata"]["annotations"]["kinject.dev/status"].is_string()
    );
    let service = objs
        .iter()
        .find(|o| o["kind"] == "Service")
        .expect("service");
    assert_eq!(service["metadata"]["name"], "shop-web");
    assert!(
        service["metadata"].get("annotations").is_none(),
        "{service}"
    );
}

/// As kustomize's plugin kinject reports what it did, as `kinject inject` does, and the build
/// still succeeds. kustomize shows a plugin's stderr only when the plugin fails, so the report
/// of a build that succeeds is kept in `KINJECT_REPORT_FILE`; a build where nothing matched
/// says so there.
#[test]
fn transformer_plugin_reports_what_it_did() {
    let home = plugin_home();
    let work = tempfile::tempdir().expect("tempdir");
    let report = work.path().join("report.txt");
    let env = [("KINJECT_REPORT_FILE", report.as_path())];
    let output = kustomize_with(
        &root().join("testdata/kustomize/transformer"),
        home.path(),
        &env,
    );
    assert!(output.contains("log-shipper"));
    let said = std::fs::read_to_string(&report).expect("the report");
    assert_eq!(
        said.lines().last(),
        Some("summary: 1 injected, 0 unchanged, 1 skipped (1 not_a_workload), 0 errors"),
        "{said}"
    );
    // The same build with a rule that matches nothing.
    let dir = work.path().join("overlay");
    copy_dir(&root().join("testdata/kustomize/transformer"), &dir);
    let config = std::fs::read_to_string(dir.join("sidecars.yaml")).expect("read");
    let config = config.replace("kinds: [Deployment]", "kinds: [StatefulSet]");
    std::fs::write(dir.join("sidecars.yaml"), config).expect("write");
    kustomize_with(&dir, home.path(), &env);
    let said = std::fs::read_to_string(&report).expect("the report");
    assert!(
        said.contains("warning: nothing was injected: 1 workload, all skipped (1 no_rule_matched"),
        "{said}"
    );
    assert!(said.ends_with("0 errors\n"), "{said}");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from)
        .expect("read dir")
        .filter_map(Result::ok)
    {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::write(to.join(e.file_name()), std::fs::read(&p).expect("read"))
                .expect("write");
        }
    }
}

fn kinject(args: &[&str], stdin: &[u8]) -> std::process::Output {
    common::kinject_with_stdin(&root(), args, stdin)
}

/// Objects keyed by kind and name, for comparing streams kustomize may order differently.
fn by_identity(text: &str) -> std::collections::BTreeMap<String, Value> {
    objects(text)
        .into_iter()
        .map(|o| {
            (
                format!(
                    "{}/{}/{}",
                    o["kind"], o["metadata"]["namespace"], o["metadata"]["name"]
                ),
                o,
            )
        })
        .collect()
}

/// The overlay `--emit-kustomize` writes, built by the real kustomize, gives the same objects as
/// injecting the built base directly — over every workload of the microservices demo.
#[test]
fn emitted_overlay_round_trips_through_kustomize() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = tmp.path().join("base");
    let overlay = tmp.path().join("overlays/sidecars");
    copy_dir(
        &root().join("testdata/corpus/manifests/microservices-demo"),
        &base,
    );
    let config = root().join("testdata/corpus/inject-all.yaml");
    let config = config.to_str().expect("path");
    let out = Command::new(env!("CARGO_BIN_EXE_kinject"))
        .args(["inject", "-q", "-c", config, "--emit-kustomize"])
        .args([&overlay, &base])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(overlay.join("kustomization.yaml")).expect("overlay");
    assert!(text.contains("- ../../base\n"), "{text}");

    let home = plugin_home();
    let through_overlay = by_identity(&kustomize(&overlay, home.path()));
    let built_base = kustomize(&base, home.path());
    let injected = kinject(&["inject", "-q", "-c", config, "-"], built_base.as_bytes());
    assert!(
        injected.status.success(),
        "{}",
        String::from_utf8_lossy(&injected.stderr)
    );
    let direct = by_identity(&String::from_utf8_lossy(&injected.stdout));
    assert_eq!(
        through_overlay.keys().collect::<Vec<_>>(),
        direct.keys().collect::<Vec<_>>()
    );
    let mut workloads = 0;
    for (id, object) in &through_overlay {
        assert_eq!(object, &direct[id], "{id} differs");
        if object["kind"] == "Deployment" {
            workloads += 1;
            let containers = object["spec"]["template"]["spec"]["containers"]
                .as_array()
                .expect("containers");
            assert!(
                containers.iter().any(|c| c["name"] == "kinject-probe"),
                "{id} has no sidecar"
            );
        }
    }
    assert!(workloads >= 10, "only {workloads} workloads");
}

#[test]
fn emit_kustomize_refuses_bases_it_cannot_follow() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = tmp.path().join("base");
    std::fs::create_dir(&base).expect("mkdir");
    std::fs::write(
        base.join("kustomization.yaml"),
        "resources: [web.yaml]\npatches:\n- path: p.yaml\n",
    )
    .expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_kinject"))
        .args([
            "inject",
            "-c",
            root()
                .join("testdata/corpus/inject-all.yaml")
                .to_str()
                .expect("path"),
            "--emit-kustomize",
        ])
        .args([tmp.path().join("overlay"), base])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot follow `patches`"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!tmp.path().join("overlay").exists(), "nothing written");
}

/// Installed as `kubectl-kinject` on PATH, kinject is a kubectl plugin: `kubectl kinject inject
/// -f …` works the way kubectl users type it.
#[cfg(unix)]
#[test]
fn kubectl_plugin() {
    let bin = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(
        env!("CARGO_BIN_EXE_kinject"),
        bin.path().join("kubectl-kinject"),
    )
    .expect("symlink");
    let path = std::env::join_paths(std::iter::once(bin.path().to_owned()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .expect("PATH");
    let case = root().join("testdata/cases/kind-list");
    let out = Command::new(common::kubectl())
        .args([
            "kinject",
            "inject",
            "-q",
            "-c",
            "config.yaml",
            "-f",
            "input.yaml",
        ])
        .current_dir(&case)
        .env("PATH", path)
        .output()
        .expect("run kubectl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        std::fs::read_to_string(case.join("expected.yaml")).expect("expected")
    );
}

/// A base of one Deployment in `dir`.
fn small_base(dir: &Path) {
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(dir.join("kustomization.yaml"), "resources: [web.yaml]\n").expect("write");
    std::fs::write(
        dir.join("web.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: example.com/app:1\n",
    )
    .expect("write");
}

/// `kinject inject --emit-kustomize OUT BASE…` run in `dir`.
fn emit(dir: &Path, out: &str, bases: &[&str]) -> std::process::Output {
    let config = root().join("testdata/corpus/inject-all.yaml");
    Command::new(env!("CARGO_BIN_EXE_kinject"))
        .args(["inject", "-q", "-c", config.to_str().expect("path")])
        .args(["--emit-kustomize", out])
        .args(bases)
        .current_dir(dir)
        .output()
        .expect("run")
}

/// The output's kustomization file is never written through a symlink, even one that points
/// nowhere yet: the file it points to is neither replaced nor made.
#[cfg(unix)]
#[test]
fn emit_kustomize_never_writes_through_a_symlink() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    small_base(&d.join("base"));
    std::fs::create_dir_all(d.join("outside")).expect("mkdir");
    std::fs::write(d.join("outside/precious.yaml"), "precious\n").expect("write");
    for (out, target) in [
        ("out", "../outside/precious.yaml"),
        ("dangling", "../outside/new.yaml"),
    ] {
        std::fs::create_dir(d.join(out)).expect("mkdir");
        std::os::unix::fs::symlink(target, d.join(out).join("kustomization.yaml"))
            .expect("symlink");
        let run = emit(d, out, &["base"]);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "{out}/kustomization.yaml is a symlink: not written through"
            )),
            "{stderr}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(d.join("outside/precious.yaml")).expect("read"),
        "precious\n"
    );
    assert!(!d.join("outside/new.yaml").exists());
}

/// A kustomization kinject did not write is never replaced (nor one beside it under another
/// name kustomize reads); one it wrote is.
#[test]
fn emit_kustomize_replaces_only_the_overlay_it_wrote() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    small_base(&d.join("base"));
    let hand = "# mine\nresources: [../base]\n";
    for file in ["kustomization.yaml", "kustomization.yml", "Kustomization"] {
        let out = d.join(format!("hand-{file}"));
        std::fs::create_dir(&out).expect("mkdir");
        std::fs::write(out.join(file), hand).expect("write");
        let run = emit(d, &format!("hand-{file}"), &["base"]);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "hand-{file}/{file} was not written by kinject: not replaced"
            )),
            "{stderr}"
        );
        assert_eq!(std::fs::read_to_string(out.join(file)).expect("read"), hand);
        assert_eq!(std::fs::read_dir(&out).expect("dir").count(), 1);
    }
    let first = emit(d, "overlay", &["base"]);
    assert_eq!(first.status.code(), Some(0));
    let written = std::fs::read_to_string(d.join("overlay/kustomization.yaml")).expect("read");
    assert!(
        written.starts_with("# Generated by `kinject inject --emit-kustomize`")
            && written.contains("- ../base\n"),
        "{written}"
    );
    let again = emit(d, "overlay", &["base"]);
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(d.join("overlay/kustomization.yaml")).expect("read"),
        written
    );
}

/// The output directory may not be a base, hold one, or lie inside one: the base's own
/// kustomization would be replaced, or the overlay would be read as part of the base.
#[test]
fn emit_kustomize_refuses_an_output_directory_overlapping_a_base() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    small_base(&d.join("bases/web"));
    let before = std::fs::read_to_string(d.join("bases/web/kustomization.yaml")).expect("read");
    for (out, how) in [
        ("bases/web", "is the base"),
        ("./bases/web/", "is the base"),
        ("bases/web/overlay", "is inside the base"),
        ("bases", "holds the base"),
        (".", "holds the base"),
    ] {
        let run = emit(d, out, &["bases/web"]);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{out}: {stderr}");
        assert!(
            stderr.contains(&format!("the output directory {how} bases/web")),
            "{out}: {stderr}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(d.join("bases/web/kustomization.yaml")).expect("read"),
        before
    );
    assert!(!d.join("bases/web/overlay").exists());
    assert!(!d.join("kustomization.yaml").exists());
    assert!(!d.join("bases/kustomization.yaml").exists());
}

/// Rules match the objects of a base in the namespace the base's `namespace:` puts them in,
/// as `kustomize build` gives them: a rule for `prod` patches a base whose kustomization says
/// `namespace: prod` though its files name none (it wrote "0 patches", silently).
#[test]
fn emit_kustomize_matches_objects_in_the_namespace_their_base_gives() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    small_base(&d.join("base"));
    std::fs::write(
        d.join("base/kustomization.yaml"),
        "namespace: prod\nresources: [web.yaml]\n",
    )
    .expect("write");
    std::fs::write(
        d.join("sidecars.yaml"),
        "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: log\n  containers: [{name: log, image: log:1}]\nrules:\n- name: prod\n  match: {namespaces: [prod]}\n  inject: [log]\n",
    )
    .expect("write");
    let run = Command::new(env!("CARGO_BIN_EXE_kinject"))
        .args([
            "inject",
            "-c",
            "sidecars.yaml",
            "--emit-kustomize",
            "overlay",
            "base",
        ])
        .current_dir(d)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("(1 patch)"), "{stderr}");
    let built = kustomize(&d.join("overlay"), d);
    let web = objects(&built);
    assert_eq!(web[0]["metadata"]["namespace"], "prod", "{built}");
    assert_eq!(common::container_names(&web[0]), ["app", "log"], "{built}");
}

/// A mistake in the configuration of the transformer plugin is located in the user's file, at
/// its own line, not in the re-serialised temporary copy kustomize hands the plugin (and
/// deletes).
#[test]
fn plugin_errors_name_the_users_file() {
    let home = plugin_home();
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    copy_dir(&root().join("testdata/kustomize/transformer"), dir);
    let config = std::fs::read_to_string(dir.join("sidecars.yaml")).expect("read");
    // A typo, on a line of its own after comments kustomize's copy would not keep.
    let typo = format!(
        "# a comment\n# another\n{}",
        config.replace("    image: ", "    imagePullPolcy: Always\n    image: ")
    );
    assert_ne!(
        typo, config,
        "the fixture has an image to add a misspelt field beside"
    );
    std::fs::write(dir.join("sidecars.yaml"), &typo).expect("write");
    let line = typo
        .lines()
        .position(|l| l.contains("imagePullPolcy"))
        .expect("typo line")
        + 1;
    let out = Command::new(common::kubectl())
        .args(["kustomize", "--enable-alpha-plugins"])
        .arg(dir)
        .env("XDG_CONFIG_HOME", home.path())
        .env("NO_COLOR", "1")
        .output()
        .expect("run kubectl");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    let at = format!("{}:{line}:", dir.join("sidecars.yaml").display());
    assert!(stderr.contains(&at), "wanted `{at}` in:\n{stderr}");
    assert!(stderr.contains("imagePullPolicy"), "did you mean: {stderr}");
}

/// kustomize reads `argsOneLiner` from the plugin's configuration and passes it after the
/// file's path: the configuration keeps the field (kinject ignores it there) and kinject reads
/// the arguments as flags.
#[test]
fn transformer_plugin_takes_args_one_liner() {
    let home = plugin_home();
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&root().join("testdata/kustomize/transformer"), dir.path());
    let config = dir.path().join("sidecars.yaml");
    let text = std::fs::read_to_string(&config).expect("read sidecars.yaml");
    let text = text
        .replace(
            "image: example.com/log-shipper:2.1",
            "image: \"example.com/log-shipper:{{ values.version }}\"",
        )
        .replace(
            "metadata:\n  name: sidecars\n",
            "metadata:\n  name: sidecars\nargsOneLiner: --set version=3.10\nvalues:\n  version: \"2.1\"\n",
        );
    std::fs::write(&config, text).expect("write sidecars.yaml");
    let output = kustomize(dir.path(), home.path());
    let deployment = objects(&output)
        .into_iter()
        .find(|o| o["kind"] == "Deployment")
        .expect("deployment");
    let containers = &deployment["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers[1]["image"], "example.com/log-shipper:3.10");
}

/// An object error met as kustomize's plugin is located in kustomize's stream (`<stdin>`);
/// where the kustomization keeps the objects' origin (`buildMetadata: [originAnnotations]`),
/// the message also names the file the object came from, the one the author edits.
#[test]
fn a_plugin_error_names_the_file_kustomize_read_the_object_from() {
    let home = plugin_home();
    let work = tempfile::tempdir().expect("tempdir");
    let dir = work.path().join("overlay");
    copy_dir(&root().join("testdata/kustomize/transformer"), &dir);
    // The app container named like the sidecar: an error kinject refuses.
    let deployment = std::fs::read_to_string(dir.join("deployment.yaml")).expect("read");
    std::fs::write(
        dir.join("deployment.yaml"),
        deployment.replace("- name: web\n", "- name: log-shipper\n"),
    )
    .expect("write");
    let kustomization = std::fs::read_to_string(dir.join("kustomization.yaml")).expect("read");
    std::fs::write(
        dir.join("kustomization.yaml"),
        format!("{kustomization}buildMetadata: [originAnnotations]\n"),
    )
    .expect("write");
    let out = Command::new(common::kubectl())
        .args(["kustomize", "--enable-alpha-plugins"])
        .arg(&dir)
        .env("XDG_CONFIG_HOME", home.path())
        .env("NO_COLOR", "1")
        .output()
        .expect("run kubectl");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("deployment/shop-web (kustomize read it from deployment.yaml): sidecar"),
        "{stderr}"
    );
}
