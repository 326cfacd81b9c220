//! `--in-place`, `--check` and `--diff` on real files: only changed files are rewritten, with
//! their permissions; a file with an error stays as it was while the others are processed; and
//! a kinject killed in the middle of rewriting many files leaves each one whole.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common;

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

/// `kinject` with a deadline: a run that reads what it should refuse may never end.
fn kinject_within(dir: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kinject"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run kinject");
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("kinject {args:?} did not end");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
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
    interrupted_runs(dir.path(), &input, &expected, 24, true, |child, _| {
        let _ = child.kill();
        let _ = child.wait();
        "a kill".to_owned()
    });
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

/// `kinject inject -i` over 300 copies of `input`, run `steps` times, each run interrupted by
/// `interrupt` at a moment spread over a whole run's length (it says what it did). After each,
/// every file is `input` or `expected`, and a temporary file is left only where `temporaries`
/// allows. At least one run must have been interrupted while files were being written.
fn interrupted_runs(
    dir: &Path,
    input: &str,
    expected: &str,
    steps: u32,
    temporaries: bool,
    interrupt: impl Fn(&mut std::process::Child, u32) -> String,
) {
    let many = dir.join("many");
    let reset = || {
        let _ = std::fs::remove_dir_all(&many);
        std::fs::create_dir(&many).expect("mkdir");
        for i in 0..300 {
            std::fs::write(many.join(format!("app-{i:03}.yaml")), input).expect("write");
        }
    };
    reset();
    let start = Instant::now();
    let full = kinject(dir, &["inject", "-q", "-i", "many"]);
    assert_eq!(full.status.code(), Some(1));
    let total = start.elapsed();
    let mut mixed_runs = 0;
    for step in 1..=steps {
        reset();
        let mut child = Command::new(env!("CARGO_BIN_EXE_kinject"))
            .args(["inject", "-q", "-i", "many"])
            .current_dir(dir)
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(total * step / steps);
        let what = interrupt(&mut child, step);
        let (mut old, mut new) = (0, 0);
        for name in common::entries(&many) {
            if name.starts_with('.') {
                // A temporary file the run had not renamed yet: never the real file.
                assert!(temporaries, "{name} left after {what} at step {step}");
                assert!(name.contains(".kinject-"), "unexpected file {name}");
                continue;
            }
            let text = std::fs::read_to_string(many.join(&name)).expect("read");
            if text == input {
                old += 1;
            } else if text == expected {
                new += 1;
            } else {
                panic!("{name} is neither the original nor the result after {what} at step {step}");
            }
        }
        assert_eq!(old + new, 300);
        if old > 0 && new > 0 {
            mixed_runs += 1;
        }
    }
    assert!(
        mixed_runs > 0,
        "no interruption landed while files were being written ({total:?} per run)"
    );
}

/// A directory walk follows no symlink whose target lies outside the directory given: the
/// links are named, what they point to is neither read nor written, a link that stays inside
/// is followed, and the other files are rewritten.
#[cfg(unix)]
#[test]
fn a_walk_follows_no_link_out_of_the_directory_given() {
    use std::os::unix::fs::symlink;
    let (dir, input, expected) = workspace();
    let d = dir.path();
    let outside = d.join("outside");
    std::fs::create_dir_all(outside.join("sub")).expect("mkdir");
    std::fs::write(outside.join("victim.yaml"), &input).expect("write");
    std::fs::write(outside.join("sub/deep.yaml"), &input).expect("write");
    symlink("../outside/victim.yaml", d.join("k8s/evil.yaml")).expect("symlink");
    symlink("../outside", d.join("k8s/outdir")).expect("symlink");
    symlink(d.join("outside/sub"), d.join("k8s/absolute")).expect("symlink");
    // Inside the tree: a hidden file the walk itself would not read, through a link.
    std::fs::create_dir(d.join("k8s/.shared")).expect("mkdir");
    std::fs::write(d.join("k8s/.shared/linked.yaml"), &input).expect("write");
    symlink(".shared/linked.yaml", d.join("k8s/linked.yaml")).expect("symlink");

    let out = kinject(d, &["inject", "-i", "k8s"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    for link in ["k8s/evil.yaml", "k8s/outdir", "k8s/absolute"] {
        assert!(
            stderr.contains(&format!("cannot read {link}: a symlink to ")),
            "{link} not named: {stderr}"
        );
    }
    assert!(stderr.contains("outside k8s, not followed"), "{stderr}");
    for file in ["victim.yaml", "sub/deep.yaml"] {
        assert_eq!(
            std::fs::read_to_string(outside.join(file)).expect("read"),
            input,
            "{file} outside the tree was rewritten"
        );
    }
    assert_eq!(
        std::fs::read_to_string(d.join("k8s/app.yaml")).expect("app"),
        expected
    );
    assert_eq!(
        std::fs::read_to_string(d.join("k8s/.shared/linked.yaml")).expect("linked"),
        expected,
        "a link inside the tree is followed"
    );
    assert!(stderr.contains("2 files changed, 1 unchanged"), "{stderr}");
    assert_eq!(common::entries(&outside), ["sub", "victim.yaml"]);
}

/// The same in stdout mode: a link to a secret outside the directory given puts none of it
/// into the output; named on the command line, a link is followed.
#[cfg(unix)]
#[test]
fn a_walk_copies_nothing_from_outside_into_the_output() {
    use std::os::unix::fs::symlink;
    let (dir, _, _) = workspace();
    let d = dir.path();
    std::fs::create_dir(d.join("home")).expect("mkdir");
    let secret = "apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    token: SECRET-TOKEN-4711\n";
    std::fs::write(d.join("home/config.yaml"), secret).expect("write");
    symlink("../home/config.yaml", d.join("k8s/kubeconfig.yaml")).expect("symlink");

    let out = kinject(d, &["inject", "k8s"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stdout.contains("SECRET-TOKEN"), "{stdout}");
    assert!(!stderr.contains("SECRET-TOKEN"), "{stderr}");
    assert!(
        stderr.contains("cannot read k8s/kubeconfig.yaml: a symlink to "),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(2), "{stderr}");

    let named = kinject(d, &["inject", "k8s/kubeconfig.yaml"]);
    assert_eq!(named.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&named.stdout).contains("SECRET-TOKEN-4711"));
}

/// In place, a symlink named on the command line is written through when its target is
/// inside the current directory, and refused, named, when it is not (not read either: the
/// names come from `git ls-files | xargs` and pre-commit).
#[cfg(unix)]
#[test]
fn a_link_named_in_place_is_written_only_inside_the_current_directory() {
    use std::os::unix::fs::symlink;
    let (dir, input, expected) = workspace();
    let d = dir.path();
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("victim.yaml"), &input).expect("write");
    symlink(outside.path().join("victim.yaml"), d.join("k8s/evil.yaml")).expect("symlink");
    symlink("app.yaml", d.join("k8s/inside.yaml")).expect("symlink");

    let out = kinject(d, &["inject", "-i", "k8s/evil.yaml", "k8s/inside.yaml"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot read k8s/evil.yaml: a symlink to ")
            && stderr.contains("not read: --in-place, --check and --diff keep to the tree"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(outside.path().join("victim.yaml")).expect("read"),
        input
    );
    assert_eq!(
        std::fs::read_to_string(d.join("k8s/app.yaml")).expect("app"),
        expected
    );
    assert!(
        std::fs::symlink_metadata(d.join("k8s/inside.yaml"))
            .expect("link")
            .file_type()
            .is_symlink()
    );
}

/// A FIFO is not rewritten in place (refused before it is opened: no writer is needed), and a
/// device named as an input is refused at once, as neither is a file of manifests.
#[cfg(unix)]
#[test]
fn fifos_and_devices_are_refused_as_not_regular_files() {
    use std::os::unix::fs::FileTypeExt;
    let (dir, _, expected) = workspace();
    let d = dir.path();
    let status = Command::new("mkfifo")
        .arg(d.join("k8s/pipe.yaml"))
        .status()
        .expect("mkfifo");
    assert!(status.success());
    let start = Instant::now();
    let out = kinject_within(d, &["inject", "-i", "k8s/pipe.yaml", "k8s/app.yaml"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot read k8s/pipe.yaml: not a regular file (a FIFO)"),
        "{stderr}"
    );
    assert!(
        std::fs::symlink_metadata(d.join("k8s/pipe.yaml"))
            .expect("fifo")
            .file_type()
            .is_fifo(),
        "the FIFO was replaced"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("k8s/app.yaml")).expect("app"),
        expected
    );
    for device in ["/dev/zero", "/dev/urandom"] {
        let out = kinject_within(d, &["inject", device]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "cannot read {device}: not a regular file (a character device)"
            )),
            "{stderr}"
        );
    }
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "a device or FIFO was read: {:?}",
        start.elapsed()
    );
}

/// One file named several ways (twice, through `./`, a link, its directory) is read,
/// rewritten and counted once, in place and on stdout.
#[cfg(unix)]
#[test]
fn one_file_named_many_ways_is_processed_once() {
    let (dir, _, expected) = workspace();
    let d = dir.path();
    std::fs::remove_file(d.join("k8s/svc.yaml")).expect("rm");
    std::os::unix::fs::symlink("k8s/app.yaml", d.join("link.yaml")).expect("symlink");
    let names = [
        "k8s/app.yaml",
        "k8s/app.yaml",
        "./k8s/app.yaml",
        "link.yaml",
        "k8s",
        "-f",
        "k8s/",
    ];
    let stdout = kinject(d, &[&["inject"][..], &names].concat());
    assert_eq!(
        String::from_utf8_lossy(&stdout.stdout),
        expected,
        "the file once on stdout"
    );
    let out = kinject(d, &[&["inject", "-i"][..], &names].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("1 file changed, 0 unchanged"), "{stderr}");
    assert_eq!(stderr.matches(" injected: ").count(), 1, "{stderr}");
}

/// A file whose name is as long as a name may be (the temporary file's name is kept short).
#[test]
fn a_file_with_a_250_character_name_is_rewritten() {
    let (dir, input, expected) = workspace();
    let name = format!("{}.yaml", "n".repeat(245));
    let path = dir.path().join("k8s").join(&name);
    std::fs::write(&path, &input).expect("write");
    let out = kinject(dir.path(), &["inject", "-i", "k8s"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(std::fs::read_to_string(&path).expect("read"), expected);
    assert_eq!(common::entries(&dir.path().join("k8s")).len(), 3);
}

/// A line break in a file name is escaped wherever the name is printed: one name, one line.
#[cfg(unix)]
#[test]
fn a_line_break_in_a_file_name_is_escaped() {
    let (dir, input, _) = workspace();
    let name = "new\nforged.yaml:1: deployment-x injected.yaml";
    std::fs::write(dir.path().join("k8s").join(name), &input).expect("write");
    let check = kinject(dir.path(), &["inject", "--check", "k8s"]);
    let listed = String::from_utf8_lossy(&check.stdout);
    assert_eq!(
        listed.lines().collect::<Vec<_>>(),
        [
            "k8s/app.yaml",
            "k8s/new\\u{a}forged.yaml:1: deployment-x injected.yaml"
        ],
        "{listed}"
    );
    let report = String::from_utf8_lossy(&check.stderr);
    assert!(
        report.contains(
            "k8s/new\\u{a}forged.yaml:1: deployment-x injected.yaml:4: deployment/checkout"
        ),
        "{report}"
    );
    assert!(
        report.lines().all(|l| !l.starts_with("forged.yaml")),
        "{report}"
    );
    // The JSON report holds the name itself, JSON-escaped, not a terminal's `\u{a}`.
    let json = kinject(
        dir.path(),
        &["inject", "--check", "--report", "json", "k8s"],
    );
    let entries = common::report_lines(&json.stderr);
    let files: Vec<&str> = entries.iter().filter_map(|e| e["file"].as_str()).collect();
    assert!(files.contains(&format!("k8s/{name}").as_str()), "{files:?}");
    assert!(
        !String::from_utf8_lossy(&json.stderr).contains("\\u{"),
        "{entries:?}"
    );
}

/// The pre-commit hooks end their `entry:` with `--`, so every name after it is a file. An
/// option put there by mistake (`args: [-c, x]`) is a missing file whose message says how to
/// pass options; a file named like an option is read as a file.
#[test]
fn names_after_the_separator_are_files() {
    let (dir, input, expected) = workspace();
    let d = dir.path();
    std::fs::write(d.join("evil.yaml"), "sidecars: []\nrules: []\n").expect("write");
    std::fs::write(d.join("--config=evil.yaml"), "# a file, not an option\n").expect("write");
    let out = kinject(
        d,
        &["inject", "-i", "--", "--config=evil.yaml", "k8s/app.yaml"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(d.join("k8s/app.yaml")).expect("app"),
        expected,
        "the configuration is still .kinject.yaml"
    );

    std::fs::write(d.join("k8s/app.yaml"), &input).expect("write");
    let out = kinject(
        d,
        &["inject", "-i", "--", "-c", "evil.yaml", "k8s/app.yaml"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot read -c: no such file"), "{stderr}");
    assert!(stderr.contains("entry:"), "{stderr}");
}

/// SIGTERM, SIGINT or SIGHUP at many moments of an `--in-place` run: every file is the
/// original or the complete result, and no temporary file is left (only SIGKILL, which no
/// process can answer, may leave one). The run dies of the signal it was sent.
#[cfg(unix)]
#[test]
fn terminated_midway_leaves_no_temporary_file() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    use std::os::unix::process::ExitStatusExt;
    let (dir, input, expected) = workspace();
    // Larger files: more time is spent writing them.
    let padding = format!("# {}\n", "x".repeat(98)).repeat(300);
    let (input, expected) = (input + &padding, expected + &padding);
    let signals = [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP];
    interrupted_runs(dir.path(), &input, &expected, 18, false, |child, step| {
        let signal = signals[step as usize % signals.len()];
        let pid = Pid::from_raw(i32::try_from(child.id()).expect("pid"));
        let _ = kill(pid, signal);
        let status = child.wait().expect("wait");
        assert!(
            status.code() == Some(1) || status.signal() == Some(signal as i32),
            "{signal}: {status}"
        );
        signal.to_string()
    });
}

/// A signal kinject was started with ignored (`nohup`, `trap '' HUP`) stays ignored while it
/// writes: the run goes on to the end.
#[cfg(target_os = "linux")]
#[test]
fn a_signal_ignored_at_start_stays_ignored() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let (dir, input, expected) = workspace();
    let padding = format!("# {}\n", "x".repeat(98)).repeat(300);
    let (input, expected) = (input + &padding, expected + &padding);
    let many = dir.path().join("many");
    std::fs::create_dir(&many).expect("mkdir");
    for i in 0..300 {
        std::fs::write(many.join(format!("app-{i:03}.yaml")), &input).expect("write");
    }
    let mut child = Command::new("sh")
        .args(["-c", "trap '' HUP; exec \"$0\" inject -q -i many"])
        .arg(env!("CARGO_BIN_EXE_kinject"))
        .current_dir(dir.path())
        .spawn()
        .expect("spawn");
    let pid = Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    // Not before the shell has run `trap` and become kinject.
    let exe = format!("/proc/{}/exe", child.id());
    while !std::fs::read_link(&exe).is_ok_and(|p| p.ends_with("kinject")) {
        assert!(child.try_wait().expect("wait").is_none(), "the run ended");
        std::thread::sleep(Duration::from_millis(1));
    }
    // Until the run ends, or long after it would have ended.
    let start = Instant::now();
    let mut sent = 0;
    while child.try_wait().expect("wait").is_none() && start.elapsed() < Duration::from_secs(60) {
        let _ = kill(pid, Signal::SIGHUP);
        sent += 1;
        std::thread::sleep(Duration::from_millis(5));
    }
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(1), "{status} after {sent} SIGHUPs");
    assert!(sent > 1);
    for name in common::entries(&many) {
        assert_eq!(
            std::fs::read_to_string(many.join(&name)).expect("read"),
            expected,
            "{name}"
        );
    }
}
