//! Hostile inputs (`testdata/cases/hostile-*`): each is refused with its diagnostic (the
//! golden cases hold it whole), and rewriting it in place changes no file, while a good file
//! beside it is still rewritten. A case holding `hostile-config` is a hostile configuration:
//! there every file fails and none changes.
//!
//! Also here: hostile directories (binary files, symlink loops, unreadable files), and a
//! 100 MB document.

use std::path::Path;

use crate::common;

const GOOD: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: good\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: example.com/app:1\n";

fn cases() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cases")
}

/// The code and `file:line:column` of the first diagnostic of a golden `expected.stderr`.
fn code_and_location(expected: &str) -> (String, String) {
    let code = expected
        .lines()
        .next()
        .expect("a code line")
        .trim()
        .to_owned();
    let message = expected.lines().nth(2).expect("a message line");
    let location = message
        .trim_start_matches([' ', '×'])
        .split(": ")
        .next()
        .expect("a location")
        .to_owned();
    (code, location)
}

/// Every file of `dir`, with its bytes.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| {
            let e = e.expect("entry");
            let bytes = std::fs::read(e.path()).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn hostile_files_are_refused_and_left_as_they_are() {
    let mut seen = 0;
    for entry in std::fs::read_dir(cases()).expect("cases") {
        let case = entry.expect("entry").path();
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("hostile-") {
            continue;
        }
        seen += 1;
        let dir = tempfile::tempdir().expect("tempdir");
        let hostile = std::fs::read(case.join("input.yaml")).expect("input");
        std::fs::write(dir.path().join("hostile.yaml"), &hostile).expect("write");
        std::fs::write(dir.path().join("good.yaml"), GOOD).expect("write");
        let before = snapshot(dir.path());
        let out = common::in_place(
            dir.path(),
            &case.join("config.yaml"),
            &["hostile.yaml", "good.yaml"],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        let expected = std::fs::read_to_string(case.join("expected.stderr")).expect("expected");
        let (code, location) = code_and_location(&expected);
        let location = location.replace("input.yaml", "hostile.yaml");
        assert!(stderr.contains(&code), "{name}: no {code}: {stderr}");
        assert!(
            stderr.contains(&location),
            "{name}: no {location}: {stderr}"
        );
        let after = snapshot(dir.path());
        // Nothing else was left in the directory (no temporary files), the hostile file is
        // as it was, and the good one was rewritten unless the configuration is the hostile
        // part.
        assert_eq!(after.len(), 2, "{name}: {after:?}");
        assert_eq!(after[1], before[1], "{name}: the hostile file was changed");
        if case.join("hostile-config").exists() {
            assert_eq!(after, before, "{name}: a file changed");
        } else {
            let good = String::from_utf8_lossy(&after[0].1);
            assert!(
                good.contains("log-shipper"),
                "{name}: good.yaml not injected"
            );
        }
    }
    assert!(seen >= 14, "hostile cases missing: {seen}");
}

#[test]
fn a_hostile_directory_is_reported_file_by_file_and_the_rest_is_rewritten() {
    use std::os::unix::fs::{PermissionsExt, symlink};
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::create_dir(d.join("sub")).expect("mkdir");
    std::fs::write(d.join("good.yaml"), GOOD).expect("write");
    let binary = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0\x01\0\0\0\xd0\x8f".to_vec();
    std::fs::write(d.join("binary.yaml"), &binary).expect("write");
    std::fs::write(d.join("unreadable.yaml"), GOOD).expect("write");
    symlink("..", d.join("sub/up")).expect("symlink");
    symlink("self.yaml", d.join("self.yaml")).expect("symlink");
    symlink("nowhere", d.join("broken")).expect("symlink");
    // The configuration and kinject itself, where any user may read and run them (a
    // checkout's own directories may be private to its owner).
    let tools = tempfile::tempdir().expect("tempdir");
    let config = tools.path().join("config.yaml");
    std::fs::copy(cases().join("hostile-alias-bomb/config.yaml"), &config).expect("copy");
    let kinject = tools.path().join("kinject");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_kinject"), &kinject).is_err() {
        common::copy_executable(Path::new(env!("CARGO_BIN_EXE_kinject")), &kinject);
    }
    std::fs::set_permissions(tools.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    std::fs::set_permissions(&kinject, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let kinject = kinject.to_str().expect("UTF-8");
    // Root reads a file whatever its mode: the run is then made as nobody, who may write
    // the directory and its files but not read `unreadable.yaml`.
    let mut command = vec![];
    if common::is_root() {
        command.extend([
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
        ]);
        for p in [d.to_owned(), d.join("sub")] {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        }
        // nobody's own files: a file of another owner is not taken over (tests/faults.rs).
        for f in ["good.yaml", "binary.yaml", "unreadable.yaml"] {
            std::os::unix::fs::chown(d.join(f), Some(65534), Some(65534)).expect("chown");
        }
    }
    std::fs::set_permissions(
        d.join("unreadable.yaml"),
        std::fs::Permissions::from_mode(0o0),
    )
    .expect("chmod");
    let out = std::process::Command::new(command.first().copied().unwrap_or(kinject))
        .args(command.iter().skip(1))
        .args(if command.is_empty() {
            vec![]
        } else {
            vec![kinject]
        })
        .args([
            "inject",
            "--in-place",
            "-c",
            config.to_str().expect("UTF-8"),
            ".",
        ])
        .current_dir(d)
        .output()
        .expect("kinject runs (setpriv, when root)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    for expected in [
        "./binary.yaml:1:8: a NUL byte, not allowed in YAML (is this a binary file?)",
        "cannot read ./self.yaml: Too many levels of symbolic links",
        "cannot read ./sub/up: a symlink loop (it leads back to .), not followed",
        "cannot read ./unreadable.yaml: Permission denied",
    ] {
        assert!(stderr.contains(expected), "no {expected:?}: {stderr}");
    }
    // A broken link with no manifest name would not have been read: no error for it.
    assert!(!stderr.contains("broken"), "{stderr}");
    assert!(
        std::fs::read_to_string(d.join("good.yaml"))
            .expect("read")
            .contains("log-shipper")
    );
    assert_eq!(std::fs::read(d.join("binary.yaml")).expect("read"), binary);
    std::fs::set_permissions(
        d.join("unreadable.yaml"),
        std::fs::Permissions::from_mode(0o644),
    )
    .expect("chmod");
    assert_eq!(
        std::fs::read_to_string(d.join("unreadable.yaml")).expect("read"),
        GOOD
    );
    let mut names: Vec<String> = std::fs::read_dir(d)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "binary.yaml",
            "broken",
            "good.yaml",
            "self.yaml",
            "sub",
            "unreadable.yaml"
        ],
        "a temporary file was left"
    );
}

#[test]
fn a_100_mb_workload_is_injected_in_place_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut text = String::from(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: big\nspec:\n  template:\n    metadata:\n      annotations:\n",
    );
    let value = "x".repeat(90);
    for i in 0..1_000_000 {
        text.push_str(&format!("        k{i:07}: \"{value}\"\n"));
    }
    text.push_str(
        "    spec:\n      containers:\n      - name: app\n        image: example.com/app:1\n",
    );
    assert!(text.len() > 100_000_000);
    std::fs::write(dir.path().join("big.yaml"), &text).expect("write");
    let out = common::in_place(
        dir.path(),
        &cases().join("hostile-alias-bomb/config.yaml"),
        &["big.yaml"],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = std::fs::read_to_string(dir.path().join("big.yaml")).expect("read");
    // Every annotation is there as it was, in its place; the sidecar was added after them.
    let annotations_end = text.find("    spec:").expect("spec");
    assert!(after.starts_with(&text[..annotations_end - 1]));
    assert!(after[annotations_end..].contains("name: log-shipper"));
}

#[test]
fn null_containers_and_empty_lists_are_reported_and_left_as_they_are() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let null = std::fs::read(cases().join("containers-null/input.yaml")).expect("input");
    let lists = b"apiVersion: v1\nkind: List\nitems: null\n---\napiVersion: v1\nkind: ConfigMapList\nitems: []\n";
    std::fs::write(d.join("null.yaml"), &null).expect("write");
    std::fs::write(d.join("lists.yaml"), lists).expect("write");
    let config = cases().join("hostile-alias-bomb/config.yaml");
    let config = config.to_str().expect("UTF-8");
    // `-v`: skips are listed, not only counted.
    let args = [
        "inject",
        "-v",
        "--in-place",
        "-c",
        config,
        "null.yaml",
        "lists.yaml",
    ];
    let out = common::kinject_with_stdin(d, &args, b"");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    for line in [
        "null.yaml:4: deployment/web skipped: no_containers",
        "null.yaml:13: deployment/web skipped: no_containers",
        "lists.yaml:1: list/<unnamed> skipped: not_a_workload",
        "lists.yaml:5: configmaplist/<unnamed> skipped: not_a_workload",
        "0 files changed, 2 unchanged",
    ] {
        assert!(stderr.contains(line), "no {line:?}: {stderr}");
    }
    assert_eq!(std::fs::read(d.join("null.yaml")).expect("read"), null);
    assert_eq!(std::fs::read(d.join("lists.yaml")).expect("read"), lists);
}

/// `? {? {? … a : 1} : 1} : v` nested `levels` deep, as the key of a pod's label, in a Pod
/// indented by `indent` spaces (its first line not).
fn pod_with_nested_keys(levels: usize, indent: usize) -> String {
    let mut key = "a".to_owned();
    for _ in 0..levels {
        key = format!("{{? {key} : 1}}");
    }
    let pod = format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n    ? {key}\n    : v\nspec:\n  containers:\n  - name: app\n    image: example.com/app:1\n"
    );
    pod.replace('\n', &format!("\n{}", " ".repeat(indent)))
        .trim_end()
        .to_owned()
}

#[test]
fn nested_collection_keys_are_refused_from_every_entry_point() {
    // 30 levels of flow mappings as keys once doubled a text per level in every command
    // (3.7 GB, then an abort); now each run refuses the first mapping used as a key, in
    // milliseconds, whichever way the document comes in.
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let config = cases().join("hostile-alias-bomb/config.yaml");
    let config_text = std::fs::read_to_string(&config).expect("config");
    let config = config.to_str().expect("UTF-8");
    std::fs::write(d.join("pod.yaml"), pod_with_nested_keys(30, 0)).expect("write");
    std::fs::write(d.join("good.yaml"), GOOD).expect("write");
    let review = format!(
        "apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nrequest:\n  uid: u1\n  operation: CREATE\n  namespace: default\n  object:\n    {}\n",
        pod_with_nested_keys(30, 4)
    );
    let resource_list = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {}\nfunctionConfig:\n  {}\n",
        pod_with_nested_keys(30, 2),
        config_text.trim_end().replace('\n', "\n  ")
    );
    let runs: [(&[&str], &str); 6] = [
        (&["inject", "-c", config, "pod.yaml", "good.yaml"], ""),
        (&["inject", "--check", "-c", config, "pod.yaml"], ""),
        (&["inject", "-i", "-c", config, "pod.yaml", "good.yaml"], ""),
        (&["uninject", "--trust-status", "pod.yaml"], ""),
        (&["admission", "-c", config], &review),
        (&["krm"], &resource_list),
    ];
    for (args, stdin) in runs {
        let (out, took) = common::bounded(d, args, stdin.as_bytes(), 1024);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(took.as_secs() < 20, "{args:?}: {took:?}");
        assert!(
            stderr.contains("invalid map key") || stdout.contains("invalid map key"),
            "{args:?}: {stdout}\n{stderr}"
        );
        if args[0] == "admission" {
            assert!(stdout.contains("\"allowed\": false"), "{stdout}");
        }
    }
    // In place, the good file beside it was still injected.
    let good = std::fs::read_to_string(d.join("good.yaml")).expect("read");
    assert!(good.contains("log-shipper"), "{good}");
}
