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
        // What is tested is the hook's wiring, not the optimiser: build it quickly.
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "0")
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
/// the name points to is not injected.
#[test]
fn a_file_named_like_an_option_is_a_file() {
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

    let run = try_repo(dir, home.path());
    let log =
        String::from_utf8_lossy(&run.stdout).into_owned() + &String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{log}");
    assert!(log.contains("files were modified by this hook"), "{log}");
    let injected = std::fs::read_to_string(dir.join("k8s/app.yaml")).expect("read");
    assert!(injected.contains("- name: log-shipper"), "{injected}");
    assert!(!injected.contains("miner"), "{injected}");
    assert_eq!(
        std::fs::read_to_string(dir.join("--config=evil.yaml")).expect("read"),
        "# an odd name\n"
    );
}
