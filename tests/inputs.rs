//! Inputs that once did nothing in silence: `kinject inject` waiting on a terminal says what
//! it waits for (run under a pseudo-terminal, `script`). An input directory with no manifest
//! is an error: golden case `input-empty-directory`.

use std::process::{Command, Stdio};

const CONFIG: &str = "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: s\n  containers:\n  - {name: s, image: s}\nrules:\n- name: all\n  inject: [s]\n";

/// `kinject inject` with standard input a terminal hints at Ctrl-D and `--help`; with
/// standard input a pipe it says nothing of the kind.
#[test]
fn reading_a_terminal_says_so() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: `script` (util-linux) is not installed to make a pseudo-terminal");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("c.yaml"), CONFIG).expect("write");
    let bin = env!("CARGO_BIN_EXE_kinject");
    let hint =
        "reading manifests from standard input (Ctrl-D to end; kinject inject --help for usage)";
    // `script` gives kinject a terminal; its own standard input ends at once, and so does
    // kinject's (the terminal sends Ctrl-D).
    let out = Command::new("script")
        .args(["-qec", &format!("{bin} inject -c c.yaml"), "/dev/null"])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .expect("script");
    let seen = String::from_utf8_lossy(&out.stdout);
    assert!(seen.contains(hint), "{seen}");

    let out = Command::new(bin)
        .args(["inject", "-c", "c.yaml"])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .expect("kinject");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("reading manifests"), "{stderr}");
}

/// `explain` finds each file's configuration as `inject` does: the nearest `.kinject.yaml`
/// from the file's own directory (up to the repository's root), not the working directory's;
/// it used one configuration, the working directory's, for every file.
#[test]
fn explain_uses_each_files_own_configuration() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::create_dir(d.join(".git")).expect("a repository's root");
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - {name: web, image: web}\n";
    for (team, sidecar) in [("team-a", "alpha"), ("team-b", "beta")] {
        std::fs::create_dir(d.join(team)).expect("mkdir");
        std::fs::write(
            d.join(team).join(".kinject.yaml"),
            CONFIG
                .replace("- name: s\n", &format!("- name: {sidecar}\n"))
                .replace("inject: [s]", &format!("inject: [{sidecar}]")),
        )
        .expect("write");
        std::fs::write(d.join(team).join("web.yaml"), deployment).expect("write");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_kinject"))
        .args(["explain", "team-a/web.yaml", "team-b/web.yaml"])
        .current_dir(d)
        .output()
        .expect("run");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let (a, b) = stdout
        .split_once("team-b/web.yaml")
        .expect("both explained");
    assert!(
        a.contains("inject: alpha") && b.contains("inject: beta"),
        "{stdout}"
    );
    assert!(
        stderr.contains("using team-a/.kinject.yaml for 1 file"),
        "{stderr}"
    );
}
