//! `--in-place`, `--check` and `--diff` on real files: only changed files are rewritten, with
//! their permissions; a file with an error stays as it was while the others are processed; and
//! a kinject killed in the middle of rewriting many files leaves each one whole.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn case(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/cases")
        .join(name)
}

fn kinject(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kinject"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("run kinject")
}

/// A temp dir with a config, a file to inject, one to leave alone, and a broken one.
fn workspace() -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = case("comments-and-styles");
    std::fs::copy(src.join("config.yaml"), dir.path().join(".kinject.yaml")).expect("config");
    let input = std::fs::read_to_string(src.join("input.yaml")).expect("input");
    let expected = std::fs::read_to_string(src.join("expected.yaml")).expect("expected");
    std::fs::create_dir(dir.path().join("k8s")).expect("mkdir");
    std::fs::write(dir.path().join("k8s/app.yaml"), &input).expect("write");
    std::fs::write(
        dir.path().join("k8s/svc.yaml"),
        "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n",
    )
    .expect("write");
    (dir, input, expected)
}

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777
}

#[test]
fn rewrites_only_changed_files_and_keeps_permissions() {
    let (dir, _, expected) = workspace();
    let app = dir.path().join("k8s/app.yaml");
    let svc = dir.path().join("k8s/svc.yaml");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&app, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    }
    let old = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    std::fs::File::options()
        .write(true)
        .open(&svc)
        .expect("open")
        .set_modified(old)
        .expect("mtime");

    let out = kinject(dir.path(), &["inject", "--in-place", "k8s"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    assert_eq!(std::fs::read_to_string(&app).expect("app"), expected);
    assert_eq!(
        std::fs::metadata(&svc)
            .expect("svc")
            .modified()
            .expect("mtime"),
        old,
        "an untouched file was rewritten"
    );
    #[cfg(unix)]
    assert_eq!(mode(&app), 0o640);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("k8s"))
        .expect("dir")
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert_eq!(leftovers.len(), 2, "{leftovers:?}");

    let again = kinject(dir.path(), &["inject", "--in-place", "k8s"]);
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}

#[test]
fn check_and_diff_write_nothing() {
    let (dir, input, _) = workspace();
    let check = kinject(dir.path(), &["inject", "--check", "k8s"]);
    assert_eq!(check.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&check.stdout), "k8s/app.yaml\n");
    let diff = kinject(dir.path(), &["inject", "--diff", "k8s"]);
    assert_eq!(diff.status.code(), Some(1));
    let text = String::from_utf8_lossy(&diff.stdout);
    assert!(
        text.starts_with("--- a/k8s/app.yaml\n+++ b/k8s/app.yaml\n"),
        "{text}"
    );
    assert!(
        text.contains("\n+                -   name: log-shipper\n"),
        "{text}"
    );
    assert!(
        !text.contains('\u{1b}'),
        "no colours when stdout is not a terminal"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("k8s/app.yaml")).expect("app"),
        input
    );
}

#[test]
fn an_error_in_one_file_leaves_it_intact_and_the_others_are_written() {
    let (dir, _, expected) = workspace();
    let broken = "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n    c: d\n";
    std::fs::write(dir.path().join("k8s/broken.yaml"), broken).expect("write");
    let out = kinject(dir.path(), &["inject", "-i", "k8s"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("k8s/broken.yaml:5:"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("k8s/broken.yaml")).expect("broken"),
        broken
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("k8s/app.yaml")).expect("app"),
        expected
    );
}

#[test]
fn stdin_cannot_be_rewritten_in_place() {
    let (dir, _, _) = workspace();
    let out = kinject(dir.path(), &["inject", "-i", "-"]);
    assert_eq!(out.status.code(), Some(2));
}

/// SIGKILL at many moments of an `--in-place` run over many files: every file is either the
/// original or the complete result, never truncated or mixed.
#[test]
fn killed_midway_leaves_every_file_whole() {
    let (dir, input, expected) = workspace();
    let many = dir.path().join("many");
    let reset = || {
        let _ = std::fs::remove_dir_all(&many);
        std::fs::create_dir(&many).expect("mkdir");
        for i in 0..300 {
            std::fs::write(many.join(format!("app-{i:03}.yaml")), &input).expect("write");
        }
    };
    reset();
    let start = Instant::now();
    let full = kinject(dir.path(), &["inject", "-q", "-i", "many"]);
    assert_eq!(full.status.code(), Some(1));
    let total = start.elapsed();
    let mut mixed_runs = 0;
    for step in 1..=24u32 {
        reset();
        let mut child = Command::new(env!("CARGO_BIN_EXE_kinject"))
            .args(["inject", "-q", "-i", "many"])
            .current_dir(dir.path())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(total * step / 24);
        let _ = child.kill();
        let _ = child.wait();
        let (mut old, mut new) = (0, 0);
        for e in std::fs::read_dir(&many)
            .expect("dir")
            .filter_map(Result::ok)
        {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                // A temporary file the killed run had not renamed yet: never the real file.
                assert!(name.contains(".kinject-"), "unexpected file {name}");
                continue;
            }
            let text = std::fs::read_to_string(e.path()).expect("read");
            if text == input {
                old += 1;
            } else if text == expected {
                new += 1;
            } else {
                panic!("{name} is neither the original nor the result after a kill at step {step}");
            }
        }
        assert_eq!(old + new, 300);
        if old > 0 && new > 0 {
            mixed_runs += 1;
        }
    }
    assert!(
        mixed_runs > 0,
        "no kill landed while files were being written ({total:?} per run)"
    );
}

#[test]
fn utf16_files_stay_utf16() {
    let (dir, input, expected) = workspace();
    let utf16 = |s: &str| -> Vec<u8> {
        [0xFF, 0xFE]
            .into_iter()
            .chain(s.encode_utf16().flat_map(u16::to_le_bytes))
            .collect()
    };
    let path = dir.path().join("k8s/app.yaml");
    std::fs::write(&path, utf16(&input)).expect("write");
    let out = kinject(dir.path(), &["inject", "-q", "-i", "k8s"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(&path).expect("read"), utf16(&expected));
}
