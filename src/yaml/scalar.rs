//! Scalar resolution the way Kubernetes reads YAML (go-yaml v2 via sigs.k8s.io/yaml):
//! YAML-1.1 booleans (`on`, `yes`, `y`…), leading-zero octal (`0644` = 420), `_` in numbers,
//! timestamps kept as strings. Also the reverse question: may a string be written plain?

use serde_json::{Number, Value};

/// Resolves an untagged plain scalar to the value Kubernetes would read.
pub(crate) fn resolve_plain(s: &str) -> Value {
    if let Some(v) = word(s) {
        return v;
    }
    match s.as_bytes()[0] {
        b'0'..=b'9' | b'+' | b'-' | b'.' => {
            number(s).unwrap_or_else(|| Value::String(s.to_owned()))
        }
        _ => Value::String(s.to_owned()),
    }
}

/// The null or boolean a plain scalar is when it is one of their words.
pub(crate) fn word(s: &str) -> Option<Value> {
    Some(match s {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            Value::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            Value::Bool(false)
        }
        // JSON has no infinities or NaN; sigs.k8s.io/yaml cannot convert them either, so they
        // stay the text the author wrote.
        _ => return None,
    })
}

/// Resolves a scalar carrying a core-schema tag (`!!str`, `!!int`…); `None` for other tags.
/// `!!binary` is its decoded bytes, as go-yaml gives them (and sigs.k8s.io/yaml's JSON
/// carries them: bytes that are not UTF-8 become U+FFFD); base64 that does not decode is
/// refused, as go-yaml refuses it.
pub(crate) fn resolve_tagged(s: &str, suffix: &str) -> Result<Option<Value>, String> {
    Ok(Some(match suffix {
        "str" | "timestamp" => Value::String(s.to_owned()),
        "binary" => {
            use base64::Engine;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|e| format!("!!binary value that is not base64 ({e})"))?;
            Value::String(String::from_utf8_lossy(&bytes).into_owned())
        }
        "null" => Value::Null,
        "bool" | "int" | "float" => resolve_plain(s),
        _ => return Ok(None),
    }))
}

/// Go's `strconv.ParseInt(s, 0, 64)` after go-yaml removed every `_`, then `ParseUint`, then the
/// YAML float pattern. Timestamps (`2001-12-14`) never reach here as numbers: they fail all three.
fn number(s: &str) -> Option<Value> {
    let plain: String = s.chars().filter(|&c| c != '_').collect();
    if let Some(i) = go_parse_int(&plain) {
        return Some(Value::Number(i));
    }
    if is_yaml_float(&plain) {
        let f: f64 = plain.parse().ok()?;
        // Beyond a 64-bit float (`1e400`) Go's ParseFloat fails, and go-yaml keeps the text.
        return f.is_finite().then(|| float_value(f));
    }
    None
}

/// A float as JSON would carry it from Go: integral values print without a fraction.
fn float_value(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        return Value::Number(Number::from(f as i64));
    }
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

fn go_parse_int(s: &str) -> Option<Number> {
    let (negative, digits) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, body) = if let Some(rest) = strip_prefix_ci(digits, "0x") {
        (16, rest)
    } else if let Some(rest) = strip_prefix_ci(digits, "0o") {
        (8, rest)
    } else if let Some(rest) = strip_prefix_ci(digits, "0b") {
        (2, rest)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    if body.is_empty() || !body.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(body, radix).ok()?;
    if negative {
        // i64::MIN has no positive counterpart; everything else negates directly.
        if magnitude == 1u64 << 63 {
            return Some(Number::from(i64::MIN));
        }
        let m = i64::try_from(magnitude).ok()?;
        Some(Number::from(-m))
    } else {
        Some(Number::from(magnitude))
    }
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    s.get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
        .then(|| &s[prefix.len()..])
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Text of a resolved scalar used as a mapping key (sigs.k8s.io/yaml stringifies keys). Only
/// scalars are keys: the readers refuse a mapping or a sequence as a key, as Kubernetes' do,
/// so a key's text is never longer than what its scalar holds.
pub(crate) fn key_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "null".to_owned(),
        other => other.to_string(),
    }
}

/// Whether `s` may be written as a plain scalar and still be read back as this same string
/// by Kubernetes (YAML 1.1), by YAML 1.2 readers, and by the YAML grammar itself.
pub(crate) fn plain_is_safe(s: &str, flow: bool) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if !matches!(resolve_plain(s), Value::String(_)) || looks_special(s) {
        return false;
    }
    if s.starts_with(char::is_whitespace) || s.ends_with(char::is_whitespace) {
        return false;
    }
    let second = s[first.len_utf8()..].chars().next();
    match first {
        '-' | '?' | ':' if second.is_none_or(|c| c == ' ' || (flow && ",[]{}".contains(c))) => {
            return false;
        }
        ',' | '[' | ']' | '{' | '}' | '#' | '&' | '*' | '!' | '|' | '>' | '\'' | '"' | '%'
        | '@' | '`' => return false,
        _ => {}
    }
    if s.starts_with("---") || s.starts_with("...") {
        return false;
    }
    if s.contains(": ") || s.contains(" #") || s.ends_with(':') {
        return false;
    }
    if flow && s.contains([',', '[', ']', '{', '}']) {
        return false;
    }
    s.chars()
        .all(|c| c == ' ' || (!c.is_control() && !is_special_space(c)))
}

/// Characters never written raw: the line breaks of YAML 1.1 readers (kubectl's go-yaml reads
/// NEL, U+2028 and U+2029 as line breaks, which YAML 1.2 readers do not: raw, they would end
/// a scalar for Kubernetes that kinject's reader reads as one), and those YAML does not allow
/// raw. Written escaped, in double quotes.
pub(crate) fn is_special_space(c: char) -> bool {
    matches!(
        c,
        '\u{85}' | '\u{2028}' | '\u{2029}' | '\u{FEFF}' | '\u{FFFE}' | '\u{FFFF}'
    )
}

/// Strings other YAML readers (YAML 1.2 core, PyYAML) give a non-string meaning: quote them too.
fn looks_special(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        ".inf" | "-.inf" | "+.inf" | ".nan" | "<<" | "=" | "null" | "~"
    ) {
        return true;
    }
    let b = s.as_bytes();
    // Timestamps (2001-12-14…), sexagesimal numbers (1:20), hex/octal/binary forms.
    if b[0].is_ascii_digit() || matches!(b[0], b'+' | b'-' | b'.') {
        let numeric_ish = s
            .chars()
            .all(|c| c.is_ascii_hexdigit() || "+-.:_xXoObB eE".contains(c) || c == 'T' || c == 'Z');
        if numeric_ish && s.chars().any(|c| c.is_ascii_digit()) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kubernetes_reading_of_plain_scalars() {
        let cases = [
            ("0644", json!(420)),
            ("0o755", json!(493)),
            ("0x1F", json!(31)),
            ("0b101", json!(5)),
            ("1_000", json!(1000)),
            ("08", json!(8)),
            ("1e3", json!(1000)),
            ("1.5", json!(1.5)),
            ("-12", json!(-12)),
            ("+7", json!(7)),
            (".5", json!(0.5)),
            ("on", json!(true)),
            ("Off", json!(false)),
            ("y", json!(true)),
            ("NO", json!(false)),
            ("~", json!(null)),
            ("", json!(null)),
            ("2001-12-14", json!("2001-12-14")),
            ("1.2.3", json!("1.2.3")),
            (".inf", json!(".inf")),
            ("-", json!("-")),
            ("nginx:1.25", json!("nginx:1.25")),
            (
                "18446744073709551615",
                json!(18_446_744_073_709_551_615_u64),
            ),
            // Beyond a 64-bit float Go's ParseFloat fails: the text stays (it was null).
            ("1e400", json!("1e400")),
            ("-1E+999", json!("-1E+999")),
            ("1e-400", json!(0)),
        ];
        for (text, want) in cases {
            assert_eq!(resolve_plain(text), want, "{text}");
        }
    }

    #[test]
    fn binary_is_its_decoded_text() {
        assert_eq!(
            resolve_tagged("aGVsbG8=", "binary"),
            Ok(Some(json!("hello")))
        );
        assert_eq!(
            resolve_tagged("/w==", "binary"),
            Ok(Some(json!("\u{FFFD}")))
        );
        assert!(resolve_tagged("!!!", "binary").is_err());
        assert_eq!(resolve_tagged("x", "custom"), Ok(None));
    }

    #[test]
    fn plain_safety() {
        for s in [
            "nginx:1.25",
            "--encryption-provider-config=/etc/x.yaml",
            "app.kubernetes.io/name",
            "hello world",
            "a-b",
        ] {
            assert!(plain_is_safe(s, false), "{s} should be plain");
        }
        for s in [
            "on",
            "yes",
            "y",
            "0644",
            "1e3",
            "true",
            "null",
            "",
            " x",
            "x ",
            "a: b",
            "a #b",
            "- x",
            "-",
            "*x",
            "&x",
            "!x",
            "{x}",
            "[x]",
            "#x",
            "'x",
            "\"x",
            "12:30",
            "2001-12-14",
            "0x1F",
            "a\nb",
            "x\u{2028}    securityContext:",
            "a\u{2029}b",
            "a\u{85}b",
            ".inf",
            "~",
        ] {
            assert!(!plain_is_safe(s, false), "{s:?} must be quoted");
        }
        assert!(!plain_is_safe("a,b", true));
        assert!(plain_is_safe("a,b", false));
    }
}
