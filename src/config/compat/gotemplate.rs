//! Go `text/template` actions (with salesforce's `{%` `%}` delimiters) translated to minijinja,
//! for the strings of a salesforce sidecar configuration.
//!
//! Salesforce renders its sidecar file against a pod reduced to `.Annotations` and
//! `.Spec.ServiceAccountName`. Those two, `index`, `fromYaml`, the comparison and logic
//! functions, variables, literals, parenthesised pipelines and `if`/`else`/`with`/`range`
//! translate; anything else is refused with its place, never rendered differently.

/// One action as written: byte range in its text, and what is between the delimiters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Action {
    pub start: usize,
    pub end: usize,
    /// The text between `{%` and `%}`, trim markers included.
    pub inner: String,
}

/// A translation problem at byte `offset` of the action's inner text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Error {
    pub offset: usize,
    pub message: String,
}

impl Error {
    /// The same error, `by` bytes further on (in the text around the one it was found in).
    fn shifted(self, by: usize) -> Error {
        Error {
            offset: by + self.offset,
            message: self.message,
        }
    }
}

fn error<T>(offset: usize, message: impl Into<String>) -> Result<T, Error> {
    Err(Error {
        offset,
        message: message.into(),
    })
}

/// Every `{% … %}` action of `text`, in order (string literals inside an action may hold `%}`).
pub(crate) fn actions(text: &str) -> Result<Vec<Action>, Error> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(found) = text[i..].find("{%") {
        let start = i + found;
        let mut j = start + 2;
        let mut quote: Option<u8> = None;
        let end = loop {
            let Some(&b) = bytes.get(j) else {
                return error(start, "`{%` without its `%}`");
            };
            match quote {
                Some(q) if b == b'\\' && q == b'"' => j += 1,
                Some(q) if b == q => quote = None,
                Some(_) => {}
                None if b == b'"' || b == b'`' || b == b'\'' => quote = Some(b),
                None if b == b'%' && bytes.get(j + 1) == Some(&b'}') => break j + 2,
                None => {}
            }
            j += 1;
        };
        out.push(Action {
            start,
            end,
            inner: text[start + 2..end - 2].to_owned(),
        });
        i = end;
    }
    Ok(out)
}

/// What an enclosing block needs at its `end`.
#[derive(Debug, Clone)]
enum Block {
    If,
    /// `with`: the condition and the binding, closed together.
    With,
    Range,
}

/// Translates the text of one scalar, whose actions are `actions` (offsets into `text`), into
/// a minijinja template. `Ok(None)` when the text has no action.
pub(crate) struct Translator {
    blocks: Vec<Block>,
    /// What `.` is: `None` at the top (the pod), else a minijinja expression.
    dots: Vec<Option<String>>,
    counter: usize,
}

impl Translator {
    pub(crate) fn new() -> Self {
        Translator {
            blocks: Vec::new(),
            dots: vec![None],
            counter: 0,
        }
    }

    /// The minijinja text for `text` with its `actions`.
    pub(crate) fn translate(&mut self, text: &str, actions: &[Action]) -> Result<String, Error> {
        let mut out = String::new();
        let mut at = 0;
        for a in actions {
            out.push_str(&literal(&text[at..a.start]));
            out.push_str(&self.action(&a.inner).map_err(|e| e.shifted(a.start + 2))?);
            at = a.end;
        }
        out.push_str(&literal(&text[at..]));
        if let Some(b) = self.blocks.last() {
            let what = match b {
                Block::If => "if",
                Block::With => "with",
                Block::Range => "range",
            };
            return error(
                actions.last().map_or(0, |a| a.start),
                format!(
                    "`{what}` without its `end` in this value (an action cannot span YAML values)"
                ),
            );
        }
        Ok(out)
    }

    fn action(&mut self, inner: &str) -> Result<String, Error> {
        let (ltrim, body_start) = if inner.starts_with("- ") || inner == "-" {
            (true, 1)
        } else {
            (false, 0)
        };
        let (rtrim, body_end) = if inner.len() > body_start + 1 && inner.ends_with(" -") {
            (true, inner.len() - 1)
        } else {
            (false, inner.len())
        };
        let body = &inner[body_start..body_end];
        let offset = body_start + (body.len() - body.trim_start().len());
        let body = body.trim();
        if body.starts_with("/*") {
            if !body.ends_with("*/") {
                return error(offset, "a comment must end with `*/`");
            }
            return Ok(String::new());
        }
        let tokens = lex(body).map_err(|e| e.shifted(offset))?;
        let body = Body {
            tokens: &tokens,
            offset,
            open: if ltrim { "-" } else { "" },
            close: if rtrim { "-" } else { "" },
        };
        let keyword = match tokens.first() {
            Some(Token {
                kind: Kind::Ident(k),
                ..
            }) => k.as_str(),
            _ => "",
        };
        match keyword {
            "if" => self.if_block(&body),
            "else" => self.else_branch(&body),
            "end" => self.end_block(&body),
            "with" => self.with_block(&body),
            "range" => self.range_block(&body),
            "template" | "define" | "block" | "break" | "continue" => error(
                offset,
                format!("`{keyword}` is not supported in a salesforce template kinject reads"),
            ),
            _ => self.value_or_declaration(&body),
        }
    }

    /// `if pipeline`.
    fn if_block(&mut self, body: &Body<'_>) -> Result<String, Error> {
        let cond = self
            .pipeline(&body.tokens[1..])
            .map_err(|e| body.shift(e))?;
        self.blocks.push(Block::If);
        self.dots.push(self.dots.last().cloned().flatten());
        Ok(body.tag(format!("if {cond}")))
    }

    /// `else`, or `else if pipeline` in an `if`.
    fn else_branch(&mut self, body: &Body<'_>) -> Result<String, Error> {
        match (self.blocks.last(), body.tokens.get(1)) {
            (
                Some(Block::If),
                Some(Token {
                    kind: Kind::Ident(k),
                    ..
                }),
            ) if k == "if" => {
                let cond = self
                    .pipeline(&body.tokens[2..])
                    .map_err(|e| body.shift(e))?;
                Ok(body.tag(format!("elif {cond}")))
            }
            (Some(_), None) => Ok(body.tag("else")),
            (None, _) => error(body.offset, "`else` outside `if`, `with` or `range`"),
            (Some(_), Some(t)) => error(t.offset + body.offset, "`else` takes nothing here"),
        }
    }

    /// `end` of the innermost block.
    fn end_block(&mut self, body: &Body<'_>) -> Result<String, Error> {
        if body.tokens.len() > 1 {
            return error(body.offset + body.tokens[1].offset, "`end` takes nothing");
        }
        self.dots.pop();
        match self.blocks.pop() {
            Some(Block::If) => Ok(body.tag("endif")),
            Some(Block::Range) => Ok(body.tag("endfor")),
            Some(Block::With) => Ok(body.tag("endif %}{% endwith")),
            None => error(body.offset, "`end` without `if`, `with` or `range`"),
        }
    }

    /// `with pipeline` or `with $x := pipeline`: `.` (or `$x`) is its value inside.
    fn with_block(&mut self, body: &Body<'_>) -> Result<String, Error> {
        let (vars, rest) = declarations(&body.tokens[1..]).map_err(|e| body.shift(e))?;
        let value = self.pipeline(rest).map_err(|e| body.shift(e))?;
        self.counter += 1;
        let name = match vars.as_slice() {
            [] => format!("go_dot{}", self.counter),
            [v] => var_name(v),
            _ => return error(body.offset, "`with` declares one variable"),
        };
        self.blocks.push(Block::With);
        self.dots.push(Some(name.clone()));
        Ok(format!(
            "{{%{} with {name} = {value} %}}{{% if {name} {}%}}",
            body.open, body.close
        ))
    }

    /// `range pipeline`, with up to two variables (`$k, $v :=`): `.` is each item inside.
    fn range_block(&mut self, body: &Body<'_>) -> Result<String, Error> {
        let (vars, rest) = declarations(&body.tokens[1..]).map_err(|e| body.shift(e))?;
        let value = self.pipeline(rest).map_err(|e| body.shift(e))?;
        self.counter += 1;
        let (key, item) = match vars.as_slice() {
            [] => (
                format!("go_key{}", self.counter),
                format!("go_dot{}", self.counter),
            ),
            [v] => (format!("go_key{}", self.counter), var_name(v)),
            [k, v] => (var_name(k), var_name(v)),
            _ => return error(body.offset, "`range` declares at most two variables"),
        };
        self.blocks.push(Block::Range);
        self.dots.push(Some(item.clone()));
        Ok(body.tag(format!("for {key}, {item} in {value} | go_range")))
    }

    /// `$x := pipeline` (or `=`), or a pipeline whose value is printed.
    fn value_or_declaration(&mut self, body: &Body<'_>) -> Result<String, Error> {
        if let (vars, rest) = declarations(body.tokens).map_err(|e| body.shift(e))?
            && !vars.is_empty()
        {
            let [v] = vars.as_slice() else {
                return error(body.offset, "a declaration names one variable");
            };
            let value = self.pipeline(rest).map_err(|e| body.shift(e))?;
            return Ok(body.tag(format!("set {} = {value}", var_name(v))));
        }
        let value = self.pipeline(body.tokens).map_err(|e| body.shift(e))?;
        // Go prints text: a scalar as written, never a structure.
        Ok(format!(
            "{{{{{} ({value}) | go_printed {}}}}}",
            body.open, body.close
        ))
    }

    /// A pipeline: commands joined by `|`, each result passed as the next one's last argument.
    fn pipeline(&self, tokens: &[Token]) -> Result<String, Error> {
        if tokens.is_empty() {
            return error(0, "missing value");
        }
        let mut parts: Vec<&[Token]> = Vec::new();
        let mut depth = 0usize;
        let mut from = 0;
        for (i, t) in tokens.iter().enumerate() {
            match t.kind {
                Kind::LParen => depth += 1,
                Kind::RParen => depth = depth.saturating_sub(1),
                Kind::Pipe if depth == 0 => {
                    parts.push(&tokens[from..i]);
                    from = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&tokens[from..]);
        let mut value: Option<String> = None;
        for part in parts {
            value = Some(self.command(part, value)?);
        }
        value.ok_or(Error {
            offset: 0,
            message: "missing value".to_owned(),
        })
    }

    /// One command: an operand, or a function applied to its arguments (and `piped`).
    fn command(&self, tokens: &[Token], piped: Option<String>) -> Result<String, Error> {
        let Some(first) = tokens.first() else {
            return error(0, "missing command after `|`");
        };
        let func = match &first.kind {
            Kind::Ident(name) if !matches!(name.as_str(), "true" | "false" | "nil") => name,
            _ => {
                let (value, used) = self.operand(tokens)?;
                if used < tokens.len() || piped.is_some() {
                    let at = tokens.get(used).map_or(first.offset, |t| t.offset);
                    return error(at, "only a function takes arguments");
                }
                return Ok(value);
            }
        };
        let mut args = Vec::new();
        let mut rest = &tokens[1..];
        while !rest.is_empty() {
            let (v, used) = self.operand(rest)?;
            args.push(v);
            rest = &rest[used..];
        }
        args.extend(piped);
        call(func, &args, first.offset)
    }

    /// One operand at the start of `tokens`, and how many tokens it used.
    fn operand(&self, tokens: &[Token]) -> Result<(String, usize), Error> {
        let t = &tokens[0];
        let (base, mut used) = match &t.kind {
            Kind::Str(s) => (quote(s), 1),
            Kind::Number(n) => (n.clone(), 1),
            Kind::Ident(b) if b == "true" || b == "false" => (b.clone(), 1),
            Kind::Ident(b) if b == "nil" => ("none".to_owned(), 1),
            Kind::Ident(f) => {
                return error(
                    t.offset,
                    format!("function `{f}` needs parentheses to be an argument"),
                );
            }
            Kind::Field(fields) => (self.fields(self.dot(), fields, t.offset)?, 1),
            Kind::Var(name, fields) => {
                let base = if name.is_empty() {
                    None
                } else {
                    Some(var_name(name))
                };
                (self.fields(base, fields, t.offset)?, 1)
            }
            Kind::LParen => {
                let mut depth = 0usize;
                let close = tokens
                    .iter()
                    .position(|x| {
                        match x.kind {
                            Kind::LParen => depth += 1,
                            Kind::RParen => depth -= 1,
                            _ => {}
                        }
                        depth == 0
                    })
                    .ok_or(Error {
                        offset: t.offset,
                        message: "`(` without its `)`".to_owned(),
                    })?;
                (
                    format!("({})", self.pipeline(&tokens[1..close])?),
                    close + 1,
                )
            }
            Kind::RParen => return error(t.offset, "unexpected `)`"),
            Kind::Pipe => return error(t.offset, "unexpected `|`"),
            Kind::Declare | Kind::Assign | Kind::Comma => {
                return error(t.offset, "unexpected declaration");
            }
        };
        // `(…).Field` chains.
        let mut value = base;
        while let Some(Token {
            kind: Kind::Field(fields),
            offset,
        }) = tokens.get(used)
        {
            if !matches!(tokens[used - 1].kind, Kind::RParen) {
                break;
            }
            value = self.fields(Some(value), fields, *offset)?;
            used += 1;
        }
        Ok((value, used))
    }

    fn dot(&self) -> Option<String> {
        self.dots.last().cloned().flatten()
    }

    /// Field access on `base` (`None`: the pod salesforce passes).
    fn fields(
        &self,
        base: Option<String>,
        fields: &[String],
        offset: usize,
    ) -> Result<String, Error> {
        let Some(base) = base else {
            return pod_fields(fields, offset);
        };
        Ok(map_fields(base, fields))
    }
}

/// An action's body as tokens, where it starts in the action (its errors are shifted by
/// that), and the trim markers (`{%-`, `-%}`) its minijinja tag keeps.
struct Body<'t> {
    tokens: &'t [Token],
    offset: usize,
    open: &'static str,
    close: &'static str,
}

impl Body<'_> {
    /// `statement` as a minijinja tag, trimmed as the action is.
    fn tag(&self, statement: impl std::fmt::Display) -> String {
        format!("{{%{} {statement} {}%}}", self.open, self.close)
    }

    /// An error in the body, at its place in the action.
    fn shift(&self, e: Error) -> Error {
        e.shifted(self.offset)
    }
}

/// Go's built-in `func` (or salesforce's `fromYaml`) applied to the translated `args`, as a
/// minijinja expression; `offset` is where the action names it.
fn call(func: &str, args: &[String], offset: usize) -> Result<String, Error> {
    let n = args.len();
    let need = |count: usize| -> Result<(), Error> {
        if n == count {
            Ok(())
        } else {
            error(
                offset,
                format!("`{func}` takes {count} argument(s), found {n}"),
            )
        }
    };
    Ok(match func {
        "index" => {
            if n < 2 {
                return error(offset, "`index` takes a value and keys");
            }
            if n == 2 && args[0] == POD_ANNOTATIONS {
                return Ok(format!("annotation({})", args[1]));
            }
            let mut v = args[0].clone();
            for k in &args[1..] {
                v = format!("({v} | default({{}}))[{k}]");
            }
            format!("({v} | default(\"\"))")
        }
        "fromYaml" => {
            need(1)?;
            format!("({} | from_yaml)", args[0])
        }
        "len" => {
            need(1)?;
            format!("({} | length)", args[0])
        }
        "not" => {
            need(1)?;
            format!("(not {})", args[0])
        }
        "and" | "or" => {
            if n < 2 {
                return error(offset, format!("`{func}` takes two or more arguments"));
            }
            format!("({})", args.join(&format!(" {func} ")))
        }
        "eq" | "ne" | "lt" | "le" | "gt" | "ge" => {
            need(2)?;
            let op = match func {
                "eq" => "==",
                "ne" => "!=",
                "lt" => "<",
                "le" => "<=",
                "gt" => ">",
                _ => ">=",
            };
            format!("({} {op} {})", args[0], args[1])
        }
        "print" => format!("({})", args.join(" ~ ")),
        other => {
            return error(
                offset,
                format!(
                    "function `{other}` is not supported (salesforce templates have Go's built-ins and `fromYaml`; \
                     kinject translates index, fromYaml, len, not, and, or, eq, ne, lt, le, gt, ge, print)"
                ),
            );
        }
    })
}

/// The pod's annotations (`.Annotations`), as a minijinja expression.
const POD_ANNOTATIONS: &str = "((pod.metadata | default({})).annotations | default({}))";

/// `.Annotations` and `.Spec.ServiceAccountName` of the pod salesforce renders against.
fn pod_fields(fields: &[String], offset: usize) -> Result<String, Error> {
    let path: Vec<&str> = fields.iter().map(String::as_str).collect();
    let annotations = POD_ANNOTATIONS.to_owned();
    match path.as_slice() {
        [] => error(
            offset,
            "the whole pod (`.`) is not available: salesforce passes only `.Annotations` and \
             `.Spec.ServiceAccountName`",
        ),
        ["Annotations"] | ["ObjectMeta", "Annotations"] => Ok(annotations),
        ["Annotations", rest @ ..] | ["ObjectMeta", "Annotations", rest @ ..] => {
            let rest: Vec<String> = rest.iter().map(|f| (*f).to_owned()).collect();
            Ok(map_fields(annotations, &rest))
        }
        ["Spec", "ServiceAccountName"] => Ok("service_account()".to_owned()),
        _ => error(
            offset,
            format!(
                "`.{}` is not available in salesforce's templates: they are rendered with only `.Annotations` and \
                 `.Spec.ServiceAccountName` filled (another pod field is always empty there, and a name that is no pod \
                 field fails to render)",
                path.join(".")
            ),
        ),
    }
}

/// `.a.b` on maps: a missing key is empty (Go prints `<no value>`, which is as false).
fn map_fields(base: String, fields: &[String]) -> String {
    match fields.split_last() {
        None => base,
        Some((last, init)) => {
            let parent = init
                .iter()
                .fold(base, |v, f| format!("({v}[{}] | default({{}}))", quote(f)));
            format!("({parent}[{}] | default(\"\"))", quote(last))
        }
    }
}

/// `s` as a string literal (JSON's, which minijinja reads too).
pub(crate) fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned())
}

fn var_name(v: &str) -> String {
    format!("go_{v}")
}

/// `$a, $b :=` (or `=`) at the start of `tokens`: the names and what follows.
fn declarations(tokens: &[Token]) -> Result<(Vec<String>, &[Token]), Error> {
    let mut names = Vec::new();
    let mut i = 0;
    loop {
        match tokens.get(i).map(|t| &t.kind) {
            Some(Kind::Var(name, fields)) if fields.is_empty() && !name.is_empty() => {
                names.push(name.clone());
            }
            _ => return Ok((Vec::new(), tokens)),
        }
        match tokens.get(i + 1).map(|t| &t.kind) {
            Some(Kind::Comma) => i += 2,
            Some(Kind::Declare | Kind::Assign) => return Ok((names, &tokens[i + 2..])),
            _ => return Ok((Vec::new(), tokens)),
        }
    }
}

/// Plain text between actions, as a minijinja template that prints exactly it.
pub(crate) fn literal(text: &str) -> String {
    if text.contains("{{") || text.contains("{%") || text.contains("{#") {
        format!("{{{{ {} }}}}", quote(text))
    } else {
        text.to_owned()
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Token {
    kind: Kind,
    offset: usize,
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// `.A.B` (empty: `.` itself).
    Field(Vec<String>),
    /// `$name.A.B` (empty name: `$`).
    Var(String, Vec<String>),
    Ident(String),
    Str(String),
    Number(String),
    Pipe,
    LParen,
    RParen,
    Declare,
    Assign,
    Comma,
}

fn lex(text: &str) -> Result<Vec<Token>, Error> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&(offset, c)) = chars.get(i) {
        let kind = match c {
            c if c.is_whitespace() => {
                i += 1;
                continue;
            }
            '|' => {
                i += 1;
                Kind::Pipe
            }
            '(' => {
                i += 1;
                Kind::LParen
            }
            ')' => {
                i += 1;
                Kind::RParen
            }
            ',' => {
                i += 1;
                Kind::Comma
            }
            ':' if chars.get(i + 1).map(|c| c.1) == Some('=') => {
                i += 2;
                Kind::Declare
            }
            '=' => {
                i += 1;
                Kind::Assign
            }
            '.' => Kind::Field(field_chain(&chars, &mut i)),
            '$' => {
                i += 1;
                let name = ident(&chars, &mut i);
                Kind::Var(name, field_chain(&chars, &mut i))
            }
            '"' => Kind::Str(quoted(&chars, &mut i)?),
            '`' => Kind::Str(raw_quoted(&chars, &mut i)?),
            c if c.is_ascii_digit() || c == '-' => Kind::Number(number(&chars, &mut i)?),
            c if c.is_alphabetic() || c == '_' => Kind::Ident(ident(&chars, &mut i)),
            '\'' => return error(offset, "character constants are not supported"),
            other => return error(offset, format!("unexpected `{other}`")),
        };
        out.push(Token { kind, offset });
    }
    Ok(out)
}

/// The identifier at `chars[*i]` (letters, digits, `_`; maybe none), `i` moved past it.
fn ident(chars: &[(usize, char)], i: &mut usize) -> String {
    let mut s = String::new();
    while let Some(&(_, c)) = chars.get(*i) {
        if c.is_alphanumeric() || c == '_' {
            s.push(c);
            *i += 1;
        } else {
            break;
        }
    }
    s
}

/// The fields of `.A.B` at `chars[*i]`, `i` moved past them.
fn field_chain(chars: &[(usize, char)], i: &mut usize) -> Vec<String> {
    let mut fields = Vec::new();
    while chars.get(*i).map(|c| c.1) == Some('.') {
        *i += 1;
        let s = ident(chars, i);
        if s.is_empty() {
            break;
        }
        fields.push(s);
    }
    fields
}

/// The string of the `"…"` literal at `chars[*i]` (Go's escapes are JSON's), `i` moved past it.
fn quoted(chars: &[(usize, char)], i: &mut usize) -> Result<String, Error> {
    let offset = chars[*i].0;
    let mut j = *i + 1;
    let mut raw = String::from("\"");
    loop {
        let Some(&(_, c)) = chars.get(j) else {
            return error(offset, "unterminated string");
        };
        raw.push(c);
        j += 1;
        if c == '\\' {
            if let Some(&(_, n)) = chars.get(j) {
                raw.push(n);
                j += 1;
            }
        } else if c == '"' {
            break;
        }
    }
    *i = j;
    serde_json::from_str(&raw).map_err(|e| Error {
        offset,
        message: format!("string literal: {e}"),
    })
}

/// The string of the `` `…` `` literal at `chars[*i]`, `i` moved past it.
fn raw_quoted(chars: &[(usize, char)], i: &mut usize) -> Result<String, Error> {
    let offset = chars[*i].0;
    let rest: String = chars[*i + 1..].iter().map(|c| c.1).collect();
    let Some(end) = rest.find('`') else {
        return error(offset, "unterminated raw string");
    };
    *i += 2 + rest[..end].chars().count();
    Ok(rest[..end].to_owned())
}

/// The number at `chars[*i]` as written, `i` moved past it.
fn number(chars: &[(usize, char)], i: &mut usize) -> Result<String, Error> {
    let (offset, first) = chars[*i];
    let mut s = String::from(first);
    *i += 1;
    while let Some(&(_, c)) = chars.get(*i) {
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            s.push(c);
            *i += 1;
        } else {
            break;
        }
    }
    if s.parse::<f64>().is_err() {
        return error(offset, format!("`{s}` is not a number kinject reads"));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn translate(text: &str) -> Result<String, Error> {
        let actions = actions(text)?;
        Translator::new().translate(text, &actions)
    }

    #[test]
    fn documented_forms() {
        assert_eq!(
            translate("aws-iam-{% .Spec.ServiceAccountName %}").unwrap(),
            "aws-iam-{{ (service_account()) | go_printed }}"
        );
        assert_eq!(
            translate(r#"{% index .Annotations "vault.k8s-integration.sfdc.com/role" %}"#).unwrap(),
            r#"{{ (annotation("vault.k8s-integration.sfdc.com/role")) | go_printed }}"#
        );
    }

    #[test]
    fn control_structures_variables_and_pipes() {
        let t = translate(concat!(
            r#"{% with $yaml := (index .Annotations "c") | fromYaml -%}"#,
            r#"{%- $yaml.with.yaml -%}-{%- index $yaml.some 0 -%}{%- end -%}"#,
        ))
        .unwrap();
        assert!(t.starts_with("{% with go_yaml = ("), "{t}");
        assert!(
            t.contains(
                r#"{{- (((go_yaml["with"] | default({}))["yaml"] | default(""))) | go_printed -}}"#
            ),
            "{t}"
        );
        assert!(t.ends_with("{%- endif %}{% endwith -%}"), "{t}");
        let t = translate(r#"{% if eq .Spec.ServiceAccountName "default" %}x{% else %}y{% end %}"#)
            .unwrap();
        assert_eq!(
            t,
            r#"{% if (service_account() == "default") %}x{% else %}y{% endif %}"#
        );
        let t = translate("{% range $k, $v := .Annotations %}{% $k %}={% $v %};{% end %}").unwrap();
        assert!(t.starts_with("{% for go_k, go_v in "), "{t}");
        assert!(
            t.ends_with("{{ (go_k) | go_printed }}={{ (go_v) | go_printed }};{% endfor %}"),
            "{t}"
        );
        assert_eq!(translate("a{%/* note */%}b").unwrap(), "ab");
        assert_eq!(translate("{{ x }}").unwrap(), r#"{{ "{{ x }}" }}"#);
    }

    /// Renders a translated template the way a sidecar field is rendered.
    fn render(go: &str, pod: serde_json::Value) -> String {
        let def = serde_json::json!({"x": translate(go).unwrap()});
        let mut t = crate::template::Templates::new();
        t.add_sidecar("s", &def, None, crate::template::Dialect::Translated)
            .unwrap();
        let ctx = crate::template::context(&pod, &pod, "", &serde_json::Map::new());
        let out = t.render_fields("s", &def, &ctx).unwrap();
        out["x"].as_str().unwrap_or_default().to_owned()
    }

    #[test]
    fn renders_what_salesforce_renders() {
        // salesforce's TestRenderTemplate (pkg/sidecarconfig/sidecarconfig_test.go).
        let pod = serde_json::json!({"metadata": {"annotations": {"test-annotation-key": "hello"}},
            "spec": {"serviceAccountName": "world"}});
        assert_eq!(
            render(
                r#"{% index .Annotations "test-annotation-key" %}-{% .Spec.ServiceAccountName %}"#,
                pod
            ),
            "hello-world"
        );
        // Its sanity-check template, over the dummy pod's YAML annotation.
        let pod = serde_json::json!({"metadata": {"annotations": {
            "vault.k8s-integration.sfdc.com/config": "some: [yaml, array]\nwith: {yaml: object}"}}});
        assert_eq!(
            render(
                concat!(
                    r#"{% with $yaml := (index .Annotations "vault.k8s-integration.sfdc.com/config")"#,
                    r#" | fromYaml -%}{%- $yaml.with.yaml -%}-{%- index $yaml.some 0 -%}{%- end -%}"#,
                ),
                pod.clone()
            ),
            "object-yaml"
        );
        assert_eq!(
            render(
                r#"{% range $k, $v := .Annotations %}{% $k %};{% end %}{% if not .Annotations.missing %}none{% end %}"#,
                pod
            ),
            "vault.k8s-integration.sfdc.com/config;none"
        );
        // A missing annotation is empty, as in Go.
        assert_eq!(
            render(
                r#"[{% index .Annotations "nope" %}]"#,
                serde_json::json!({})
            ),
            "[]"
        );
    }

    /// A value printed by an action is text, as Go prints it: what `fromYaml` reads from an
    /// annotation gives a scalar, never fields of the sidecar.
    #[test]
    fn printed_values_are_scalars() {
        let pod = serde_json::json!({"metadata": {"annotations": {
            "m": "[{name: host, mountPath: /usr/bin}]", "n": "8080", "b": "true"}}});
        let render = |go: &str| {
            let def = serde_json::json!({"x": translate(go).unwrap()});
            let mut t = crate::template::Templates::new();
            t.add_sidecar("s", &def, None, crate::template::Dialect::Translated)
                .unwrap();
            let ctx = crate::template::context(&pod, &pod, "", &serde_json::Map::new());
            t.render_fields("s", &def, &ctx).map(|out| out["x"].clone())
        };
        assert_eq!(
            render(r#"{% index .Annotations "n" | fromYaml %}"#).unwrap(),
            "8080"
        );
        assert_eq!(
            render(r#"{% index .Annotations "b" | fromYaml %}"#).unwrap(),
            "true"
        );
        let e = render(r#"{% index .Annotations "m" | fromYaml %}"#).unwrap_err();
        assert!(e.message.contains("prints a list"), "{}", e.message);
    }

    #[test]
    fn refusals_say_where() {
        let e = translate("x-{% .Name %}").unwrap_err();
        assert_eq!(e.offset, 5);
        assert!(e.message.contains("always empty"), "{}", e.message);
        let e = translate("{% printf \"%d\" 1 %}").unwrap_err();
        assert!(e.message.contains("printf"), "{}", e.message);
        let e = translate("{% if true %}open").unwrap_err();
        assert!(e.message.contains("without its `end`"), "{}", e.message);
        assert!(translate("{% .Annotations").is_err());
        let a = actions(r#"{% index .Annotations "50%}" %}"#).unwrap();
        assert_eq!(a.len(), 1);
    }
}
