//! Nothing lost when writing fails: a read-only file, a full disk and a read-only file
//! system each leave every original as it was and no temporary file behind, the other files
//! are still rewritten, and the exit code and messages say which file was not written.
//!
//! The full disk and the read-only file system are real: a small tmpfs mounted in a mount
//! namespace of the test's own (`unshare`, which needs no root where user namespaces are
//! allowed).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

fn config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cases/hostile-alias-bomb/config.yaml")
}

fn deployment(name: &str, padding: usize) -> String {
    let mut text = format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n");
    if padding > 0 {
        text.push_str("  annotations:\n");
        for i in 0..padding / 100 {
            text.push_str(&format!("    k{i:05}: \"{}\"\n", "x".repeat(84)));
        }
    }
    text.push_str("spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: example.com/app:1\n");
    text
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_read_only_file_is_not_replaced() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let (good, locked) = (deployment("good", 0), deployment("locked", 0));
    std::fs::write(d.join("good.yaml"), &good).expect("write");
    std::fs::write(d.join("locked.yaml"), &locked).expect("write");
    std::fs::set_permissions(
        d.join("locked.yaml"),
        std::fs::Permissions::from_mode(0o444),
    )
    .expect("chmod");
    let out = common::kinject_with_stdin(
        d,
        &[
            "inject",
            "--in-place",
            "-c",
            config().to_str().expect("UTF-8"),
            "good.yaml",
            "locked.yaml",
        ],
        b"",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "error: locked.yaml: cannot write: the file is read-only (the file is unchanged)"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 file(s) changed, 0 unchanged, 1 not written"),
        "{stderr}"
    );
    // The report says which objects were not written, in text and in JSON.
    assert!(
        stderr.contains("locked.yaml:1: deployment/locked error: not written: the file is read-only (the file is unchanged)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("good.yaml:1: deployment/good injected: log-shipper"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("locked.yaml")).expect("read"),
        locked
    );
    let json = common::kinject_with_stdin(
        d,
        &[
            "inject",
            "--in-place",
            "--report",
            "json",
            "-c",
            config().to_str().expect("UTF-8"),
            "locked.yaml",
        ],
        b"",
    );
    let stderr = String::from_utf8_lossy(&json.stderr);
    let start = stderr.find('[').expect("a JSON report");
    let end = stderr.rfind(']').expect("a JSON report") + 1;
    let report: serde_json::Value = serde_json::from_str(&stderr[start..end]).expect("JSON");
    assert_eq!(report[0]["action"], "error", "{stderr}");
    assert_eq!(
        report[0]["error"],
        "not written: the file is read-only (the file is unchanged)"
    );
    let mode = std::fs::metadata(d.join("locked.yaml"))
        .expect("meta")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o444);
    assert!(
        std::fs::read_to_string(d.join("good.yaml"))
            .expect("read")
            .contains("log-shipper")
    );
    assert_eq!(names(d), ["good.yaml", "locked.yaml"]);
}

/// Runs kinject `--in-place` on `files` in a fresh tmpfs of `size` (remounted read-only
/// first when `read_only`), and returns its exit code, stderr, and a copy of the files left
/// there (in `out/` of the directory returned).
fn on_tmpfs(
    size: &str,
    read_only: bool,
    files: &[(&str, &str)],
) -> (i32, String, tempfile::TempDir) {
    let work = tempfile::tempdir().expect("tempdir");
    let w = work.path();
    let (src, mnt, out) = (w.join("src"), w.join("mnt"), w.join("out"));
    for d in [&src, &mnt, &out] {
        std::fs::create_dir(d).expect("mkdir");
    }
    for (name, text) in files {
        std::fs::write(src.join(name), text).expect("write");
    }
    let names: Vec<&str> = files.iter().map(|(n, _)| *n).collect();
    let script = format!(
        r#"set -e
mount -t tmpfs -o size={size} tmpfs "$MNT"
cp "$SRC"/* "$MNT"/
{remount}
cd "$MNT"
set +e
"$KINJECT" inject --in-place -c "$CONFIG" {names} 2> "$OUT/.stderr"
echo $? > "$OUT/.code"
cp -a "$MNT"/. "$OUT"/
"#,
        remount = if read_only {
            r#"mount -o remount,ro "$MNT""#
        } else {
            ""
        },
        names = names.join(" "),
    );
    let status = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c", &script])
        .env("MNT", &mnt)
        .env("SRC", &src)
        .env("OUT", &out)
        .env("KINJECT", env!("CARGO_BIN_EXE_kinject"))
        .env("CONFIG", config())
        .status()
        .expect("unshare runs");
    assert!(status.success(), "a tmpfs in a mount namespace: {status}");
    let code = std::fs::read_to_string(out.join(".code")).expect("code");
    let stderr = std::fs::read_to_string(out.join(".stderr")).expect("stderr");
    std::fs::remove_file(out.join(".code")).expect("rm");
    std::fs::remove_file(out.join(".stderr")).expect("rm");
    (code.trim().parse().expect("a code"), stderr, work)
}

#[test]
fn a_full_disk_leaves_the_file_that_did_not_fit_as_it_was() {
    // 64 KiB: the small file's new text fits, the large one's (40 KiB beside its original)
    // does not.
    let small = deployment("small", 0);
    let large = deployment("large", 40_000);
    let (code, stderr, work) = on_tmpfs("64k", false, &[("a.yaml", &small), ("b.yaml", &large)]);
    let out = work.path().join("out");
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("error: b.yaml: cannot write: No space left on device"),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 file(s) changed, 0 unchanged, 1 not written"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("b.yaml")).expect("read"),
        large
    );
    assert!(
        std::fs::read_to_string(out.join("a.yaml"))
            .expect("read")
            .contains("log-shipper")
    );
    assert_eq!(
        names(&out),
        ["a.yaml", "b.yaml"],
        "a temporary file was left"
    );
}

#[test]
fn a_read_only_file_system_leaves_every_file_as_it_was() {
    let (a, b) = (deployment("a", 0), deployment("b", 0));
    let (code, stderr, work) = on_tmpfs("1m", true, &[("a.yaml", &a), ("b.yaml", &b)]);
    let out = work.path().join("out");
    assert_eq!(code, 2, "{stderr}");
    for name in ["a.yaml", "b.yaml"] {
        assert!(
            stderr.contains(&format!(
                "error: {name}: cannot write: Read-only file system"
            )),
            "{stderr}"
        );
    }
    assert!(
        stderr.contains("0 file(s) changed, 0 unchanged, 2 not written"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("a.yaml")).expect("read"),
        a
    );
    assert_eq!(
        std::fs::read_to_string(out.join("b.yaml")).expect("read"),
        b
    );
    assert_eq!(names(&out), ["a.yaml", "b.yaml"]);
}

/// A runner with many cores and an address-space limit (`ulimit -v`): 32 or 64 workers, each
/// with its 16 MiB stack and the allocator's memory, did not fit in 1-2 GiB, and kinject
/// panicked in rayon ("the global thread pool has not been initialized") or aborted when an
/// allocation failed. Fewer workers start instead, and the run gives the same output as one
/// without a limit.
#[test]
fn many_workers_under_an_address_space_limit_give_the_same_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let stream: Vec<String> = (0..2000).map(|i| deployment(&format!("d{i}"), 0)).collect();
    let names = ["a.yaml", "b.yaml", "c.yaml"];
    for name in names {
        std::fs::write(d.join(name), stream.join("---\n")).expect("write");
    }
    let run = |limit_kib: Option<u64>, threads: &str| {
        let mut script = String::new();
        if let Some(kib) = limit_kib {
            script.push_str(&format!("ulimit -v {kib} && "));
        }
        script.push_str("exec \"$0\" inject -q -c \"$1\" a.yaml b.yaml c.yaml");
        Command::new("bash")
            .args(["-c", &script, env!("CARGO_BIN_EXE_kinject")])
            .arg(config())
            .current_dir(d)
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .expect("run kinject")
    };
    let free = run(None, "2");
    assert_eq!(free.status.code(), Some(0), "{free:?}");
    for limit_kib in [1 << 20, 2 << 20] {
        for threads in ["32", "64"] {
            let out = run(Some(limit_kib), threads);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{threads} threads under {limit_kib} KiB: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                out.stdout == free.stdout,
                "{threads} threads under {limit_kib} KiB: other output"
            );
        }
    }
}
