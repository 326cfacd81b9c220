//! `kinject test` beyond its golden cases (`testdata/cases/test-*`): `--update` writing into
//! a copy of a case folder (and refusing a changed input), the JUnit XML read by Python's
//! XML parser and validated against the JUnit schema, `--report json` against
//! `docs/report.schema.json`, and case folders that lead out of themselves.

use std::path::Path;

use serde_json::Value;

use crate::common;

fn cases() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cases")
}

/// A copy of the fixture of the golden case `name` (`test-failing`: its `fixture/` and its
/// `sidecars.yaml`) in a temporary directory.
fn copy_of(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(cases().join(name).join("fixture"))
        .arg(cases().join(name).join("sidecars.yaml"))
        .arg(dir.path())
        .status()
        .expect("cp");
    assert!(status.success());
    dir
}

fn kinject(dir: &Path, args: &[&str]) -> std::process::Output {
    common::kinject_with_stdin(dir, args, b"")
}

#[test]
fn update_writes_what_inject_writes_and_refuses_a_changed_input() {
    let work = copy_of("test-passing");
    let d = work.path();
    let case = d.join("fixture/web");
    std::fs::remove_file(case.join("expected.yaml")).expect("rm");
    std::fs::remove_file(case.join("input.sha256")).expect("rm");
    let out = kinject(d, &["test", "-c", "sidecars.yaml", "--update", "fixture"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("updated fixture/web: expected.yaml\n"),
        "{stdout}"
    );
    let injected = kinject(
        &case,
        &["inject", "-c", "../../sidecars.yaml", "input.yaml"],
    );
    let written = std::fs::read(case.join("expected.yaml")).expect("written");
    assert_eq!(written, injected.stdout);
    // The same bytes as the golden case's own expectation, and its record.
    let golden = cases().join("test-passing/fixture/web");
    assert_eq!(
        written,
        std::fs::read(golden.join("expected.yaml")).expect("golden")
    );
    let record = std::fs::read(case.join("input.sha256")).expect("record");
    assert_eq!(
        record,
        std::fs::read(golden.join("input.sha256")).expect("golden record")
    );

    // The input changes: the update is refused, nothing written, until --force.
    let input = case.join("input.yaml");
    let text = std::fs::read_to_string(&input).expect("input");
    std::fs::write(&input, text.replace("web:1.4", "web:1.5")).expect("write");
    let out = kinject(d, &["test", "-c", "sidecars.yaml", "--update", "fixture"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains("ERROR fixture/web: the input changed since expected.yaml"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read(case.join("expected.yaml")).expect("kept"),
        written
    );
    let out = kinject(
        d,
        &[
            "test",
            "-c",
            "sidecars.yaml",
            "--update",
            "--force",
            "fixture",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let rewritten = std::fs::read_to_string(case.join("expected.yaml")).expect("rewritten");
    assert!(rewritten.contains("example.com/web:1.5"));
    // And the cases pass as written.
    let out = kinject(d, &["test", "-c", "sidecars.yaml", "fixture"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn update_never_writes_through_a_symlink() {
    let work = copy_of("test-passing");
    let d = work.path();
    let outside = d.join("outside.yaml");
    std::fs::write(&outside, "kept\n").expect("write");
    let case = d.join("fixture/web");
    std::fs::remove_file(case.join("expected.yaml")).expect("rm");
    std::os::unix::fs::symlink("../../outside.yaml", case.join("expected.yaml")).expect("link");
    let out = kinject(
        d,
        &[
            "test",
            "-c",
            "sidecars.yaml",
            "--update",
            "--force",
            "fixture",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains("ERROR fixture/web: expected.yaml"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(&outside).expect("outside"),
        "kept\n"
    );
}

#[test]
fn a_case_file_linking_out_of_its_folder_is_not_read() {
    let work = copy_of("test-passing");
    let d = work.path();
    std::fs::write(d.join("secret.yaml"), "token: hunter2\n").expect("write");
    let case = d.join("fixture/web");
    std::fs::remove_file(case.join("expected.yaml")).expect("rm");
    std::os::unix::fs::symlink("../../secret.yaml", case.join("expected.yaml")).expect("link");
    let out = kinject(d, &["test", "-c", "sidecars.yaml", "fixture"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains("ERROR fixture/web: expected.yaml leads out of the case folder"),
        "{stdout}"
    );
    assert!(!stdout.contains("hunter2"), "{stdout}");
}

#[test]
fn junit_has_the_shape_of_the_junit_schema() {
    let work = copy_of("test-failing");
    let d = work.path();
    std::fs::create_dir(d.join("fixture/broken")).expect("mkdir");
    std::fs::write(d.join("fixture/broken/input.yaml"), "kind: List\n").expect("write");
    std::fs::write(d.join("fixture/broken/args"), "serve\n").expect("write");
    let out = kinject(
        d,
        &[
            "test",
            "-c",
            "sidecars.yaml",
            "--junit",
            "out/junit.xml",
            "fixture",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !d.join("out/junit.xml").exists(),
        "no directory made for it"
    );
    let out = kinject(
        d,
        &[
            "test",
            "-c",
            "sidecars.yaml",
            "--junit",
            "junit.xml",
            "fixture",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    // The JUnit schema (Ant's, as Jenkins' junit-10.xsd and GitLab read it): testsuites >
    // testsuite (name, tests, failures, errors, skipped, time) > testcase (name, classname,
    // time) > failure or error (message, type).
    let script = r#"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites", root.tag
suites = root.findall("testsuite")
assert len(suites) == 1
suite = suites[0]
for a in ("name", "tests", "failures", "errors", "skipped", "time"):
    assert a in suite.attrib, a
float(suite.get("time"))
cases = suite.findall("testcase")
assert int(suite.get("tests")) == len(cases)
failed = [c for c in cases if c.find("failure") is not None]
errored = [c for c in cases if c.find("error") is not None]
assert int(suite.get("failures")) == len(failed)
assert int(suite.get("errors")) == len(errored)
for c in cases:
    assert set(c.attrib) == {"name", "classname", "time"}, c.attrib
    float(c.get("time"))
    for child in c:
        assert child.tag in ("failure", "error"), child.tag
        assert child.get("message") and child.get("type"), child.attrib
for c in cases:
    print(c.get("name"), " ".join(ch.tag + ":" + ch.get("type") for ch in c))
print("diff:", "+        image: example.com/log-shipper:2.1" in "".join(
    f.text or "" for c in failed for f in c.findall("failure")))
"#;
    let py = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(d.join("junit.xml"))
        .output()
        .expect("python3");
    assert!(
        py.status.success(),
        "{}",
        String::from_utf8_lossy(&py.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&py.stdout),
        "fixture/broken error:test.could_not_run\n\
         fixture/injects-instead-of-failing failure:test.exit_code failure:test.exit_code failure:test.differs\n\
         fixture/ok \n\
         fixture/stale-image failure:test.differs\n\
         diff: True\n"
    );

    // And against the JUnit schema (testdata/junit/junit.xsd: the rules of Jenkins'
    // junit-10.xsd), with the xmlschema package; the schema refuses a report that breaks them
    // (a testcase without a name, a count that is not a number).
    let xsd = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/junit/junit.xsd");
    let validate = |xml: &Path| {
        std::process::Command::new(common::venv_python())
            .args([
                "-c",
                "import sys, xmlschema; xmlschema.XMLSchema(sys.argv[1]).validate(sys.argv[2])",
            ])
            .arg(&xsd)
            .arg(xml)
            .output()
            .expect("python")
    };
    let valid = validate(&d.join("junit.xml"));
    assert!(
        valid.status.success(),
        "{}",
        String::from_utf8_lossy(&valid.stderr)
    );
    let report = std::fs::read_to_string(d.join("junit.xml")).expect("junit");
    for (from, to) in [
        ("<testcase name=", "<testcase label="),
        ("failures=\"2\"", "failures=\"two\""),
    ] {
        assert!(report.contains(from), "{from}");
        std::fs::write(d.join("bad.xml"), report.replacen(from, to, 1)).expect("write");
        let refused = validate(&d.join("bad.xml"));
        assert!(!refused.status.success(), "{to}: not refused");
    }

    // A run that runs no case replaces the report of the last one (a CI would show its
    // passes): one case that could not run, saying why.
    for args in [
        &["-c", "no-such.yaml", "fixture"][..],
        &["-c", "sidecars.yaml", "--run", "no-such-case", "fixture"][..],
    ] {
        let mut all = vec!["test", "--junit", "junit.xml"];
        all.extend(args);
        let out = kinject(d, &all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let report = std::fs::read_to_string(d.join("junit.xml")).expect("junit");
        assert!(
            report.contains("tests=\"1\" failures=\"0\" errors=\"1\"")
                && report.contains("<testcase name=\"(no case run)\""),
            "{args:?}: {report}"
        );
        let valid = validate(&d.join("junit.xml"));
        assert!(
            valid.status.success(),
            "{}",
            String::from_utf8_lossy(&valid.stderr)
        );
    }
}

#[test]
fn json_report_lines_fit_the_report_schema() {
    let schema_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/report.schema.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).expect("read")).expect("JSON");
    let schema = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    let work = copy_of("test-failing");
    let d = work.path();
    std::fs::create_dir(d.join("fixture/broken")).expect("mkdir");
    std::fs::write(d.join("fixture/broken/input.yaml"), "kind: List\n").expect("write");
    std::fs::write(d.join("fixture/broken/args"), "serve\n").expect("write");
    std::fs::remove_file(d.join("fixture/ok/expected.yaml")).expect("rm");
    let mut seen = Vec::new();
    for args in [
        &["test", "--report", "json", "-c", "sidecars.yaml", "fixture"][..],
        &[
            "test",
            "--report",
            "json",
            "-c",
            "sidecars.yaml",
            "--update",
            "fixture",
        ][..],
        // No case run: the error and a summary, on stdout too.
        &["test", "--report", "json", "-c", "missing.yaml", "fixture"][..],
    ] {
        let out = kinject(d, args);
        let lines = common::report_lines(&out.stdout);
        for line in &lines {
            let errors: Vec<String> = schema.iter_errors(line).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{line}: {errors:?}");
            seen.push(line["action"].as_str().unwrap_or_default().to_owned());
        }
        let last = lines.last().expect("a summary");
        assert_eq!(last["code"], "test.summary");
        assert_eq!(
            Some(i64::from(out.status.code().expect("exit"))),
            last["exitCode"].as_i64()
        );
    }
    let out = kinject(
        d,
        &["test", "--report", "json", "-c", "missing.yaml", "fixture"],
    );
    let lines = common::report_lines(&out.stdout);
    assert_eq!(lines[0]["code"], "kinject::test::not_run", "{lines:?}");
    assert_eq!(lines.len(), 2, "{lines:?}");
    seen.sort();
    seen.dedup();
    assert_eq!(seen, ["error", "failed", "passed", "summary"]);
}
