//! The floors of `src/` (the module map in `src/lib.rs`): every top-level module is on a
//! floor, and imports only modules on floors below its own. An import that climbs (or stays on
//! its floor, where two modules could import each other) fails, named by file and line. Tests
//! inside a module (`#[cfg(test)] mod tests`, `tests.rs` files) may use anything.
//!
//! One level down, inside every folder: a parent file (`read/mod.rs`, `select.rs`) and one of
//! its children do not import each other. The parent names its parts, re-exports them and
//! calls down (by bare name too: `files::read`, which the floors above do not follow); a child
//! imports the sibling that holds what it needs, never an item of the parent (`super::Limits`).

use std::collections::{BTreeMap, BTreeSet};
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

// One level down: a parent file (`read/mod.rs`, `select.rs`) and the files of its folder.

/// A file of `src/` and its text: `read/files.rs` is the module `read::files`, `read/mod.rs`
/// and `select.rs` are `read` and `select`.
struct File {
    /// The path under `src/`, for messages.
    name: String,
    module: Vec<String>,
    text: String,
}

impl File {
    fn new(name: &str, text: String) -> File {
        let mut module: Vec<String> = name
            .trim_end_matches(".rs")
            .split('/')
            .map(str::to_owned)
            .collect();
        if module.last().is_some_and(|m| m == "mod") || module == ["lib"] {
            module.pop();
        }
        File {
            name: name.to_owned(),
            module,
            text,
        }
    }
}

/// Every file of the crate's library, but its tests' (`tests.rs`) and the binary's `main.rs`.
fn library() -> Vec<File> {
    rust_files(&src())
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n != "main.rs"))
        .map(|p| {
            let name = p.strip_prefix(src()).expect("in src").to_string_lossy();
            File::new(&name, std::fs::read_to_string(&p).expect("read"))
        })
        .collect()
}

/// The text with comments, strings and character literals blanked (line breaks kept), so
/// that what looks like a path there is one.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < chars.len() {
        let rest = &chars[i..];
        let end = if rest.starts_with(&['/', '/']) {
            rest.iter().position(|&c| c == '\n').unwrap_or(rest.len())
        } else if rest.starts_with(&['/', '*']) {
            block_comment(rest)
        } else if let Some(end) = string_literal(rest, i > 0 && is_ident(chars[i - 1])) {
            end
        } else if rest[0] == '\'' {
            char_literal(rest)
        } else {
            0
        };
        if end == 0 {
            out.push(chars[i]);
            i += 1;
        } else {
            rest[..end].iter().for_each(|&c| blank(&mut out, c));
            i += end;
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The length of the (nested) block comment at the start of `s`.
fn block_comment(s: &[char]) -> usize {
    let (mut depth, mut i) = (0, 0);
    while i < s.len() {
        if s[i..].starts_with(&['/', '*']) {
            depth += 1;
            i += 2;
        } else if s[i..].starts_with(&['*', '/']) {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    s.len()
}

/// The length of the string literal (`"…"`, `b"…"`, `r#"…"#`) at the start of `s`, if one
/// starts there (`after_ident`: `s` continues an identifier, whose `r` or `b` is no prefix).
fn string_literal(s: &[char], after_ident: bool) -> Option<usize> {
    let mut i = 0;
    if !after_ident && s.first() == Some(&'b') {
        i += 1;
    }
    if !after_ident && s.get(i) == Some(&'r') {
        let hashes = s[i + 1..].iter().take_while(|&&c| c == '#').count();
        if s.get(i + 1 + hashes) != Some(&'"') {
            return None;
        }
        let close: Vec<char> = std::iter::once('"')
            .chain(std::iter::repeat_n('#', hashes))
            .collect();
        let body = i + 2 + hashes;
        let len = s[body..].windows(close.len()).position(|w| w == close)?;
        return Some(body + len + close.len());
    }
    if s.get(i) != Some(&'"') || (i == 0 && after_ident) {
        return None;
    }
    i += 1;
    while i < s.len() {
        match s[i] {
            '\\' => i += 2,
            '"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    Some(s.len())
}

/// The length of the character literal at the start of `s` (`'a'`, `'\n'`, `'\u{1F600}'`),
/// 0 for a lifetime (`'a`).
fn char_literal(s: &[char]) -> usize {
    if s.get(1) == Some(&'\\') {
        return s[2..].iter().position(|&c| c == '\'').map_or(0, |p| p + 3);
    }
    if s.get(2) == Some(&'\'') { 3 } else { 0 }
}

/// The code outside test modules (`#[cfg(test)] mod tests { … }`), test modules blanked.
fn without_tests(code: &str) -> String {
    let mut out: Vec<char> = code.chars().collect();
    let mut from = 0;
    while let Some(at) = find(&out, "#[cfg(test)]", from) {
        from = at + 1;
        let after: String = out[at + "#[cfg(test)]".len()..].iter().collect();
        let head = after.trim_start();
        let head = head.strip_prefix("pub(crate)").unwrap_or(head).trim_start();
        let Some(name) = head.strip_prefix("mod ") else {
            continue;
        };
        let Some(open) = name.find(['{', ';']) else {
            continue;
        };
        if !name[..open].trim().chars().all(is_ident) || name[open..].starts_with(';') {
            continue;
        }
        let start = at
            + out[at..]
                .iter()
                .position(|&c| c == '{')
                .expect("found above");
        let mut depth = 0;
        let mut end = out.len();
        for (i, &c) in out.iter().enumerate().skip(start) {
            depth += match c {
                '{' => 1,
                '}' => -1,
                _ => 0,
            };
            if depth == 0 {
                end = i + 1;
                break;
            }
        }
        for c in &mut out[at..end] {
            if *c != '\n' {
                *c = ' ';
            }
        }
    }
    out.into_iter().collect()
}

fn find(chars: &[char], what: &str, from: usize) -> Option<usize> {
    let what: Vec<char> = what.chars().collect();
    chars
        .get(from..)?
        .windows(what.len())
        .position(|w| w == what)
        .map(|p| p + from)
}

/// A token of code: an identifier, or one punctuation character (`::` is two `:`).
struct Token<'t> {
    text: &'t str,
    line: usize,
}

fn tokens(code: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(c) = rest.chars().next() {
            let len = if is_ident(c) {
                rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len())
            } else {
                c.len_utf8()
            };
            if !c.is_whitespace() {
                out.push(Token {
                    text: &rest[..len],
                    line: n + 1,
                });
            }
            rest = &rest[len..];
        }
    }
    out
}

fn is_path_sep(tokens: &[Token], at: usize) -> bool {
    tokens.get(at).is_some_and(|t| t.text == ":")
        && tokens.get(at + 1).is_some_and(|t| t.text == ":")
}

/// The paths of a use tree or path that starts at `tokens[at]`, after `prefix::`: `a::b`,
/// `{a, b::{c, self}}`, `*`. Returns where it ends.
fn use_tree(
    tokens: &[Token],
    mut at: usize,
    prefix: &[String],
    out: &mut Vec<Vec<String>>,
) -> usize {
    let mut path = prefix.to_vec();
    loop {
        match tokens.get(at).map(|t| t.text) {
            Some("{") => {
                at += 1;
                while tokens.get(at).is_some_and(|t| t.text != "}") {
                    at = use_tree(tokens, at, &path, out);
                    if tokens.get(at).is_some_and(|t| t.text == ",") {
                        at += 1;
                    }
                }
                return at + 1;
            }
            Some("self") if !path.is_empty() => {
                out.push(path);
                return at + 1;
            }
            Some(word) if word.chars().all(is_ident) => {
                path.push(word.to_owned());
                at += 1;
                if !is_path_sep(tokens, at) {
                    out.push(path);
                    return at;
                }
                at += 2;
            }
            _ => {
                out.push(path);
                return at;
            }
        }
    }
}

/// Every path a file's code names (not in comments, strings or test modules) that starts at
/// `crate::`, `super::`, `self::` or at one of the file's own child modules (`files::read`,
/// the bare name the other checks do not follow), made absolute: (line, path).
fn paths(file: &File, children: &BTreeSet<String>) -> Vec<(usize, Vec<String>)> {
    let code = without_tests(&code_only(&file.text));
    let tokens = tokens(&code);
    let mut out = Vec::new();
    for at in 0..tokens.len() {
        let word = tokens[at].text;
        // Inside a path (`a::files::x`), or a macro's `$crate`.
        let continues =
            (at >= 2 && is_path_sep(&tokens, at - 2)) || (at >= 1 && tokens[at - 1].text == "$");
        if continues || !is_path_sep(&tokens, at + 1) {
            continue;
        }
        let mut base = match word {
            "crate" => Vec::new(),
            "self" => file.module.clone(),
            "super" => file.module[..file.module.len().saturating_sub(1)].to_vec(),
            child if children.contains(child) => {
                let mut base = file.module.clone();
                base.push(child.to_owned());
                base
            }
            _ => continue,
        };
        let mut next = at + 3;
        while tokens.get(next).is_some_and(|t| t.text == "super") && is_path_sep(&tokens, next + 1)
        {
            base.pop();
            next += 3;
        }
        let mut found = Vec::new();
        use_tree(&tokens, next, &base, &mut found);
        out.extend(found.into_iter().map(|p| (tokens[at].line, p)));
    }
    out
}

/// A parent file and one of its children, with where each imports the other:
/// (parent file, child module) → (the parent's import, the child's import), each `file:line`.
type Pairs = BTreeMap<(String, String), (String, String)>;

/// The parent files that import one of their children and are imported back by it: the
/// child (or a file below it) names an item of the parent module itself, not of a sibling
/// (`super::Limits` where `super::options::Limits` would do).
fn parent_child_pairs(files: &[File]) -> Pairs {
    let modules: BTreeSet<&[String]> = files.iter().map(|f| &f.module[..]).collect();
    let owner = |path: &[String]| -> Option<Vec<String>> {
        (0..=path.len())
            .rev()
            .map(|n| &path[..n])
            .find(|p| modules.contains(p))
            .map(<[String]>::to_vec)
    };
    let parent_file: BTreeMap<&[String], &str> =
        files.iter().map(|f| (&f.module[..], &*f.name)).collect();
    let mut down = BTreeMap::new();
    let mut up = BTreeMap::new();
    for file in files {
        let children: BTreeSet<String> = modules
            .iter()
            .filter(|m| m.len() == file.module.len() + 1 && m.starts_with(&file.module))
            .map(|m| m[file.module.len()].clone())
            .collect();
        for (line, path) in paths(file, &children) {
            let Some(target) = owner(&path) else { continue };
            let at = format!("{}:{line}", file.name);
            if target.len() > file.module.len() && target.starts_with(&file.module) {
                let key = (&file.module[..], target[file.module.len()].clone());
                down.entry(key).or_insert(at);
            } else if !target.is_empty()
                && target.len() < file.module.len()
                && file.module.starts_with(&target)
            {
                let key = (parent_file[&target[..]], file.module[target.len()].clone());
                up.entry(key).or_insert(at);
            }
        }
    }
    down.into_iter()
        .filter_map(|((parent, child), down_at)| {
            let parent = parent_file[parent];
            let up_at = up.get(&(parent, child.clone()))?;
            Some(((parent.to_owned(), child), (down_at, up_at.clone())))
        })
        .collect()
}

#[test]
fn no_parent_file_and_child_import_each_other() {
    let found: Vec<String> = parent_child_pairs(&library())
        .iter()
        .map(|((parent, child), (down, up))| {
            format!(
                "src/{parent} and its child `{child}`: src/{down} imports it, src/{up} imports back"
            )
        })
        .collect();
    assert!(
        found.is_empty(),
        "a parent file and a child that import each other (the parent names the parts and \
         calls down; a child imports the sibling that holds what it needs, never the parent):\n{}",
        found.join("\n")
    );
}

/// The checker itself on a planted tree: a parent that calls a child by its bare name and a
/// child that imports the parent's item (`super::Shared`), one that reaches its parent by
/// `crate::` path; not an import in a comment, a string or a test module, nor a sibling's.
#[test]
fn the_checker_sees_a_parent_and_child_importing_each_other() {
    let files = [
        (
            "a/mod.rs",
            "mod b;\nmod c;\npub(crate) use c::Shared;\nfn run() { b::go(); }\n",
        ),
        ("a/b.rs", "use super::Shared;\npub(crate) fn go() {}\n"),
        (
            "a/c.rs",
            concat!(
                "use super::b::go; // super::Shared\n",
                "pub(crate) struct Shared;\n",
                "const S: &str = \"super::Shared\";\n",
                "const C: char = '\"';\n",
                "fn f<'a>(x: &'a str) { let _ = r#\"super::Shared\"#; }\n",
                "#[cfg(test)]\n",
                "mod tests {\n",
                "    use super::super::*;\n",
                "}\n",
            ),
        ),
        (
            "x.rs",
            "mod y;\nfn f() {\n    self::y::g();\n}\npub(crate) fn h() {}\n",
        ),
        ("x/y.rs", "pub(crate) fn g() { crate::x::h() }\n"),
        ("lib.rs", "mod a;\nmod x;\n"),
    ];
    let files: Vec<File> = files
        .iter()
        .map(|(name, text)| File::new(name, (*text).to_owned()))
        .collect();
    let pairs = parent_child_pairs(&files);
    let found: Vec<(&str, &str, &str, &str)> = pairs
        .iter()
        .map(|((p, c), (d, u))| (p.as_str(), c.as_str(), d.as_str(), u.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            ("a/mod.rs", "b", "a/mod.rs:4", "a/b.rs:1"),
            ("x.rs", "y", "x.rs:3", "x/y.rs:1"),
        ]
    );
    // Without the child's import, the pair is gone.
    let mut fixed = files;
    fixed[1].text = "use super::c::Shared;\npub(crate) fn go() {}\n".to_owned();
    assert_eq!(parent_child_pairs(&fixed).len(), 1);
}
