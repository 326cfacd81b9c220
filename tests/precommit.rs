//! The real `pre-commit` (from the virtualenv `scripts/test` makes) running this repository's
//! hook on a temporary git repository: the first run modifies the manifests and fails, the
//! second passes, and the manifests hold the sidecar.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

fn pre_commit() -> PathBuf {
    if let Some(p) = std::env::var_os("PRE_COMMIT") {
        return PathBuf::from(p);
    }
    let venv = root().join(".venv/bin/pre-commit");
    assert!(
        venv.exists(),
        "pre-commit is not installed: run `scripts/test` (it installs it into .venv) or set PRE_COMMIT"
    );
    venv
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=kinject",
            "-c",
            "user.email=kinject@example.com",
        ])
        .args(args)
        .current_dir(dir)
        .status()
        .expect("git");
    assert!(status.success(), "git {args:?}");
}

/// `pre-commit try-repo` of this checkout's `kinject` hook on every file of `dir`: it uses the
/// hook definition (.pre-commit-hooks.yaml, language: rust) as it is now. pre-commit builds
/// kinject with `cargo install`; a target directory of its own under target/ keeps later runs
/// fast.
fn try_repo(dir: &Path, home: &Path) -> std::process::Output {
    Command::new(pre_commit())
        .args([
            "try-repo",
            root().to_str().expect("path"),
            "kinject",
            "--all-files",
        ])
        .current_dir(dir)
        .env("PRE_COMMIT_HOME", home)
        .env("CARGO_TARGET_DIR", root().join("target/pre-commit"))
        // What is tested is the hook's wiring, not the optimiser: build it quickly (the
        // release profile's one fat-LTO unit is minutes of a CI core; the release's own
        // binary is tested in tests/release.rs).
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "0")
        .env("CARGO_PROFILE_RELEASE_LTO", "false")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16")
        .env("NO_COLOR", "1")
        .output()
        .expect("run pre-commit")
}

/// A git repository with a `.kinject.yaml` (the kind-list case's), and a home for
/// pre-commit's own files.
fn repository() -> (tempfile::TempDir, tempfile::TempDir) {
    let repo = tempfile::tempdir().expect("tempdir");
    let home = tempfile::tempdir().expect("pre-commit home");
    git(repo.path(), &["init", "-q"]);
    std::fs::copy(
        root().join("testdata/cases/kind-list/config.yaml"),
        repo.path().join(".kinject.yaml"),
    )
    .expect("config");
    (repo, home)
}

#[test]
fn hook_injects_then_passes() {
    let (repo, home) = repository();
    let dir = repo.path();
    let cases = root().join("testdata/cases");
    std::fs::create_dir(dir.join("k8s")).expect("mkdir");
    let manifest = std::fs::read_to_string(cases.join("kms-plugin/input.yaml")).expect("input");
    std::fs::write(dir.join("k8s/checkout.yaml"), &manifest).expect("write");
    std::fs::write(
        dir.join("k8s/service.yaml"),
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n",
    )
    .expect("write");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "manifests"]);

    let run = || try_repo(dir, home.path());
    let first = run();
    let log = String::from_utf8_lossy(&first.stdout).into_owned()
        + &String::from_utf8_lossy(&first.stderr);
    assert_eq!(
        first.status.code(),
        Some(1),
        "first run should modify files and fail:\n{log}"
    );
    assert!(log.contains("files were modified by this hook"), "{log}");

    let injected = std::fs::read_to_string(dir.join("k8s/checkout.yaml")).expect("read");
    assert!(injected.contains("- name: log-shipper"), "{injected}");
    assert!(injected.contains("kinject.dev/status"), "{injected}");
    // Only lines were added: every original line is still there, in order.
    let mut rest = injected.lines();
    for line in manifest.lines() {
        assert!(rest.any(|l| l == line), "lost or changed line: {line}");
    }

    let second = run();
    let log = String::from_utf8_lossy(&second.stdout).into_owned()
        + &String::from_utf8_lossy(&second.stderr);
    assert_eq!(
        second.status.code(),
        Some(0),
        "second run should pass:\n{log}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("k8s/checkout.yaml")).expect("read"),
        injected
    );
}

/// A committed file named like an option (`--config=evil.yaml`) is a file to the hook, not an
/// option: the repository's own configuration is used, and the sidecar of the configuration
/// the name points to is not injected. Run with `kinject-system` (the kinject just built), whose
/// `entry:` is `kinject`'s (checked here): `hook_injects_then_passes` has pre-commit build the
/// Rust hook already, a build of every dependency a second one would repeat.
#[test]
fn a_file_named_like_an_option_is_a_file() {
    let hooks = std::fs::read_to_string(root().join(".pre-commit-hooks.yaml")).expect("hooks");
    let entry = |id: &str| -> String {
        let at = hooks
            .find(&format!("- id: {id}\n"))
            .unwrap_or_else(|| panic!("{id}"));
        let block = &hooks[at..];
        let line = block
            .lines()
            .find(|l| l.trim_start().starts_with("entry:"))
            .expect("entry");
        line.trim().to_owned()
    };
    assert_eq!(entry("kinject"), entry("kinject-system"));
    assert!(entry("kinject").ends_with(" --"), "{}", entry("kinject"));
    let (repo, home) = repository();
    let dir = repo.path();
    let cases = root().join("testdata/cases");
    std::fs::write(
        dir.join("evil.yaml"),
        "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: miner\n  containers:\n  - name: miner\n    image: attacker.example/cryptominer\n    securityContext: {privileged: true}\nrules:\n- name: all\n  inject: [miner]\n",
    )
    .expect("write");
    std::fs::write(dir.join("--config=evil.yaml"), "# an odd name\n").expect("write");
    std::fs::create_dir(dir.join("k8s")).expect("mkdir");
    let manifest = std::fs::read_to_string(cases.join("kms-plugin/input.yaml")).expect("input");
    std::fs::write(dir.join("k8s/app.yaml"), &manifest).expect("write");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "manifests"]);

    let (code, log) = try_system_hook(dir, home.path(), "kinject-system", true);
    assert_eq!(code, Some(1), "{log}");
    assert!(log.contains("files were modified by this hook"), "{log}");
    let injected = std::fs::read_to_string(dir.join("k8s/app.yaml")).expect("read");
    assert!(injected.contains("- name: log-shipper"), "{injected}");
    assert!(!injected.contains("miner"), "{injected}");
    assert_eq!(
        std::fs::read_to_string(dir.join("--config=evil.yaml")).expect("read"),
        "# an odd name\n"
    );
}

/// `pre-commit try-repo` of this checkout's `hook` (a `language: system` one, which runs the
/// kinject just built: it is put first on PATH) on the staged files, or on every file.
fn try_system_hook(dir: &Path, home: &Path, hook: &str, all_files: bool) -> (Option<i32>, String) {
    let bin = Path::new(env!("CARGO_BIN_EXE_kinject"))
        .parent()
        .expect("bin dir")
        .to_owned();
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let checkout = root();
    let mut args = vec!["try-repo", checkout.to_str().expect("path"), hook];
    if all_files {
        args.push("--all-files");
    }
    let out = Command::new(pre_commit())
        .args(&args)
        .current_dir(dir)
        .env("PRE_COMMIT_HOME", home)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .output()
        .expect("run pre-commit");
    let log =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code(), log)
}

fn commit(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
}

/// The upgrade path: a new sidecar version in `.kinject.yaml`, committed alone, fails the
/// hook and rewrites every manifest the configuration applies to (pre-commit passes only the
/// configuration, which is no workload); the next commit passes. `kinject-check-system`
/// fails the same commit without writing.
#[test]
fn a_changed_configuration_fails_the_hook_until_its_manifests_follow() {
    let (repo, home) = repository();
    let dir = repo.path();
    let manifest = std::fs::read_to_string(root().join("testdata/cases/kms-plugin/input.yaml"))
        .expect("input");
    std::fs::create_dir_all(dir.join("k8s/apps")).expect("mkdir");
    std::fs::write(dir.join("k8s/web.yaml"), &manifest).expect("write");
    std::fs::write(dir.join("k8s/apps/api.yaml"), &manifest).expect("write");
    // Not tracked: never touched.
    std::fs::write(dir.join("k8s/scratch.yaml"), &manifest).expect("write");
    git(
        dir,
        &["add", ".kinject.yaml", "k8s/web.yaml", "k8s/apps/api.yaml"],
    );
    let (code, log) = try_system_hook(dir, home.path(), "kinject-system", false);
    assert_eq!(code, Some(1), "the first commit injects:\n{log}");
    git(dir, &["add", "-u"]);
    git(dir, &["commit", "-q", "-m", "manifests"]);
    let injected = std::fs::read_to_string(dir.join("k8s/web.yaml")).expect("read");
    assert!(injected.contains("log-shipper:2.1"), "{injected}");

    let config = std::fs::read_to_string(dir.join(".kinject.yaml")).expect("config");
    std::fs::write(dir.join(".kinject.yaml"), config.replace(":2.1", ":2.2")).expect("write");
    git(dir, &["add", ".kinject.yaml"]);
    let (code, log) = try_system_hook(dir, home.path(), "kinject-check-system", false);
    assert_eq!(code, Some(1), "the check fails:\n{log}");
    assert!(log.contains("k8s/web.yaml"), "{log}");
    assert!(log.contains("k8s/apps/api.yaml"), "{log}");
    assert_eq!(
        std::fs::read_to_string(dir.join("k8s/web.yaml")).expect("read"),
        injected,
        "the check writes nothing"
    );

    let (code, log) = try_system_hook(dir, home.path(), "kinject-system", false);
    assert_eq!(code, Some(1), "the hook rewrites the manifests:\n{log}");
    assert!(log.contains("files were modified by this hook"), "{log}");
    assert!(log.contains("is among the files"), "{log}");
    for file in ["k8s/web.yaml", "k8s/apps/api.yaml"] {
        let text = std::fs::read_to_string(dir.join(file)).expect("read");
        assert!(text.contains("log-shipper:2.2"), "{file}:\n{text}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("k8s/scratch.yaml")).expect("read"),
        manifest,
        "an untracked file is not touched"
    );
    git(dir, &["add", "-u"]);
    let (code, log) = try_system_hook(dir, home.path(), "kinject-system", false);
    assert_eq!(code, Some(0), "the next commit passes:\n{log}");
    commit(dir, "sidecar 2.2");
}

/// Each file uses the nearest configuration: run from the repository's root, `team-a/`'s
/// manifests get team-a's sidecar and `team-b/`'s team-b's; the report names both.
#[test]
fn each_team_directory_uses_its_own_configuration() {
    let (repo, home) = repository();
    let dir = repo.path();
    std::fs::remove_file(dir.join(".kinject.yaml")).expect("rm");
    let config = std::fs::read_to_string(root().join("testdata/cases/kind-list/config.yaml"))
        .expect("config");
    let manifest = std::fs::read_to_string(root().join("testdata/cases/kms-plugin/input.yaml"))
        .expect("input");
    for (team, version) in [("team-a", "1.0"), ("team-b", "2.0")] {
        std::fs::create_dir_all(dir.join(team).join("k8s")).expect("mkdir");
        std::fs::write(
            dir.join(team).join(".kinject.yaml"),
            config.replace(":2.1", &format!(":{version}")),
        )
        .expect("write");
        std::fs::write(dir.join(team).join("k8s/app.yaml"), &manifest).expect("write");
    }
    // No configuration reaches it: an error naming the file and where kinject looked.
    std::fs::write(dir.join("orphan.yaml"), &manifest).expect("write");
    commit(dir, "manifests");

    let (code, log) = try_system_hook(dir, home.path(), "kinject-system", true);
    assert_eq!(code, Some(1), "{log}");
    assert!(
        log.contains("using team-a/.kinject.yaml for 2 files"),
        "{log}"
    );
    assert!(
        log.contains("using team-b/.kinject.yaml for 2 files"),
        "{log}"
    );
    assert!(
        log.contains("orphan.yaml: no configuration: no .kinject.yaml or kinject.yaml in ./"),
        "{log}"
    );
    for (team, version) in [("team-a", "1.0"), ("team-b", "2.0")] {
        let text = std::fs::read_to_string(dir.join(team).join("k8s/app.yaml")).expect("read");
        assert!(
            text.contains(&format!("log-shipper:{version}")),
            "{team}:\n{text}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("orphan.yaml")).expect("read"),
        manifest
    );
}

/// `kinject-test-system` runs the repository's cases: they pass; a sidecar bumped in
/// `.kinject.yaml` without its case's expectation fails the hook, with the diff.
#[test]
fn the_test_hook_runs_the_cases_of_the_repository() {
    let (repo, home) = repository();
    let dir = repo.path();
    let case = dir.join("tests/web");
    std::fs::create_dir_all(&case).expect("mkdir");
    std::fs::copy(
        root().join("testdata/cases/kind-list/input.yaml"),
        case.join("input.yaml"),
    )
    .expect("input");
    let injected = Command::new(env!("CARGO_BIN_EXE_kinject"))
        .args(["inject", "input.yaml"])
        .current_dir(&case)
        .output()
        .expect("kinject");
    assert!(injected.status.success());
    std::fs::write(case.join("expected.yaml"), &injected.stdout).expect("expected");
    commit(dir, "a case");
    let (code, log) = try_system_hook(dir, &home.path().join("h"), "kinject-test-system", true);
    assert_eq!(code, Some(0), "{log}");

    let config = std::fs::read_to_string(dir.join(".kinject.yaml")).expect("config");
    let bumped = config.replacen("log-shipper:2.1", "log-shipper:2.2", 1);
    assert_ne!(bumped, config, "the configuration names an image tag");
    std::fs::write(dir.join(".kinject.yaml"), bumped).expect("bump");
    git(dir, &["add", "-A"]);
    let (code, log) = try_system_hook(dir, &home.path().join("h"), "kinject-test-system", false);
    assert_eq!(code, Some(1), "{log}");
    assert!(
        log.contains("FAIL  tests/web: expected.yaml: differs"),
        "{log}"
    );
    assert!(log.contains("1 failed"), "{log}");
}
