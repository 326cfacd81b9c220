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

use crate::common;

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
        stderr.contains("1 file changed, 0 unchanged, 1 not written"),
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
    let report = common::report_lines(&json.stderr);
    let entry = report
        .iter()
        .find(|l| l["kind"] == "Deployment")
        .expect("the object's entry");
    assert_eq!(entry["action"], "error", "{report:?}");
    assert_eq!(entry["code"], "kinject::output::write", "{report:?}");
    assert_eq!(
        entry["error"],
        "not written: the file is read-only (the file is unchanged)"
    );
    let said = report
        .iter()
        .find(|l| l["action"] == "error" && l["file"] == "locked.yaml" && l["kind"].is_null())
        .expect("the file's error");
    assert_eq!(said["code"], "kinject::output::write", "{report:?}");
    let summary = report.last().expect("a summary");
    assert_eq!(summary["files"]["notWritten"], 1, "{summary}");
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
    assert_eq!(common::entries(d), ["good.yaml", "locked.yaml"]);
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
        stderr.contains("1 file changed, 0 unchanged, 1 not written"),
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
        common::entries(&out),
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
        stderr.contains("0 files changed, 0 unchanged, 2 not written"),
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
    assert_eq!(common::entries(&out), ["a.yaml", "b.yaml"]);
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

/// Runs kinject `--in-place -c <config>` on `files` in `dir`.
fn in_place(dir: &Path, files: &[&str]) -> std::process::Output {
    common::in_place(dir, &config(), files)
}

/// A file edited after kinject read it and before kinject would replace it is not replaced:
/// the edit is never lost (whenever it lands), and when it lands in between, the file is
/// named, left as the editor made it, and the other file is still written.
#[test]
fn an_edit_made_while_kinject_runs_is_never_lost() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let (a, slow) = (deployment("a", 0), deployment("slow", 3_000_000));
    let config = config();
    let mut refused = 0;
    for attempt in 0..12u32 {
        std::fs::write(d.join("a.yaml"), &a).expect("write");
        std::fs::write(d.join("slow.yaml"), &slow).expect("write");
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_kinject"))
            .args(["inject", "-i", "-c", config.to_str().expect("UTF-8")])
            .args(["a.yaml", "slow.yaml"])
            .current_dir(d)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        std::thread::sleep(std::time::Duration::from_millis(
            40 * u64::from(attempt + 1),
        ));
        std::fs::OpenOptions::new()
            .append(true)
            .open(d.join("a.yaml"))
            .and_then(|mut f| std::io::Write::write_all(&mut f, b"# USER EDIT\n"))
            .expect("edit");
        let out = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let now = std::fs::read_to_string(d.join("a.yaml")).expect("read");
        assert!(now.contains("# USER EDIT"), "the edit was lost: {stderr}");
        assert_eq!(
            common::entries(d),
            ["a.yaml", "slow.yaml"],
            "a temporary file was left"
        );
        if out.status.code() == Some(2) {
            assert!(
                stderr.contains("error: a.yaml: cannot write: it changed since kinject read it"),
                "{stderr}"
            );
            assert_eq!(now, format!("{a}# USER EDIT\n"));
            assert!(
                std::fs::read_to_string(d.join("slow.yaml"))
                    .expect("read")
                    .contains("log-shipper")
            );
            refused += 1;
            break;
        }
        assert_eq!(out.status.code(), Some(1), "{stderr}");
    }
    assert!(refused > 0, "no edit landed between reading and writing");
}

/// The rewritten file keeps the original's owner, group, mode and extended attributes (a
/// `user.*` one and a POSIX ACL, `system.posix_acl_access`); a file whose owner or group
/// kinject cannot give the new file (not root) is not written.
#[cfg(target_os = "linux")]
#[test]
fn owner_group_mode_and_extended_attributes_are_kept() {
    use std::os::unix::fs::MetadataExt;
    if !common::is_root() {
        eprintln!("skipped: giving a file to another owner needs root");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let a = d.join("a.yaml");
    std::fs::write(&a, deployment("a", 0)).expect("write");
    std::os::unix::fs::chown(&a, Some(1234), Some(5678)).expect("chown");
    std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    rustix::fs::setxattr(&a, "user.note", b"kept", rustix::fs::XattrFlags::empty())
        .expect("user.note (the file system needs user extended attributes)");
    // user::rw-, user:4321:r--, group::r--, mask::r--, other::---
    let acl: Vec<u8> = [
        (0x01u16, 6u16, u32::MAX),
        (0x02, 4, 4321),
        (0x04, 4, u32::MAX),
        (0x10, 4, u32::MAX),
        (0x20, 0, u32::MAX),
    ]
    .iter()
    .flat_map(|&(tag, perm, id)| {
        [
            tag.to_le_bytes().to_vec(),
            perm.to_le_bytes().to_vec(),
            id.to_le_bytes().to_vec(),
        ]
        .concat()
    })
    .fold(2u32.to_le_bytes().to_vec(), |mut v, b| {
        v.push(b);
        v
    });
    rustix::fs::setxattr(
        &a,
        "system.posix_acl_access",
        &acl,
        rustix::fs::XattrFlags::empty(),
    )
    .expect("an ACL");
    let before = xattrs(&a);
    let inode = std::fs::metadata(&a).expect("meta").ino();

    let out = in_place(d, &["a.yaml"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta = std::fs::metadata(&a).expect("meta");
    assert_ne!(meta.ino(), inode, "not rewritten");
    assert_eq!((meta.uid(), meta.gid()), (1234, 5678));
    assert_eq!(meta.mode() & 0o7777, 0o640);
    assert_eq!(xattrs(&a), before);
    assert!(before.iter().any(|(n, _)| n == "user.note"));
    assert_eq!(common::entries(d), ["a.yaml"]);
}

/// Every extended attribute of `path`, name and value, sorted.
#[cfg(target_os = "linux")]
fn xattrs(path: &Path) -> Vec<(String, Vec<u8>)> {
    let mut list = vec![0u8; 4096];
    let n = rustix::fs::listxattr(path, &mut list[..]).expect("listxattr");
    let mut out: Vec<(String, Vec<u8>)> = list[..n]
        .split(|&b| b == 0)
        .filter(|n| !n.is_empty())
        .map(|name| {
            let name = String::from_utf8_lossy(name).into_owned();
            let mut value = vec![0u8; 4096];
            let len = rustix::fs::getxattr(path, name.as_str(), &mut value[..]).expect("getxattr");
            value.truncate(len);
            (name, value)
        })
        .collect();
    out.sort();
    out
}

/// Not root, kinject cannot give a file it rewrites to another owner: such a file (writable
/// by all, in a directory writable by all) is not written, and says why.
#[test]
fn a_file_of_another_owner_is_not_taken_over() {
    use std::os::unix::fs::MetadataExt;
    if !common::is_root() {
        eprintln!("skipped: making a file of another owner needs root");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let text = deployment("theirs", 0);
    std::fs::write(d.join("theirs.yaml"), &text).expect("write");
    std::os::unix::fs::chown(d.join("theirs.yaml"), Some(1234), Some(1234)).expect("chown");
    std::fs::set_permissions(
        d.join("theirs.yaml"),
        std::fs::Permissions::from_mode(0o666),
    )
    .expect("chmod");
    std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    // kinject and its configuration where nobody may read them.
    let tools = tempfile::tempdir().expect("tempdir");
    let kinject = tools.path().join("kinject");
    common::copy_executable(Path::new(env!("CARGO_BIN_EXE_kinject")), &kinject);
    let cfg = tools.path().join("config.yaml");
    std::fs::copy(config(), &cfg).expect("copy");
    std::fs::set_permissions(tools.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::set_permissions(&cfg, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&kinject)
        .args([
            "inject",
            "-i",
            "-c",
            cfg.to_str().expect("UTF-8"),
            "theirs.yaml",
        ])
        .current_dir(d)
        .output()
        .expect("setpriv");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("error: theirs.yaml: cannot write: it belongs to uid 1234, gid 1234"),
        "{stderr}"
    );
    let meta = std::fs::metadata(d.join("theirs.yaml")).expect("meta");
    assert_eq!((meta.uid(), meta.gid()), (1234, 1234));
    assert_eq!(
        std::fs::read_to_string(d.join("theirs.yaml")).expect("read"),
        text
    );
    assert_eq!(common::entries(d), ["theirs.yaml"]);
}

/// A file with another hard link is not replaced (the other name would keep the old text).
#[test]
fn a_hard_linked_file_is_not_split() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let (a, b) = (deployment("a", 0), deployment("b", 0));
    std::fs::write(d.join("a.yaml"), &a).expect("write");
    std::fs::write(d.join("b.yaml"), &b).expect("write");
    std::fs::hard_link(d.join("a.yaml"), d.join("other-name.txt")).expect("link");
    let out = in_place(d, &["a.yaml", "b.yaml"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("error: a.yaml: cannot write: it has 2 hard links"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(d.join("a.yaml")).expect("read"), a);
    assert_eq!(
        std::fs::read_to_string(d.join("other-name.txt")).expect("read"),
        a
    );
    assert!(
        std::fs::read_to_string(d.join("b.yaml"))
            .expect("read")
            .contains("log-shipper")
    );
    assert_eq!(common::entries(d), ["a.yaml", "b.yaml", "other-name.txt"]);
}

/// Under a file-size limit (`ulimit -f`), the file whose new text exceeds it is not written
/// (named, exit 2, no temporary file), and the others are: SIGXFSZ does not kill kinject.
#[test]
fn a_file_size_limit_fails_the_file_that_exceeds_it_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let (small, large) = (deployment("small", 0), deployment("large", 400_000));
    std::fs::write(d.join("a.yaml"), &large).expect("write");
    std::fs::write(d.join("b.yaml"), &small).expect("write");
    let out = Command::new("prlimit")
        .arg("--fsize=200000")
        .arg(env!("CARGO_BIN_EXE_kinject"))
        .args([
            "inject",
            "-i",
            "-c",
            config().to_str().expect("UTF-8"),
            "a.yaml",
            "b.yaml",
        ])
        .current_dir(d)
        .output()
        .expect("prlimit (util-linux)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("error: a.yaml: cannot write: File too large"),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 file changed, 0 unchanged, 1 not written"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("a.yaml")).expect("read"),
        large
    );
    assert!(
        std::fs::read_to_string(d.join("b.yaml"))
            .expect("read")
            .contains("log-shipper")
    );
    assert_eq!(common::entries(d), ["a.yaml", "b.yaml"]);
}
