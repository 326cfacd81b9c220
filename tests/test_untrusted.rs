//! `kinject test` on case folders a pull request wrote (docs/test.md, "Cases from a pull
//! request"): a case's configuration inherits only from its folder, its command line is read
//! as kinject reads it (every spelling of `-c`), the files `--update` reads are case files
//! (no fifo, no `/dev/zero`), a case's bytes never reach the terminal as they are, and one
//! bad folder or a JUnit file that cannot be written loses no other result.

use std::path::Path;

use crate::common;

const INPUT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
spec:
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: example.com/app:1
";

/// A native configuration injecting the sidecar `shipper` at `version`.
fn config(version: &str) -> String {
    format!(
        "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: shipper\n  \
         containers:\n  - name: shipper\n    image: example.com/shipper:{version}\nrules:\n- name: \
         all\n  inject: [shipper]\n"
    )
}

/// The files `files` (name, text) written under `at`, folders made.
fn write(at: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let path = at.join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
}

/// A temporary folder holding `sidecars.yaml` (the sidecar `shipper` at version 1) and
/// `files`.
fn workspace(files: &[(&str, &str)]) -> tempfile::TempDir {
    let work = tempfile::tempdir().expect("tempdir");
    write(work.path(), &[("sidecars.yaml", &config("1"))]);
    write(work.path(), files);
    work
}

/// `kinject test -c sidecars.yaml --update tests/` in `dir`: exit code and stdout.
fn update(dir: &Path) -> (Option<i32>, String) {
    let (code, stdout, _) = test(dir, &["-c", "sidecars.yaml", "--update", "tests/"]);
    (code, stdout)
}

/// `from` replaced with `to` in the file `path` (which holds it).
fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).expect("read");
    assert!(text.contains(from), "{}: no {from}", path.display());
    std::fs::write(path, text.replace(from, to)).expect("write");
}

/// `kinject test ARGS` in `dir`: exit code, stdout and stderr.
fn test(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let mut all = vec!["test"];
    all.extend(args);
    let out = common::kinject_with_stdin(dir, &all, b"");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn git_init(dir: &Path) {
    let ok = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir)
        .status()
        .expect("git");
    assert!(ok.success());
}

/// A tumblr-style configuration (in the case folder, or named with `-c` from it) that
/// `inherits:` a file outside the folder is refused without a byte of that file shown:
/// outside a repository (a tarball, `GIT_STRATEGY: none`) and inside one. What it inherits
/// from its own folder is read, and so is what the command line's (trusted) `-c` inherits.
#[test]
fn a_case_configuration_inherits_only_from_its_folder() {
    let secret = "{\"auths\": {\"ghcr.io\": {\"auth\": \"c2VjcmV0LXRva2VuLTQy\"}}}\n";
    for in_repository in [false, true] {
        let work = tempfile::tempdir().expect("tempdir");
        let w = work.path();
        if in_repository {
            git_init(w);
        }
        let leak = "name: leak\ninherits: ../../secret.json\ncontainers:\n- {name: x, image: x}\n";
        write(
            w,
            &[
                ("secret.json", secret),
                ("repo.yaml", "name: repo\nunknown: c2VjcmV0LXNoYXJlZA\n"),
                ("tests/leak/input.yaml", INPUT),
                ("tests/leak/expected.stderr", ""),
                ("tests/leak/config.yaml", leak),
                ("tests/named/input.yaml", INPUT),
                ("tests/named/expected.stderr", ""),
                ("tests/named/args", "inject -csub.yaml input.yaml"),
                ("tests/named/sub.yaml", leak),
                ("tests/repo-file/input.yaml", INPUT),
                ("tests/repo-file/expected.stderr", ""),
                (
                    "tests/repo-file/config.yaml",
                    "name: s\ninherits: ../../repo.yaml\ncontainers:\n- {name: x, image: x}\n",
                ),
            ],
        );
        let (code, stdout, stderr) = test(w, &["tests/"]);
        for shown in [&stdout, &stderr] {
            assert!(
                !shown.contains("c2VjcmV0"),
                "repository {in_repository}: {shown}"
            );
        }
        assert_eq!(code, Some(1), "{stdout}");
        for case in ["leak", "named", "repo-file"] {
            let at = stdout
                .find(&format!("FAIL  tests/{case}: expected.stderr: differs"))
                .unwrap_or_else(|| panic!("{case}: {stdout}"));
            let block = stdout[at + 5..]
                .split("\nFAIL  ")
                .next()
                .unwrap_or_default();
            assert!(
                block.contains("is outside the case folder: not read"),
                "{case}: {block}"
            );
        }
    }

    // What a case's configuration inherits from its own folder, and what the command line's
    // configuration inherits from anywhere, is read.
    let work = tempfile::tempdir().expect("tempdir");
    let w = work.path();
    write(
        w,
        &[
            (
                "base.yaml",
                "name: base\ncontainers:\n- {name: b, image: b}\n",
            ),
            (
                "platform/sidecar.yaml",
                "name: p\ninherits: ../base.yaml\ncontainers:\n- {name: p, image: p}\n",
            ),
            ("tests/own/input.yaml", INPUT),
            ("tests/own/expected.yaml", INPUT),
            (
                "tests/own/base.yaml",
                "name: base\ncontainers:\n- {name: b, image: b}\n",
            ),
            (
                "tests/own/config.yaml",
                "name: own\ninherits: base.yaml\ncontainers:\n- {name: x, image: x}\n",
            ),
            ("tests/pinned/input.yaml", INPUT),
            ("tests/pinned/expected.yaml", INPUT),
        ],
    );
    let (code, stdout, _) = test(w, &["-c", "platform/sidecar.yaml", "tests/"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("2 passed"), "{stdout}");
}

/// Which configuration a case runs with, in docs/test.md's order: what its `args` name
/// (however spelled), else its `config.yaml`, else `kinject test -c`, else the one found from
/// its folder. The uninject check takes back with the same ones.
#[test]
fn a_case_runs_with_the_configuration_docs_test_says() {
    let work = tempfile::tempdir().expect("tempdir");
    let w = work.path();
    git_init(w);
    write(
        w,
        &[
            (".kinject.yaml", &config("found")),
            ("pinned.yaml", &config("pinned")),
            ("tests/own/input.yaml", INPUT),
            ("tests/own/args", "inject input.yaml"),
            ("tests/own/config.yaml", &config("own")),
            ("tests/plain/input.yaml", INPUT),
        ],
    );
    for (spelling, case) in [
        ("-cmine.yaml", "a"),
        ("-c=mine.yaml", "b"),
        ("--config=mine.yaml", "c"),
        ("-vcmine.yaml", "d"),
    ] {
        write(
            w,
            &[
                (&format!("tests/spelled-{case}/input.yaml"), INPUT),
                (&format!("tests/spelled-{case}/mine.yaml"), &config("mine")),
                (
                    &format!("tests/spelled-{case}/args"),
                    &format!("inject {spelling} input.yaml"),
                ),
            ],
        );
    }
    let (code, stdout, _) = test(w, &["-c", "pinned.yaml", "--update", "tests/"]);
    assert_eq!(code, Some(0), "{stdout}");
    let shipper = |case: &str| shipper(&w.join("tests").join(case));
    assert_eq!(
        shipper("own"),
        "own",
        "config.yaml beside an args naming none"
    );
    assert_eq!(shipper("plain"), "pinned", "kinject test -c");
    for case in ["a", "b", "c", "d"] {
        assert_eq!(shipper(&format!("spelled-{case}")), "mine", "{case}");
    }
    // And the cases pass as written: the uninject check used the configuration that injected.
    let (code, stdout, _) = test(w, &["-v", "-c", "pinned.yaml", "tests/"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("6 passed"), "{stdout}");
}

/// `--update` reads the record and the expectation it may replace as case files: a symlink to
/// `/dev/zero` or a fifo makes that case one that could not run, at once, with the other
/// cases updated.
#[test]
fn update_reads_no_special_file() {
    let work = tempfile::tempdir().expect("tempdir");
    let w = work.path();
    write(w, &[("sidecars.yaml", &config("1"))]);
    let cases = [
        ("zero-record", "input.sha256", "/dev/zero"),
        ("zero-expected", "expected.yaml", "/dev/zero"),
        ("stdin-expected", "expected.yaml", "/dev/stdin"),
    ];
    for (case, file, target) in cases {
        write(w, &[(&format!("tests/{case}/input.yaml"), INPUT)]);
        std::os::unix::fs::symlink(target, w.join("tests").join(case).join(file)).expect("link");
    }
    write(
        w,
        &[
            ("tests/fifo/input.yaml", INPUT),
            ("tests/ok/input.yaml", INPUT),
        ],
    );
    let fifo = w.join("tests/fifo/input.sha256");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let started = std::time::Instant::now();
    let (code, stdout) = update(w);
    assert!(started.elapsed().as_secs() < 60, "it waited");
    assert_eq!(code, Some(2), "{stdout}");
    // Refused as leading out of the folder, or, where the link cannot be followed to a path
    // (`/dev/stdin` is a pipe here), as no regular file.
    for (case, file, _) in cases {
        let error = format!("ERROR tests/{case}: {file}");
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&error))
            .unwrap_or_else(|| panic!("{case}: {stdout}"));
        assert!(
            line.ends_with("leads out of the case folder") || line.ends_with("not a regular file"),
            "{line}"
        );
    }
    assert!(
        stdout.contains("ERROR tests/fifo: input.sha256: not a regular file"),
        "{stdout}"
    );
    assert!(
        stdout.contains("updated tests/ok: expected.yaml"),
        "{stdout}"
    );
}

/// A case's expectation holding terminal controls is shown escaped: no line of the output
/// can be erased or faked.
#[test]
fn a_case_cannot_write_to_the_terminal() {
    let work = workspace(&[
        ("tests/esc/input.yaml", INPUT),
        (
            "tests/esc/expected.yaml",
            "x\n\x1b[2K\r\x1b[1Aok    tests/fake\x1b]0;title\x07\n",
        ),
    ]);
    let w = work.path();
    let (code, stdout, _) = test(w, &["-c", "sidecars.yaml", "tests/"]);
    assert_eq!(code, Some(1), "{stdout}");
    for control in ['\x1b', '\r', '\x07'] {
        assert!(!stdout.contains(control), "{control:?} in {stdout:?}");
    }
    assert!(stdout.contains("\\u{1b}[2K"), "{stdout}");
}

/// `input.sha256` covers every file the case feeds kinject (a file its `args` names, a
/// symlink's target) but not its configuration; and it is written only beside an expectation.
#[test]
fn the_record_covers_what_the_case_reads_and_comes_with_an_expectation() {
    let work = workspace(&[
        ("tests/named/input.yaml", INPUT),
        ("tests/named/other.yaml", INPUT),
        ("tests/named/args", "inject other.yaml"),
        ("tests/linked/input/a.yaml", INPUT),
        ("tests/linked/input/b.yaml", &INPUT.replace("web", "api")),
        ("tests/linked/other/x.yaml", INPUT),
        ("tests/configured/input.yaml", INPUT),
        ("tests/configured/config.yaml", &config("2")),
        ("tests/broken/input.yaml", INPUT),
        ("tests/broken/args", "inject --nope input.yaml"),
    ]);
    let w = work.path();
    std::os::unix::fs::symlink("a.yaml", w.join("tests/linked/input/link.yaml")).expect("link");
    let forced = || test(w, &["-c", "sidecars.yaml", "--update", "--force", "tests/"]);
    let (code, stdout) = update(w);
    // The broken case fails (clap refuses `--nope`), and gets neither expectation nor record.
    assert_eq!(code, Some(1), "{stdout}");
    assert!(!w.join("tests/broken/input.sha256").exists());
    assert!(!w.join("tests/broken/expected.yaml").exists());
    std::fs::remove_dir_all(w.join("tests/broken")).expect("rm");

    // A file named in args changed: refused.
    edit(
        &w.join("tests/named/other.yaml"),
        "namespace: prod",
        "namespace: staging",
    );
    let (code, stdout) = update(w);
    assert_eq!(code, Some(2), "{stdout}");
    assert!(
        stdout.contains("ERROR tests/named: the input changed since"),
        "{stdout}"
    );
    forced();
    // A symlink of the input retargeted: refused.
    std::fs::remove_file(w.join("tests/linked/input/link.yaml")).expect("rm");
    std::os::unix::fs::symlink("b.yaml", w.join("tests/linked/input/link.yaml")).expect("link");
    let (code, stdout) = update(w);
    assert_eq!(code, Some(2), "{stdout}");
    assert!(
        stdout.contains("ERROR tests/linked: the input changed since"),
        "{stdout}"
    );
    forced();
    // The case's configuration changed: that is what an update is for.
    edit(
        &w.join("tests/configured/config.yaml"),
        "shipper:2",
        "shipper:3",
    );
    let (code, stdout) = update(w);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains("updated tests/configured: expected.yaml"),
        "{stdout}"
    );
}

/// An `expected.stderr` case whose run now succeeds is a failure an update does not paper
/// over: its expectation is not replaced with the success's report.
#[test]
fn update_writes_no_expectation_of_another_kind_of_run() {
    let work = workspace(&[
        ("tests/now-passes/input.yaml", INPUT),
        (
            "tests/now-passes/expected.stderr",
            "error: it failed once\n",
        ),
    ]);
    let w = work.path();
    let (code, stdout) = update(w);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("expected exit 2, got exit 0"), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(w.join("tests/now-passes/expected.stderr")).expect("kept"),
        "error: it failed once\n"
    );
    assert!(!w.join("tests/now-passes/input.sha256").exists());
}

/// A folder that cannot be read is an error of its own, every other case still runs; a JUnit
/// file that cannot be written is said after every result is shown.
#[test]
fn one_bad_folder_or_junit_file_loses_no_result() {
    let work = workspace(&[("tests/ok/input.yaml", INPUT)]);
    let w = work.path();
    let (code, _) = update(w);
    assert_eq!(code, Some(0));
    // A folder too deep to name (git can hold it): made a relative step at a time, as its
    // path outgrows PATH_MAX.
    let made = std::process::Command::new("python3")
        .args([
            "-c",
            "import os\nfd = os.open('tests', os.O_RDONLY)\nfor _ in range(25):\n    \
             os.mkdir('a' * 200, dir_fd=fd)\n    fd = os.open('a' * 200, os.O_RDONLY, dir_fd=fd)\n",
        ])
        .current_dir(w)
        .status()
        .expect("python3");
    assert!(made.success());
    let (code, stdout, _) = test(w, &["-c", "sidecars.yaml", "tests/"]);
    assert_eq!(code, Some(2), "{stdout}");
    assert!(stdout.contains("ERROR tests/aaaa"), "{stdout}");
    assert!(
        stdout.contains("1 passed, 0 failed, 1 could not run"),
        "{stdout}"
    );

    std::fs::remove_dir_all(w.join("tests").join("a".repeat(200))).expect("rm");
    let out = common::kinject_with_stdin(
        w,
        &[
            "test",
            "-c",
            "sidecars.yaml",
            "--junit",
            "no/such/dir/junit.xml",
            "tests/",
        ],
        b"",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(stdout.contains("1 passed, 0 failed"), "{stdout}");
    assert!(
        stderr.contains("error: --junit no/such/dir/junit.xml"),
        "{stderr}"
    );
}

/// The tag of `example.com/shipper:` in the case's `expected.yaml`.
fn shipper(case: &Path) -> String {
    let text = std::fs::read_to_string(case.join("expected.yaml"))
        .unwrap_or_else(|e| panic!("{}: {e}", case.display()));
    let at = text.find("example.com/shipper:").expect("a shipper") + 20;
    text[at..]
        .split_whitespace()
        .next()
        .expect("tag")
        .to_owned()
}

/// A PATH reached through a symlink inside the current directory: each case still runs with
/// the configuration `-c` names (it was named `../../sidecars.yaml` from where the symlink
/// led, a file the pull request could write). A PATH whose symlink leads out of the current
/// directory is refused: nothing run, nothing written there.
#[test]
fn a_symlinked_path_keeps_the_configuration_and_its_tree() {
    let work = tempfile::tempdir().expect("tempdir");
    let w = work.path();
    write(
        w,
        &[
            ("repo/sidecars.yaml", &config("pinned")),
            ("repo/elsewhere/x/sidecars.yaml", &config("planted")),
            ("repo/elsewhere/x/tests/c/input.yaml", INPUT),
            ("outside/tests/c/input.yaml", INPUT),
        ],
    );
    let repo = w.join("repo");
    std::os::unix::fs::symlink("elsewhere/x/tests", repo.join("tests")).expect("link");
    let (code, stdout, _) = test(&repo, &["-c", "sidecars.yaml", "--update", "tests/"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert_eq!(shipper(&repo.join("elsewhere/x/tests/c")), "pinned");

    std::os::unix::fs::symlink("../outside/tests", repo.join("out")).expect("link");
    let (code, stdout, stderr) = test(&repo, &["-c", "sidecars.yaml", "--update", "out/"]);
    assert_eq!(code, Some(2), "{stdout}");
    assert!(
        stderr.contains("out/: a symlink to") && stderr.contains("no case run there"),
        "{stderr}"
    );
    assert!(!w.join("outside/tests/c/expected.yaml").exists());
}

/// A pull request cannot make cases vanish: a case added above the others (its folders are
/// its own) is an error and the others still run; a case whose expectation was deleted is a
/// case that cannot run, not a folder that is no case.
#[test]
fn cases_cannot_be_hidden() {
    let work = workspace(&[("tests/a/input.yaml", INPUT), ("tests/b/input.yaml", INPUT)]);
    let w = work.path();
    let (code, _) = update(w);
    assert_eq!(code, Some(0));
    std::fs::remove_file(w.join("tests/b/expected.yaml")).expect("rm");
    let (code, stdout, _) = test(w, &["-c", "sidecars.yaml", "tests/"]);
    assert_eq!(code, Some(2), "{stdout}");
    assert!(stdout.contains("ERROR tests/b: no expectation"), "{stdout}");
    assert!(
        stdout.contains("1 passed, 0 failed, 1 could not run"),
        "{stdout}"
    );
    // An expectation that is a symlink leading nowhere is one, said so.
    std::os::unix::fs::symlink("gone.yaml", w.join("tests/b/expected.yaml")).expect("link");
    for args in [&["tests/"][..], &["--update", "tests/"][..]] {
        let mut all = vec!["-c", "sidecars.yaml"];
        all.extend(args);
        let (code, stdout, _) = test(w, &all);
        assert_eq!(code, Some(2), "{stdout}");
        assert!(
            stdout.contains(
                "ERROR tests/b: expected.yaml: a symlink to gone.yaml, which does not exist"
            ),
            "{stdout}"
        );
    }
    std::fs::remove_file(w.join("tests/b/expected.yaml")).expect("rm");
    write(
        w,
        &[("tests/input.yaml", INPUT), ("tests/expected.yaml", INPUT)],
    );
    let (code, stdout, _) = test(w, &["-c", "sidecars.yaml", "tests/"]);
    assert_eq!(code, Some(2), "{stdout}");
    assert!(
        stdout.contains("ERROR tests/: this case folder holds another case, a:"),
        "{stdout}"
    );
}

/// What the record takes in: a folder named through a symlink counts where it leads, so an
/// update with nothing changed writes nothing and one with a changed input is refused. A case
/// naming its own folder (`inject .`, which would read its own expectation back) cannot run.
#[test]
fn the_record_follows_a_named_link_and_skips_the_cases_own_files() {
    let work = workspace(&[
        ("tests/linked/input.yaml", INPUT),
        ("tests/linked/data/x.yaml", INPUT),
        ("tests/linked/args", "inject linked"),
    ]);
    let w = work.path();
    std::os::unix::fs::symlink("data", w.join("tests/linked/linked")).expect("link");
    let (code, stdout) = update(w);
    assert_eq!(code, Some(0), "{stdout}");
    let (code, stdout) = update(w);
    assert_eq!(code, Some(0), "nothing changed: {stdout}");
    edit(
        &w.join("tests/linked/data/x.yaml"),
        "namespace: prod",
        "namespace: dev",
    );
    let (code, stdout) = update(w);
    assert_eq!(code, Some(2), "{stdout}");
    assert!(
        stdout.contains("ERROR tests/linked: the input changed since"),
        "{stdout}"
    );
    write(
        w,
        &[
            ("tests/itself/x.yaml", INPUT),
            ("tests/itself/args", "inject ."),
        ],
    );
    let (code, stdout) = update(w);
    assert_eq!(code, Some(2), "{stdout}");
    assert!(
        stdout.contains("ERROR tests/itself: args: `.` names the case folder"),
        "{stdout}"
    );
    assert!(!w.join("tests/itself/expected.yaml").exists());
}

/// With `--report json`, the summary's exit code is the run's: 2 when the JUnit file could not
/// be written, though every case passed.
#[test]
fn the_json_summary_says_the_exit_code_of_the_run() {
    let work = workspace(&[("tests/ok/input.yaml", INPUT)]);
    let w = work.path();
    update(w);
    let (code, stdout, _) = test(
        w,
        &[
            "-c",
            "sidecars.yaml",
            "--report",
            "json",
            "--junit",
            "no/such/dir/junit.xml",
            "tests/",
        ],
    );
    assert_eq!(code, Some(2), "{stdout}");
    let summary: serde_json::Value =
        serde_json::from_str(stdout.lines().last().expect("summary")).expect("JSON");
    assert_eq!(summary["exitCode"], 2, "{summary}");
    assert_eq!(summary["passed"], 1, "{summary}");
}

/// Folders that are no cases stay so: a repository's own `input/` folder beside its tests, and
/// a case's data folder holding an `input.yaml` its `args` names (`--update` writes nothing
/// there).
#[test]
fn folders_that_are_no_cases_are_not_taken_for_cases() {
    let work = workspace(&[
        ("input/notes.yaml", INPUT),
        ("tests/a/input.yaml", INPUT),
        ("tests/b/input.yaml", INPUT),
        ("tests/b/data/input.yaml", INPUT),
        ("tests/b/args", "inject data"),
    ]);
    let w = work.path();
    let (code, stdout) = update(w);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(!w.join("tests/b/data/expected.yaml").exists());
    assert!(!w.join("tests/b/data/input.sha256").exists());
    let (code, stdout, _) = test(w, &["-c", "sidecars.yaml"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains("2 passed, 0 failed, 0 could not run"),
        "{stdout}"
    );
}

/// A PATH is judged against the tree it is written in (its git work tree, else the current
/// directory, else its own folder as far as it is written before a symlink), so a committed
/// `platform -> ../victim` in its middle leads no case out, whether named from outside the
/// current directory, from `/` (the image's working directory), from a directory above a
/// git checkout or through the user's own link above it (above one that is no work tree, the
/// current directory or the folder holding that link is the tree). A checkout named through
/// a symlinked `$PWD` is the current directory.
#[test]
fn a_path_is_judged_by_the_tree_it_is_written_in() {
    let work = tempfile::tempdir().expect("tempdir");
    let w = &std::fs::canonicalize(work.path()).expect("canonical");
    write(
        w,
        &[
            ("ci/sidecars.yaml", &config("1")),
            ("victim/tests/private/input.yaml", INPUT),
            ("repo/sidecars.yaml", &config("1")),
            ("repo/tests/c/input.yaml", INPUT),
        ],
    );
    let sidecars = w.join("ci/sidecars.yaml").display().to_string();
    std::os::unix::fs::symlink(".", w.join("ws")).expect("link");
    for checkout in ["pr", "git-pr"] {
        std::fs::create_dir_all(w.join(checkout)).expect("mkdir");
        if checkout == "git-pr" {
            git_init(&w.join(checkout));
        }
        std::os::unix::fs::symlink("../victim", w.join(checkout).join("platform")).expect("link");
        let absolute = w
            .join(checkout)
            .join("platform/tests")
            .display()
            .to_string();
        // The user's own link above the checkouts (a symlinked workspace, `~/src ->
        // /data/src`) does not hide the work tree.
        let through_link = w.join("ws").join(checkout).join("platform/tests");
        for (cwd, path) in [
            (w.join("ci"), format!("../{checkout}/platform/tests")),
            (Path::new("/").to_owned(), absolute.clone()),
            (w.clone(), format!("{checkout}/platform/tests")),
            (w.join("ci"), through_link.display().to_string()),
            (w.join(checkout), through_link.display().to_string()),
        ]
        .into_iter()
        // Outside a work tree, nothing tells a checkout: from above it, or through a link
        // above it, the tree is that folder.
        .filter(|(cwd, path)| checkout == "git-pr" || (cwd != w && !path.contains("/ws/")))
        {
            for update in [false, true] {
                let mut args = vec!["-c", &sidecars, &path];
                if update {
                    args.push("--update");
                }
                let (code, stdout, stderr) = test(&cwd, &args);
                assert_eq!(
                    code,
                    Some(2),
                    "{path} from {}: {stdout}{stderr}",
                    cwd.display()
                );
                assert!(stderr.contains("no case run there"), "{path}: {stderr}");
                assert!(!stdout.contains("stringData") && !stdout.contains("private"));
                assert!(!w.join("victim/tests/private/expected.yaml").exists());
            }
        }
    }
    std::fs::create_dir_all(w.join("builds")).expect("mkdir");
    std::os::unix::fs::symlink("../repo", w.join("builds/proj")).expect("link");
    let typed = w.join("builds/proj");
    for path in [typed.display().to_string(), format!("{}/", typed.display())] {
        let (code, stdout, stderr) = test(&typed, &["-c", "sidecars.yaml", "--update", &path]);
        assert_eq!(code, Some(0), "{path}: {stdout}{stderr}");
    }
    assert_eq!(shipper(&w.join("repo/tests/c")), "1");
}

/// `--junit FILE` is written as `--output-file` is: never through a committed symlink out of
/// the tree it is named in (a `report.xml -> ../outside/bashrc`), whether cases ran or none
/// did; such a run is refused before any case runs, and the file it leads to stays as it was.
#[test]
fn the_junit_file_is_not_written_through_a_link_out_of_the_tree() {
    let work = workspace(&[
        ("repo/tests/ok/input.yaml", INPUT),
        ("outside/bashrc", "# mine\n"),
    ]);
    let w = work.path();
    std::fs::copy(w.join("sidecars.yaml"), w.join("repo/sidecars.yaml")).expect("copy");
    let repo = w.join("repo");
    git_init(&repo);
    std::os::unix::fs::symlink("../outside/bashrc", repo.join("report.xml")).expect("link");
    std::os::unix::fs::symlink("../outside", repo.join("reports")).expect("link");
    for (junit, config) in [
        ("report.xml", "sidecars.yaml"),
        ("report.xml", "no-such.yaml"),
        ("reports/new.xml", "sidecars.yaml"),
    ] {
        let (code, stdout, stderr) = test(
            &repo,
            &["-c", config, "--junit", junit, "--update", "tests/"],
        );
        assert_eq!(code, Some(2), "{junit}: {stdout}{stderr}");
        assert!(
            stderr.contains(&format!("--junit {junit}")) && stderr.contains("outside"),
            "{junit}: {stderr}"
        );
        assert!(!stdout.contains("updated"), "{junit}: a case ran: {stdout}");
    }
    assert_eq!(
        std::fs::read_to_string(w.join("outside/bashrc")).expect("read"),
        "# mine\n"
    );
    assert!(!w.join("outside/new.xml").exists());
}

/// A case that injects several files checks their output against its expectation; the three
/// invariants are for a case of one input file (the output of several is one stream, which no
/// one input gives back), so they do not fail it.
#[test]
fn a_case_of_several_inputs_passes() {
    let other = INPUT.replace("name: web", "name: api");
    let work = workspace(&[
        ("tests/two/input.yaml", INPUT),
        ("tests/two/extra.yaml", &other),
        ("tests/two/args", "inject input.yaml extra.yaml"),
    ]);
    let w = work.path();
    let (code, stdout) = update(w);
    assert_eq!(code, Some(0), "{stdout}");
    let expected = std::fs::read_to_string(w.join("tests/two/expected.yaml")).expect("read");
    assert_eq!(
        expected.matches("example.com/shipper:1").count(),
        2,
        "{expected}"
    );
    let (code, stdout, _) = test(w, &["-c", "sidecars.yaml", "tests/"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("1 passed"), "{stdout}");
}
