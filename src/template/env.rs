//! The minijinja environment every template is compiled in: strict about what is undefined,
//! bounded in work, kinject's filters and functions registered, and whole templates printing
//! placeholders. Templates translated from Go templates get a second one, which also has the
//! filters their translation writes.

use minijinja::{AutoEscape, Environment, UndefinedBehavior};

use super::fill::placeholder;
use super::filters::{
    b64decode, b64encode, bounded_format, bounded_indent, bounded_replace, from_json, from_yaml,
    python_method, typed_json, yaml_scalar,
};
use super::functions::{annotation, annotation_list, service_account};
use super::go::{go_printed, go_range, go_volume_mounts};
use super::limits::FUEL;

/// The environment templates are compiled in, with nothing compiled yet.
pub(super) fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // Errors say what was undefined (`values.tracerVersion` is undefined): minijinja
    // tracks it in debug mode, which is on by default only in debug builds (the release
    // binary said "undefined value (undefined value)").
    env.set_debug(true);
    env.set_fuel(Some(FUEL));
    env.set_unknown_method_callback(python_method);
    env.add_filter("replace", bounded_replace);
    env.add_filter("indent", bounded_indent);
    env.add_filter("format", bounded_format);
    if let Ok(syntax) = minijinja::syntax::SyntaxConfig::builder()
        .keep_trailing_newline(true)
        .build()
    {
        env.set_syntax(syntax);
    }
    env.set_auto_escape_callback(auto_escape);
    env.set_formatter(print_value);
    env.add_filter("b64encode", b64encode);
    env.add_filter("b64decode", b64decode);
    env.add_filter("from_json", from_json);
    env.add_filter("typed_json", typed_json);
    env.add_filter("from_yaml", from_yaml);
    env.add_filter("yaml_scalar", yaml_scalar);
    env.add_function("annotation", annotation);
    env.add_function("service_account", service_account);
    env.add_function("annotation_list", annotation_list);
    env
}

/// The environment templates translated from Go templates are compiled in: the native one,
/// and the filters the translation writes.
pub(super) fn translated_environment() -> Environment<'static> {
    let mut env = environment();
    env.add_filter("go_printed", go_printed);
    env.add_filter("go_range", go_range);
    env.add_filter("go_volume_mounts", go_volume_mounts);
    env
}

/// Whole templates escape: the text of a `set` block or a macro is then marked safe, which
/// tells `placeholder` that it is the template's own text, holding placeholders.
fn auto_escape(name: &str) -> AutoEscape {
    if name.starts_with("whole:") {
        AutoEscape::Json
    } else {
        AutoEscape::None
    }
}

/// How a template prints a value: a whole template as a placeholder, a field template as
/// minijinja does.
fn print_value(
    out: &mut minijinja::Output,
    state: &mut minijinja::State,
    value: &minijinja::Value,
) -> Result<(), minijinja::Error> {
    if !state.name().starts_with("whole:") {
        return minijinja::escape_formatter(out, state, value);
    }
    placeholder(out, state, value)
}

pub(super) fn describe(e: &minijinja::Error) -> String {
    let mut msg = e
        .detail()
        .map_or_else(|| e.kind().to_string(), ToString::to_string);
    match e.kind() {
        minijinja::ErrorKind::UndefinedError => msg = format!("undefined value ({msg})"),
        minijinja::ErrorKind::OutOfFuel => {
            msg = format!(
                "the template did more than {FUEL} steps of work (a loop that does not end?)"
            );
        }
        _ => {}
    }
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        msg.push_str(&format!(": {s}"));
        source = s.source();
    }
    msg
}
