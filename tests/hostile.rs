//! Hostile inputs (`testdata/cases/hostile-*`): each is refused with its diagnostic (the
//! golden cases hold it whole), and rewriting it in place changes no file, while a good file
//! beside it is still rewritten. A case holding `hostile-config` is a hostile configuration:
//! there every file fails and none changes.
//!
//! Also here: hostile directories (binary files, symlink loops, unreadable files), and a
//! 100 MB document.

use std::path::Path;
use std::process::Output;

mod common;

const GOOD: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: good\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: example.com/app:1\n";

fn cases() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cases")
}

/// The code and `file:line:column` of the first diagnostic of a golden `expected.stderr`.
fn code_and_location(expected: &str) -> (String, String) {
    let code = expected.lines().next().expect("a code line").trim().to_owned();
    let message = expected.lines().nth(2).expect("a message line");
    let location = message
        .trim_start_matches([' ', '×'])
        .split(": ")
        .next()
        .expect("a location")
        .to_owned();
    (code, location)
}

fn in_place(dir: &Path, config: &Path, files: &[&str]) -> Output {
    let mut args = vec!["inject", "--in-place", "-c", config.to_str().expect("UTF-8")];
    args.extend(files);
    common::kinject_with_stdin(dir, &args, b"")
}

/// Every file of `dir`, with its bytes.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| {
            let e = e.expect("entry");
            let bytes = std::fs::read(e.path()).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn hostile_files_are_refused_and_left_as_they_are() {
    let mut seen = 0;
    for entry in std::fs::read_dir(cases()).expect("cases") {
        let case = entry.expect("entry").path();
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("hostile-") {
            continue;
        }
        seen += 1;
        let dir = tempfile::tempdir().expect("tempdir");
        let hostile = std::fs::read(case.join("input.yaml")).expect("input");
        std::fs::write(dir.path().join("hostile.yaml"), &hostile).expect("write");
        std::fs::write(dir.path().join("good.yaml"), GOOD).expect("write");
        let before = snapshot(dir.path());
        let out = in_place(
            dir.path(),
            &case.join("config.yaml"),
            &["hostile.yaml", "good.yaml"],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        let expected = std::fs::read_to_string(case.join("expected.stderr")).expect("expected");
        let (code, location) = code_and_location(&expected);
        let location = location.replace("input.yaml", "hostile.yaml");
        assert!(stderr.contains(&code), "{name}: no {code}: {stderr}");
        assert!(stderr.contains(&location), "{name}: no {location}: {stderr}");
        let after = snapshot(dir.path());
        // Nothing else was left in the directory (no temporary files), the hostile file is
        // as it was, and the good one was rewritten unless the configuration is the hostile
        // part.
        assert_eq!(after.len(), 2, "{name}: {after:?}");
        assert_eq!(after[1], before[1], "{name}: the hostile file was changed");
        if case.join("hostile-config").exists() {
            assert_eq!(after, before, "{name}: a file changed");
        } else {
            let good = String::from_utf8_lossy(&after[0].1);
            assert!(good.contains("log-shipper"), "{name}: good.yaml not injected");
        }
    }
    assert!(seen >= 14, "hostile cases missing: {seen}");
}
