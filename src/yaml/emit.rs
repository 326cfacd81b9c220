//! Values → YAML text in a given `Style`: block mappings and sequences, flow collections, and
//! scalars quoted so that Kubernetes (YAML 1.1) and YAML 1.2 readers get the same string back.

use serde_json::Value;

use super::scalar::{is_special_space, plain_is_safe};
use super::style::{Quote, Style};

/// Writes YAML text for new content. Every function leaves `out` at the start of a line,
/// except where a caller asked for an inline first line (after `- ` or `key:`).
pub(crate) struct Emitter<'s> {
    pub style: &'s Style,
    pub out: String,
}

impl<'s> Emitter<'s> {
    pub(crate) fn new(style: &'s Style) -> Self {
        Emitter {
            style,
            out: String::new(),
        }
    }

    fn newline(&mut self) {
        self.out.push_str(self.style.newline());
    }

    fn pad(&mut self, col: usize) {
        self.out.extend(std::iter::repeat_n(' ', col));
    }

    /// A whole document: the root mapping (or other value) at column 0.
    pub(crate) fn document(&mut self, value: &Value) {
        match value {
            Value::Object(m) if !m.is_empty() => self.map_body(m, 0, false),
            Value::Array(a) if !a.is_empty() => self.seq_body(a, 0, false),
            other => {
                self.inline_or_block(other, 0);
            }
        }
    }

    /// `key: value` at `col`, then the value's lines.
    pub(crate) fn entry(&mut self, key: &str, value: &Value, col: usize, inline: bool) {
        if !inline {
            self.pad(col);
        }
        self.key(key);
        self.out.push(':');
        self.after_key(key, value, col);
    }

    /// One `- item` at `dash_col`.
    pub(crate) fn item(&mut self, value: &Value, dash_col: usize, inline: bool) {
        if !inline {
            self.pad(dash_col);
        }
        self.out.push('-');
        let content_col = dash_col + self.style.item_offset;
        self.pad(self.style.item_offset - 1);
        self.inline_value(value, content_col);
    }

    /// The value of entry `key` whose `key:` is already written, the cursor right after `:`.
    pub(crate) fn after_key(&mut self, key: &str, value: &Value, key_col: usize) {
        match value {
            Value::Object(m) if !m.is_empty() => {
                self.newline();
                self.map_body(m, key_col + self.style.indent, false);
            }
            Value::Array(a) if !a.is_empty() => {
                self.newline();
                self.seq_body(a, key_col + self.style.seq_indent_for(key), false);
            }
            other => {
                self.out.push(' ');
                self.inline_or_block(other, key_col + self.style.indent);
            }
        }
    }

    /// A value whose first line continues the current line, its further lines at `col`.
    pub(crate) fn inline_value(&mut self, value: &Value, col: usize) {
        match value {
            Value::Object(m) if !m.is_empty() => self.map_body(m, col, true),
            Value::Array(a) if !a.is_empty() => self.seq_body(a, col, true),
            other => self.inline_or_block(other, col),
        }
    }

    pub(crate) fn map_body(
        &mut self,
        map: &serde_json::Map<String, Value>,
        col: usize,
        inline: bool,
    ) {
        for (i, (k, v)) in map.iter().enumerate() {
            self.entry(k, v, col, inline && i == 0);
        }
    }

    pub(crate) fn seq_body(&mut self, items: &[Value], dash_col: usize, inline: bool) {
        for (i, v) in items.iter().enumerate() {
            self.item(v, dash_col, inline && i == 0);
        }
    }

    /// A scalar or empty collection on the current line, or a literal block whose lines sit at
    /// `block_col`.
    fn inline_or_block(&mut self, value: &Value, block_col: usize) {
        if let Value::String(s) = value
            && s.contains('\n')
            && let Some(()) = self.literal(s, block_col)
        {
            return;
        }
        let text = scalar(value, false, self.style.quote);
        self.out.push_str(&text);
        self.newline();
    }

    /// `|`-style block for multi-line strings; `None` when the string cannot be one.
    fn literal(&mut self, s: &str, col: usize) -> Option<()> {
        if s.chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t') || is_special_space(c))
        {
            return None;
        }
        let body = s.trim_end_matches('\n');
        let trailing = s.len() - body.len();
        let chomp = match trailing {
            0 => "-",
            1 => "",
            _ => "+",
        };
        let first_line = body.split('\n').find(|l| !l.is_empty()).unwrap_or("");
        let indicator = if first_line.starts_with(' ') || body.starts_with('\n') {
            self.style.indent.to_string()
        } else {
            String::new()
        };
        // A line ending in spaces is fine in a literal block; a line of spaces before the
        // content is not (it would set the indentation).
        if body.is_empty() {
            return None;
        }
        self.out.push('|');
        self.out.push_str(&indicator);
        self.out.push_str(chomp);
        self.newline();
        for line in body.split('\n') {
            if !line.is_empty() {
                self.pad(col);
                self.out.push_str(line);
            }
            self.newline();
        }
        for _ in 1..trailing {
            self.newline();
        }
        Some(())
    }

    fn key(&mut self, key: &str) {
        let text = scalar(&Value::String(key.to_owned()), false, self.style.quote);
        self.out.push_str(&text);
    }
}

/// A single-line scalar: plain when that reads back as the same value, quoted otherwise.
pub(crate) fn scalar(value: &Value, flow: bool, quote: Quote) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => {
            if plain_is_safe(s, flow) {
                s.clone()
            } else if (quote == Quote::Single || s.contains('"')) && single_quotable(s) {
                single_quoted(s)
            } else {
                double_quoted(s)
            }
        }
        Value::Array(a) if a.is_empty() => "[]".to_owned(),
        Value::Object(m) if m.is_empty() => "{}".to_owned(),
        other => flow_text(other, quote),
    }
}

pub(crate) fn single_quotable(s: &str) -> bool {
    !s.chars().any(|c| c.is_control() || is_special_space(c))
}

/// `s` single-quoted (when it is `single_quotable`).
pub(crate) fn single_quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

pub(crate) fn double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            c if c.is_control() || is_special_space(c) => {
                out.push_str(&format!("\\u{:04X}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Flow style: `{name: a, ports: [1, 2]}`.
pub(crate) fn flow_text(value: &Value, quote: Quote) -> String {
    match value {
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(|v| flow_text(v, quote)).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(m) => {
            let items: Vec<String> = m
                .iter()
                .map(|(k, v)| {
                    let key = scalar(&Value::String(k.clone()), true, quote);
                    format!("{key}: {}", flow_text(v, quote))
                })
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        Value::String(s) if s.contains('\n') => double_quoted(s),
        other => scalar(other, true, quote),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_document;
    use serde_json::json;

    fn doc(value: &Value, style: &Style) -> String {
        let mut e = Emitter::new(style);
        e.document(value);
        e.out
    }

    #[test]
    fn block_document_reads_back() {
        let value = json!({
            "name": "proxy",
            "image": "nginx:1.25",
            "args": ["--a=1", "on", "0644", "", "multi\nline\n"],
            "env": [{"name": "X", "value": "yes"}, {"name": "Y", "value": "{\"a\":1}"}],
            "resources": {},
            "ports": [{"containerPort": 80}],
            "empty": [],
            "nested": [[1, 2], []],
            "lead": "  indented\nnext",
            "keep": "a\n\n",
            "ctl": "bell\u{7}",
        });
        for style in [
            Style::default(),
            Style {
                indent: 4,
                seq_indent: 4,
                item_offset: 4,
                quote: Quote::Single,
                crlf: true,
                seq_indent_by_key: Vec::new(),
            },
        ] {
            let text = doc(&value, &style);
            let back = parse_document(&text).unwrap();
            assert_eq!(back.value, value, "{text}");
        }
    }

    #[test]
    fn readable_output() {
        let value = json!({"containers": [{"name": "curl", "image": "busybox:1", "args": ["sleep", "3600"]}]});
        assert_eq!(
            doc(&value, &Style::default()),
            "containers:\n- name: curl\n  image: busybox:1\n  args:\n  - sleep\n  - \"3600\"\n"
        );
        assert_eq!(
            scalar(&json!("{\"containers\":[\"a\"]}"), false, Quote::Double),
            "'{\"containers\":[\"a\"]}'"
        );
    }

    #[test]
    fn flow_reads_back() {
        let value = json!({"a": [1, "x, y", {"b": "on"}], "c": "d"});
        let text = format!("v: {}\n", flow_text(&value, Quote::Double));
        assert_eq!(parse_document(&text).unwrap().value, json!({"v": value}));
    }
}
