//! A fast reader for the YAML that manifests are written in: block mappings and sequences,
//! one-line plain and quoted scalars, literal block scalars, one-line flow collections and
//! comments. It builds exactly what `parse::parse_document` builds (the same value, span tree
//! and duplicate keys; `tests` and the corpus test compare them) and gives up (`None`) on anything
//! else — anchors, tags, tabs, CRLF, multi-line plain scalars, folded scalars, complex keys,
//! merge keys, directives, errors — which the general parser then reads.
//!
//! `read` holds the ways in; `reader` the one `Reader` they make, in the mode each asks for
//! (building values, spans, a shallow read's few keys, or comparing against a value); the
//! other files its reading, by what each reads.

mod block;
mod compare;
mod flow;
mod keys;
#[cfg(any(test, feature = "oracles"))]
mod oracle;
mod read;
mod reader;
mod scalars;
mod text;

#[cfg(any(test, feature = "oracles"))]
pub(crate) use oracle::{agrees, shallow_agrees};
pub(crate) use read::{matches, parse, parse_shallow, parse_value, reads, top_level_kind};

#[cfg(test)]
mod tests {
    use super::oracle::variants;
    use super::*;

    #[test]
    fn reads_what_the_general_parser_reads() {
        let read = [
            "a: 1\nb: two\n",
            "a:\nb: 1\n",
            "a: \n  b: x  # c\n  c:\n",
            "---\nk: v\n...\n",
            "--- # c\nk: v\n",
            "l:\n- a\n-\n- b: 1\n  c: 2\n- - x\n  - y\n",
            "x: |\n  hi\n\n  there\n\ny: 2\n",
            "x: |\n  hi\n# c\ny: 2\n",
            "x: |-\n  hi\n\n",
            "x: |+\n  hi\n\n\nz: 1\n",
            "x: |2\n    indented\n  base\n",
            "a:\n  x: |\n    hi\n\n  y: 1\n",
            "x: |\n  hi",
            "x: |\ny: 1\n",
            "f: {a: 1, b: [x, 'y'], \"c\": \"d\"}\ng: []\nh: {}\n",
            "# only\n",
            "",
            "s: 'it''s'\nd: \"a\\tb\\u00e9\\\\\"\n",
            "- a\n",
            "k: v # c\n# trailing\n",
            "a:\n  - x\n  # c\n  - y\nb: 1",
            "on: yes\nmode: 0644\nq: \"on\"\nn: ~\ne: ''\n",
            "k: v\nk: w\n",
            "url: http://x:8080/a#frag\nt: a #b\n",
            "spec:\n  containers:\n  - name: app\n    image: x:1\n    args: [--a, \"b c\"]\n    env:\
             \n    - {name: A, value: \"1\"}\n",
            "k: v\n...\n# after\n",
            "hello\n",
        ];
        for text in read {
            assert!(agrees(text), "left to the general parser: {text:?}");
        }
    }

    #[test]
    fn compares_without_building() {
        use serde_json::json;
        let text = "a: 1\n\"b c\": [x, {k: 'z'}]\nd:\n- |\n  lit\n-\ne: {}\nf: \"on\"\n";
        let value =
            json!({"a": 1, "b c": ["x", {"k": "z"}], "d": ["lit\n", null], "e": {}, "f": "on"});
        assert!(matches(text, &value));
        assert!(variants(&value).iter().all(|v| !matches(text, v)));
        // The same keys in another order: not found here (a full comparison finds them
        // equal).
        let reordered =
            json!({"b c": ["x", {"k": "z"}], "a": 1, "d": ["lit\n", null], "e": {}, "f": "on"});
        assert!(!matches(text, &reordered));
        // Scalars compared by what they read as.
        for v in [json!({"a": "on"}), json!({"a": true})] {
            assert_eq!(matches("a: on\n", &v), parse_value("a: on\n") == Some(v));
        }
        assert!(matches(
            "a: '1'\nb: 1.5\nc: ~\n",
            &json!({"a": "1", "b": 1.5, "c": null})
        ));
        assert!(!matches("a: '1'\n", &json!({"a": 1})));
        assert!(!matches("a: 1\n", &json!({"a": "1"})));
        // Duplicate keys and what the fast reader leaves alone: not found.
        assert!(!matches("a: 1\na: 1\n", &json!({"a": 1})));
        assert!(!matches("a: &x 1\n", &json!({"a": 1})));
        assert!(matches("", &json!(null)));
        assert!(!matches("", &json!({})));
    }

    #[test]
    fn leaves_the_rest_to_the_general_parser() {
        let left = [
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "a:\tb\n",
            "a: b\r\n",
            "a: multi\n  line\n",
            "a: 'multi\n  line'\n",
            "a: >\n  folded\n",
            "? complex\n: key\n",
            "<<: {a: 1}\n",
            "%YAML 1.1\n---\na: 1\n",
            "a: [1,\n  2]\n",
            "a: b: c\n",
            "a: 1\n b: 2\n",
            "- a\nb: 1\n",
            "--- x\n",
            // A flow mapping cut after a colon at the end of the text (found by fuzzing: an
            // index past the end).
            "a: {b: ",
            "a: {b:",
            // Flow indicators do not start a plain scalar (found by fuzzing).
            "a: ]b\n",
            "- }b\n",
            "a: ,b\n",
            "]a: b\n",
            // A flow key starting with a reserved indicator (found by fuzzing).
            "a: {`b: c}\n",
            // An item on a later line, after a comment (found by fuzzing).
            "a:\n-\n# c\n  x\n",
            // A block scalar, then spaces ending the text (found by fuzzing).
            "a: |\n  x\n ",
            "a: |\n  x\n\n  ",
            // An empty sequence item with spaces after its dash (found by fuzzing).
            "a:\n- ",
            "a:\n- x\n-  ",
            "a:\n  - x\n  - \nb: 1\n",
            "a:\n- \n- x\n",
            // An empty sequence item with a comment (found by fuzzing).
            "a:\n- #c\n",
            "a:\n- x\n- # c\nb: 1\n",
            // A marker followed by `#` without a space is no marker (found by fuzzing).
            "a\n...#\n",
            "---#\na: 1\n",
            // An implicit key longer than 1024 characters (found by fuzzing).
            &format!("{}: b\n", "k".repeat(1025)),
            &format!("a: {{{}: b}}\n", "k".repeat(1025)),
        ];
        for text in left {
            assert!(!agrees(text), "read fast: {text:?}");
        }
    }

    #[test]
    fn shallow_reads_keep_the_identity() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: {a: b}\ndata:\n  k: |\n    v\
                    \n  l: [1, 2]\n  k: again\n";
        assert!(shallow_agrees(text));
        assert_eq!(top_level_kind(text), Some("ConfigMap"));
        assert_eq!(
            top_level_kind("a: 1\nkind: Service # svc\n"),
            Some("Service")
        );
        assert_eq!(top_level_kind("spec:\n  kind: X\n"), None);
        assert!(parse_shallow("- a\n").is_none());
    }

    /// Duplicates among many keys of a mapping that is not built (they are hashed).
    #[test]
    fn shallow_reads_find_duplicates_among_many_keys() {
        let mut text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n".to_owned();
        for i in 0..40 {
            text.push_str(&format!("  k{i}: v\n"));
        }
        text.push_str("  k3: again\n  k33: again\n");
        assert!(shallow_agrees(&text));
        let shallow = parse_shallow(&text).unwrap();
        assert_eq!(shallow.duplicates.len(), 2);
    }

    #[test]
    fn shallow_reads_compare_keys_by_what_they_read_as() {
        // Found by fuzzing: `true` and `TRUE` are one key to a full read.
        for keys in [
            "  true: a\n  TRUE: b\n",
            "  \"a\": 1\n  a: 2\n",
            "  'a': 1\n  a: 2\n",
            "  1: a\n  0x1: b\n",
            "  ~: a\n  null: b\n",
        ] {
            let text =
                format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n{keys}");
            assert!(shallow_agrees(&text), "{text}");
            assert_eq!(parse_shallow(&text).unwrap().duplicates.len(), 1, "{text}");
        }
    }

    /// Every document of the test data, the corpus of real manifests (`testdata/corpus/`)
    /// included.
    #[test]
    fn agrees_on_every_document_of_the_corpus() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut read = 0;
        let mut total = 0;
        for entry in walkdir::WalkDir::new(root.join("testdata"))
            .into_iter()
            .filter_map(Result::ok)
        {
            let path = entry.path();
            if !path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
            {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            // Text the reader refuses (control characters) reaches neither parser.
            let source = crate::read::Source::stdin();
            if crate::read::from_bytes_unparsed(source, text.clone().into_bytes()).is_err() {
                continue;
            }
            for range in crate::read::documents(&text) {
                let doc = &text[range];
                total += 1;
                if std::env::var_os("KINJECT_FAST_STATS").is_some() && parse(doc).is_none() {
                    let why = ["\t", "\r", "&", "*", "!", ">", "<<"]
                        .iter()
                        .filter(|m| doc.contains(*m))
                        .copied()
                        .collect::<Vec<_>>();
                    eprintln!("slow: {} {why:?}", path.display());
                }
                if parse(doc).is_some() && parse_shallow(doc).is_some() {
                    shallow_agrees(doc);
                }
                if let Some(fast) = parse(doc) {
                    read += 1;
                    let general = super::super::parse::parse_general(doc);
                    assert_eq!(Ok(fast), general, "{}: document {doc:?}", path.display());
                }
            }
        }
        if std::env::var_os("KINJECT_FAST_STATS").is_some() {
            eprintln!("{read} of {total} documents read fast");
        }
        // Most real manifests are read the fast way.
        assert!(
            read * 10 > total * 7,
            "{read} of {total} documents read fast"
        );
    }
}
