//! kinject's stable interface (docs/stability.md): every subcommand and flag, every value a flag
//! takes, every diagnostic and reason code, the annotations, the configuration format's
//! fields and values, and the exit codes. `docs/stable.txt` lists them; this test makes the
//! list from the code and compares. A name that disappears or changes fails as a break of the
//! promise; a new one fails until it is added to the list
//! (`KINJECT_BLESS=1 cargo test --test it stable::`), so that adding to the interface is a decision
//! a reviewer sees.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clap::CommandFactory;
use serde_json::Value;

use crate::common;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

/// `--flag` and `-f` of every subcommand, and the values of flags that take a fixed set.
fn flags(out: &mut BTreeSet<String>) {
    let mut command = kinject::Cli::command();
    // The subcommands' arguments are built when asked for (`Command`'s `defer`); building
    // adds clap's own `help` subcommand and `--help`/`--version` flags, which this list has
    // never held.
    command.build();
    let mut commands = vec![(String::from("kinject"), &command)];
    commands.extend(
        command
            .get_subcommands()
            .filter(|sub| sub.get_name() != "help")
            .map(|sub| (format!("kinject {}", sub.get_name()), sub)),
    );
    for (name, command) in commands {
        out.insert(format!("command {name}"));
        for arg in command
            .get_arguments()
            .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
        {
            let mut names: Vec<String> = arg
                .get_long_and_visible_aliases()
                .unwrap_or_default()
                .iter()
                .map(|l| format!("--{l}"))
                .collect();
            names.extend(
                arg.get_short_and_visible_aliases()
                    .unwrap_or_default()
                    .iter()
                    .map(|s| format!("-{s}")),
            );
            if names.is_empty() {
                names.push(format!("<{}>", arg.get_id()));
            }
            for flag in &names {
                out.insert(format!("flag {name} {flag}"));
            }
            if arg.get_action().takes_values() {
                for value in arg.get_possible_values() {
                    out.insert(format!("value {name} {} {}", names[0], value.get_name()));
                }
            }
        }
    }
}

/// Every diagnostic code (`diagnostic::codes`, the one list of them) and the annotations
/// kinject reads (`"kinject.dev/…"` literals).
fn literals(out: &mut BTreeSet<String>) {
    out.extend(kinject::codes::ALL.iter().map(|c| format!("code {c}")));
    for (_, _, name) in quoted(&root().join("src"), "\"kinject.dev/", '"') {
        out.insert(format!("name {name}"));
    }
}

/// The literals of `src/` files that start with `prefix` and end with `close` (names: letters,
/// digits, `_:./-`), outside test modules: (file, line, the name from `kinject` on).
fn quoted(src: &Path, prefix: &str, close: char) -> Vec<(PathBuf, usize, String)> {
    let mut found = Vec::new();
    for path in common::rust_files(src) {
        let text = std::fs::read_to_string(&path).expect("read");
        let text = text
            .find("#[cfg(test)]\nmod tests")
            .map_or(text.as_str(), |end| &text[..end]);
        for (at, _) in text.match_indices(prefix) {
            let start = at + prefix.find("kinject").unwrap_or_default();
            let rest = &text[start..];
            let end = rest
                .find(|c: char| {
                    !(c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '.' | '/' | '-'))
                })
                .unwrap_or(rest.len());
            if rest[end..].starts_with(close) {
                let line = text[..at].matches('\n').count() + 1;
                found.push((path.clone(), line, rest[..end].to_owned()));
            }
        }
    }
    found
}

/// Codes are written in one place: `diagnostic::codes` (a literal elsewhere would be a code
/// the list, and so the documentation, does not know).
#[test]
fn codes_are_written_only_in_their_list() {
    let list = root().join("src/diagnostic/codes.rs");
    let elsewhere: Vec<String> = [("\"kinject::", '"'), ("code(kinject::", ')')]
        .into_iter()
        .flat_map(|(prefix, close)| quoted(&root().join("src"), prefix, close))
        .filter(|(path, _, _)| *path != list)
        .map(|(path, line, code)| format!("{}:{line}: {code}", path.display()))
        .collect();
    assert!(
        elsewhere.is_empty(),
        "codes written outside src/diagnostic/codes.rs:\n{}",
        elsewhere.join("\n")
    );
    let listed = kinject::codes::ALL;
    let unique: BTreeSet<&&str> = listed.iter().collect();
    assert_eq!(unique.len(), listed.len(), "a code listed twice");
}

/// The configuration format: every definition of `kinject schema`, its fields and the values
/// of its enumerations.
fn config_format(out: &mut BTreeSet<String>) {
    let schema = kinject::schema();
    let mut defs: Vec<(String, &Value)> = vec![("InjectionConfig".into(), &schema)];
    // kinject's own definitions; a sidecar's container and volumes are Kubernetes' types
    // (`io.k8s.…`), Kubernetes' to keep.
    if let Some(d) = schema["$defs"].as_object() {
        defs.extend(
            d.iter()
                .filter(|(k, _)| !k.starts_with("io."))
                .map(|(k, v)| (k.clone(), v)),
        );
    }
    for (name, def) in defs {
        if let Some(props) = def["properties"].as_object() {
            for (field, prop) in props {
                out.insert(format!("config {name}.{field}"));
                for value in prop["enum"].as_array().into_iter().flatten() {
                    out.insert(format!("config {name}.{field} = {value}"));
                }
            }
        }
        for value in enum_values(def) {
            out.insert(format!("config {name} = {value}"));
        }
    }
}

fn enum_values(def: &Value) -> Vec<String> {
    let direct = def["enum"].as_array().into_iter().flatten().cloned();
    let one_of = def["oneOf"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.get("const").or(v.get("enum")))
        .flat_map(|v| v.as_array().cloned().unwrap_or_else(|| vec![v.clone()]));
    direct.chain(one_of).map(|v| v.to_string()).collect()
}

fn interface() -> String {
    let mut out = BTreeSet::new();
    flags(&mut out);
    literals(&mut out);
    config_format(&mut out);
    for reason in kinject::Reason::ALL {
        out.insert(format!("reason {}", reason.code()));
    }
    for miss in kinject::Miss::ALL {
        out.insert(format!("miss {}", miss.code()));
    }
    use kinject::ExitStatus;
    for (status, meaning) in [
        (ExitStatus::Success, "success"),
        (ExitStatus::Changed, "changed"),
        (ExitStatus::Error, "error"),
    ] {
        out.insert(format!("exit {} {meaning}", status.code()));
    }
    let mut text = String::from(
        "# kinject's stable interface: generated by tests/stable.rs, see docs/stability.md.\n",
    );
    for line in out {
        text.push_str(&line);
        text.push('\n');
    }
    text
}

#[test]
fn the_stable_interface_is_what_docs_stable_txt_lists() {
    let path = root().join("docs/stable.txt");
    let made = interface();
    if std::env::var_os("KINJECT_BLESS").is_some() {
        std::fs::write(&path, &made).expect("write");
        return;
    }
    let listed = std::fs::read_to_string(&path).unwrap_or_default();
    let set = |t: &str| -> BTreeSet<String> {
        t.lines()
            .filter(|l| !l.starts_with('#'))
            .map(str::to_owned)
            .collect()
    };
    let (listed, made) = (set(&listed), set(&made));
    let gone: Vec<&String> = listed.difference(&made).collect();
    let new: Vec<&String> = made.difference(&listed).collect();
    assert!(
        gone.is_empty() && new.is_empty(),
        "gone from the stable interface (a break: docs/stability.md): {gone:#?}\n\
         new, not yet in docs/stable.txt (add with KINJECT_BLESS=1 cargo test --test it stable::): {new:#?}"
    );
}

/// The exit codes the list names, each from a run that ends so.
#[test]
fn exit_codes_are_what_the_list_says() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = root().join("testdata/cases/kms-plugin/config.yaml");
    let input = dir.path().join("input.yaml");
    std::fs::copy(root().join("testdata/cases/kms-plugin/input.yaml"), &input).expect("copy");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kinject"))
            .args(args)
            .output()
            .expect("run");
        out.status.code()
    };
    let config = config.to_str().expect("utf-8");
    let input = input.to_str().expect("utf-8");
    assert_eq!(run(&["inject", "-q", "-c", config, input]), Some(0));
    assert_eq!(
        run(&["inject", "-q", "--check", "-c", config, input]),
        Some(1)
    );
    assert_eq!(
        run(&["inject", "-q", "-c", config, "missing.yaml"]),
        Some(2)
    );
    assert!(
        common::objects(&std::fs::read_to_string(input).expect("input"))
            .iter()
            .all(|o| o["metadata"]["annotations"]["kinject.dev/status"].is_null()),
        "--check wrote"
    );
}

/// `kinject --version`: the package's version and, in a git checkout, the commit built and its
/// date, as `git log` gives them.
#[test]
fn the_version_names_the_commit() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kinject"))
        .arg("--version")
        .output()
        .expect("run");
    let version = String::from_utf8(out.stdout).expect("utf-8");
    let expected_start = format!("kinject {} ", env!("CARGO_PKG_VERSION"));
    let git = std::process::Command::new("git")
        .args(["log", "-1", "--format=%H %cs"])
        .current_dir(root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    match git {
        Some(commit) => {
            let (hash, date) = commit.split_once(' ').expect("hash and date");
            assert_eq!(
                version.trim_end(),
                format!("{}({} {date})", expected_start, &hash[..12])
            );
        }
        None => assert!(version.starts_with(expected_start.trim_end()), "{version}"),
    }
}

/// Every diagnostic code is in docs/output.md's table of errors, written in full or, after the
/// first code of a row, as `::suffix` of that code's prefix.
#[test]
fn every_code_is_documented() {
    let doc = std::fs::read_to_string(root().join("docs/output.md")).expect("output.md");
    let mut documented = BTreeSet::new();
    for line in doc.lines().filter(|l| l.starts_with("| `kinject::")) {
        let cell = line.split('|').nth(1).unwrap_or_default();
        let mut prefix = String::new();
        for code in cell.split('`').skip(1).step_by(2) {
            if let Some(suffix) = code.strip_prefix("::") {
                documented.insert(format!("{prefix}::{suffix}"));
            } else {
                prefix = code.rsplit_once("::").map_or("", |(p, _)| p).to_owned();
                documented.insert(code.to_owned());
            }
        }
    }
    let missing: Vec<&str> = kinject::codes::ALL
        .iter()
        .copied()
        .filter(|c| !documented.contains(*c))
        .collect();
    assert!(
        missing.is_empty(),
        "codes docs/output.md does not list: {missing:?}"
    );
}
