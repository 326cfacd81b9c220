//! Every shell example of README.md and docs/*.md, run as written: a documented command that
//! breaks fails the tests.
//!
//! Each page runs in a fresh copy of `testdata/examples/` (the files the examples name) with a
//! fresh `$HOME`, kinject on `PATH` as `kinject`, and its `sh` blocks run in order, one command
//! at a time (`\`-continued lines joined; blank and comment lines dropped) in one `bash -o
//! pipefail` per block, each expected to exit 0. An HTML comment right above a block says more:
//!
//! - `<!-- example: file NAME [NAME…] -->` above a YAML or JSON block: the block is written to
//!   those files before any command runs (the README's are written for every page, so its
//!   configuration is the `sidecars.yaml` every page uses).
//! - `<!-- example: exits N N… -->`: each command's exit code, in order (`--in-place` exits 1
//!   when it changed a file).
//! - `<!-- example: prints TEXT -->`: the block's output (stdout and stderr) holds TEXT — what
//!   the example is there to show happened (`injected: log-shipper`), not just an exit 0.
//! - `<!-- example: in the repository -->`: run in the checkout (examples that read
//!   `testdata/`), never writing there.
//! - `<!-- example: not run: REASON -->`, `<!-- example: skip N: REASON -->`: the block, or its
//!   Nth command, is not run here, and says why (a reason is required).
//!
//! What this machine lacks is stood in for, and only that: with no cluster, `kubectl apply -f
//! FILE` validates what it would apply with `kubernetes-validate --strict` instead (the
//! objects must be valid Kubernetes); `cargo run --release -- ARGS` runs the kinject under test
//! with ARGS (the test does not build kinject again). Every other command is the real one:
//! kubectl (its kustomize and plugin lookup), git, ln, mkdir.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

/// One fenced block of a page, with the markers above it.
#[derive(Debug)]
struct Block {
    /// The line of its opening fence.
    line: usize,
    lang: String,
    text: String,
    markers: Vec<String>,
}

/// The fenced blocks of a Markdown page.
fn blocks(page: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut markers = Vec::new();
    let mut lines = page.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        if let Some(marker) = line
            .trim()
            .strip_prefix("<!-- example:")
            .and_then(|m| m.strip_suffix("-->"))
        {
            markers.push(marker.trim().to_owned());
            continue;
        }
        let Some(lang) = line.strip_prefix("```") else {
            if !line.trim().is_empty() {
                markers.clear();
            }
            continue;
        };
        let mut text = String::new();
        for (_, l) in lines.by_ref() {
            if l.starts_with("```") {
                break;
            }
            text.push_str(l);
            text.push('\n');
        }
        out.push(Block {
            line: i + 1,
            lang: lang.trim().to_owned(),
            text,
            markers: std::mem::take(&mut markers),
        });
    }
    out
}

/// The commands of a shell block.
fn commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        if current.is_empty() && (line.trim().is_empty() || line.trim_start().starts_with('#')) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(part) => {
                current.push_str(part);
                current.push(' ');
            }
            None => {
                current.push_str(line);
                out.push(std::mem::take(&mut current));
            }
        }
    }
    out
}

fn is_shell(block: &Block) -> bool {
    matches!(block.lang.as_str(), "sh" | "bash" | "shell" | "console")
}

/// What the markers of a shell block say.
#[derive(Debug, Default)]
struct Plan {
    not_run: Option<String>,
    skip: Vec<(usize, String)>,
    exits: Vec<i32>,
    prints: Vec<String>,
    in_repository: bool,
}

fn plan(block: &Block) -> Result<Plan, String> {
    let mut plan = Plan::default();
    for m in &block.markers {
        if let Some(reason) = m.strip_prefix("not run:") {
            plan.not_run = Some(reason.trim().to_owned());
        } else if let Some(rest) = m.strip_prefix("skip ") {
            let (n, reason) = rest.split_once(':').ok_or("`skip N: REASON`")?;
            let n: usize = n.trim().parse().map_err(|_| format!("`skip {n}`"))?;
            plan.skip.push((n, reason.trim().to_owned()));
        } else if let Some(codes) = m.strip_prefix("exits ") {
            plan.exits = codes
                .split_whitespace()
                .map(|c| c.parse().map_err(|_| format!("exit code `{c}`")))
                .collect::<Result<_, _>>()?;
        } else if let Some(text) = m.strip_prefix("prints ") {
            plan.prints.push(text.trim().to_owned());
        } else if m == "in the repository" {
            plan.in_repository = true;
        } else if !m.starts_with("file ") {
            return Err(format!("unknown marker `{m}`"));
        }
    }
    let reasons = plan.not_run.iter().chain(plan.skip.iter().map(|(_, r)| r));
    if reasons.into_iter().any(String::is_empty) {
        return Err("a block or command not run must say why".into());
    }
    Ok(plan)
}

/// The files a page's blocks are written to.
fn files(blocks: &[Block]) -> Vec<(String, &str)> {
    let mut out = Vec::new();
    for b in blocks {
        for m in &b.markers {
            if let Some(names) = m.strip_prefix("file ") {
                out.extend(names.split_whitespace().map(|n| (n.to_owned(), &*b.text)));
            }
        }
    }
    out
}

/// Copies `from` into `to`, following links (the fixture links to other test files).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read fixture") {
        let entry = entry.expect("entry");
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if std::fs::metadata(&src).expect("stat").is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).expect("copy");
        }
    }
}

/// A directory for `PATH`: kinject, and the stand-ins for what this machine lacks.
fn bin_dir(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kinject"), bin.join("kinject")).expect("link");
    let kubectl = format!(
        r#"#!/usr/bin/env bash
# No cluster here: `kubectl apply -f FILE` validates what it would apply instead.
if [ "$1" = apply ]; then
  shift; file=
  while [ $# -gt 0 ]; do case "$1" in -f|--filename) file=$2; shift 2;; *) shift;; esac; done
  [ "$file" = - ] && {{ file=$(mktemp); cat > "$file"; }}
  [ -s "$file" ] || {{ echo "kubectl apply (stand-in): nothing to apply" >&2; exit 1; }}
  exec {validate} --strict --quiet "$file"
fi
exec {kubectl} "$@"
"#,
        validate = common::kubernetes_validate().display(),
        kubectl = common::kubectl().display(),
    );
    let cargo = format!(
        r#"#!/usr/bin/env bash
# The kinject under test stands in for `cargo run --release --`; nothing else is run.
if [ "$1 $2 $3" = "run --release --" ]; then shift 3; exec {kinject} "$@"; fi
echo "the examples test runs no other cargo command: mark the block (tests/examples.rs)" >&2
exit 99
"#,
        kinject = env!("CARGO_BIN_EXE_kinject"),
    );
    for (name, text) in [("kubectl", kubectl), ("cargo", cargo)] {
        let path = bin.join(name);
        std::fs::write(&path, text).expect("write stand-in");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    bin
}

/// Runs every shell example of `page` (its path under the repository); returns what failed.
fn run_page(page: &str, readme_files: &[(String, String)]) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(page)).expect("read page");
    let blocks = blocks(&text);
    let tmp = tempfile::tempdir().expect("tempdir");
    let (work, home) = (tmp.path().join("work"), tmp.path().join("home"));
    copy_tree(&root().join("testdata/examples"), &work);
    std::fs::create_dir_all(&home).expect("home");
    let own: Vec<(String, String)> = files(&blocks)
        .into_iter()
        .map(|(n, t)| (n, t.to_owned()))
        .collect();
    for (name, text) in readme_files.iter().chain(&own) {
        let path = work.join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write example file");
    }
    let env = Env {
        home: home.clone(),
        path: format!(
            "{}:{}:{}",
            bin_dir(tmp.path()).display(),
            home.join(".local/bin").display(),
            std::env::var("PATH").unwrap_or_default()
        ),
        codes: tmp.path().join("codes"),
    };
    let mut failures = Vec::new();
    for block in blocks.iter().filter(|b| is_shell(b)) {
        let at = format!("{page}:{}", block.line);
        let plan = match plan(block) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{at}: {e}"));
                continue;
            }
        };
        if plan.not_run.is_some() {
            continue;
        }
        let commands = commands(&block.text);
        if !plan.exits.is_empty() && plan.exits.len() != commands.len() {
            failures.push(format!(
                "{at}: `exits` gives {} codes for {} commands",
                plan.exits.len(),
                commands.len()
            ));
            continue;
        }
        failures.extend(run_block(&at, &commands, &plan, &work, &env));
    }
    failures
}

/// Where a page's commands run.
struct Env {
    home: PathBuf,
    path: String,
    /// Where each command's exit code is written.
    codes: PathBuf,
}

/// Runs a block's commands in one shell, in order (so that a variable one sets is there for
/// the next), each one's exit code recorded; returns what failed.
fn run_block(at: &str, commands: &[String], plan: &Plan, work: &Path, env: &Env) -> Vec<String> {
    let mut script = String::new();
    let mut run = Vec::new();
    for (i, command) in commands.iter().enumerate() {
        if plan.skip.iter().any(|(n, _)| *n == i + 1) {
            continue;
        }
        script.push_str(&format!("{command}\necho $? >> \"$EXAMPLE_CODES\"\n"));
        run.push((command, plan.exits.get(i).copied().unwrap_or(0)));
    }
    let _ = std::fs::remove_file(&env.codes);
    let dir = if plan.in_repository {
        root()
    } else {
        work.to_owned()
    };
    let out = Command::new("timeout")
        .args(["300", "bash", "-o", "pipefail", "-c", &script])
        .current_dir(dir)
        .env("HOME", &env.home)
        .env("PATH", &env.path)
        .env("EXAMPLE_CODES", &env.codes)
        .env_remove("XDG_CONFIG_HOME")
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run bash");
    let codes = std::fs::read_to_string(&env.codes).unwrap_or_default();
    let codes: Vec<i32> = codes.lines().filter_map(|c| c.parse().ok()).collect();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let wrong: Vec<String> = run
        .iter()
        .enumerate()
        .filter(|(i, (_, want))| codes.get(*i) != Some(want))
        .map(|(i, (command, want))| format!("`{command}` exited {:?}, not {want}", codes.get(i)))
        .chain(
            plan.prints
                .iter()
                .filter(|p| !said.contains(p.as_str()))
                .map(|p| format!("the output does not hold `{p}`")),
        )
        .collect();
    if wrong.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "{at}: {}\nstdout:\n{}\nstderr:\n{}",
        wrong.join("; "),
        tail(&out.stdout),
        tail(&out.stderr)
    )]
}

/// The last lines of an output, enough to see why.
fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// README.md and every page of docs/.
fn pages() -> Vec<String> {
    let mut pages: Vec<String> = common::entries(&root().join("docs"))
        .into_iter()
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    pages.sort();
    pages.insert(0, "README.md".into());
    pages
}

#[test]
fn every_documented_command_runs() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    let readme_files: Vec<(String, String)> = files(&blocks(&readme))
        .into_iter()
        .map(|(n, t)| (n, t.to_owned()))
        .collect();
    assert!(
        readme_files.iter().any(|(n, _)| n == "sidecars.yaml"),
        "the README's configuration is marked `<!-- example: file sidecars.yaml -->`"
    );
    let failures: Vec<String> = pages()
        .iter()
        .flat_map(|p| run_page(p, &readme_files))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn blocks_commands_and_markers_are_read_as_documented() {
    let page = "text\n<!-- example: prints done -->\n<!-- example: exits 1 0 -->\n```sh\n# a comment\nkinject a \\\n  --b\n\nkinject c\n```\n\n```yaml\nx: 1\n```\n";
    let blocks = blocks(page);
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks[0].line, 4);
    assert_eq!(blocks[0].markers, ["prints done", "exits 1 0"]);
    assert!(blocks[1].markers.is_empty(), "markers are the block's own");
    assert_eq!(commands(&blocks[0].text), ["kinject a    --b", "kinject c"]);
    let read = plan(&blocks[0]).expect("plan");
    assert_eq!(
        (read.exits, read.prints),
        (vec![1, 0], vec!["done".to_owned()])
    );
    let unexplained = Block {
        line: 1,
        lang: "sh".into(),
        text: String::new(),
        markers: vec!["not run:".into()],
    };
    assert!(plan(&unexplained).is_err(), "a block not run says why");
}
