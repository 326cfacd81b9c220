//! The report: for people, the objects acted on and one summary line (`-v` for every object;
//! `would inject` when nothing is written); for machines, JSON Lines that fit
//! `docs/report.schema.json`, whatever the run meets — objects injected and skipped, an
//! object's error, a file that does not parse, one that does not exist, one that cannot be
//! written, a configuration that does not load — on stderr or in `--report-file`.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::Value;

use crate::common;

const CONFIG: &str = "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: s\n  containers:\n  - name: s\n    image: example.com/s:1\nrules:\n- name: all\n  match:\n    kinds: [Deployment]\n  inject: [s]\n";

/// A Deployment named `name`, with `annotations` (a YAML flow mapping) on its pod template.
fn deployment(name: &str, annotations: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  template:\n    metadata:\n      annotations: {annotations}\n    spec:\n      containers:\n      - name: app\n        image: example.com/app:1\n"
    )
}

const SERVICE: &str = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n";

/// A directory with the configuration and one file of every kind the report meets.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let write = |name: &str, text: &str| std::fs::write(d.join(name), text).expect("write");
    write("config.yaml", CONFIG);
    write("broken.yaml", &CONFIG.replace("image:", "imagee:"));
    write(
        "good.yaml",
        &format!("{}---\n{SERVICE}", deployment("web", "{}")),
    );
    write(
        "optout.yaml",
        &deployment("quiet", "{kinject.dev/inject: \"false\"}"),
    );
    write(
        "unknown.yaml",
        &deployment("asks", "{kinject.dev/inject: \"nosuch\"}"),
    );
    write("bad.yaml", "apiVersion: v1\nkind: [\n");
    write("locked.yaml", &deployment("locked", "{}"));
    std::fs::set_permissions(
        d.join("locked.yaml"),
        std::fs::Permissions::from_mode(0o444),
    )
    .expect("chmod");
    dir
}

fn schema() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/report.schema.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("JSON");
    jsonschema::validator_for(&schema).expect("a valid JSON Schema")
}

/// Every line of `report` fits the schema, and the last is the summary.
fn check_lines(report: &[Value], what: &str) {
    let schema = schema();
    for line in report {
        let errors: Vec<String> = schema.iter_errors(line).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{what}: {line}: {errors:?}");
    }
    assert_eq!(
        report.last().map(|l| &l["action"]),
        Some(&Value::from("summary")),
        "{what}: {report:?}"
    );
}

/// The line whose `field` is `value`.
fn line_with<'a>(report: &'a [Value], field: &str, value: &str) -> &'a Value {
    report
        .iter()
        .find(|l| l[field] == value)
        .unwrap_or_else(|| panic!("no line with {field} {value}: {report:?}"))
}

const FILES: [&str; 6] = [
    "good.yaml",
    "optout.yaml",
    "unknown.yaml",
    "bad.yaml",
    "missing.yaml",
    "locked.yaml",
];

#[test]
fn every_json_report_line_fits_its_schema() {
    let dir = workspace();
    let d = dir.path();
    let mut args = vec![
        "inject",
        "--in-place",
        "--report",
        "json",
        "-c",
        "config.yaml",
    ];
    args.extend(FILES);
    let out = common::kinject_with_stdin(d, &args, b"");
    assert_eq!(out.status.code(), Some(2));
    let report = common::report_lines(&out.stderr);
    check_lines(&report, "in place");
    assert_eq!(line_with(&report, "name", "web")["code"], "injected");
    assert_eq!(
        line_with(&report, "kind", "Service")["code"],
        "not_a_workload"
    );
    assert_eq!(line_with(&report, "name", "quiet")["code"], "opted_out");
    assert_eq!(
        line_with(&report, "name", "asks")["code"],
        "kinject::inject::unknown_sidecar"
    );
    assert_eq!(
        line_with(&report, "name", "locked")["code"],
        "kinject::output::write"
    );
    let syntax = line_with(&report, "code", "kinject::input::syntax");
    assert_eq!(
        (&syntax["file"], &syntax["line"]),
        (&Value::from("bad.yaml"), &Value::from(2))
    );
    assert_eq!(
        line_with(&report, "code", "kinject::input::io")["file"],
        "missing.yaml"
    );
    let summary = report.last().expect("summary");
    assert_eq!(summary["injected"], 1, "{summary}");
    assert_eq!(summary["skippedBy"]["opted_out"], 1, "{summary}");
    assert_eq!(summary["exitCode"], 2, "{summary}");

    // The same run as `--check`, on files as they were: what would be done, nothing written.
    let dir = workspace();
    args[1] = "--check";
    let out = common::kinject_with_stdin(dir.path(), &args, b"");
    let report = common::report_lines(&out.stderr);
    check_lines(&report, "check");
    let web = line_with(&report, "name", "web");
    assert_eq!(
        (&web["action"], &web["dryRun"]),
        (&"injected".into(), &true.into())
    );
    assert_eq!(report.last().expect("summary")["dryRun"], true);

    // The same files to stdout: an error in one stops the output, so no line says an object
    // was injected; each carries `written: false`, and so does the summary. The same in the
    // text report ("would inject"), and for standard input read a window at a time.
    let dir = workspace();
    let mut to_stdout = args.clone();
    to_stdout.remove(1);
    let out = common::kinject_with_stdin(dir.path(), &to_stdout, b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let report = common::report_lines(&out.stderr);
    check_lines(&report, "nothing written");
    let web = line_with(&report, "name", "web");
    assert_eq!(
        (&web["action"], &web["written"]),
        (&"injected".into(), &false.into())
    );
    assert_eq!(report.last().expect("summary")["written"], false);
    let mut text_args = to_stdout.clone();
    text_args.retain(|a| *a != "--report" && *a != "json");
    let out = common::kinject_with_stdin(dir.path(), &text_args, b"");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("deployment/web would inject"), "{stderr}");
    assert!(!stderr.contains(" injected:"), "{stderr}");
    // Over a window (1 MiB) of standard input, so that it is read a window at a time.
    let mut stream = deployment("first", "");
    for i in 0..8000 {
        stream.push_str(&format!(
            "---
{}",
            deployment(&format!("w{i}"), "")
        ));
    }
    stream.push_str(
        "---
kind: [
",
    );
    let out = common::kinject_with_stdin(
        dir.path(),
        &["inject", "--report", "json", "-c", "config.yaml"],
        stream.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(2));
    let report = common::report_lines(&out.stderr);
    check_lines(&report, "stream, nothing written");
    assert!(
        report
            .iter()
            .filter(|l| l["action"] == "injected")
            .all(|l| l["written"] == false),
        "a window's entry says injected"
    );

    // A configuration that does not load: its errors, located, then the summary.
    let out = common::kinject_with_stdin(
        dir.path(),
        &[
            "inject",
            "--report",
            "json",
            "-c",
            "broken.yaml",
            "good.yaml",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let report = common::report_lines(&out.stderr);
    check_lines(&report, "broken configuration");
    let unknown = line_with(&report, "code", "kinject::config::unknown_field");
    assert_eq!(unknown["file"], "broken.yaml");
    assert!(unknown["line"].as_u64().is_some_and(|l| l > 1), "{unknown}");
}

/// `--report-file`: the report goes there, whole; stderr is for people (the diagnostics
/// drawn, the errors), with no report line in it.
#[test]
fn the_report_file_takes_the_report_and_stderr_stays_for_people() {
    let dir = workspace();
    let d = dir.path();
    let mut args = vec![
        "inject",
        "--report",
        "json",
        "--report-file",
        "report.jsonl",
        "-c",
        "config.yaml",
    ];
    args.extend(&FILES[..4]);
    let out = common::kinject_with_stdin(d, &args, b"");
    assert_eq!(out.status.code(), Some(2));
    let file = std::fs::read(d.join("report.jsonl")).expect("the report file");
    let report = common::report_lines(&file);
    check_lines(&report, "report file");
    assert!(report.iter().any(|l| l["code"] == "kinject::input::syntax"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("invalid YAML"), "{stderr}");
    assert!(stderr.contains("nothing was written"), "{stderr}");
    assert!(!stderr.contains("{\""), "JSON on stderr: {stderr}");
    assert!(!stderr.contains("summary"), "{stderr}");

    // The text report too.
    let args = [
        "inject",
        "--report-file",
        "report.txt",
        "-c",
        "config.yaml",
        "good.yaml",
    ];
    let out = common::kinject_with_stdin(d, &args, b"");
    assert_eq!(out.status.code(), Some(0));
    let file = std::fs::read_to_string(d.join("report.txt")).expect("the report file");
    assert!(
        file.contains("good.yaml:1: deployment/web injected: s"),
        "{file}"
    );
    assert!(file.ends_with("0 errors\n"), "{file}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// For people: the objects acted on and one summary line; `-v` lists every object;
/// `--check` and `--diff` say what would be done, and the summary counts the files.
#[test]
fn the_text_report_lists_what_was_done_and_ends_with_a_summary() {
    let dir = workspace();
    let d = dir.path();
    let files = ["good.yaml", "optout.yaml"];
    let run = |extra: &[&str]| {
        let mut args = vec!["inject", "-c", "config.yaml"];
        args.extend(extra);
        args.extend(files);
        let out = common::kinject_with_stdin(d, &args, b"");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let summary = "1 injected, 0 unchanged, 2 skipped (1 not_a_workload, 1 opted_out), 0 errors";
    let default = run(&[]);
    assert_eq!(
        default,
        format!(
            "good.yaml:1: deployment/web injected: s\n\
             optout.yaml:1: deployment/quiet skipped: opted_out\n\
             summary: {summary}\n"
        )
    );
    let verbose = run(&["-v"]);
    assert!(
        verbose.contains("good.yaml:14: service/web skipped: not_a_workload\n"),
        "{verbose}"
    );
    assert!(
        verbose.ends_with(&format!("summary: {summary}\n")),
        "{verbose}"
    );
    for flag in ["--check", "--diff"] {
        let dry = run(&[flag]);
        assert!(
            dry.contains("good.yaml:1: deployment/web would inject: s\n"),
            "{dry}"
        );
        assert!(
            dry.ends_with(
                "summary: 1 would be injected, 0 unchanged, 2 skipped (1 not_a_workload, \
                 1 opted_out), 0 errors; 1 file would change, 1 unchanged\n"
            ),
            "{flag}: {dry}"
        );
    }
    assert_eq!(run(&["-q"]), "");
}

/// A run that injects nothing says so, and why, as linkerd's `no supported objects found`
/// does: no workload at all, or workloads no rule selected.
#[test]
fn a_run_that_injects_nothing_warns() {
    let dir = workspace();
    let d = dir.path();
    std::fs::write(d.join("service.yaml"), SERVICE).expect("write");
    for (file, warning) in [
        (
            "service.yaml",
            "warning: nothing was injected: 1 object and no workload",
        ),
        (
            "optout.yaml",
            "warning: nothing was injected: 1 workload, all skipped (1 opted_out; `kinject explain` shows why)",
        ),
    ] {
        let out = common::kinject_with_stdin(d, &["inject", "-c", "config.yaml", file], b"");
        assert_eq!(out.status.code(), Some(0));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(warning), "{file}: {stderr}");
        let json = common::kinject_with_stdin(
            d,
            &["inject", "--report", "json", "-c", "config.yaml", file],
            b"",
        );
        let report = common::report_lines(&json.stderr);
        check_lines(&report, file);
        line_with(&report, "code", "kinject::nothing_injected");
    }
}
