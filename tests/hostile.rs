//! Hostile inputs (`testdata/cases/hostile-*`): each is refused with its diagnostic (the
//! golden cases hold it), and rewriting it in place changes no file, while a good file
//! beside it is still rewritten.

use std::path::Path;

mod common;

#[test]
fn hostile_files_are_refused_and_left_as_they_are() {
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cases");
    let good = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: good\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: example.com/app:1\n";
    let mut seen = 0;
    for entry in std::fs::read_dir(&cases).expect("cases") {
        let case = entry.expect("entry").path();
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("hostile-") {
            continue;
        }
        seen += 1;
        let dir = tempfile::tempdir().expect("tempdir");
        let hostile = std::fs::read(case.join("input.yaml")).expect("input");
        std::fs::write(dir.path().join("hostile.yaml"), &hostile).expect("write");
        std::fs::write(dir.path().join("good.yaml"), good).expect("write");
        let config = case.join("config.yaml");
        let out = common::kinject_with_stdin(
            dir.path(),
            &[
                "inject",
                "--in-place",
                "-c",
                config.to_str().expect("UTF-8"),
                "hostile.yaml",
                "good.yaml",
            ],
            b"",
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        let expected = std::fs::read_to_string(case.join("expected.stderr")).expect("expected");
        let diagnostic = expected.lines().nth(2).expect("a message line").trim();
        let diagnostic = diagnostic.replace("input.yaml", "hostile.yaml");
        assert!(stderr.contains(&diagnostic), "{name}: {stderr}");
        assert_eq!(
            std::fs::read(dir.path().join("hostile.yaml")).expect("read"),
            hostile,
            "{name}: the hostile file was changed"
        );
        let rewritten = std::fs::read_to_string(dir.path().join("good.yaml")).expect("read");
        assert!(
            rewritten.contains("log-shipper"),
            "{name}: good.yaml not injected"
        );
        // Nothing else was left in the directory (no temporary files).
        assert_eq!(
            std::fs::read_dir(dir.path()).expect("dir").count(),
            2,
            "{name}"
        );
    }
    assert!(seen >= 3, "hostile cases missing");
}
