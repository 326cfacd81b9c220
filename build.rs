//! Splits the embedded configuration schemas (`src/model/*.validation.json`) into their top
//! level and their definitions, one string each, so that kinject parses only the definitions
//! a configuration refers to (`config::schema`); and names the commit kinject is built from
//! for `--version` (`KINJECT_VERSION`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

fn main() {
    schemas();
    version();
}

/// `KINJECT_VERSION`: the package's version and, when built from git, the commit and its
/// date (`0.1.0 (1bfe9b5a0c3e 2026-11-25)`), as ripgrep's and cargo's `--version` say it. A
/// published crate has no `.git`: its `.cargo_vcs_info.json` (written by `cargo package`)
/// names the commit. Without either, the version alone.
fn version() {
    let version = std::env::var("CARGO_PKG_VERSION").expect("CARGO_PKG_VERSION");
    let git = |args: &[&str]| -> Option<String> {
        let out = std::process::Command::new("git").args(args).output().ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
    };
    let from_git = git(&["log", "-1", "--format=%H %cs"]);
    if from_git.is_some() {
        // Rebuilt when HEAD moves: the files naming the commit (HEAD's log grows with every
        // commit and checkout). Only files that exist: cargo reruns a build script watching a
        // missing file on every build.
        let branch = git(&["symbolic-ref", "-q", "HEAD"]);
        for path in ["HEAD", "logs/HEAD", "packed-refs"]
            .iter()
            .filter_map(|f| git(&["rev-parse", "--git-path", f]))
            .chain(branch.and_then(|r| git(&["rev-parse", "--git-path", &r])))
            .filter(|p| Path::new(p).exists())
        {
            println!("cargo::rerun-if-changed={path}");
        }
    }
    let from_package = || {
        let text = std::fs::read_to_string(".cargo_vcs_info.json").ok()?;
        let info: Value = serde_json::from_str(&text).ok()?;
        info["git"]["sha1"].as_str().map(str::to_owned)
    };
    let full = match from_git.or_else(from_package) {
        Some(commit) => {
            let mut parts = commit.split(' ');
            let hash = parts.next().unwrap_or_default();
            let short = &hash[..hash.len().min(12)];
            match parts.next() {
                Some(date) => format!("{version} ({short} {date})"),
                None => format!("{version} ({short})"),
            }
        }
        None => version,
    };
    println!("cargo::rustc-env=KINJECT_VERSION={full}");
}

fn schemas() {
    let dir = Path::new("src/model");
    let mut out = String::new();
    let mut definitions: BTreeMap<String, String> = BTreeMap::new();
    for (name, file) in [
        ("CONFIG_TOP", "config.validation.json"),
        ("BODY_TOP", "body.validation.json"),
    ] {
        let path = dir.join(file);
        println!("cargo::rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path).expect("read an embedded schema");
        let mut top: serde_json::Map<String, Value> =
            serde_json::from_str(&text).expect("an embedded schema is a JSON object");
        if let Some(Value::Object(defs)) = top.remove("$defs") {
            for (def, schema) in defs {
                let schema = schema.to_string();
                // One set of definitions serves both schemas: a name means one thing.
                if let Some(other) = definitions.insert(def.clone(), schema.clone()) {
                    assert_eq!(other, schema, "`{def}` differs between the schemas");
                }
            }
        }
        let top = Value::Object(top).to_string();
        writeln!(out, "pub(super) const {name}: &str = {top:?};").expect("write");
    }
    writeln!(
        out,
        "/// By name, sorted.\npub(super) const DEFINITIONS: [(&str, &str); {}] = [",
        definitions.len()
    )
    .expect("write");
    for (def, schema) in &definitions {
        writeln!(out, "    ({def:?}, {schema:?}),").expect("write");
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("schemas.rs");
    std::fs::write(dest, out).expect("write schemas.rs");
}
