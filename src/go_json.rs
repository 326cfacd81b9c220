//! A value written as Go's `encoding/json` writes the Go struct it decodes into: fields in
//! the struct's order (not the YAML's), zero values of fields without `omitempty` written,
//! structs never omitted (`"resources":{}`), map keys sorted, quantities canonical, and
//! strings escaped as Go escapes them. Kruise hashes its SidecarSets this way, so a hash
//! computed here equals Kruise's whatever order or form the YAML was written in. `fields`
//! holds the Go structs' fields, generated from their Go source.

#[rustfmt::skip]
pub(crate) mod fields;
mod ty;

pub(crate) use ty::{Field, Ty};

use std::fmt::Write;

use serde_json::Value;

use crate::quantity;

/// `value` (`None`: the zero value) written as Go writes a `ty`.
pub(crate) fn write(out: &mut String, ty: Ty, value: Option<&Value>) {
    let value = value.filter(|v| !v.is_null());
    match ty {
        Ty::String => string(out, value.map(scalar_text).unwrap_or_default().as_str()),
        Ty::Int => match value {
            Some(Value::Number(n)) => out.push_str(&n.to_string()),
            Some(v) => out.push_str(scalar_text(v).trim()),
            None => out.push('0'),
        },
        Ty::Bool => out.push_str(if value == Some(&Value::Bool(true)) {
            "true"
        } else {
            "false"
        }),
        Ty::Quantity => {
            let text = value.map(scalar_text).unwrap_or_default();
            string(out, &quantity::canonical(&text).unwrap_or(text));
        }
        Ty::IntOrString => match value {
            Some(Value::String(s)) => string(out, s),
            Some(v) => out.push_str(&v.to_string()),
            None => out.push('0'),
        },
        Ty::Struct(fields) => {
            out.push('{');
            let mut first = true;
            fields_of(out, fields, value, &mut first);
            out.push('}');
        }
        Ty::Pointer(inner) => match value {
            Some(v) => write(out, *inner, Some(v)),
            None => out.push_str("null"),
        },
        Ty::Slice(inner) => match value.and_then(Value::as_array) {
            Some(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(out, *inner, Some(item));
                }
                out.push(']');
            }
            None => out.push_str("null"),
        },
        Ty::Map(inner) => match value.and_then(Value::as_object) {
            Some(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    string(out, k);
                    out.push(':');
                    write(out, *inner, map.get(k));
                }
                out.push('}');
            }
            None => out.push_str("null"),
        },
    }
}

fn fields_of(out: &mut String, fields: &[Field], value: Option<&Value>, first: &mut bool) {
    for f in fields {
        if f.inline {
            if let Ty::Struct(inner) = f.ty {
                fields_of(out, inner, value, first);
            }
            continue;
        }
        let v = value.and_then(|v| v.get(f.json)).filter(|v| !v.is_null());
        if f.omit_empty && is_empty(f.ty, v) {
            continue;
        }
        if !*first {
            out.push(',');
        }
        *first = false;
        string(out, f.json);
        out.push(':');
        write(out, f.ty, v);
    }
}

/// Go's "empty value" for `omitempty`: false, 0, "", nil pointers and empty slices and maps.
/// A struct is never empty.
fn is_empty(ty: Ty, value: Option<&Value>) -> bool {
    let Some(value) = value else {
        return !matches!(ty, Ty::Struct(_) | Ty::Quantity | Ty::IntOrString);
    };
    match ty {
        Ty::String => scalar_text(value).is_empty(),
        Ty::Int => value.as_f64() == Some(0.0) || scalar_text(value).trim() == "0",
        Ty::Bool => value != &Value::Bool(true),
        Ty::Slice(_) => value.as_array().is_none_or(Vec::is_empty),
        Ty::Map(_) => value.as_object().is_none_or(serde_json::Map::is_empty),
        Ty::Struct(_) | Ty::Quantity | Ty::IntOrString | Ty::Pointer(_) => false,
    }
}

/// A scalar's text, as the API server would read it into a Go string.
fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// `s` as a JSON string, escaped as Go's encoder escapes it (HTML-safe: `<`, `>`, `&`, and
/// U+2028/U+2029 as `\u` escapes; `\b` and `\f` short, as since Go 1.22).
pub(crate) fn string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' | '\0'..='\u{1f}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PAIR: &[Field] = &[
        Field {
            json: "name",
            omit_empty: false,
            inline: false,
            ty: Ty::String,
        },
        Field {
            json: "n",
            omit_empty: true,
            inline: false,
            ty: Ty::Pointer(&Ty::Int),
        },
        Field {
            json: "s",
            omit_empty: true,
            inline: false,
            ty: Ty::Struct(&[]),
        },
        Field {
            json: "m",
            omit_empty: true,
            inline: false,
            ty: Ty::Map(&Ty::String),
        },
    ];

    fn go(value: Value) -> String {
        let mut out = String::new();
        write(&mut out, Ty::Struct(PAIR), Some(&value));
        out
    }

    #[test]
    fn fields_in_struct_order_zero_values_and_structs_written() {
        assert_eq!(go(json!({})), r#"{"name":"","s":{}}"#);
        assert_eq!(
            go(json!({"m": {"b": "1", "a": "2"}, "n": 0, "name": "x"})),
            r#"{"name":"x","n":0,"s":{},"m":{"a":"2","b":"1"}}"#
        );
    }

    #[test]
    fn strings_escaped_as_go_escapes_them() {
        let mut out = String::new();
        string(&mut out, "a && b <c> \u{2028} \u{1b} \t é");
        assert_eq!(
            out,
            r#""a \u0026\u0026 b \u003cc\u003e \u2028 \u001b \t é""#
        );
    }
}
