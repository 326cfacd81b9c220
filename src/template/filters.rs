//! kinject's filters, and the Python string methods, as templates call them: those that can
//! build a large string (`replace`, `indent`, `format`) refuse it before making it.

use serde_json::Value;

use super::limits::MAX_OUTPUT;

/// A string larger than the output limit, refused before it is made: a filter could
/// otherwise build gigabytes (`"%999999999s"|format(x)`, `indent(1000)` of a long text,
/// `replace` with a long replacement) before the output limit saw any of it.
fn too_large(what: &str, size: usize) -> minijinja::Error {
    invalid(format!(
        "`{what}` would make a string of {size} bytes, more than the {MAX_OUTPUT} a template may render"
    ))
}

/// `s` with `from` replaced by `to` must fit the output limit.
fn replaced_size(s: &str, from: &str, to: &str) -> Result<(), minijinja::Error> {
    // An empty `from` matches between every two characters.
    let n = if from.is_empty() {
        s.chars().count() + 1
    } else {
        s.matches(from).count()
    };
    let size = (s.len() - n.saturating_mul(from.len())).saturating_add(n.saturating_mul(to.len()));
    if size > MAX_OUTPUT {
        return Err(too_large("replace", size));
    }
    Ok(())
}

/// A format string's widths and precisions (any number in it) must fit the output limit.
fn widths_fit(format: &str) -> Result<(), minijinja::Error> {
    for run in format.split(|c: char| !c.is_ascii_digit()) {
        if run.len() > 7 || run.parse::<usize>().is_ok_and(|n| n > MAX_OUTPUT) {
            return Err(too_large("format", run.parse().unwrap_or(usize::MAX)));
        }
    }
    Ok(())
}

/// Python string methods (`startswith`, `split`…) as Jinja users expect them; those that can
/// build a large string (`replace`, `format`) checked first, as the filters.
pub(super) fn python_method(
    state: &mut minijinja::State,
    value: &minijinja::Value,
    method: &str,
    args: &[minijinja::Value],
) -> Result<minijinja::Value, minijinja::Error> {
    if let Some(s) = value.as_str() {
        match (method, args) {
            ("replace", [from, to, ..]) => {
                replaced_size(s, &from.to_string(), &to.to_string())?;
            }
            ("format", _) => widths_fit(s)?,
            _ => {}
        }
    }
    minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)
}

pub(super) fn bounded_replace(
    state: &mut minijinja::State,
    value: minijinja::value::StringInput<'_>,
    from: minijinja::value::StringInput<'_>,
    to: minijinja::value::StringInput<'_>,
) -> Result<minijinja::Value, minijinja::Error> {
    replaced_size(value.as_str(), from.as_str(), to.as_str())?;
    minijinja::filters::replace(state, value, from, to)
}

pub(super) fn bounded_indent(
    value: minijinja::value::StringInput<'_>,
    width: Option<usize>,
    first: Option<bool>,
    blank: Option<bool>,
    kwargs: minijinja::value::Kwargs,
) -> Result<minijinja::Value, minijinja::Error> {
    let w = match width {
        Some(w) => w,
        None => kwargs.peek::<Option<usize>>("width")?.unwrap_or(4),
    };
    let lines = value.as_str().matches('\n').count() + 1;
    let size = value.as_str().len().saturating_add(w.saturating_mul(lines));
    if size > MAX_OUTPUT {
        return Err(too_large("indent", size));
    }
    minijinja::filters::indent(value, width, first, blank, kwargs)
}

pub(super) fn bounded_format(
    state: &mut minijinja::State,
    format: &minijinja::Value,
    args: minijinja::value::Rest<minijinja::value::ValueOrKwargs>,
) -> Result<minijinja::Value, minijinja::Error> {
    if let Some(f) = format.as_str() {
        widths_fit(f)?;
    }
    minijinja::filters::format(state, format, args)
}

pub(super) fn b64encode(s: String) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}

pub(super) fn b64decode(s: String) -> Result<String, minijinja::Error> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(s.trim())
        .map_err(invalid)?;
    String::from_utf8(bytes).map_err(invalid)
}

pub(super) fn from_json(s: String) -> Result<minijinja::Value, minijinja::Error> {
    let v: Value = serde_json::from_str(&s).map_err(|e| invalid(format!("not JSON: {e}")))?;
    Ok(ser(v))
}

pub(super) fn from_yaml(s: String) -> Result<minijinja::Value, minijinja::Error> {
    let parsed =
        crate::yaml::parse_document(&s).map_err(|e| invalid(format!("not YAML: {}", e.message)))?;
    Ok(ser(parsed.value))
}

/// A string as Kubernetes reads it written plain in YAML (`"3"`: the number 3); any other
/// value as it is.
pub(super) fn yaml_scalar(v: minijinja::Value) -> minijinja::Value {
    match v.as_str() {
        Some(s) => ser(crate::yaml::scalar::resolve_plain(s)),
        None => v,
    }
}

/// `expr | typed_json(text)`: the value as JSON, for a single-expression field; an undefined
/// value is an error naming the expression (`text`), as printing it would be.
pub(super) fn typed_json(
    value: &minijinja::Value,
    text: &str,
) -> Result<minijinja::Value, minijinja::Error> {
    if value.is_undefined() {
        return Err(minijinja::Error::new(
            minijinja::ErrorKind::UndefinedError,
            format!("`{text}` is undefined"),
        ));
    }
    minijinja::filters::tojson(
        value,
        None,
        minijinja::value::Kwargs::from_iter(std::iter::empty::<(&str, minijinja::Value)>()),
    )
}

/// A template error: an operation that cannot be done on its operand.
pub(super) fn invalid(message: impl std::fmt::Display) -> minijinja::Error {
    minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, message.to_string())
}

pub(super) fn ser<T: serde::Serialize>(value: T) -> minijinja::Value {
    minijinja::Value::from(minijinja::value::Serde(value))
}
