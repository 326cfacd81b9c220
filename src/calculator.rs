//! OpenKruise's resource calculator (`pkg/util/calculator`): the expressions of a
//! `resourcesPolicy` (`max(cpu*50%, 50m)`), and the regular expression that picks its containers; read as Kruise's lexer and grammar read them and
//! worked out with its arithmetic: numbers are `float64`, quantities exact (`quantity.rs`),
//! a number meets a quantity as that many thousandths, and a quantity times or over a number
//! is its thousandths times or over it, truncated.
//!
//! An expression is parsed once; its depth is bounded, so a parse is linear in its length and
//! never deep in the stack.

use std::cmp::Ordering;

use crate::quantity::Quantity;

/// How deep parentheses, minus signs and calls may nest.
const MAX_DEPTH: usize = 64;

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expr {
    /// A number (`0.5`, `50%`).
    Number(f64),
    /// A quantity as written (`50m`, `100Mi`).
    Quantity(String),
    /// A variable (`cpu`, `memory`), lower-cased.
    Variable(String),
    Neg(Box<Expr>),
    Binary(char, Box<Expr>, Box<Expr>),
    /// A function (`max`, `min`, lower-cased) and its arguments.
    Call(String, Vec<Expr>),
}

/// A value: a number or a quantity.
#[derive(Debug, Clone)]
pub(crate) enum Val {
    Number(f64),
    Quantity(Quantity),
}

/// One token of Kruise's lexer.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Number(String),
    Quantity(String),
    Ident(String),
    Char(char),
}

/// Kruise's lexer (`lexer.go`), over the expression's bytes as it reads them.
fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.bytes().map(char::from).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == '.' {
            let start = i;
            i = number_end(&chars, i);
            let word: String = chars[start..i].iter().collect();
            out.push(if is_quantity(&word) {
                Token::Quantity(word)
            } else {
                Token::Number(word)
            });
        } else if c.is_alphabetic() {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
        } else {
            out.push(Token::Char(c));
            i += 1;
        }
    }
    out
}

/// Where the number that starts at `i` ends (`readNumber`): digits, one dot, an exponent with
/// its sign, a percent sign, and the letters of a unit.
fn number_end(chars: &[char], mut i: usize) -> usize {
    let (mut dot, mut e, mut percent, mut exponent_digit) = (false, false, false, false);
    while let Some(&c) = chars.get(i) {
        if c.is_ascii_digit() {
            exponent_digit = false;
        } else if c == '.' {
            if dot || e || percent {
                break;
            }
            dot = true;
        } else if c == 'e' || c == 'E' {
            if e || percent {
                break;
            }
            e = true;
            exponent_digit = true;
        } else if c == '+' || c == '-' {
            if !exponent_digit {
                break;
            }
            exponent_digit = false;
        } else if c == '%' {
            if percent {
                break;
            }
            percent = true;
        } else if c.is_alphabetic() {
            if !exponent_digit {
                while chars.get(i).is_some_and(|c| c.is_alphabetic()) {
                    i += 1;
                }
            }
            break;
        } else {
            break;
        }
        i += 1;
    }
    i
}

/// Whether a number's text is a quantity (`isQuantity`): digits then one of Kruise's units.
fn is_quantity(word: &str) -> bool {
    let numeric = |c: char| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-');
    let Some(end) = word.find(|c: char| !numeric(c)).filter(|&e| e > 0) else {
        return false;
    };
    ["m", "k", "M", "G", "T", "P", "Ki", "Mi", "Gi", "Ti", "Pi"].contains(&&word[end..])
}

/// A number's value (`parseNumber`): `50%` is 0.5; text that is no number is 0, as Kruise's
/// grammar ignores the error.
fn number(text: &str) -> f64 {
    match text.strip_suffix('%') {
        Some(n) => n.parse::<f64>().map_or(0.0, |n| n / 100.0),
        None => text.parse().unwrap_or(0.0),
    }
}

/// Parses `text` as Kruise's grammar does (`calculator.y`): `+ -` then `* /`, left to right,
/// a unary minus on a factor, and calls of one or two arguments.
pub(crate) fn parse(text: &str) -> Result<Expr, String> {
    let mut p = Parser {
        tokens: tokens(text),
        at: 0,
        depth: 0,
    };
    let expr = p.expr()?;
    match p.tokens.get(p.at) {
        None => Ok(expr),
        Some(t) => Err(format!("syntax error at {}", shown(t))),
    }
}

fn shown(t: &Token) -> String {
    match t {
        Token::Number(s) | Token::Quantity(s) | Token::Ident(s) => format!("`{s}`"),
        Token::Char(c) => format!("`{c}`"),
    }
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    depth: usize,
}

impl Parser {
    fn peek_char(&self) -> Option<char> {
        match self.tokens.get(self.at) {
            Some(Token::Char(c)) => Some(*c),
            _ => None,
        }
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        if self.peek_char() == Some(c) {
            self.at += 1;
            return Ok(());
        }
        Err(match self.tokens.get(self.at) {
            Some(t) => format!("syntax error at {}, expected `{c}`", shown(t)),
            None => format!("syntax error: the expression ends, expected `{c}`"),
        })
    }

    fn deeper(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("nested more than {MAX_DEPTH} deep"));
        }
        Ok(())
    }

    fn expr(&mut self) -> Result<Expr, String> {
        let mut left = self.term()?;
        while let Some(op @ ('+' | '-')) = self.peek_char() {
            self.at += 1;
            let right = self.term()?;
            left = Expr::Binary(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn term(&mut self) -> Result<Expr, String> {
        let mut left = self.factor()?;
        while let Some(op @ ('*' | '/')) = self.peek_char() {
            self.at += 1;
            let right = self.factor()?;
            left = Expr::Binary(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn factor(&mut self) -> Result<Expr, String> {
        self.deeper()?;
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        let factor = match token {
            Some(Token::Number(n)) => Expr::Number(number(&n)),
            Some(Token::Quantity(q)) => Expr::Quantity(q),
            Some(Token::Ident(name)) if self.peek_char() == Some('(') => {
                self.at += 1;
                let mut args = vec![self.expr()?];
                if self.peek_char() == Some(',') {
                    self.at += 1;
                    args.push(self.expr()?);
                }
                self.expect(')')?;
                Expr::Call(name.to_lowercase(), args)
            }
            Some(Token::Ident(name)) => Expr::Variable(name.to_lowercase()),
            Some(Token::Char('(')) => {
                let inner = self.expr()?;
                self.expect(')')?;
                inner
            }
            Some(Token::Char('-')) => Expr::Neg(Box::new(self.factor()?)),
            Some(t) => return Err(format!("syntax error at {}", shown(&t))),
            None => return Err("syntax error: the expression ends too early".into()),
        };
        self.depth -= 1;
        Ok(factor)
    }
}

/// A number as a quantity: that many thousandths, truncated (`NewMilliQuantity(int64(n *
/// 1000), DecimalSI)`).
fn number_quantity(n: f64) -> Result<Quantity, String> {
    Ok(Quantity::decimal_milli(truncated(n * 1000.0)?))
}

/// `n` truncated to an `int64`, as Go converts it; an error beyond one.
pub(crate) fn truncated(n: f64) -> Result<i64, String> {
    // 2^63: the first float beyond an i64.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if n.is_nan() || !(-LIMIT..LIMIT).contains(&n) {
        return Err(format!("{n} is out of range"));
    }
    #[expect(
        clippy::cast_possible_truncation,
        reason = "truncation is Go's int64(float64), and the range is checked"
    )]
    Ok(n.trunc() as i64)
}

fn milli(q: &Quantity) -> Result<f64, String> {
    q.milli_value()
        .map(|m| m as f64)
        .ok_or_else(|| format!("{q} is out of range"))
}

fn overflow() -> String {
    "the result is out of range".into()
}

impl Expr {
    /// The value of the expression, with `variable` (its name lower-cased) bound to `value`.
    pub(crate) fn eval(&self, variable: &str, value: &Val) -> Result<Val, String> {
        match self {
            Expr::Number(n) => Ok(Val::Number(*n)),
            Expr::Quantity(q) => Quantity::parse(q)
                .map(Val::Quantity)
                .ok_or_else(|| format!("`{q}` is not a quantity")),
            Expr::Variable(name) if name == variable => Ok(value.clone()),
            Expr::Variable(name) => Err(format!("undefined variable: {name}")),
            Expr::Neg(inner) => Ok(match inner.eval(variable, value)? {
                Val::Number(n) => Val::Number(-n),
                Val::Quantity(q) => Val::Quantity(q.neg()),
            }),
            Expr::Binary(op, l, r) => {
                let (l, r) = (l.eval(variable, value)?, r.eval(variable, value)?);
                binary(*op, l, r)
            }
            Expr::Call(name, args) => {
                let values = args
                    .iter()
                    .map(|a| a.eval(variable, value))
                    .collect::<Result<Vec<_>, _>>()?;
                call(name, values)
            }
        }
    }
}

fn binary(op: char, l: Val, r: Val) -> Result<Val, String> {
    use Val::{Number as N, Quantity as Q};
    Ok(match (op, l, r) {
        ('+', N(a), N(b)) => N(a + b),
        ('-', N(a), N(b)) => N(a - b),
        ('*', N(a), N(b)) => N(a * b),
        ('/', N(_), N(0.0)) => return Err("division by zero".into()),
        ('/', N(a), N(b)) => N(a / b),
        ('+' | '-', l, r) => {
            let as_quantity = |v: Val| match v {
                Q(q) => Ok(q),
                N(n) => number_quantity(n),
            };
            let (l, mut r) = (as_quantity(l)?, as_quantity(r)?);
            if op == '-' {
                r = r.neg();
            }
            Q(l.add(&r).ok_or_else(overflow)?)
        }
        ('*', Q(_), Q(_)) => return Err("multiplication of two quantities".into()),
        ('*', Q(q), N(n)) | ('*', N(n), Q(q)) => Q(q.with_milli(truncated(milli(&q)? * n)?)),
        ('/', _, Q(_)) => return Err("division by quantity".into()),
        ('/', Q(_), N(0.0)) => return Err("division by zero".into()),
        ('/', Q(q), N(n)) => Q(q.with_milli(truncated(milli(&q)? / n)?)),
        (op, _, _) => return Err(format!("unknown operator `{op}`")),
    })
}

/// `max` or `min` of exactly two values; a number meeting a quantity is made one first, and
/// of two equal values the first is kept.
fn call(name: &str, args: Vec<Val>) -> Result<Val, String> {
    let keep_left_when = match name {
        "max" => Ordering::Greater,
        "min" => Ordering::Less,
        _ => return Err(format!("unknown function: {name}")),
    };
    let [l, r]: [Val; 2] = args.try_into().map_err(|args: Vec<Val>| {
        format!(
            "{name} function requires exactly 2 arguments, got {}",
            args.len()
        )
    })?;
    let keep_left = |o: Ordering| o == keep_left_when || o == Ordering::Equal;
    Ok(match (l, r) {
        (Val::Number(a), Val::Number(b)) => {
            let o = a.partial_cmp(&b).unwrap_or(Ordering::Equal);
            Val::Number(if keep_left(o) { a } else { b })
        }
        (l, r) => {
            let as_quantity = |v: Val| match v {
                Val::Quantity(q) => Ok(q),
                Val::Number(n) => number_quantity(n),
            };
            let (l, r) = (as_quantity(l)?, as_quantity(r)?);
            let o = l.compare(&r).ok_or_else(overflow)?;
            Val::Quantity(if keep_left(o) { l } else { r })
        }
    })
}

/// `targetContainersNameRegex` compiled: Go's RE2 syntax, which the `regex` crate reads
/// alike (linear time); an error in one line.
pub(crate) fn container_regex(pattern: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(pattern).map_err(|e| {
        let text = e.to_string();
        let last = text.lines().last().unwrap_or_default();
        format!(
            "not a regular expression ({})",
            last.trim_start_matches("error: ")
        )
    })
}

/// Whether a value is below zero (a result Kruise refuses).
pub(crate) fn negative(v: &Val) -> bool {
    match v {
        Val::Number(n) => *n < 0.0,
        Val::Quantity(q) => q.is_negative(),
    }
}

/// Checks `text` as Kruise's SidecarSet webhook does when a set is applied
/// (`validateResourceExpression`): parsed, and worked out with `variable` the number 1.
pub(crate) fn validate(text: &str, variable: &str) -> Result<Expr, String> {
    let expr = parse(text)?;
    let v = expr.eval(variable, &Val::Number(1.0))?;
    if negative(&v) {
        return Err("the result is negative".into());
    }
    Ok(expr)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(text: &str) -> Val {
        Val::Quantity(Quantity::parse(text).expect("a quantity"))
    }

    fn shown(v: Result<Val, String>) -> String {
        match v {
            Ok(Val::Number(n)) => format!("{n}"),
            Ok(Val::Quantity(q)) => q.to_string(),
            Err(e) => format!("error: {e}"),
        }
    }

    fn eval(text: &str, variable: &str, value: Val) -> String {
        shown(parse(text).and_then(|e| e.eval(variable, &value)))
    }

    /// Cases of calculator_test.go and of sidecarset_resources_test.go's
    /// TestEvaluateResourceExpression, as Kruise works them out.
    #[test]
    fn works_out_expressions_as_kruise() {
        assert_eq!(eval("cpu*50%", "cpu", q("2")), "1");
        assert_eq!(eval("cpu*30%", "cpu", q("1")), "300m");
        assert_eq!(eval("max(cpu*30%, 50m)", "cpu", q("100m")), "50m");
        assert_eq!(eval("max(cpu*50%, 50m)", "cpu", q("4")), "2");
        assert_eq!(eval("memory*25%", "memory", q("1Gi")), "256Mi");
        assert_eq!(
            eval("max(memory*25%, 100Mi)", "memory", q("256Mi")),
            "100Mi"
        );
        assert_eq!(eval("min(cpu, 1)", "cpu", q("2")), "1");
        assert_eq!(eval("cpu + 100m", "cpu", q("1")), "1100m");
        assert_eq!(eval("cpu - 0.5", "cpu", q("1")), "500m");
        assert_eq!(eval("cpu / 4", "cpu", q("1")), "250m");
        assert_eq!(eval("200Mi", "cpu", q("1")), "200Mi");
        assert_eq!(eval("2 + 3 * 4", "cpu", q("1")), "14");
        assert_eq!(eval("(2 + 3) * 4", "cpu", q("1")), "20");
        assert_eq!(eval("10 - 2 - 3", "cpu", q("1")), "5");
        assert_eq!(eval("-2 * 3", "cpu", q("1")), "-6");
        assert_eq!(eval("1e3", "cpu", q("1")), "1000");
        assert_eq!(eval("MAX(1, 2)", "cpu", q("1")), "2");
        // A quantity times a number keeps its family: 1.5Gi is 1536Mi.
        assert_eq!(eval("memory * 1.5", "memory", q("1Gi")), "1536Mi");
        // Thousandths, truncated: a third of 1 is 333m.
        assert_eq!(eval("cpu / 3", "cpu", q("1")), "333m");
    }

    #[test]
    fn refuses_what_kruise_refuses() {
        for (text, variable) in [
            ("cpu * cpu", "cpu"),
            ("1 / cpu", "cpu"),
            ("cpu / 0", "cpu"),
            ("1 / 0", "cpu"),
            ("memory * 2", "cpu"),
            ("max(cpu)", "cpu"),
            ("avg(cpu, 1)", "cpu"),
            ("cpu *", "cpu"),
            ("(cpu", "cpu"),
            ("cpu 2", "cpu"),
            ("max(1, 2, 3)", "cpu"),
            ("cpu $ 2", "cpu"),
        ] {
            let out = eval(text, variable, q("1"));
            assert!(out.starts_with("error:"), "{text}: {out}");
        }
    }

    #[test]
    fn validates_as_the_set_webhook() {
        assert!(validate("max(cpu*50%, 50m)", "cpu").is_ok());
        assert!(validate("memory*20%", "memory").is_ok());
        assert!(validate("memory*20%", "cpu").is_err());
        assert!(validate("cpu - 2", "cpu").is_err(), "negative with cpu = 1");
        assert!(validate("cpu *", "cpu").is_err());
    }

    #[test]
    fn depth_is_bounded() {
        let deep = format!("{}1{}", "(".repeat(100), ")".repeat(100));
        assert!(parse(&deep).is_err());
        let ok = format!("{}1{}", "(".repeat(20), ")".repeat(20));
        assert!(parse(&ok).is_ok());
        assert!(parse(&"-".repeat(10_000)).is_err());
        // Long but flat: linear.
        let long = vec!["1"; 10_000].join("+");
        assert!(parse(&long).is_ok());
    }

    #[test]
    fn lexes_as_kruise() {
        assert_eq!(
            tokens("max(cpu*50%,50m)+1.5Gi-1e3"),
            vec![
                Token::Ident("max".into()),
                Token::Char('('),
                Token::Ident("cpu".into()),
                Token::Char('*'),
                Token::Number("50%".into()),
                Token::Char(','),
                Token::Quantity("50m".into()),
                Token::Char(')'),
                Token::Char('+'),
                Token::Quantity("1.5Gi".into()),
                Token::Char('-'),
                Token::Number("1e3".into()),
            ]
        );
        // Not a unit: a number whose text is not one, which Kruise reads as 0.
        assert_eq!(number("5x"), 0.0);
    }
}
