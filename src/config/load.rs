//! Loading configuration files into one `Config` (its types are here): the files read, their
//! documents parsed (salesforce sidecar files and `formats` taken first), then each merged in
//! (`merge`), every problem reported with its file, line and column.

use crate::diagnostic::codes;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::merge::{Document, Loading};
use crate::config::compat;
use crate::diagnostic::Located;
use crate::model::schema::{Violation, ViolationKind, Wording};
use crate::model::{API_VERSION, CustomKind, JobPolicy, KIND, Rule, Sidecar};
use crate::read;
use crate::select::Matcher;
use crate::template::Templates;
use crate::yaml::{Node, Parsed};

/// Where a definition was written.
#[derive(Debug, Clone)]
pub struct Origin {
    pub file: String,
    pub text: Arc<str>,
    /// Byte span of the definition in `text`.
    pub span: (usize, usize),
}

impl Origin {
    /// File, line and column where the definition starts.
    pub fn position(&self) -> (&str, usize, usize) {
        let (line, column) = crate::diagnostic::lines::line_col(&self.text, self.span.0);
        (&self.file, line, column)
    }

    pub(crate) fn error(&self, code: &'static str, message: impl Into<String>) -> Located {
        Located::new(code, &self.file, &self.text, self.span, message)
    }
}

pub struct SidecarDef {
    pub spec: Sidecar,
    /// The body as written (before templates), for rendering.
    pub definition: Value,
    pub origin: Origin,
    /// Its place in `Config::sidecars` (where a run keeps what it made of it).
    pub index: usize,
}

pub struct RuleDef {
    pub spec: Rule,
    pub matcher: Matcher,
    pub origin: Origin,
}

/// Defaults with every field decided.
#[derive(Debug, Clone)]
pub struct Defaults {
    pub skip_host_network: bool,
    pub skip_namespaces: Vec<String>,
    pub jobs: JobPolicy,
    pub allow_requests: bool,
    pub sort_init_containers: bool,
}

impl Default for Defaults {
    fn default() -> Self {
        Defaults {
            skip_host_network: true,
            skip_namespaces: ["kube-system", "kube-public", "kube-node-lease"]
                .map(str::to_owned)
                .to_vec(),
            jobs: JobPolicy::Skip,
            allow_requests: true,
            sort_init_containers: false,
        }
    }
}

/// Every configuration file, merged and compiled.
pub struct Config {
    pub sidecars: Vec<SidecarDef>,
    pub rules: Vec<RuleDef>,
    pub values: Map<String, Value>,
    pub defaults: Defaults,
    pub kinds: Vec<CustomKind>,
    pub templates: Templates,
    /// Findings that fail nothing (shown when the configuration is loaded).
    pub warnings: Vec<Located>,
}

impl Config {
    pub fn sidecar(&self, name: &str) -> Option<&SidecarDef> {
        self.sidecars.iter().find(|s| s.spec.name == name)
    }

    /// Whether a rule selects on the labels of namespaces (`namespaceSelector`).
    pub fn selects_on_namespace_labels(&self) -> bool {
        self.rules
            .iter()
            .any(|r| r.spec.matches.namespace_selector.is_some())
    }

    /// An empty configuration (no sidecars, no rules).
    pub fn empty() -> Self {
        Config {
            sidecars: Vec::new(),
            rules: Vec::new(),
            values: Map::new(),
            defaults: Defaults::default(),
            kinds: Vec::new(),
            templates: Templates::new(),
            warnings: Vec::new(),
        }
    }
}

/// A configuration file: its name as given, and its text.
struct File {
    name: String,
    text: Arc<str>,
}

/// The files to read for `paths`: a directory stands for its `.yaml`, `.yml` and `.json` files
/// (not its subdirectories), in name order, as tumblr's `--config-directory` reads them.
fn expand(paths: &[&Path]) -> Result<Vec<std::path::PathBuf>, Vec<Located>> {
    let mut out = Vec::new();
    for path in paths {
        if !path.is_dir() {
            out.push(path.to_path_buf());
            continue;
        }
        let name = path.display().to_string();
        let entries = std::fs::read_dir(path).map_err(|e| {
            vec![Located::new(
                codes::CONFIG_IO,
                &name,
                &Arc::<str>::from(""),
                (0, 0),
                format!("cannot read directory: {e}"),
            )]
        })?;
        let mut found: Vec<std::path::PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.is_file()
                    && !p
                        .file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with('.'))
                    && p.extension()
                        .and_then(|e| e.to_str())
                        .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
            })
            .collect();
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

/// A directory given as the configuration that holds no configuration file.
fn no_configuration_file(dir: &Path) -> Located {
    Located::new(
        codes::CONFIG_EMPTY,
        &dir.display().to_string(),
        &Arc::<str>::from(""),
        (0, 0),
        "no configuration file here (a directory's .yaml, .yml and .json files are read), so nothing would be injected",
    )
}

/// Loads configuration files (a directory: its YAML files); `sets` are `--set key=value`
/// overrides of `values`.
pub(crate) fn load(paths: &[&Path], sets: &[String]) -> Result<Config, Vec<Located>> {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    let expanded = expand(paths)?;
    if expanded.is_empty() {
        return Err(paths.iter().map(|p| no_configuration_file(p)).collect());
    }
    for path in &expanded {
        let name = path.display().to_string();
        match std::fs::read(path) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => files.push(File {
                    name,
                    text: Arc::from(text),
                }),
                Err(e) => {
                    let text: Arc<str> =
                        Arc::from(String::from_utf8_lossy(e.as_bytes()).into_owned());
                    let at = e.utf8_error().valid_up_to();
                    errors.push(Located::new(
                        codes::CONFIG_ENCODING,
                        &name,
                        &text,
                        (at, at),
                        "not UTF-8 text",
                    ));
                }
            },
            Err(e) => {
                let text: Arc<str> = Arc::from("");
                errors.push(Located::new(
                    codes::CONFIG_IO,
                    &name,
                    &text,
                    (0, 0),
                    format!("cannot read: {e}"),
                ));
            }
        }
    }
    let texts: Vec<(String, Arc<str>)> = files.into_iter().map(|f| (f.name, f.text)).collect();
    match load_texts(&texts, sets) {
        Ok(c) if errors.is_empty() => Ok(c),
        Ok(_) => Err(errors),
        Err(mut more) => {
            errors.append(&mut more);
            Err(errors)
        }
    }
}

/// Loads configuration from (name, text) pairs: every document is read first (what salesforce
/// sidecar files and `formats` say applies to the documents before them too), then each is
/// added in turn, then what rules name is checked against what all of them define.
pub fn load_texts(texts: &[(String, Arc<str>)], sets: &[String]) -> Result<Config, Vec<Located>> {
    let mut loading = Loading::new();
    let Documents {
        catalogs,
        formats,
        parsed,
    } = read_documents(texts, &mut loading.errors);
    let inherited = RefCell::new(HashMap::new());
    for ParsedDocument {
        file,
        range,
        parsed,
    } in parsed
    {
        let (name, text) = &texts[file];
        let Some(root) = &parsed.root else { continue };
        let document = Document {
            name,
            text,
            base: range.start,
            source: &text[range.clone()],
            root,
        };
        let ctx = compat::Context {
            file: name,
            options: &formats,
            catalogs: &catalogs,
            warnings: RefCell::new(Vec::new()),
            inherited: &inherited,
        };
        loading.document(&document, parsed.value, &ctx);
    }
    if let Some(e) = catalogs.unused() {
        loading.errors.push(e);
    }
    loading.check_rules();
    loading.apply_sets(sets);
    loading.finish(texts)
}

/// Every document of the configuration files, parsed, and what the other formats need read
/// before any of them is converted.
#[derive(Default)]
struct Documents {
    /// The salesforce sidecar files' entries (read before the mutation files that name them).
    catalogs: compat::salesforce::Catalogs,
    /// The other formats' flags, from the last native configuration that sets them (they apply
    /// to files given before it too).
    formats: crate::model::Formats,
    /// The other documents, in file order.
    parsed: Vec<ParsedDocument>,
}

struct ParsedDocument {
    /// Its file's index in the texts given.
    file: usize,
    /// Where it is in its file.
    range: std::ops::Range<usize>,
    parsed: Parsed,
}

/// Reads every document of `texts`: salesforce sidecar files into their catalogs, the rest
/// parsed (YAML errors in `errors`), with the `formats` they set.
fn read_documents(texts: &[(String, Arc<str>)], errors: &mut Vec<Located>) -> Documents {
    let mut found = Documents::default();
    for (index, (name, text)) in texts.iter().enumerate() {
        for range in read::documents(text) {
            match compat::salesforce::read_sidecar_file(
                name,
                text,
                range.clone(),
                &mut found.catalogs,
            ) {
                Some(Ok(())) => continue,
                Some(Err(mut located)) => {
                    errors.append(&mut located);
                    continue;
                }
                None => {}
            }
            match crate::yaml::parse_document(&text[range.clone()]) {
                Ok(parsed) => {
                    if let Some(f) = parsed
                        .value
                        .get("formats")
                        .filter(|_| check_format(&parsed.value).is_ok())
                        .and_then(|f| {
                            serde_json::from_value::<crate::model::Formats>(f.clone()).ok()
                        })
                    {
                        found.formats = f;
                    }
                    found.parsed.push(ParsedDocument {
                        file: index,
                        range,
                        parsed,
                    });
                }
                Err(e) => {
                    let at = range.start + e.offset;
                    errors.push(Located::new(
                        codes::CONFIG_SYNTAX,
                        name,
                        text,
                        (at, at),
                        format!("invalid YAML: {}", e.message),
                    ));
                }
            }
        }
    }
    found
}

pub(super) fn check_format(value: &Value) -> Result<(), String> {
    let api = value.get("apiVersion").and_then(Value::as_str);
    let kind = value.get("kind").and_then(Value::as_str);
    match (api, kind) {
        (Some(API_VERSION), Some(KIND)) => Ok(()),
        (Some(a), Some(k)) => Err(format!(
            "`{a}` `{k}` is not a configuration format kinject reads (it reads kinject.dev/v1alpha1 InjectionConfig, OpenKruise SidecarSet, and the salesforce, tumblr and Expedia injectors' files)"
        )),
        _ => Err("not a kinject configuration: `apiVersion` and `kind` are missing".to_owned()),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn load_one(text: &str) -> Result<Config, Vec<Located>> {
        load_texts(
            &[("c.yaml".to_owned(), Arc::from(text))],
            &["port=80".to_owned()],
        )
    }

    #[test]
    fn loads_and_sets_values() {
        let c = load_one("apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: p\n  containers:\n  - name: p\n    image: x\nrules:\n- name: r\n  inject: [p]\n").unwrap();
        assert_eq!(c.sidecars.len(), 1);
        assert_eq!(c.values["port"], 80);
    }

    #[test]
    fn unknown_field_is_located_with_a_suggestion() {
        let text = "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: p\n  containers:\n  - name: p\n    imagee: x\n";
        let errs = load_one(text).err().unwrap();
        assert_eq!(errs.len(), 1);
        let e = &errs[0];
        assert_eq!(e.code, "kinject::config::unknown_field");
        assert_eq!(e.location, "c.yaml:7:5");
        assert_eq!(e.help.as_deref(), Some("did you mean `image`?"));
    }

    #[test]
    fn unknown_sidecar_and_kind() {
        let text = "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: proxy\nrules:\n- name: r\n  match: {kinds: [Deploymnet]}\n  inject: [proxi]\n";
        let errs = load_one(text).err().unwrap();
        let codes: Vec<&str> = errs.iter().map(|e| e.code).collect();
        assert!(
            codes.contains(&"kinject::config::unknown_sidecar"),
            "{errs:?}"
        );
        assert!(codes.contains(&"kinject::config::unknown_kind"), "{errs:?}");
        let sidecar = errs
            .iter()
            .find(|e| e.code == "kinject::config::unknown_sidecar")
            .unwrap();
        assert_eq!(sidecar.location, "c.yaml:8:12");
        assert_eq!(sidecar.help.as_deref(), Some("did you mean `proxy`?"));
    }

    #[test]
    fn template_errors_point_into_the_string() {
        let text = "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: p\n  containers:\n  - name: p\n    image: \"x{{ a + }}\"\n";
        let errs = load_one(text).err().unwrap();
        assert_eq!(errs[0].code, "kinject::config::template_syntax");
        assert!(
            errs[0].location.starts_with("c.yaml:7:"),
            "{}",
            errs[0].location
        );
    }
}
