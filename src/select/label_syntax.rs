//! kubectl's `-l/--selector` syntax, read as apimachinery's `labels.Parse` reads it
//! (k8s.io/apimachinery, pkg/labels/selector.go: its `Lexer`, its `Parser` and the checks of
//! `NewRequirement`): the same selectors accepted, the same requirements made of them, the same
//! ones refused. Each refusal says what was found, at which column, and what was expected, in
//! the words of apimachinery's own messages.
//!
//! ```text
//! selector    ::= "" | requirement ("," requirement)*
//! requirement ::= ["!"] KEY [ ("in" | "notin") "(" VALUE ("," VALUE)* ")"
//!                           | ("=" | "==" | "!=" | ">" | "<") VALUE ]
//! ```
//!
//! Whitespace (space, tab, CR, LF) separates tokens anywhere; an identifier is any run of bytes
//! other than whitespace and `=!(),<>`, then checked as a label key or value
//! (`label_rules`). `in` and `notin` are operators after a key and identifiers everywhere else
//! (`in in (in)`). Values may be empty (`x=`, `x in ()`, `x in (a,,b)`); a set's values are kept
//! once each. `>` and `<` take exactly one value that is a 64-bit integer.

use super::label_rules::{label_key_errors, label_value_errors};
use super::selector::{Operator, Requirement, Selector};

#[cfg(test)]
mod tests;

/// Reads kubectl's `-l/--selector` syntax as Kubernetes does; an empty selector selects
/// everything. The error says what is wrong and where.
pub(crate) fn kubectl_selector(text: &str) -> Result<Selector, String> {
    parse(text).map(Selector::of)
}

/// The requirements of selector `text` (none for an empty one), or what is wrong with it.
pub(super) fn parse(text: &str) -> Result<Vec<Requirement>, String> {
    let mut parser = Parser {
        tokens: scan(text),
        at: 0,
    };
    parser.selector()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    End,
    ClosedPar,
    Comma,
    /// `!`
    DoesNotExist,
    /// `==`
    DoubleEquals,
    /// `=`
    Equals,
    /// `>`
    GreaterThan,
    Identifier,
    In,
    /// `<`
    LessThan,
    /// `!=`
    NotEquals,
    NotIn,
    OpenPar,
}

/// One token: what it is, its text and the column (in characters, from 1) where it starts.
#[derive(Debug, Clone, Copy)]
struct Scanned<'a> {
    token: Token,
    text: &'a str,
    column: usize,
}

/// Go's `isWhitespace`.
fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Go's `isSpecialSymbol`: the bytes operators are made of.
fn is_special(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Every token of `text`, the last one `End`. Bytes, as Go's lexer reads them: the bytes it
/// stops at are ASCII, so each token's text is whole characters. A NUL reads as the end, as
/// in Go (a command line cannot hold one).
fn scan(text: &str) -> Vec<Scanned<'_>> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut at = 0;
    // The column of byte `counted`.
    let (mut counted, mut column) = (0, 1);
    let mut column_of = |at: usize| {
        column += text[counted..at].chars().count();
        counted = at;
        column
    };
    loop {
        while at < bytes.len() && is_whitespace(bytes[at]) {
            at += 1;
        }
        if at == bytes.len() || bytes[at] == 0 {
            tokens.push(Scanned {
                token: Token::End,
                text: "",
                column: column_of(at),
            });
            return tokens;
        }
        let start = at;
        let token = if is_special(bytes[at]) {
            // The longest operator: `!=` and `==` are the only two-byte ones.
            let two = bytes.get(at + 1) == Some(&b'=') && matches!(bytes[at], b'!' | b'=');
            at += if two { 2 } else { 1 };
            match &text[start..at] {
                "!=" => Token::NotEquals,
                "==" => Token::DoubleEquals,
                "=" => Token::Equals,
                "!" => Token::DoesNotExist,
                "(" => Token::OpenPar,
                ")" => Token::ClosedPar,
                "," => Token::Comma,
                ">" => Token::GreaterThan,
                _ => Token::LessThan,
            }
        } else {
            while at < bytes.len()
                && bytes[at] != 0
                && !is_special(bytes[at])
                && !is_whitespace(bytes[at])
            {
                at += 1;
            }
            match &text[start..at] {
                "in" => Token::In,
                "notin" => Token::NotIn,
                _ => Token::Identifier,
            }
        };
        tokens.push(Scanned {
            token,
            text: &text[start..at],
            column: column_of(start),
        });
        // Go's lexer steps over the NUL that ends a token, and goes on after it.
        if bytes.get(at) == Some(&0) {
            at += 1;
        }
    }
}

/// Go's `ParserContext`: after a key `in` and `notin` are operators; everywhere else they
/// are identifiers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

/// Go's `Parser`: the tokens, and which one is next.
struct Parser<'a> {
    tokens: Vec<Scanned<'a>>,
    at: usize,
}

impl<'a> Parser<'a> {
    /// The next token, not taken.
    fn peek(&self, context: Context) -> (Token, Scanned<'a>) {
        let s = self.tokens[self.at];
        let token = match s.token {
            Token::In | Token::NotIn if context == Context::Values => Token::Identifier,
            t => t,
        };
        (token, s)
    }

    /// The next token, taken (the `End` token stays).
    fn take(&mut self, context: Context) -> (Token, Scanned<'a>) {
        let next = self.peek(context);
        if self.at + 1 < self.tokens.len() {
            self.at += 1;
        }
        next
    }

    /// Go's `parse`.
    fn selector(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            let (token, s) = self.peek(Context::Values);
            match token {
                Token::Identifier | Token::DoesNotExist => {}
                Token::End => return Ok(requirements),
                _ => return Err(found(s, "`!`, a key, or the end")),
            }
            requirements.push(self.requirement()?);
            let (token, s) = self.take(Context::Values);
            match token {
                Token::End => return Ok(requirements),
                Token::Comma => {
                    let (next, s) = self.peek(Context::Values);
                    if next != Token::Identifier && next != Token::DoesNotExist {
                        return Err(found(s, "a key after `,`"));
                    }
                }
                _ => return Err(found(s, "`,` or the end")),
            }
        }
    }

    /// Go's `parseRequirement`.
    fn requirement(&mut self) -> Result<Requirement, String> {
        let (key, unary) = self.key_and_inferred_operator()?;
        if let Some(op) = unary {
            return Ok(Requirement::new(key.text.to_owned(), op, Vec::new()));
        }
        let (op, shown) = self.operator()?;
        let values = if matches!(shown, "in" | "notin") {
            self.value_set()?
        } else {
            vec![self.exact_value()?]
        };
        checked(key, op, shown, values)
    }

    /// Go's `parseKeyAndInferOperator`: the key, and `Exists` or `DoesNotExist` when nothing
    /// follows it (`!key` is `DoesNotExist` whatever follows: what follows is then refused
    /// where a `,` is expected).
    fn key_and_inferred_operator(&mut self) -> Result<(Scanned<'a>, Option<Operator>), String> {
        let (mut token, mut key) = self.take(Context::Values);
        let mut unary = None;
        if token == Token::DoesNotExist {
            unary = Some(Operator::DoesNotExist);
            (token, key) = self.take(Context::Values);
        }
        if token != Token::Identifier {
            return Err(found(key, "a key"));
        }
        key_checked(key)?;
        if matches!(self.peek(Context::Values).0, Token::End | Token::Comma) && unary.is_none() {
            unary = Some(Operator::Exists);
        }
        Ok((key, unary))
    }

    /// Go's `parseOperator`: the operator, and how it was written (`!=` is `NotIn` of one
    /// value).
    fn operator(&mut self) -> Result<(Operator, &'a str), String> {
        let (token, s) = self.take(Context::KeyAndOperator);
        let op = match token {
            Token::In => Operator::In,
            Token::NotIn => Operator::NotIn,
            Token::Equals | Token::DoubleEquals => Operator::Equals,
            Token::NotEquals => Operator::NotIn,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            _ => {
                return Err(found(
                    s,
                    "an operator (`in`, `notin`, `=`, `==`, `!=`, `>`, `<`)",
                ));
            }
        };
        Ok((op, s.text))
    }

    /// Go's `parseValues`: `(a,b)`, the values once each, in order (`()` is one empty value).
    fn value_set(&mut self) -> Result<Vec<String>, String> {
        let (token, s) = self.take(Context::Values);
        if token != Token::OpenPar {
            return Err(found(s, "`(`"));
        }
        let (token, s) = self.peek(Context::Values);
        match token {
            Token::Identifier | Token::Comma => {
                let values = self.identifiers()?;
                // `identifiers` stops before a `)`.
                self.take(Context::Values);
                Ok(values)
            }
            Token::ClosedPar => {
                self.take(Context::Values);
                Ok(vec![String::new()])
            }
            _ => Err(found(s, "`,`, `)` or a value")),
        }
    }

    /// Go's `parseIdentifiersList`: comma-separated values, possibly empty ones (`(,a)`,
    /// `(a,)`, `(a,,b)`), up to the `)`.
    fn identifiers(&mut self) -> Result<Vec<String>, String> {
        let mut values: Vec<String> = Vec::new();
        let insert = |values: &mut Vec<String>, v: &str| {
            if !values.iter().any(|x| x == v) {
                values.push(v.to_owned());
            }
        };
        loop {
            let (token, s) = self.take(Context::Values);
            match token {
                Token::Identifier => {
                    insert(&mut values, s.text);
                    let (next, s) = self.peek(Context::Values);
                    match next {
                        Token::Comma => {}
                        Token::ClosedPar => return Ok(values),
                        _ => return Err(found(s, "`,` or `)`")),
                    }
                }
                Token::Comma => {
                    if values.is_empty() {
                        insert(&mut values, "");
                    }
                    match self.peek(Context::Values).0 {
                        Token::ClosedPar => {
                            insert(&mut values, "");
                            return Ok(values);
                        }
                        Token::Comma => insert(&mut values, ""),
                        _ => {}
                    }
                }
                _ => return Err(found(s, "`,` or a value")),
            }
        }
    }

    /// Go's `parseExactValue`: the one value after `=`, `==`, `!=`, `>` or `<` (empty when
    /// the requirement ends there).
    fn exact_value(&mut self) -> Result<String, String> {
        if matches!(self.peek(Context::Values).0, Token::End | Token::Comma) {
            return Ok(String::new());
        }
        match self.take(Context::Values) {
            (Token::Identifier, s) => Ok(s.text.to_owned()),
            (_, s) => Err(found(s, "a value")),
        }
    }
}

/// `found X at column N, expected: WANT`.
fn found(s: Scanned<'_>, want: &str) -> String {
    let what = if s.token == Token::End {
        "the end".to_owned()
    } else {
        format!("`{}`", s.text)
    };
    format!("found {what} at column {}, expected: {want}", s.column)
}

/// The key, when it is a label key (Go's `validateLabelKey`).
fn key_checked(key: Scanned<'_>) -> Result<(), String> {
    let errors = label_key_errors(key.text);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "invalid key `{}` at column {}: {}",
            key.text,
            key.column,
            errors.join("; ")
        ))
    }
}

/// The requirement, when its values are what its operator takes and label values (the
/// checks of Go's `NewRequirement` that the syntax leaves: `>` and `<` take an integer).
fn checked(
    key: Scanned<'_>,
    op: Operator,
    shown: &str,
    values: Vec<String>,
) -> Result<Requirement, String> {
    let mut errors = Vec::new();
    if matches!(op, Operator::GreaterThan | Operator::LessThan) {
        for v in &values {
            if v.parse::<i64>().is_err() {
                errors.push(format!(
                    "the value of `{shown}` must be an integer (64 bits), not `{v}`"
                ));
            }
        }
    }
    for v in &values {
        let wrong = label_value_errors(v);
        if !wrong.is_empty() {
            errors.push(format!("invalid value `{v}`: {}", wrong.join("; ")));
        }
    }
    if errors.is_empty() {
        Ok(Requirement::new(key.text.to_owned(), op, values))
    } else {
        Err(format!(
            "the requirement on `{}` at column {}: {}",
            key.text,
            key.column,
            errors.join("; ")
        ))
    }
}
