//! Where the configuration comes from: given with `-c` (not standard input when the
//! manifests are read from it), or found beside the work, never far above it. And the
//! conventions users bring from kubectl: `kinject version`, the plugin's name in help.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::common;

const CONFIG: &str = "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: s\n  containers:\n  - name: s\n    image: example.com/s:1\nrules:\n- name: all\n  inject: [s]\n";
const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: example.com/app:1\n";

/// The run succeeded and injected `CONFIG`'s sidecar.
fn assert_injected(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("image: example.com/s:1"));
}

/// kinject in `dir` with `args`, standard input from the file `stdin`.
fn run_with_stdin_file(dir: &Path, args: &[&str], stdin: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kinject"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::from(std::fs::File::open(stdin).expect("stdin")))
        .output()
        .expect("run kinject")
}

/// `-c /dev/stdin` (or `-`, or `/proc/self/fd/0`) while the manifests come from standard
/// input too: the configuration took the whole stream and the manifests came out empty, or
/// the manifests were read as the configuration. Refused; with the manifests in files it
/// works.
#[test]
fn the_configuration_cannot_be_standard_input_when_the_manifests_are() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::write(d.join("config.yaml"), CONFIG).expect("write");
    std::fs::write(d.join("app.yaml"), DEPLOYMENT).expect("write");
    for config in ["/dev/stdin", "-", "/proc/self/fd/0"] {
        for args in [
            vec!["inject", "-c", config],
            vec!["inject", "-c", config, "-"],
            vec!["explain", "-c", config],
            vec!["uninject", "-c", config],
        ] {
            let out = common::kinject_with_stdin(d, &args, CONFIG.as_bytes());
            assert_eq!(out.status.code(), Some(2), "{args:?}");
            assert!(out.stdout.is_empty(), "{args:?}: something written");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                stderr.contains("is standard input, which holds the manifests"),
                "{args:?}: {stderr}"
            );
        }
    }
    // Standard input redirected from the very file given as the configuration.
    let out = run_with_stdin_file(d, &["inject", "-c", "config.yaml"], &d.join("config.yaml"));
    assert_eq!(out.status.code(), Some(2));
    // The configuration from standard input, the manifests from a file: fine.
    let out = common::kinject_with_stdin(
        d,
        &["inject", "-c", "/dev/stdin", "app.yaml"],
        CONFIG.as_bytes(),
    );
    assert_injected(&out);
}

/// Without `-c`, the nearest `.kinject.yaml` or `kinject.yaml` is used, up to the root of
/// the repository; outside a repository only the current directory's. A configuration in
/// a directory above (a shared temporary directory, a home directory) was used without
/// anyone having chosen it.
#[test]
fn the_default_configuration_is_looked_for_no_higher_than_the_repository() {
    let dir = tempfile::tempdir().expect("tempdir");
    let above = dir.path();
    let work = above.join("work/k8s");
    std::fs::create_dir_all(&work).expect("mkdir");
    std::fs::write(above.join("kinject.yaml"), CONFIG).expect("write");

    // Not in a repository: the configuration two directories up is not used.
    let out = common::kinject_with_stdin(&work, &["inject"], DEPLOYMENT.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no configuration"), "{stderr}");
    assert!(out.stdout.is_empty());

    // In the current directory it is.
    std::fs::write(work.join(".kinject.yaml"), CONFIG).expect("write");
    let out = common::kinject_with_stdin(&work, &["inject"], DEPLOYMENT.as_bytes());
    assert_injected(&out);
    std::fs::remove_file(work.join(".kinject.yaml")).expect("rm");

    // In a repository (`work/` holds `.git`): up to its root, not above.
    std::fs::create_dir(above.join("work/.git")).expect("mkdir");
    let out = common::kinject_with_stdin(&work, &["inject"], DEPLOYMENT.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    std::fs::write(above.join("work/.kinject.yaml"), CONFIG).expect("write");
    let out = common::kinject_with_stdin(&work, &["inject"], DEPLOYMENT.as_bytes());
    assert_injected(&out);
}

/// Several files written to stdout are one stream holding their documents, no more and no
/// fewer: it reads again (`kinject inject dir/ | kinject inject` failed on a file starting
/// with `%YAML` when that was read), and a file of comments or one starting with `...` adds no
/// empty document.
#[test]
fn files_joined_on_stdout_hold_their_documents() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cases/directory-stream-joins");
    let out =
        common::kinject_with_stdin(&dir, &["inject", "-q", "-c", "config.yaml", "input"], b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stream = kinject::from_bytes(kinject::Source::stdin(), &out.stdout)
        .expect("the joined stream reads");
    let documents: Vec<_> = stream
        .documents
        .iter()
        .map(|d| d.value().expect("every document is YAML"))
        .filter(|p| p.root.is_some())
        .collect();
    let mut expected = 0;
    for entry in std::fs::read_dir(dir.join("input")).expect("input") {
        let bytes = std::fs::read(entry.expect("entry").path()).expect("read");
        let file = kinject::from_bytes(kinject::Source::stdin(), &bytes).expect("read");
        expected += file
            .documents
            .iter()
            .filter(|d| d.value().is_some_and(|p| p.root.is_some()))
            .count();
    }
    assert_eq!(documents.len(), expected, "documents in the stream");
    // No `---` starts a document with nothing in it.
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .collect();
    for (i, line) in lines.iter().enumerate() {
        if *line == "---" {
            let next = lines.get(i + 1).copied().unwrap_or("...");
            assert!(
                next != "---" && next != "...",
                "an empty document at line {i}: {text}"
            );
        }
    }
    // And read again by kinject itself.
    let again =
        common::kinject_with_stdin(&dir, &["inject", "-q", "-c", "config.yaml"], &out.stdout);
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(
        again.stdout, out.stdout,
        "injected again, the stream is as it was"
    );
}

/// `--check` and `--diff` say what `--in-place` would do, which writes the files without
/// errors: with an error elsewhere they still list (or show) the files that would change,
/// and exit 2. What they print is not manifests, which are never written partly.
#[test]
fn check_and_diff_still_say_what_would_change_when_another_file_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::write(d.join("config.yaml"), CONFIG).expect("write");
    std::fs::write(d.join("good.yaml"), DEPLOYMENT).expect("write");
    std::fs::write(d.join("bad.yaml"), "a: [\n").expect("write");
    let check = common::kinject_with_stdin(
        d,
        &[
            "inject",
            "-c",
            "config.yaml",
            "--check",
            "good.yaml",
            "bad.yaml",
        ],
        b"",
    );
    assert_eq!(check.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&check.stdout), "good.yaml\n");
    let diff = common::kinject_with_stdin(
        d,
        &[
            "inject",
            "-c",
            "config.yaml",
            "--diff",
            "good.yaml",
            "bad.yaml",
        ],
        b"",
    );
    assert_eq!(diff.status.code(), Some(2));
    let text = String::from_utf8_lossy(&diff.stdout);
    assert!(
        text.starts_with("--- a/good.yaml\n+++ b/good.yaml\n"),
        "{text}"
    );
    assert!(!text.contains("bad.yaml"), "{text}");
    // Manifests on stdout: nothing at all.
    let stdout = common::kinject_with_stdin(
        d,
        &["inject", "-c", "config.yaml", "good.yaml", "bad.yaml"],
        b"",
    );
    assert_eq!(stdout.status.code(), Some(2));
    assert!(stdout.stdout.is_empty());
}

/// An endless binary stream on standard input (`< /dev/zero`) is refused at its first NUL by
/// every subcommand that reads stdin whole, under an address-space limit of 2 GiB: `krm` and
/// `admission` read it until memory ran out.
#[test]
fn an_endless_binary_stdin_is_refused_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("config.yaml"), CONFIG).expect("write");
    for args in [
        "krm",
        "admission -c config.yaml",
        "inject -c config.yaml",
        "explain -c config.yaml",
    ] {
        let out = Command::new("timeout")
            .args([
                "60",
                "bash",
                "-c",
                "ulimit -v 2097152 && exec \"$0\" $1 < /dev/zero",
            ])
            .arg(env!("CARGO_BIN_EXE_kinject"))
            .arg(args)
            .current_dir(dir.path())
            .output()
            .expect("run kinject");
        assert_eq!(out.status.code(), Some(2), "{args}: {out:?}");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(
            said.contains("NUL byte") || said.contains("not an AdmissionReview"),
            "{args}: {said}"
        );
    }
}

/// `--report json`: everything a run says on stderr is JSON Lines — report entries,
/// diagnostics, warnings and errors, each with its code, then the summary — whatever went
/// wrong, so a machine can read it (the diagnostics were drawn as text before the list). Through files, in place,
/// with a configuration that fails, a file that cannot be read, and a long stream on stdin
/// (read a window at a time).
#[test]
fn the_json_report_is_all_of_stderr_whatever_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::write(d.join("config.yaml"), CONFIG).expect("write");
    std::fs::write(d.join("empty.yaml"), "# nothing\n").expect("write");
    std::fs::write(d.join("good.yaml"), DEPLOYMENT).expect("write");
    std::fs::write(d.join("bad.yaml"), "a: [\n").expect("write");
    let long: String = (0..20_000)
        .map(|i| DEPLOYMENT.replace("name: web", &format!("name: web-{i}")))
        .collect::<Vec<_>>()
        .join("---\n")
        + "---\na: [\n";
    let runs: [(&[&str], &[u8]); 5] = [
        (
            &["inject", "-c", "config.yaml", "good.yaml", "bad.yaml"],
            b"",
        ),
        (
            &["inject", "-i", "-c", "config.yaml", "good.yaml", "bad.yaml"],
            b"",
        ),
        (&["inject", "-c", "empty.yaml", "good.yaml"], b""),
        (
            &["inject", "-c", "config.yaml", "good.yaml", "missing.yaml"],
            b"",
        ),
        (&["inject", "-c", "config.yaml"], long.as_bytes()),
    ];
    for (args, stdin) in runs {
        let mut args = args.to_vec();
        args.extend(["--report", "json"]);
        let out = common::kinject_with_stdin(d, &args, stdin);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let items = common::report_lines(&out.stderr);
        assert!(
            items
                .iter()
                .all(|i| i["action"].is_string() && i["code"].is_string()),
            "{args:?}: {items:?}"
        );
        assert_eq!(items.last().map(|i| &i["action"]), Some(&"summary".into()));
        assert!(
            items
                .iter()
                .any(|i| i["action"] == "error" && i["code"].is_string()),
            "{args:?}: no located error: {items:?}"
        );
    }
}

/// `kinject version` says what `--version` says; `-o json` the same facts as JSON.
#[test]
fn version_subcommand() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = |args: &[&str]| common::kinject_with_stdin(dir.path(), args, b"");
    let flag = run(&["--version"]);
    let sub = run(&["version"]);
    assert!(sub.status.success());
    assert_eq!(sub.stdout, flag.stdout);
    let text = String::from_utf8_lossy(&flag.stdout).into_owned();
    let json: serde_json::Value =
        serde_json::from_slice(&run(&["version", "-o", "json"]).stdout).expect("json");
    let version = json["kinject"]["version"].as_str().expect("version");
    assert!(
        text.starts_with(&format!("kinject {version}")),
        "{text} vs {json}"
    );
}

/// Run as kubectl's plugin (`kubectl-kinject`), help and usage errors say `kubectl kinject`,
/// what the user types; run as `kinject`, they say `kinject`.
#[cfg(unix)]
#[test]
fn help_names_the_command_as_it_was_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plugin = dir.path().join("kubectl-kinject");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kinject"), &plugin).expect("symlink");
    for (program, usage) in [
        (plugin.as_path(), "Usage: kubectl kinject inject "),
        (
            Path::new(env!("CARGO_BIN_EXE_kinject")),
            "Usage: kinject inject ",
        ),
    ] {
        let out = Command::new(program)
            .args(["inject", "--help"])
            .output()
            .expect("run");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(usage),
            "{usage}"
        );
        let out = Command::new(program)
            .args(["inject", "--no-such-flag"])
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(usage),
            "{usage}"
        );
    }
}

/// Every subcommand's `--help` ends with examples, and every example's kinject command line
/// is one kinject accepts (run in an empty directory, it may fail for want of files, never for
/// a flag it does not know).
#[test]
fn every_help_has_examples_kinject_accepts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = |args: &[&str]| common::kinject_with_stdin(dir.path(), args, b"");
    for sub in [
        "inject",
        "uninject",
        "explain",
        "krm",
        "admission",
        "schema",
        "version",
        "completions",
    ] {
        let help = String::from_utf8_lossy(&run(&[sub, "--help"]).stdout).into_owned();
        let (_, examples) = help
            .split_once("\nExamples:\n")
            .unwrap_or_else(|| panic!("{sub}: no Examples: section"));
        let mut checked = 0;
        for line in examples.lines() {
            let command = line.split(" # ").next().unwrap_or_default();
            let Some(at) = command.find("kinject ") else {
                continue;
            };
            let words: Vec<&str> = command[at + "kinject ".len()..]
                .split(['|', '<', '>'])
                .next()
                .unwrap_or_default()
                .split_whitespace()
                .collect();
            let out = run(&words);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                !stderr.contains("For more information, try '--help'"),
                "{sub}: `{line}`: {stderr}"
            );
            checked += 1;
        }
        assert!(checked > 0, "{sub}: no kinject example");
    }
}

/// `--output-file FILE` holds what stdout would (for `inject`, from files or standard input,
/// in every format; `uninject`; `explain`), and a run that fails leaves FILE as it was: an
/// existing one unchanged (its permissions too), a new one not created, no temporary file
/// beside it.
#[test]
fn the_output_file_is_written_only_by_a_run_that_succeeds() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::write(d.join("config.yaml"), CONFIG).expect("write");
    std::fs::write(d.join("good.yaml"), DEPLOYMENT).expect("write");
    std::fs::write(d.join("bad.yaml"), "a: [\n").expect("write");
    let out = d.join("out.yaml");
    let run = |args: &[&str], stdin: &[u8]| common::kinject_with_stdin(d, args, stdin);
    // Longer than a window of standard input: processed a window at a time.
    let long = format!("---\n{DEPLOYMENT}").repeat(12_000);
    let long_bad = format!("{long}---\na: [\n");
    let cases: [(&[&str], &[u8]); 7] = [
        (&["inject", "-c", "config.yaml"], long.as_bytes()),
        (&["inject", "-c", "config.yaml", "good.yaml"], b""),
        (
            &["inject", "-c", "config.yaml", "-o", "json", "good.yaml"],
            b"",
        ),
        (
            &["inject", "-c", "config.yaml", "-o", "patch", "good.yaml"],
            b"",
        ),
        (&["inject", "-c", "config.yaml"], DEPLOYMENT.as_bytes()),
        (&["explain", "-c", "config.yaml", "good.yaml"], b""),
        (&["uninject", "-c", "config.yaml", "good.yaml"], b""),
    ];
    for (args, stdin) in cases {
        std::fs::write(&out, "previous\n").expect("write");
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        let expected = run(args, stdin);
        assert_eq!(expected.status.code(), Some(0), "{args:?}");
        let to_file = run(&[args, &["--output-file", "out.yaml"]].concat(), stdin);
        assert_eq!(
            to_file.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&to_file.stderr)
        );
        assert!(to_file.stdout.is_empty(), "{args:?}");
        assert_eq!(
            std::fs::read(&out).expect("read"),
            expected.stdout,
            "{args:?}"
        );
        let mode = std::fs::metadata(&out).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o640, "{args:?}");
    }
    let failing: [(&[&str], &[u8]); 5] = [
        (&["inject", "-c", "config.yaml"], long_bad.as_bytes()),
        (
            &["inject", "-c", "config.yaml", "good.yaml", "bad.yaml"],
            b"",
        ),
        (
            &[
                "inject",
                "-c",
                "config.yaml",
                "-o",
                "json",
                "good.yaml",
                "bad.yaml",
            ],
            b"",
        ),
        (&["inject", "-c", "config.yaml"], b"a: [\n"),
        (
            &["explain", "-c", "config.yaml", "good.yaml", "bad.yaml"],
            b"",
        ),
    ];
    for (args, stdin) in failing {
        std::fs::write(&out, "previous\n").expect("write");
        for file in ["out.yaml", "new.yaml"] {
            let r = run(&[args, &["--output-file", file]].concat(), stdin);
            assert_eq!(r.status.code(), Some(2), "{args:?}");
            assert!(r.stdout.is_empty(), "{args:?}");
        }
        assert_eq!(std::fs::read_to_string(&out).expect("read"), "previous\n");
        assert!(!d.join("new.yaml").exists(), "{args:?}");
    }
    assert_eq!(
        common::entries(d),
        ["bad.yaml", "config.yaml", "good.yaml", "out.yaml"],
        "no temporary file is left"
    );
}

/// `-o json-list` is one JSON value, kubectl's `List`, whose items are the documents `-o
/// json` writes one after the other (empty documents aside), in order: from files, and from
/// standard input longer than a window (processed a window at a time).
#[test]
fn json_list_is_one_list_of_the_json_streams_documents() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::write(d.join("config.yaml"), CONFIG).expect("write");
    let service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n";
    std::fs::write(d.join("a.yaml"), format!("{DEPLOYMENT}---\n{service}---\n")).expect("write");
    std::fs::write(d.join("b.yaml"), DEPLOYMENT).expect("write");
    let long = format!("---\n{DEPLOYMENT}---\n{service}").repeat(6_000);
    let runs: [(&[&str], &[u8]); 2] = [
        (&["inject", "-c", "config.yaml", "a.yaml", "b.yaml"], b""),
        (&["inject", "-c", "config.yaml"], long.as_bytes()),
    ];
    for (args, stdin) in runs {
        let stream = common::kinject_with_stdin(d, &[args, &["-o", "json"]].concat(), stdin);
        let list = common::kinject_with_stdin(d, &[args, &["-o", "json-list"]].concat(), stdin);
        assert_eq!(list.status.code(), Some(0), "{args:?}");
        let documents: Vec<serde_json::Value> =
            serde_json::Deserializer::from_slice(&stream.stdout)
                .into_iter()
                .map(|v| v.expect("a JSON document"))
                .filter(|v: &serde_json::Value| !v.is_null())
                .collect();
        assert!(documents.len() >= 3, "{args:?}");
        let list: serde_json::Value = serde_json::from_slice(&list.stdout).expect("one JSON value");
        assert_eq!(list["apiVersion"], "v1");
        assert_eq!(list["kind"], "List");
        assert_eq!(list["metadata"], serde_json::json!({"resourceVersion": ""}));
        assert_eq!(
            list["items"],
            serde_json::Value::Array(documents),
            "{args:?}"
        );
    }
}

/// Many files into one output, made as they are processed (small files side by side a chunk
/// at a time, each into a part of its own; a large one alone, straight into the output): every
/// output is each file's own put together in the order named, byte for byte, the `List` and
/// the patches' array opened once and closed once; and nothing at all when a file fails.
#[test]
fn every_output_of_many_files_is_each_files_own_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::write(d.join("config.yaml"), CONFIG).expect("write");
    let service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n";
    let pair = format!("{DEPLOYMENT}---\n{service}---\n");
    // 12 files of 100 KB (the side-by-side chunks hold 1 MiB), one of 1.5 MB in their
    // middle, one with an empty document, one with only a comment.
    let mut names = Vec::new();
    for i in 0..14 {
        let (name, text) = match i {
            5 => ("large.yaml".to_owned(), pair.repeat(1_500_000 / pair.len())),
            12 => ("empty.yaml".to_owned(), "---\n".to_owned()),
            13 => ("comment.yaml".to_owned(), "# nothing here\n".to_owned()),
            _ => (format!("small-{i}.yaml"), pair.repeat(100_000 / pair.len())),
        };
        std::fs::write(d.join(&name), text).expect("write");
        names.push(name);
    }
    let run = |format: &str, files: &[String]| {
        let mut args = vec!["inject", "-q", "-c", "config.yaml", "-o", format];
        args.extend(files.iter().map(String::as_str));
        let out = common::kinject_with_stdin(d, &args, b"");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("UTF-8")
    };
    let each = |format: &str| -> Vec<String> {
        names
            .iter()
            .map(|n| run(format, std::slice::from_ref(n)))
            .collect()
    };
    // `-o json`: the documents one after the other.
    assert_eq!(run("json", &names), each("json").concat());
    // `-o json-list` and `-o patch`: one value, printed as serde_json prints it.
    for (format, items) in [("json-list", "/items"), ("patch", "")] {
        let all: Vec<serde_json::Value> = each(format)
            .iter()
            .flat_map(|out| {
                let value: serde_json::Value = serde_json::from_str(out).expect("one value");
                value
                    .pointer(items)
                    .expect("items")
                    .as_array()
                    .expect("an array")
                    .clone()
            })
            .collect();
        assert!(all.len() > 1000, "{format}: {} items", all.len());
        let whole = if format == "patch" {
            serde_json::Value::Array(all)
        } else {
            serde_json::json!({"apiVersion": "v1", "items": all, "kind": "List", "metadata": {"resourceVersion": ""}})
        };
        let whole = serde_json::to_string_pretty(&whole).expect("JSON");
        assert_eq!(run(format, &names), format!("{whole}\n"), "{format}");
    }
    // A file that fails after the large one was written into the output: nothing is written.
    std::fs::write(d.join("broken.yaml"), "apiVersion: v1\nkind: [\n").expect("write");
    names.insert(7, "broken.yaml".to_owned());
    for format in ["json", "json-list", "patch"] {
        let mut args = vec!["inject", "-q", "-c", "config.yaml", "-o", format];
        args.extend(names.iter().map(String::as_str));
        let out = common::kinject_with_stdin(d, &args, b"");
        assert_eq!(out.status.code(), Some(2), "{format}");
        assert!(out.stdout.is_empty(), "{format}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("broken.yaml:2:"), "{format}: {stderr}");
    }
}

/// `krm` takes `--set` and `--namespace-labels` as `inject` does, and `inject` handed a
/// ResourceList passes its own on: both give the golden case's output (it used to load a
/// configuration of `--set` alone, without the functionConfig).
#[test]
fn krm_and_inject_of_a_resource_list_apply_set_and_namespace_labels_alike() {
    let case =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cases/krm-set-and-namespace-labels");
    let expected = std::fs::read_to_string(case.join("expected.yaml")).expect("expected");
    let flags = [
        "--set",
        "version=2.2",
        "--namespace-labels",
        "shop=team=shop",
    ];
    for command in ["krm", "inject"] {
        let args = [&[command][..], &flags[..]].concat();
        let out = run_with_stdin_file(&case, &args, &case.join("stdin.yaml"));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "{args:?}");
    }
}

/// kinject under `script(1)`, which gives it a terminal: `command` (a shell line) run in
/// `dir` with `env`, and what the terminal showed.
fn on_a_terminal(dir: &Path, command: &str, env: &[(&str, &str)]) -> String {
    let kinject = env!("CARGO_BIN_EXE_kinject");
    let mut script = Command::new("script");
    script
        .args(["-qec", &command.replace("kinject", kinject), "/dev/null"])
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("TERM")
        .env_remove("LC_ALL")
        .env_remove("LANG");
    for (k, v) in env {
        script.env(k, v);
    }
    let out = script.output().expect("script");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A terminal that says it shows no colour (`TERM=dumb`) gets none, in `--diff` or in a
/// diagnostic, and a locale that is not UTF-8 (`LC_ALL=C`) gets diagnostics drawn in ASCII;
/// a colour terminal gets colour.
#[test]
fn a_dumb_terminal_gets_no_colour_and_a_c_locale_no_box_drawing() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: no script(1)");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::write(d.join("config.yaml"), CONFIG).expect("write");
    std::fs::write(d.join("app.yaml"), DEPLOYMENT).expect("write");
    std::fs::write(d.join("bad.yaml"), "a: [\n").expect("write");
    let diff = "kinject inject -c config.yaml --diff app.yaml";
    let coloured = on_a_terminal(d, diff, &[("TERM", "xterm-256color"), ("LANG", "C.UTF-8")]);
    assert!(coloured.contains('\u{1b}'), "{coloured}");
    let dumb = on_a_terminal(d, diff, &[("TERM", "dumb"), ("LANG", "C.UTF-8")]);
    assert!(dumb.contains("+      - name: s"), "{dumb}");
    assert!(!dumb.contains('\u{1b}'), "{dumb}");
    let error = "kinject inject -c config.yaml bad.yaml";
    let dumb = on_a_terminal(d, error, &[("TERM", "dumb"), ("LANG", "C.UTF-8")]);
    assert!(
        !dumb.contains('\u{1b}') && dumb.contains("bad.yaml:1:4"),
        "{dumb}"
    );
    let c = on_a_terminal(d, error, &[("TERM", "xterm"), ("LC_ALL", "C")]);
    assert!(c.is_ascii() && c.contains("bad.yaml:1:4"), "{c}");
}

/// On a terminal, every command that reads standard input says it waits for it (`explain` and
/// `admission` waited in silence), and ends at Ctrl-D.
#[test]
fn commands_reading_a_terminal_say_they_wait_for_it() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: no script(1)");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::write(d.join("config.yaml"), CONFIG).expect("write");
    for (command, said) in [
        ("inject", "reading manifests from standard input"),
        ("explain", "reading manifests from standard input"),
        (
            "admission",
            "reading an AdmissionReview from standard input",
        ),
    ] {
        let shown = on_a_terminal(
            d,
            &format!("kinject {command} -c config.yaml"),
            &[("LANG", "C.UTF-8")],
        );
        assert!(shown.contains(said), "{command}: {shown}");
    }
}

/// A run over two seconds shows its progress on a terminal (`kinject: N documents, …`),
/// cleared before the report; in a pipe, or with `-q`, none.
#[test]
fn a_long_run_shows_progress_on_a_terminal_only() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: no script(1)");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::write(d.join("config.yaml"), CONFIG).expect("write");
    // Enough for two seconds of a debug build (a release build reads it in a fifth of one:
    // the test binary runs the debug one).
    let one = DEPLOYMENT.replace("name: web", "name: web-N");
    let stream: Vec<String> = (0..10_000)
        .map(|i| one.replace("web-N", &format!("web-{i}")))
        .collect();
    std::fs::write(d.join("big.yaml"), stream.join("---\n")).expect("write");
    let run = "kinject inject -c config.yaml big.yaml > /dev/null";
    // The three runs at once: each takes seconds.
    let (shown, elapsed, quiet, piped) = std::thread::scope(|scope| {
        let quiet = scope
            .spawn(|| on_a_terminal(d, &run.replace("inject", "inject -q"), &[("TERM", "xterm")]));
        let piped = scope.spawn(|| {
            Command::new(env!("CARGO_BIN_EXE_kinject"))
                .args(["inject", "-c", "config.yaml", "big.yaml"])
                .current_dir(d)
                .output()
                .expect("run")
        });
        let started = std::time::Instant::now();
        let shown = on_a_terminal(d, run, &[("LANG", "C.UTF-8"), ("TERM", "xterm")]);
        let elapsed = started.elapsed();
        (
            shown,
            elapsed,
            quiet.join().expect("quiet"),
            piped.join().expect("piped"),
        )
    });
    assert!(!quiet.contains(" documents, "), "{quiet}");
    assert!(!String::from_utf8_lossy(&piped.stderr).contains(" documents, "));
    if elapsed < std::time::Duration::from_secs(3) {
        eprintln!("not checked: the run took under three seconds here");
        return;
    }
    assert!(
        shown.contains("kinject: ") && shown.contains(" documents, "),
        "{shown}"
    );
    // Cleared before the report: the summary starts its own line.
    assert!(
        shown.contains("\rsummary: ") || shown.contains("\r\nsummary: "),
        "{shown}"
    );
}

/// `-l` as kubectl reads it: a selector Kubernetes refuses is refused (exit 2, nothing
/// written, the message names it and says what is wrong where); an empty one selects
/// everything, as `kubectl get -l ''` does. (Which objects each selector selects:
/// `oracle::label_selectors_select_what_kubernetes_selects`, against kubectl.)
#[test]
fn the_selector_is_read_as_kubectl_reads_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::write(d.join("config.yaml"), CONFIG).expect("write");
    std::fs::write(d.join("web.yaml"), DEPLOYMENT).expect("write");
    for (selector, why) in [
        // A space ends a value (it was taken as `app` = `we b`: nothing selected, exit 0).
        (
            "app=we b",
            "found `b` at column 8, expected: `,` or the end",
        ),
        (
            "ver<3.0",
            "the value of `<` must be an integer (64 bits), not `3.0`",
        ),
        (
            "app=web,",
            "found the end at column 9, expected: a key after `,`",
        ),
        ("team=a/b", "invalid value `a/b`"),
    ] {
        let out = common::kinject_with_stdin(
            d,
            &["inject", "-c", "config.yaml", "-l", selector, "web.yaml"],
            b"",
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{selector}: {stderr}");
        assert!(out.stdout.is_empty(), "{selector}");
        let message = format!("error: -l/--selector `{selector}`: ");
        assert!(
            stderr.contains(&message) && stderr.contains(why),
            "{selector}: {stderr}"
        );
    }
    for everything in ["", "  "] {
        let out = common::kinject_with_stdin(
            d,
            &["inject", "-c", "config.yaml", "-l", everything, "web.yaml"],
            b"",
        );
        assert_injected(&out);
    }
}
