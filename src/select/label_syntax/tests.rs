//! Selectors with the results apimachinery's `labels.Parse` and `Selector.Matches` give
//! (k8s.io/apimachinery at eed236ce, pkg/labels/selector.go and selector_test.go: the cases
//! marked with a test's name are that test's; the others follow from reading the code, each
//! with the function that decides it). `tests/oracle.rs` checks a set of them against
//! kubectl's own kustomize.
//!
//! The requirements are shown as kinject prints them (`Requirement`'s `Display`): as Go's
//! `String()` except that `==` prints `=`, `!=v` and `notin (v)` both print `!=v`, and a set's
//! values keep their first order instead of being sorted.

use serde_json::{Map, Value, json};

use super::parse;

/// The requirements of `text`, shown, sorted by key as Go's `parse` sorts them (stably here;
/// the order decides nothing).
fn shown(text: &str) -> Result<Vec<String>, String> {
    let mut requirements = parse(text)?;
    requirements.sort_by(|a, b| a.key().cmp(b.key()));
    Ok(requirements.iter().map(ToString::to_string).collect())
}

#[test]
fn selectors_kubernetes_accepts_read_as_it_reads_them() {
    let name_63 = "k".repeat(63);
    let cases: &[(&str, &[&str])] = &[
        // TestSelectorParse, its good strings.
        ("x=a,y=b,z=c", &["x=a", "y=b", "z=c"]),
        ("", &[]),
        ("x!=a,y=b", &["x!=a", "y=b"]),
        ("x=", &["x="]),
        ("x= ", &["x="]),
        ("x=,z= ", &["x=", "z="]),
        ("x= ,z= ", &["x=", "z="]),
        ("!x", &["!x"]),
        ("x>1", &["x>1"]),
        ("x>1,z<5", &["x>1", "z<5"]),
        // TestSetSelectorParser, its valid cases.
        ("\rx", &["x"]),
        (
            "this-is-a-dns.domain.com/key-with-dash",
            &["this-is-a-dns.domain.com/key-with-dash"],
        ),
        (
            "this-is-another-dns.domain.com/key-with-dash in (so,what)",
            &["this-is-another-dns.domain.com/key-with-dash in (so,what)"],
        ),
        (
            "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
            &["0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)"],
        ),
        ("foo  in\t (abc)", &["foo in (abc)"]),
        ("x notin\n (abc)", &["x!=abc"]),
        ("x  notin\t\t\t(abc,def)", &["x notin (abc,def)"]),
        ("x in (abc,def)", &["x in (abc,def)"]),
        ("x in (abc,)", &["x in (abc,)"]),
        ("x in (abc,abc)", &["x in (abc)"]),
        ("x in ()", &["x in ()"]),
        // Accepted since 65de33d3 ("Fix label selector parsing for consecutive commas",
        // 2025-08); apimachinery before it (kubectl 1.32 among them) refuses these four.
        ("x in (a,,)", &["x in (a,)"]),
        ("x in (a,,,)", &["x in (a,)"]),
        ("x in (a,,,,,,)", &["x in (a,)"]),
        ("x in (a,,a,,a,,a,,)", &["x in (a,)"]),
        (
            "x notin (abc,,def),bar,z in (),w",
            &["bar", "w", "x notin (abc,,def)", "z in ()"],
        ),
        ("x,y in (a)", &["x", "y in (a)"]),
        ("x=a", &["x=a"]),
        ("x>1", &["x>1"]),
        ("x<7", &["x<7"]),
        ("x=a,y!=b", &["x=a", "y!=b"]),
        ("x=a,y!=b,z in (h,i,j)", &["x=a", "y!=b", "z in (h,i,j)"]),
        ("x notin ( )", &["x!="]),
        ("x notin (, a)", &["x notin (,a)"]),
        ("a ", &["a"]),
        ("a in (x,y,notin, z,in)", &["a in (x,y,notin,z,in)"]),
        // TestSelectorMatches: `in` and `notin` are identifiers where no operator goes.
        ("notin=in", &["notin=in"]),
        // Read from the code. The lexer: whitespace separates every token
        // (`skipWhiteSpaces`), `==` is a token of its own (`scanSpecialSymbol`).
        ("app = web", &["app=web"]),
        ("app==web", &["app=web"]),
        ("!  legacy", &["!legacy"]),
        ("tier in(a,b),!legacy", &["!legacy", "tier in (a,b)"]),
        ("in in (in)", &["in in (in)"]),
        ("x=in,y=notin", &["x=in", "y=notin"]),
        // `NewRequirement`: `strconv.ParseInt(v, 10, 64)` takes leading zeros and the
        // largest int64; the label rules (`IsValidLabelValue`) take the digits.
        ("x>007", &["x>007"]),
        ("x<9223372036854775807", &["x<9223372036854775807"]),
        // `IsLabelKey`: a prefix of DNS labels, a name of 63 bytes.
        ("a.b-c.d/E_f.g-H", &["a.b-c.d/E_f.g-H"]),
        (&name_63, &[&name_63]),
        ("x=A-b_c.D", &["x=A-b_c.D"]),
    ];
    let mut failures = Vec::new();
    for (text, want) in cases {
        match shown(text) {
            Ok(got) if got == *want => {}
            other => failures.push(format!("{text:?}: {other:?}, want {want:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn selectors_kubernetes_refuses_are_refused_saying_why() {
    let key_254 = "a".repeat(254);
    let value_254 = format!("x16={}", "a".repeat(254));
    let value_64 = format!("x={}", "v".repeat(64));
    let cases: &[(&str, &str)] = &[
        // TestSelectorParse, its bad strings (`x=a||y=b`: `|` is no operator, so `a||y` is
        // one value, not a label value).
        ("x=a||y=b", "invalid value `a||y`"),
        (
            "x==a==b",
            "found `==` at column 5, expected: `,` or the end",
        ),
        ("!x=a", "found `=` at column 3, expected: `,` or the end"),
        (
            "x<a",
            "the value of `<` must be an integer (64 bits), not `a`",
        ),
        // TestSetSelectorParser, its invalid cases.
        ("x,,y", "found `,` at column 3, expected: a key after `,`"),
        (
            ",x,y",
            "found `,` at column 1, expected: `!`, a key, or the end",
        ),
        (
            "x nott in (y)",
            "found `nott` at column 3, expected: an operator",
        ),
        (
            "a in (xyz),",
            "found the end at column 12, expected: a key after `,`",
        ),
        (
            "a in (xyz)b notin ()",
            "found `b` at column 11, expected: `,` or the end",
        ),
        (
            "a in (xyz abc)",
            "found `abc` at column 11, expected: `,` or `)`",
        ),
        (
            "a notin(",
            "found the end at column 9, expected: `,`, `)` or a value",
        ),
        ("a (", "found `(` at column 3, expected: an operator"),
        (
            "(",
            "found `(` at column 1, expected: `!`, a key, or the end",
        ),
        // TestParseOperator: `!` and a word are no operators.
        ("x !", "found `!` at column 3, expected: an operator"),
        (
            "x exists",
            "found `exists` at column 3, expected: an operator",
        ),
        // TestRequirementConstructor: a Gt without an integer, a key of 254 bytes, a value
        // of 254 bytes.
        (
            "x>bar",
            "the value of `>` must be an integer (64 bits), not `bar`",
        ),
        (&key_254, "name part must be no more than 63 bytes"),
        (&value_254, "invalid value `aaaa"),
        // The review's: a space inside a value ends it (`parse`: after a requirement only
        // `,` or the end).
        (
            "app=we b",
            "found `b` at column 8, expected: `,` or the end",
        ),
        // Read from the code. `NewRequirement`: Gt and Lt take one integer
        // (`strconv.ParseInt`: no fraction, no empty string, within 64 bits), which must
        // also be a label value (no sign).
        ("ver>1.5", "must be an integer (64 bits), not `1.5`"),
        ("ver>", "must be an integer (64 bits), not ``"),
        (
            "ver<99999999999999999999",
            "must be an integer (64 bits), not `99999999999999999999`",
        ),
        (
            "ver>-1",
            "invalid value `-1`: a valid label must be an empty string",
        ),
        ("ver>+1", "invalid value `+1`"),
        // `parseExactValue`: one identifier, not a set.
        ("x=(a)", "found `(` at column 3, expected: a value"),
        ("x<>1", "found `>` at column 3, expected: a value"),
        ("x!==a", "found `=` at column 4, expected: a value"),
        // `parseValues`: a set is in parentheses.
        ("x in a", "found `a` at column 6, expected: `(`"),
        ("x in (a", "found the end at column 8, expected: `,` or `)`"),
        (
            "x in (,",
            "found the end at column 8, expected: `,` or a value",
        ),
        // `parse`: `!key` takes no operator; a requirement ends at `,` or the end.
        (
            "!x in (a)",
            "found `in` at column 4, expected: `,` or the end",
        ),
        (
            "x=a,",
            "found the end at column 5, expected: a key after `,`",
        ),
        (
            "=a",
            "found `=` at column 1, expected: `!`, a key, or the end",
        ),
        ("!", "found the end at column 2, expected: a key"),
        (
            "!=a",
            "found `!=` at column 1, expected: `!`, a key, or the end",
        ),
        // `IsLabelKey`: at most one `/`, a non-empty lowercase DNS prefix, a name that starts
        // and ends alphanumeric; `IsValidLabelValue` the same for values.
        (
            "a/b/c",
            "invalid key `a/b/c` at column 1: a valid label key must consist of",
        ),
        ("/a", "prefix part must be non-empty"),
        (
            "Example.com/a",
            "prefix part a lowercase RFC 1123 subdomain",
        ),
        ("a..b/c", "prefix part a lowercase RFC 1123 subdomain"),
        ("a/", "name part must be non-empty"),
        ("a_", "name part must consist of alphanumeric characters"),
        ("x=é", "invalid value `é`"),
        // Columns count characters.
        (
            "x in (é, a b)",
            "found `b` at column 12, expected: `,` or `)`",
        ),
        ("x=_a", "invalid value `_a`"),
        ("x in (a,b_)", "invalid value `b_`"),
        (&value_64, "must be no more than 63 bytes"),
    ];
    let mut failures = Vec::new();
    for (text, want) in cases {
        match parse(text) {
            Err(e) if e.contains(want) => {}
            other => failures.push(format!(
                "{text:?}: {:?}, want an error with {want:?}",
                other.map(|r| r.iter().map(ToString::to_string).collect::<Vec<_>>())
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn labels(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

#[test]
fn selectors_match_the_labels_kubernetes_matches() {
    let cases: &[(&str, Value, bool)] = &[
        // TestSelectorMatches.
        ("", json!({"x": "y"}), true),
        ("x=y", json!({"x": "y"}), true),
        ("x=y,z=w", json!({"x": "y", "z": "w"}), true),
        ("x!=y,z!=w", json!({"x": "z", "z": "a"}), true),
        ("notin=in", json!({"notin": "in"}), true),
        ("x", json!({"x": "z"}), true),
        ("!x", json!({"y": "z"}), true),
        ("x>1", json!({"x": "2"}), true),
        ("x<1", json!({"x": "0"}), true),
        ("x=z", json!({}), false),
        ("x=y", json!({"x": "z"}), false),
        ("x=y,z=w", json!({"x": "w", "z": "w"}), false),
        ("x!=y,z!=w", json!({"x": "z", "z": "w"}), false),
        ("x", json!({"y": "z"}), false),
        ("!x", json!({"x": "z"}), false),
        ("x>1", json!({"x": "0"}), false),
        ("x<1", json!({"x": "2"}), false),
        (
            "foo=bar,baz=blah",
            json!({"foo": "bar", "baz": "blah"}),
            true,
        ),
        (
            "foo=bar,foobar=bar,baz=blah",
            json!({"foo": "bar", "baz": "blah"}),
            false,
        ),
        // TestRequirementSelectorMatching.
        (
            "x in (foo),y notin (alpha)",
            json!({"x": "foo", "y": "baz"}),
            true,
        ),
        (
            "x in (foo),y in (alpha)",
            json!({"x": "foo", "y": "baz"}),
            false,
        ),
        ("x notin (),y", json!({"y": ""}), true),
        ("!x,y", json!({"y": ""}), true),
        ("x notin (),!y", json!({"y": ""}), false),
        ("x in ()", json!({"y": "baz"}), false),
        ("z>1", json!({"z": "2"}), true),
        ("z>1", json!({"z": "v2"}), false),
        // `Requirement.Matches`, read: Gt and Lt need the label, and read it with
        // `strconv.ParseInt(v, 10, 64)` (a sign, leading zeros, 64 bits; nothing else).
        ("x>1", json!({}), false),
        ("x<1", json!({}), false),
        ("x<1", json!({"x": "-5"}), true),
        ("x>4", json!({"x": "+5"}), true),
        ("x>6", json!({"x": "007"}), true),
        ("x>4", json!({"x": " 5"}), false),
        ("x>4", json!({"x": "5.0"}), false),
        ("x>4", json!({"x": ""}), false),
        (
            "x>9223372036854775806",
            json!({"x": "9223372036854775807"}),
            true,
        ),
        ("x>1", json!({"x": "9223372036854775808"}), false),
        ("x<1", json!({"x": "-9223372036854775809"}), false),
        ("x>1,x<3", json!({"x": "2"}), true),
        ("x>1,x<3", json!({"x": "3"}), false),
        // In, NotIn, `!=` on a missing label; an empty value.
        ("x!=a", json!({}), true),
        ("x notin (a,b)", json!({"x": "c"}), true),
        ("x in (a,b)", json!({}), false),
        ("x=", json!({"x": ""}), true),
        ("x=", json!({}), false),
        ("x in ()", json!({"x": ""}), true),
        ("x==y", json!({"x": "y"}), true),
    ];
    let mut failures = Vec::new();
    for (text, set, want) in cases {
        let selector = super::kubectl_selector(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        if selector.matches(&labels(set.clone())) != *want {
            failures.push(format!("{text:?} on {set}: want {want}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Go's lexer treats a NUL as the end of the text where a token starts, and steps over it
/// where one ends (a command line cannot hold one; kept so that the two read the same).
#[test]
fn a_nul_reads_as_go_reads_it() {
    assert_eq!(shown("\0junk"), Ok(vec![]));
    assert_eq!(shown("a=b\0"), Ok(vec!["a=b".to_owned()]));
    assert!(shown("a\0b").is_err());
}
