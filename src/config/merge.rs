//! Documents merged into one `Config`: each added in turn (converted, checked, its sidecars'
//! templates and its rules' matchers compiled), then what the rules name checked across files,
//! `--set` applied and the defaults decided.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::loaded::{
    Config, Defaults, Origin, RuleDef, SidecarDef, SidecarPlace, UnreadAnnotations,
};
use super::set::{self, Set};
use crate::config::compat;
use crate::diagnostic::codes;
use crate::diagnostic::{Located, suggest};
use crate::kinds::known_kinds;
use crate::model::schema::{Violation, ViolationKind, Wording, schema, validate};
use crate::model::{API_VERSION, ConfigFile, KIND, Rule, Sidecar};
use crate::select::Matcher;
use crate::template::{Dialect, Fault, SyntaxError};
use crate::yaml::Node;

/// One document of a configuration file, and the way from its paths to places in the file.
pub(super) struct Document<'a> {
    /// Its file's name and text.
    pub(super) name: &'a str,
    pub(super) text: &'a Arc<str>,
    /// Where it starts in `text`.
    pub(super) base: usize,
    /// Its own text.
    pub(super) source: &'a str,
    pub(super) root: &'a Node,
}

impl Document<'_> {
    /// Where the node at `path` is written (where the document is, when it has no such node).
    fn origin(&self, path: &[String]) -> Origin {
        let node = self.root.at(path).unwrap_or(self.root);
        Origin {
            file: self.name.to_owned(),
            text: Arc::clone(self.text),
            span: (self.base + node.start, self.base + node.end.max(node.start)),
        }
    }

    /// A problem another format's adapter found, at its place in the file.
    fn problem(&self, p: compat::Problem) -> Located {
        let mut o = self.origin(&p.path);
        if let Some((a, b)) = p.span {
            o.span = (self.base + a, self.base + b);
        }
        o.error(p.code, p.message)
    }

    fn violation(&self, v: &Violation) -> Located {
        located_violation(self.name, self.text, self.base, self.root, v)
    }

    /// A template of the sidecar at `path` that does not compile, pointed at inside its string.
    fn template_error(&self, path: &[String], e: &SyntaxError) -> Located {
        let sidecar = self.root.at(path).unwrap_or(self.root);
        let start = e.range.as_ref().map_or(0, |r| r.start);
        let pos = self.base + in_template(self.source, sidecar, &e.pointer, start);
        let located = Located::new(
            codes::CONFIG_TEMPLATE_SYNTAX,
            self.name,
            self.text,
            (pos, pos + 1),
            format!("template error: {}", e.message),
        );
        match go_template_help(self.text, pos) {
            Some(help) => located.help(help),
            None => located,
        }
    }

    /// Where the sidecar at `path` is written, to point into it later (its templates, the
    /// items it shares a name with another's); `native`: the document is a native
    /// configuration, not another injector's converted.
    fn sidecar_place(&self, path: &[String], native: bool) -> SidecarPlace {
        SidecarPlace {
            file: self.name.to_owned(),
            text: Arc::clone(self.text),
            base: self.base,
            len: self.source.len(),
            node: self.root.at(path).unwrap_or(self.root).clone(),
            native,
        }
    }
}

/// A help for a template error on a line written as a Go (Helm) template: `{{ .Values.x }}`
/// is `{{ values.x }}` in kinject's (Jinja) templates.
fn go_template_help(text: &str, at: usize) -> Option<&'static str> {
    let at = crate::diagnostic::lines::char_start(text, at.min(text.len()));
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let line = &text[start..end];
    let go = line.contains("{{ .") || line.contains("{{.") || line.contains("{{- .");
    go.then_some(
        "kinject's templates are Jinja (minijinja), not Go templates: Helm's `{{ .Values.x }}` is \
         `{{ values.x }}` here, with no leading dot (docs/templates.md)",
    )
}

/// Offset in the document `source` of byte `offset` of the template at `pointer` inside the
/// sidecar written at `sidecar`.
fn in_template(source: &str, sidecar: &Node, pointer: &str, offset: usize) -> usize {
    let p = crate::json::tokens(pointer);
    let node = sidecar.at(&p).unwrap_or(sidecar);
    crate::yaml::offset_in_scalar(source, node, offset)
}

impl SidecarPlace {
    /// A fault the trial render found, at its place in the template.
    fn fault(&self, sidecar: &str, f: &Fault) -> Located {
        let source = &self.text[self.base..self.base + self.len];
        let (start, end) = f.range.as_ref().map_or((0, 0), |r| (r.start, r.end));
        let at = |offset| self.base + in_template(source, &self.node, &f.pointer, offset);
        let (from, to) = (at(start), at(end.max(start + 1) - 1) + 1);
        let within = if f.pointer == "/template" {
            "its template".to_owned()
        } else {
            format!("`{}`", f.pointer)
        };
        Located::new(
            codes::CONFIG_TEMPLATE,
            &self.file,
            &self.text,
            (from, to.max(from + 1)),
            format!("sidecar `{sidecar}` at {within}: {}", f.message),
        )
        .help(f.help.clone())
    }
}

/// Where a rule names its sidecars (`inject`) and kinds (`match.kinds`), each entry's place.
struct RulePlaces {
    inject: Vec<Origin>,
    kinds: Vec<Origin>,
}

/// The configuration the documents read so far make, and what is wrong with them.
pub(super) struct Loading {
    config: Config,
    pub(super) errors: Vec<Located>,
    /// The defaults as the files set them (a later file's setting wins).
    defaults: crate::model::Defaults,
    /// Where each sidecar name was first defined.
    first_seen: HashMap<String, Origin>,
    /// Documents read as a configuration, of any format (a paused SidecarSet is one, and
    /// defines no sidecar).
    read_configurations: usize,
    /// Each rule's names, in `config.rules`' order: checked once every file (and its custom
    /// kinds) is read.
    rule_places: Vec<RulePlaces>,
    /// Where each sidecar is written: its templates are tried once `values` is complete, and
    /// what it shares with another sidecar is checked once every file is read.
    places: HashMap<String, SidecarPlace>,
}

impl Loading {
    pub(super) fn new() -> Self {
        Loading {
            config: Config::empty(),
            errors: Vec::new(),
            defaults: crate::model::Defaults::default(),
            first_seen: HashMap::new(),
            read_configurations: 0,
            rule_places: Vec::new(),
            places: HashMap::new(),
        }
    }

    /// Adds one document: converted when it is another injector's, checked, its sidecars'
    /// templates and its rules' matchers compiled.
    pub(super) fn document(
        &mut self,
        document: &Document<'_>,
        value: Value,
        ctx: &compat::Context<'_>,
    ) {
        let Some((value, stand_in, converted)) = self.native(document, value, ctx) else {
            return;
        };
        let unread = ctx.unread.take();
        let Some(cf) = self.configuration_file(document, &value) else {
            return;
        };
        self.read_configurations += usize::from(!stand_in);
        self.add(document, cf, &value, !converted, &unread);
    }

    /// The document as a native configuration (another injector's converted), whether it
    /// only stands in for one, and whether it was converted; `None` when it cannot be
    /// converted (its errors recorded).
    fn native(
        &mut self,
        document: &Document<'_>,
        value: Value,
        ctx: &compat::Context<'_>,
    ) -> Option<(Value, bool, bool)> {
        let converted = compat::to_native(&value, document.root, document.source, ctx);
        for p in ctx.warnings.take() {
            self.config.warnings.push(document.problem(p).warning());
        }
        // A document of another kind that is skipped (a ConfigMap beside the configuration)
        // stands in as an empty configuration, and is not one.
        let stand_in = matches!(&converted, Some(Ok(v)) if *v == compat::nothing());
        let was_converted = converted.is_some();
        let native = match converted {
            None => value,
            Some(Ok(native)) => native,
            Some(Err(compat::Failure::Located(mut located))) => {
                self.errors.append(&mut located);
                return None;
            }
            Some(Err(compat::Failure::Schema(violations))) => {
                for v in violations {
                    self.errors.push(document.violation(&v));
                }
                return None;
            }
            Some(Err(compat::Failure::Problems(problems))) => {
                for p in problems {
                    self.errors.push(document.problem(p));
                }
                return None;
            }
        };
        Some((native, stand_in, was_converted))
    }

    /// A native configuration read into its types, once it is of the format and holds to the
    /// schema; `None` when it does not (its errors recorded).
    fn configuration_file(&mut self, document: &Document<'_>, value: &Value) -> Option<ConfigFile> {
        if let Some(f) = format_fault(value) {
            // The field at fault (its line), else the document's first line: never the
            // whole document.
            let mut o = document.origin(&f.field.map(|k| vec![k.to_owned()]).unwrap_or_default());
            if f.field.is_none() {
                o.span = (o.span.0, o.span.0);
            }
            let mut error = o
                .error(codes::CONFIG_UNSUPPORTED_FORMAT, f.message)
                .help(f.help);
            if f.field.is_none() {
                // A document that is no configuration at all may be anything (a credential
                // file named by mistake, or linked): none of its text is shown.
                error = error.without_excerpt();
            }
            self.errors.push(error);
            return None;
        }
        let violations = validate(schema(), "", value);
        if !violations.is_empty() {
            for v in violations {
                self.errors.push(document.violation(&v));
            }
            return None;
        }
        match serde_json::from_value(value.clone()) {
            Ok(cf) => Some(cf),
            Err(e) => {
                self.errors.push(
                    document
                        .origin(&[])
                        .error(codes::CONFIG_INVALID, e.to_string()),
                );
                None
            }
        }
    }

    /// Adds what a configuration file defines (`value`: the file as written; `native`: not
    /// converted from another injector's format, whose sidecars leave `unread` unread).
    fn add(
        &mut self,
        document: &Document<'_>,
        cf: ConfigFile,
        value: &Value,
        native: bool,
        unread: &[UnreadAnnotations],
    ) {
        for (k, v) in cf.values {
            self.config.values.insert(k, v);
        }
        let (set, d) = (cf.defaults, &mut self.defaults);
        d.skip_host_network = set.skip_host_network.or(d.skip_host_network);
        d.skip_namespaces = set.skip_namespaces.or(d.skip_namespaces.take());
        d.jobs = set.jobs.or(d.jobs);
        d.allow_requests = set.allow_requests.or(d.allow_requests);
        d.sort_init_containers = set.sort_init_containers.or(d.sort_init_containers);
        self.config.kinds.extend(cf.kinds);
        for (i, spec) in cf.sidecars.into_iter().enumerate() {
            let unread = unread
                .iter()
                .filter(|u| u.sidecars.contains(&spec.name))
                .cloned()
                .collect();
            self.sidecar(document, i, spec, &value["sidecars"][i], native, unread);
        }
        for (i, spec) in cf.rules.into_iter().enumerate() {
            self.rule(document, i, spec, native);
        }
    }

    /// Adds sidecar `i` of the document (`written`: as written), its templates compiled,
    /// unless a sidecar of its name is defined already.
    fn sidecar(
        &mut self,
        document: &Document<'_>,
        i: usize,
        spec: Sidecar,
        written: &Value,
        native: bool,
        unread: Vec<UnreadAnnotations>,
    ) {
        let path = vec!["sidecars".to_owned(), i.to_string()];
        let o = document.origin(&path);
        if let Some(first) = self.first_seen.get(&spec.name) {
            let (line, col) = crate::diagnostic::lines::line_col(&first.text, first.span.0);
            self.errors.push(
                document
                    .origin(&[path.clone(), vec!["name".to_owned()]].concat())
                    .error(
                        codes::CONFIG_DUPLICATE_SIDECAR,
                        format!("sidecar `{}` is defined twice", spec.name),
                    )
                    .help(format!(
                        "the first definition is at {}:{line}:{col}",
                        first.file
                    )),
            );
            return;
        }
        self.first_seen.insert(spec.name.clone(), o.clone());
        if spec.body.service_account_name.as_deref() == Some("default") {
            let message = format!(
                "sidecar `{}` asks for the `default` service account, which every pod already has",
                spec.name
            );
            self.errors.push(
                document
                    .origin(&[path.clone(), vec!["serviceAccountName".to_owned()]].concat())
                    .error(codes::CONFIG_INVALID_VALUE, message)
                    .help("name the account the sidecar needs, or leave `serviceAccountName` out"),
            );
        }
        let definition = self.definition(document, &path, &spec, written);
        // Definitions read from other injectors' formats are not templates (`literal`), but
        // for salesforce's, whose Go templates kinject translated: those may call what the
        // translation writes, which native templates cannot.
        let dialect = if native {
            Dialect::Native
        } else {
            Dialect::Translated
        };
        if !spec.literal
            && let Err(errs) = self.config.templates.add_sidecar(
                &spec.name,
                &definition,
                spec.template.as_deref(),
                dialect,
            )
        {
            for e in errs {
                self.errors.push(document.template_error(&path, &e));
            }
        }
        self.places
            .insert(spec.name.clone(), document.sidecar_place(&path, native));
        self.config.sidecars.push(SidecarDef {
            spec,
            definition,
            origin: o,
            index: self.config.sidecars.len(),
            converted: !native,
            unread,
        });
    }

    /// What the sidecar at `path` adds (`written` without the fields that say how): only that
    /// is rendered, and a `template` stands for all of it.
    fn definition(
        &mut self,
        document: &Document<'_>,
        path: &[String],
        spec: &Sidecar,
        written: &Value,
    ) -> Value {
        let mut definition = written.clone();
        if let Value::Object(m) = &mut definition {
            // Only what the sidecar adds is rendered; the rest says how.
            let body_fields = crate::model::schema::body_schema()["properties"].as_object();
            m.retain(|k, _| body_fields.is_some_and(|f| f.contains_key(k)));
            if spec.template.is_some() && !m.is_empty() {
                let fields: Vec<&str> = m.keys().map(String::as_str).collect();
                self.errors.push(
                    document
                        .origin(&[path.to_vec(), vec!["template".to_owned()]].concat())
                        .error(
                            codes::CONFIG_TEMPLATE_AND_FIELDS,
                            format!(
                                "sidecar `{}` has both a `template` and {}",
                                spec.name,
                                fields.join(", ")
                            ),
                        )
                        .help(
                            "put everything the sidecar adds into the template, or use no template",
                        ),
                );
            }
        }
        definition
    }

    /// Adds rule `i` of the document, its matcher compiled; the sidecars and kinds it names
    /// are checked once every file is read.
    fn rule(&mut self, document: &Document<'_>, i: usize, spec: Rule, native: bool) {
        let path = vec!["rules".to_owned(), i.to_string()];
        let matcher = match Matcher::compile(&spec.matches) {
            Ok(m) => m,
            Err((field, message)) => {
                let p = [path.clone(), vec!["match".to_owned(), field]].concat();
                self.errors.push(
                    document
                        .origin(&p)
                        .error(codes::CONFIG_INVALID_MATCH, message),
                );
                return;
            }
        };
        let inject = (0..spec.inject.len())
            .map(|j| {
                document.origin(&[path.clone(), vec!["inject".to_owned(), j.to_string()]].concat())
            })
            .collect();
        let kinds = (0..spec.matches.kinds.len())
            .map(|j| {
                document.origin(
                    &[
                        path.clone(),
                        vec!["match".to_owned(), "kinds".to_owned(), j.to_string()],
                    ]
                    .concat(),
                )
            })
            .collect();
        self.rule_places.push(RulePlaces { inject, kinds });
        self.config.rules.push(RuleDef {
            spec,
            matcher,
            origin: document.origin(&path),
            converted: !native,
        });
    }

    /// Every sidecar a rule injects is defined, and every kind it matches is known (Kubernetes'
    /// or declared under `kinds`), whichever file defines them.
    pub(super) fn check_rules(&mut self) {
        let config = &self.config;
        let known = known_kinds(&config.kinds);
        for (rule, places) in config.rules.iter().zip(&self.rule_places) {
            for (name, o) in rule.spec.inject.iter().zip(&places.inject) {
                if config.sidecar(name).is_none() {
                    let mut e = o.error(
                        codes::CONFIG_UNKNOWN_SIDECAR,
                        format!("rule `{}` injects unknown sidecar `{name}`", rule.spec.name),
                    );
                    e = match suggest(name, config.sidecars.iter().map(|s| s.spec.name.as_str())) {
                        Some(h) => e.help(h),
                        None => e.help(format!(
                            "defined sidecars: {}",
                            names(config.sidecars.iter().map(|s| s.spec.name.as_str()))
                        )),
                    };
                    self.errors.push(e);
                }
            }
            for (kind, o) in rule.spec.matches.kinds.iter().zip(&places.kinds) {
                if !known.contains(kind) {
                    let mut e = o.error(
                        codes::CONFIG_UNKNOWN_KIND,
                        format!("rule `{}` matches unknown kind `{kind}`", rule.spec.name),
                    );
                    e = match suggest(kind, known.iter().map(String::as_str)) {
                        Some(h) => e.help(h),
                        None => e.help(
                            "declare custom resources under `kinds:` with their pod template path",
                        ),
                    };
                    self.errors.push(e);
                }
            }
        }
    }

    /// Sidecars that can be injected together and define one volume, image pull secret or
    /// container name each their own way: refused here, once, not for every object.
    fn check_clashes(&mut self) {
        let mut errors = super::clash::check(&self.config, &self.places);
        self.errors.append(&mut errors);
    }

    /// `--set` and `--set-json` overrides of `values`, each key one a template reads (checked
    /// once the templates compiled: with errors already, what they read is not known).
    pub(super) fn apply_sets(&mut self, sets: &[Set]) {
        let read = if self.errors.is_empty() {
            self.config.templates.values_read()
        } else {
            vec![String::new()]
        };
        let mut errors = set::apply(&mut self.config.values, sets, &read);
        self.errors.append(&mut errors);
    }

    /// Every template rendered for a typical object once `values` is complete: what fails
    /// whatever the object (an unknown filter, an undefined `values.x`) is an error here, once,
    /// at the template, not once per object.
    pub(super) fn trial_render(&mut self) {
        for sidecar in &self.config.sidecars {
            let name = &sidecar.spec.name;
            let Some(place) = self.places.get(name).filter(|_| !sidecar.spec.literal) else {
                continue;
            };
            for fault in self.config.templates.trial(name, &self.config.values) {
                self.errors.push(place.fault(name, &fault));
            }
        }
    }

    /// The configuration, its defaults decided (and, for injection, its sidecars checked
    /// against each other); or every error, after the warnings.
    pub(super) fn finish(
        mut self,
        texts: &[(String, Arc<str>)],
        injecting: bool,
    ) -> Result<Config, Vec<Located>> {
        let (set, d) = (std::mem::take(&mut self.defaults), Defaults::default());
        self.config.defaults = Defaults {
            skip_host_network: set.skip_host_network.unwrap_or(d.skip_host_network),
            skip_namespaces: set.skip_namespaces.unwrap_or(d.skip_namespaces),
            jobs: set.jobs.unwrap_or(d.jobs),
            allow_requests: set.allow_requests.unwrap_or(d.allow_requests),
            sort_init_containers: set.sort_init_containers.unwrap_or(d.sort_init_containers),
        };
        // Whether objects may request sidecars is decided now.
        if injecting {
            self.check_clashes();
        }
        if self.errors.is_empty() && self.read_configurations == 0 {
            self.errors.push(nothing_to_inject(texts));
        }
        if self.errors.is_empty() {
            Ok(self.config)
        } else {
            // What was found on the way says why, as much as the errors do.
            let mut all = std::mem::take(&mut self.config.warnings);
            all.append(&mut self.errors);
            Err(all)
        }
    }
}

/// Configuration files that hold no configuration: every object would pass through untouched
/// (an empty file, one of comments, a generated configuration that came out empty, a file
/// that is something else), which a CI step would take for success.
fn nothing_to_inject(texts: &[(String, Arc<str>)]) -> Located {
    let empty: Arc<str> = Arc::from("");
    let (name, text) = texts
        .first()
        .map_or(("<configuration>", &empty), |(n, t)| (n, t));
    let read = if texts.len() > 1 {
        let all: Vec<&str> = texts.iter().map(|(n, _)| n.as_str()).collect();
        format!(" (read: {})", all.join(", "))
    } else {
        String::new()
    };
    Located::new(
        codes::CONFIG_EMPTY,
        name,
        text,
        (0, 0),
        format!("no configuration here, so nothing would be injected{read}"),
    )
    .help(format!(
        "a configuration is a document with `apiVersion: {API_VERSION}` and `kind: {KIND}` (or another injector's \
         format: docs/compat.md); check that this is the file you meant"
    ))
}

fn names<'a>(it: impl Iterator<Item = &'a str>) -> String {
    let v: Vec<String> = it.map(|n| format!("`{n}`")).collect();
    if v.is_empty() {
        "none".to_owned()
    } else {
        v.join(", ")
    }
}

/// Why a document is not a native configuration: what to say, which field to point at
/// (`apiVersion` or `kind`; none: the document's start), and a help.
pub(super) struct FormatFault {
    pub(super) message: String,
    pub(super) field: Option<&'static str>,
    pub(super) help: String,
}

/// What is wrong with the `apiVersion` and `kind` of `value`, if anything.
pub(super) fn format_fault(value: &Value) -> Option<FormatFault> {
    let api = value.get("apiVersion").and_then(Value::as_str);
    let kind = value.get("kind").and_then(Value::as_str);
    let start = format!(
        "a kinject configuration starts with `apiVersion: {API_VERSION}` and `kind: {KIND}`"
    );
    let fault = |message: String, field, help: Option<String>| FormatFault {
        message,
        field,
        help: help.unwrap_or_else(|| start.clone()),
    };
    let close = |given: &str, want: &str| {
        given.eq_ignore_ascii_case(want) || strsim::jaro_winkler(given, want) > 0.85
    };
    match (api, kind) {
        (Some(API_VERSION), Some(KIND)) => None,
        (None, None) => Some(fault(
            "not a kinject configuration: `apiVersion` and `kind` are missing".to_owned(),
            None,
            None,
        )),
        (None, Some(k)) => Some(fault(
            format!("`apiVersion` is missing (the document has `kind: {k}`)"),
            Some("kind"),
            (k == KIND).then(|| format!("add `apiVersion: {API_VERSION}` above `kind`")),
        )),
        (Some(a), None) => Some(fault(
            format!("`kind` is missing (the document has `apiVersion: {a}`)"),
            Some("apiVersion"),
            (a == API_VERSION).then(|| format!("add `kind: {KIND}` below `apiVersion`")),
        )),
        (Some(a), Some(k)) => {
            let message = format!(
                "`{a}` `{k}` is not a configuration format kinject reads (it reads {API_VERSION} {KIND}, \
                 OpenKruise SidecarSet, and the salesforce, tumblr and Expedia injectors' files)"
            );
            if a == API_VERSION || (close(a, API_VERSION) && k == KIND) {
                // The help is for the field at fault: the kind when the apiVersion is right,
                // else the apiVersion (`kinject.dev/v1` with the right kind got "did you mean
                // `kind: InjectionConfig`?").
                let (field, help) = if a == API_VERSION {
                    (
                        "kind",
                        close(k, KIND).then(|| format!("did you mean `kind: {KIND}`?")),
                    )
                } else {
                    (
                        "apiVersion",
                        Some(format!("did you mean `apiVersion: {API_VERSION}`?")),
                    )
                };
                Some(fault(message, Some(field), help))
            } else if close(k, KIND) {
                Some(fault(
                    message,
                    Some("kind"),
                    Some(format!(
                        "did you mean `apiVersion: {API_VERSION}` and `kind: {KIND}`?"
                    )),
                ))
            } else if crate::kinds::known_kinds(&[])
                .iter()
                .any(|known| known == k)
            {
                Some(fault(
                    message,
                    Some("kind"),
                    Some(format!(
                        "this is a `{k}`, a manifest: give it as an input (`kinject inject -c CONFIG {}`), and the \
                         configuration with `-c`",
                        "FILE"
                    )),
                ))
            } else {
                Some(fault(message, Some("apiVersion"), None))
            }
        }
    }
}

/// A schema violation in the document at `base` of file `name` (`text`), as a diagnostic.
pub(crate) fn located_violation(
    name: &str,
    text: &Arc<str>,
    base: usize,
    root: &Node,
    v: &Violation,
) -> Located {
    // An unknown field is pointed at by its key; the rest by the value.
    let key = match v.kind {
        ViolationKind::UnknownField { .. } => root.key_span(&v.path),
        _ => None,
    };
    let span = key.map_or_else(
        || {
            let n = root.at(&v.path).unwrap_or(root);
            (base + n.start, base + n.end.max(n.start))
        },
        |(s, e)| (base + s, base + e),
    );
    let wording = Wording {
        whole: Some("the file"),
        ..Wording::default()
    };
    let mut e = Located::new(v.code(), name, text, span, v.message(wording));
    if let Some(label) = v.label() {
        e = e.label(label);
    }
    if let Some(help) = v.help() {
        e = e.help(help);
    }
    e
}
