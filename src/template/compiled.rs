//! Every template of a configuration, compiled once, and rendered for an object: a sidecar's
//! field templates into a copy of its definition, its whole template into the fields it gives.

use std::collections::HashMap;

use minijinja::Environment;
use serde_json::Value;

use super::env::{describe, environment, translated_environment};
use super::error::{RENDER, SyntaxError, TemplateError};
use super::fill::{MARK_CLOSE, MARK_OPEN, Printed, fill_in};
use super::limits::{Bounded, MAX_OUTPUT};
use crate::json::Pointer;
use crate::json::patch::{self};
use crate::model::schema::is_template;

/// A field template, compiled.
pub(super) struct Field {
    /// Where it is in the sidecar definition.
    pub(super) pointer: String,
    /// Its name in the environment.
    pub(super) name: String,
    /// For a single `{{ expr }}` (rendered to a typed value): where `expr` is in the text.
    pub(super) typed: Option<std::ops::Range<usize>>,
}

/// Which language a sidecar's templates are written in, which decides what they may call.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Dialect {
    /// kinject's own: minijinja, with kinject's filters and functions.
    Native,
    /// Translated by kinject from another injector's Go templates (salesforce's): also the
    /// filters the translation writes (`go_printed`, `go_range`, `go_volume_mounts`), which
    /// a native configuration's templates do not see.
    Translated,
}

/// The templates of one sidecar, compiled.
pub(super) struct SidecarTemplates {
    pub(super) fields: Vec<Field>,
    pub(super) whole: Option<String>,
    pub(super) dialect: Dialect,
}

impl SidecarTemplates {
    /// The names of its compiled templates, field and whole.
    fn names(&self) -> impl Iterator<Item = &str> {
        self.fields
            .iter()
            .map(|f| f.name.as_str())
            .chain(self.whole.as_deref())
    }
}

/// Every template of a configuration, compiled.
pub struct Templates {
    /// Where native templates are compiled.
    pub(super) env: Environment<'static>,
    /// Where translated templates are compiled: made when the first is added.
    pub(super) translated: Option<Environment<'static>>,
    pub(super) sidecars: HashMap<String, SidecarTemplates>,
}

impl Default for Templates {
    fn default() -> Self {
        Self::new()
    }
}

impl Templates {
    pub fn new() -> Self {
        Templates {
            env: environment(),
            translated: None,
            sidecars: HashMap::new(),
        }
    }

    /// The environment templates of `dialect` are compiled in (the native one while no
    /// translated template was added).
    pub(super) fn env(&self, dialect: Dialect) -> &Environment<'static> {
        match (dialect, &self.translated) {
            (Dialect::Translated, Some(env)) => env,
            _ => &self.env,
        }
    }

    /// Compiles the templates of sidecar `name`, written in `dialect`: each template string
    /// in `definition` and the `whole` template text.
    pub(crate) fn add_sidecar(
        &mut self,
        name: &str,
        definition: &Value,
        whole: Option<&str>,
        dialect: Dialect,
    ) -> Result<(), Vec<SyntaxError>> {
        let mut errors = Vec::new();
        let mut compiled = SidecarTemplates {
            fields: Vec::new(),
            whole: None,
            dialect,
        };
        let env = match dialect {
            Dialect::Native => &mut self.env,
            Dialect::Translated => self.translated.get_or_insert_with(translated_environment),
        };
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
            match env.add_template_owned(template_name.clone(), source) {
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
                    message: "U+E000 and U+E001 (private-use characters) are kinject's marks for printed values: a \
                              template may not hold them"
                        .to_owned(),
                    range: Some(at..at + MARK_OPEN.len_utf8()),
                });
            } else {
                match env.add_template_owned(template_name.clone(), text.to_owned()) {
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
            .sidecars
            .values()
            .flat_map(|t| {
                let env = self.env(t.dialect);
                t.names().filter_map(|n| env.get_template(n).ok())
            })
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
    ) -> Result<Value, TemplateError> {
        let mut out = definition.clone();
        let Some(compiled) = self.sidecars.get(name) else {
            return Ok(out);
        };
        let env = self.env(compiled.dialect);
        // Last first, so removing a list item leaves the pointers still to fill valid.
        for Field {
            pointer,
            name: template_name,
            typed,
        } in compiled.fields.iter().rev()
        {
            let text = render_named(env, template_name, ctx).map_err(|message| TemplateError {
                code: RENDER,
                pointer: pointer.clone(),
                message,
            })?;
            let value = if typed.is_some() {
                serde_json::from_str(&text).map_err(|e| TemplateError {
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
    ) -> Option<Result<Value, TemplateError>> {
        let compiled = self.sidecars.get(name)?;
        let template_name = compiled.whole.as_ref()?;
        let fail = |message| TemplateError {
            code: RENDER,
            pointer: "/template".to_owned(),
            message,
        };
        Some(
            render_printed(self.env(compiled.dialect), template_name, ctx)
                .map_err(fail)
                .and_then(|(text, printed)| fill_in(&text, &printed)),
        )
    }
}

/// The text template `template_name` of `env` renders for `ctx`.
fn render_named(
    env: &Environment<'static>,
    template_name: &str,
    ctx: &minijinja::Value,
) -> Result<String, String> {
    render_printed(env, template_name, ctx).map(|(text, _)| text)
}

/// The text template `template_name` of `env` renders for `ctx`, and (for a whole
/// template) what its placeholders stand for.
fn render_printed(
    env: &Environment<'static>,
    template_name: &str,
    ctx: &minijinja::Value,
) -> Result<(String, Printed), String> {
    let template = env.get_template(template_name).map_err(|e| describe(&e))?;
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
