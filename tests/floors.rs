//! The floors of `src/` (the module map in `src/lib.rs`): every top-level module is on a
//! floor, and imports only modules on floors below its own. An import that climbs (or stays on
//! its floor, where two modules could import each other) fails, named by file and line. Tests
//! inside a module (`#[cfg(test)] mod tests`, `tests.rs` files) may use anything.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The floor of each module, from `lib.rs`'s map (`//! 3. \`read\`: …`).
fn floors(lib: &str) -> BTreeMap<String, usize> {
    lib.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("//! ")?;
            let (floor, rest) = rest.split_once(". `")?;
            let floor: usize = floor.parse().ok()?;
            let (module, _) = rest.split_once('`')?;
            Some((module.to_owned(), floor))
        })
        .collect()
}

/// The top-level modules of `src/`: its files and folders (not `lib.rs`, `main.rs`).
fn modules() -> BTreeMap<String, Vec<PathBuf>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(src())
        .expect("src")
        .filter_map(Result::ok)
    {
        let path = entry.path();
        let name = path
            .file_stem()
            .and_then(|n| n.to_str())
            .expect("utf-8 name")
            .to_owned();
        if path.is_dir() {
            out.insert(name, rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") && !["lib", "main"].contains(&&*name)
        {
            out.insert(name, vec![path]);
        }
    }
    out
}

/// The module's files, not its tests' (`tests.rs`).
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = common::rust_files(dir);
    files.retain(|p| p.file_name().is_some_and(|n| n != "tests.rs"));
    files
}

/// Every `crate::<module>` a file's code names (not in comments, not in its tests), with
/// its line number.
fn imports(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((n, line)) = lines.next() {
        if line.trim() == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|(_, next)| next.trim_start().starts_with("mod tests"))
        {
            break;
        }
        let code = line.split("//").next().unwrap_or_default();
        for (at, _) in code.match_indices("crate::") {
            if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let name: String = code[at + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push((n + 1, name));
            }
        }
        // `use crate::{a, b::c}`
        if let Some(group) = code.split("crate::{").nth(1) {
            for part in group.split(',') {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.push((n + 1, name));
                }
            }
        }
    }
    out
}

/// The imports that break the floors: (module, file:line, imported module).
fn climbs(floors: &BTreeMap<String, usize>) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (module, files) in modules() {
        let own = floors[&module];
        for file in files {
            let text = std::fs::read_to_string(&file).expect("read");
            for (line, imported) in imports(&text) {
                let Some(&floor) = floors.get(&imported) else {
                    continue;
                };
                if imported != module && floor >= own {
                    let at = format!(
                        "{}:{line}",
                        file.strip_prefix(src().parent().expect("root"))
                            .expect("in src")
                            .display()
                    );
                    out.push((module.clone(), at, imported));
                }
            }
        }
    }
    out
}

#[test]
fn every_module_imports_only_floors_below_its_own() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).expect("lib.rs");
    let floors = floors(&lib);
    let unlisted: Vec<String> = modules()
        .into_keys()
        .filter(|m| !floors.contains_key(m))
        .collect();
    assert!(
        unlisted.is_empty(),
        "modules not on lib.rs's floor map: {unlisted:?}"
    );
    let wrong: Vec<String> = climbs(&floors)
        .iter()
        .map(|(m, at, i)| {
            format!(
                "{at}: `{m}` (floor {}) imports `{i}` (floor {})",
                floors[m], floors[i]
            )
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "imports that climb:\n{}",
        wrong.join("\n")
    );
}

/// The checker itself: a climbing import, a listed module and a test module.
#[test]
fn the_checker_sees_a_climb_and_not_a_test() {
    let text = "use crate::yaml::Parsed;\nuse crate::{cli, patch::Op};\nfn f() { crate::render::x(); } // crate::inject\n#[cfg(test)]\nmod tests {\n    use crate::cli;\n}\n";
    let names: Vec<(usize, String)> = imports(text);
    assert_eq!(
        names,
        vec![
            (1, "yaml".to_owned()),
            (2, "cli".to_owned()),
            (2, "patch".to_owned()),
            (3, "render".to_owned()),
        ]
    );
    let lib = "//! 1. `patch`: a\n//! 2. `yaml`: b\n//! 9. `cli`: c\n";
    let floors = floors(lib);
    assert_eq!(floors["yaml"], 2);
    assert_eq!(floors["cli"], 9);
}
