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
