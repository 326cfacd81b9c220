//! Standard input longer than a window is processed a window at a time (memory bounded by
//! the largest document); what comes out must be exactly what the same stream gives as a
//! file: output, report, diagnostics with their line numbers, exit code.

use std::process::Output;

use crate::common;

/// The whole corpus, as one stream, repeated until it spans several windows (1 MiB each).
fn long_stream() -> String {
    let mut once = String::new();
    for f in common::corpus_files() {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        // Files that are not UTF-8 YAML streams of their own, or hold invalid YAML (the
        // corpus has some), are left out: the stream must inject without errors.
        let readable =
            kinject::from_bytes(kinject::Source::stdin(), text.as_bytes()).is_ok_and(|i| {
                i.documents
                    .iter()
                    .all(|d| matches!(d.parsed.as_deref(), Some(Ok(_))))
            });
        if text.is_empty() || text.starts_with('\u{FEFF}') || text.contains("\n%") || !readable {
            continue;
        }
        if !once.is_empty() {
            once.push_str("---\n");
        }
        once.push_str(&text);
        if !once.ends_with('\n') {
            once.push('\n');
        }
    }
    let mut stream = once.clone();
    while stream.len() < 5 << 20 {
        stream.push_str("---\n");
        stream.push_str(&once);
    }
    stream
}

/// The same run over `text` as a file and on standard input: equal but for the name.
fn same_as_file(text: &str, args: &[&str]) -> Output {
    let dir = tempfile::tempdir().expect("tempdir");
    // As long as `<stdin>`, so that diagnostics wrap at the same places.
    let name = "s0.yaml";
    std::fs::write(dir.path().join(name), text).expect("write");
    let as_file = common::kinject_with_stdin(dir.path(), &[args, &[name]].concat(), b"");
    let piped = common::kinject_with_stdin(dir.path(), args, text.as_bytes());
    let named = |bytes: &[u8]| String::from_utf8_lossy(bytes).replace(name, "<stdin>");
    assert_eq!(piped.status.code(), as_file.status.code(), "{args:?}");
    assert!(
        named(&piped.stdout) == named(&as_file.stdout),
        "{args:?}: standard input gave other output than the file"
    );
    let (a, b) = (named(&piped.stderr), named(&as_file.stderr));
    if let Some((x, y)) = a.lines().zip(b.lines()).find(|(x, y)| x != y) {
        panic!("{args:?}: standard input's stderr has\n{x}\nwhere the file's has\n{y}");
    }
    assert_eq!(a.lines().count(), b.lines().count(), "{args:?}: stderr");
    piped
}

const CONFIG: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/testdata/cases/comments-and-styles/config.yaml"
);

#[test]
fn a_long_stream_gives_what_the_file_gives() {
    let stream = long_stream();
    for format in ["yaml", "json", "json-list", "patch"] {
        let out = same_as_file(&stream, &["inject", "-c", CONFIG, "-o", format]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stdout.len() > stream.len() / 10,
            "{format}: {} bytes out of {}",
            out.stdout.len(),
            stream.len()
        );
    }
    let out = same_as_file(&stream, &["inject", "-c", CONFIG, "--report", "json"]);
    // A line per object, then the summary.
    let report = common::report_lines(&out.stderr);
    assert!(report.len() > 1000);
    assert_eq!(report.last().expect("a summary")["action"], "summary");
    // And back: uninject of the injected stream.
    let injected = String::from_utf8(out.stdout).expect("UTF-8");
    let out = same_as_file(&injected, &["uninject", "-q", "-c", CONFIG]);
    assert!(out.status.success());
}

/// An error in the last window: located in the stream, nothing written, every window's
/// report still given.
#[test]
fn errors_are_located_in_the_stream_and_nothing_is_written() {
    let mut stream = long_stream();
    stream.push_str("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: broken\n");
    let line = stream.lines().count();
    let out = same_as_file(&stream, &["inject", "-c", CONFIG]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("<stdin>:{}:", line + 1))
            || stderr.contains(&format!("<stdin>:{line}:")),
        "{}",
        &stderr[stderr.len().saturating_sub(2000)..]
    );
    assert!(stderr.contains("nothing was written"));
}
