//! Loading configuration files into one `Config` (its types are in `loaded`): the files read
//! (a directory's expanded), their documents parsed (what the other formats need from all of
//! them taken first: `compat::prepare`), then each merged in (`merge`), every problem
//! reported with its file, line and column.

use std::path::Path;
use std::sync::Arc;

use super::compat::prepare::{Prepared, not_read_in_directory};
use super::loaded::Config;
use super::merge::{Document, Loading};
use super::set::Set;
use crate::diagnostic::Located;
use crate::diagnostic::codes;
use crate::read;
use crate::yaml::Parsed;

/// A configuration file: its name as given, and its text.
struct File {
    name: String,
    text: Arc<str>,
}

/// The files to read for `paths`: a directory stands for its `.yaml`, `.yml` and `.json` files
/// (not its subdirectories), in name order; each with whether it was found in a directory.
pub(crate) fn expand(paths: &[&Path]) -> Result<Vec<(std::path::PathBuf, bool)>, Vec<Located>> {
    let mut out = Vec::new();
    for path in paths {
        if !path.is_dir() {
            out.push((path.to_path_buf(), false));
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
        // Its files stay in it, as a walk's do: a ConfigMap's mount links its files to
        // `..data/` inside it; a link that leads out is refused, not read.
        let tree = crate::tree::Tree::new(path).ok();
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
        if let Some(tree) = &tree {
            let outside: Vec<Located> = found
                .iter()
                .filter_map(|p| {
                    let why = tree.check(p).err()?;
                    Some(Located::new(
                        codes::CONFIG_IO,
                        &p.display().to_string(),
                        &Arc::<str>::from(""),
                        (0, 0),
                        format!("{why}: not read"),
                    ))
                })
                .collect();
            if !outside.is_empty() {
                return Err(outside);
            }
        }
        out.extend(found.into_iter().map(|p| (p, true)));
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

/// Loads configuration files (a directory: its YAML files); `sets` are `--set` and
/// `--set-json` overrides of `values`. Every template is tried for a typical object
/// (`trial_render`).
pub(crate) fn load(paths: &[&Path], sets: &[Set]) -> Result<Config, Vec<Located>> {
    load_files(paths, sets, true)
}

/// Loads configuration files for `uninject`, which renders no template for what it reports,
/// so they are not tried: values given by `--set` at injection may be missing. Nor are the
/// sidecars checked against each other: what clashes cannot be injected, and removing what
/// was injected before needs only their names.
pub(crate) fn load_untried(paths: &[&Path]) -> Result<Config, Vec<Located>> {
    load_files(paths, &[], false)
}

/// The configuration files `load` reads for `paths` (a directory's expanded, a file its
/// injector would not read from there left out: `compat::prepare`), with their texts: what a
/// server given them must be given.
#[cfg_attr(
    not(feature = "serve"),
    expect(dead_code, reason = "`kinject serve`'s alone")
)]
pub(crate) fn texts(paths: &[&Path]) -> Result<Vec<(String, Arc<str>)>, Vec<Located>> {
    let (files, errors, _) = read_files(paths)?;
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(files.into_iter().map(|f| (f.name, f.text)).collect())
}

fn load_files(paths: &[&Path], sets: &[Set], tried: bool) -> Result<Config, Vec<Located>> {
    let (files, mut errors, mut skipped) = read_files(paths)?;
    if files.is_empty() && !errors.is_empty() {
        // Nothing read: that it holds no configuration would say nothing more.
        skipped.append(&mut errors);
        return Err(skipped);
    }
    let texts: Vec<(String, Arc<str>)> = files.into_iter().map(|f| (f.name, f.text)).collect();
    match load_texts_with(&texts, sets, tried) {
        Ok(mut c) if errors.is_empty() => {
            skipped.append(&mut c.warnings);
            c.warnings = skipped;
            Ok(c)
        }
        Ok(_) => Err(errors),
        Err(mut more) => {
            skipped.append(&mut errors);
            skipped.append(&mut more);
            Err(skipped)
        }
    }
}

/// The files read for `paths`, the errors of those that cannot be, and the warnings for
/// those left out.
type Read = (Vec<File>, Vec<Located>, Vec<Located>);

fn read_files(paths: &[&Path]) -> Result<Read, Vec<Located>> {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    let expanded = expand(paths)?;
    if expanded.is_empty() {
        return Err(paths.iter().map(|p| no_configuration_file(p)).collect());
    }
    let mut skipped = Vec::new();
    for (path, in_directory) in &expanded {
        let name = path.display().to_string();
        match std::fs::read(path) {
            Ok(bytes) if bytes.contains(&0) => errors.push(binary(&name)),
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => match in_directory
                    .then(|| not_read_in_directory(path, &name, &text))
                    .flatten()
                {
                    Some(warning) => skipped.push(warning),
                    None => files.push(File {
                        name,
                        text: Arc::from(text),
                    }),
                },
                Err(e) => {
                    let text: Arc<str> =
                        Arc::from(String::from_utf8_lossy(e.as_bytes()).into_owned());
                    let at = e.utf8_error().valid_up_to();
                    // No excerpt: a file that is not text may be anything.
                    errors.push(
                        Located::new(
                            codes::CONFIG_ENCODING,
                            &name,
                            &text,
                            (at, at),
                            "not UTF-8 text",
                        )
                        .without_excerpt(),
                    );
                }
            },
            Err(e) => errors.push(unreadable(path, &e)),
        }
    }
    Ok((files, errors, skipped))
}

/// The error for a configuration file holding a NUL byte: binary, not text (a process's
/// `environ`, an archive), shown without an excerpt.
fn binary(name: &str) -> Located {
    Located::new(
        codes::CONFIG_ENCODING,
        name,
        &Arc::<str>::from(""),
        (0, 0),
        "a binary file (it holds a NUL byte), not a configuration",
    )
}

/// Loads configuration from (name, text) pairs: every document is read first (what some say
/// applies to the documents before them too: `compat::prepare`), then each is added in turn,
/// then what rules name is checked against what all of them define.
pub fn load_texts(texts: &[(String, Arc<str>)], sets: &[Set]) -> Result<Config, Vec<Located>> {
    load_texts_with(texts, sets, true)
}

/// `load_texts`, for injection when `tried`: its templates tried, its sidecars checked
/// against each other.
fn load_texts_with(
    texts: &[(String, Arc<str>)],
    sets: &[Set],
    tried: bool,
) -> Result<Config, Vec<Located>> {
    let mut loading = Loading::new();
    let Documents { prepared, parsed } = read_documents(texts, &mut loading.errors);
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
        loading.document(&document, parsed.value, &prepared.context(name));
    }
    if let Some(e) = prepared.unused() {
        loading.errors.push(e);
    }
    loading.check_rules();
    loading.apply_sets(sets);
    if tried {
        loading.trial_render();
    }
    loading.finish(texts, tried)
}

/// Every document of the configuration files, parsed, and what the other formats need read
/// before any of them is converted.
#[derive(Default)]
struct Documents {
    /// What the other formats took and noted (`compat::prepare`).
    prepared: Prepared,
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

/// Reads every document of `texts`: those a format reads ahead taken by it, the rest parsed
/// (YAML errors in `errors`) and shown to the formats (`compat::prepare`).
fn read_documents(texts: &[(String, Arc<str>)], errors: &mut Vec<Located>) -> Documents {
    let mut found = Documents::default();
    for (index, (name, text)) in texts.iter().enumerate() {
        for range in read::documents(text) {
            match found.prepared.take(name, text, range.clone()) {
                Some(Ok(())) => continue,
                Some(Err(mut located)) => {
                    errors.append(&mut located);
                    continue;
                }
                None => {}
            }
            match crate::yaml::parse_document(&text[range.clone()]) {
                Ok(parsed) => {
                    found.prepared.note(&parsed.value);
                    found.parsed.push(ParsedDocument {
                        file: index,
                        range,
                        parsed,
                    });
                }
                Err(e) => {
                    let at = range.start + e.offset;
                    let mut located = Located::new(
                        codes::CONFIG_SYNTAX,
                        name,
                        text,
                        (at, at),
                        format!("invalid YAML: {}", e.message),
                    );
                    let help = quoting_help(text, at)
                        .or_else(|| crate::yaml::syntax_help(text, at, &e.message));
                    if let Some(help) = help {
                        located = located.help(help);
                    }
                    errors.push(located);
                }
            }
        }
    }
    found
}

/// A help for a YAML error on a line that holds a template: its quotes most likely closed the
/// YAML string around it (`"x:{{ v | default("1") }}"`).
fn quoting_help(text: &str, at: usize) -> Option<&'static str> {
    let start = text[..at.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let line = &text[start..end];
    (line.contains("{{") || line.contains("{%")).then_some(
        "a template's quotes end the YAML string around it: inside a \"…\" value write the \
         template's strings with single quotes (`\"x:{{ v | default('1') }}\"`), or quote the \
         value with single quotes (`'x:{{ v | default(\"1\") }}'`), or use a block scalar (`|`)",
    )
}

/// The error for a configuration file that cannot be read: it is the one given with `-c`, and
/// a file of a close name beside it is suggested.
fn unreadable(path: &Path, e: &std::io::Error) -> Located {
    let name = path.display().to_string();
    let mut located = Located::new(
        codes::CONFIG_IO,
        &name,
        &Arc::<str>::from(""),
        (0, 0),
        format!("cannot read the configuration file `{name}`: {e}"),
    );
    if let Some(help) = crate::diagnostic::similar_file(path) {
        located = located.help(help);
    }
    located
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_one(text: &str) -> Result<Config, Vec<Located>> {
        load_texts(
            &[("c.yaml".to_owned(), Arc::from(text))],
            &[Set::json("port=80")],
        )
    }

    #[test]
    fn loads_and_sets_values() {
        let c = load_one("apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: p\n  containers:\
                          \n  - name: p\n    image: x\n    ports: [{containerPort: '{{ values.port }}'}]\nrules:\
                          \n- name: r\n  inject: [p]\n")
            .unwrap();
        assert_eq!(c.sidecars.len(), 1);
        assert_eq!(c.values["port"], 80);
    }

    #[test]
    fn unknown_field_is_located_with_a_suggestion() {
        let text = "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: p\n  containers:\
                    \n  - name: p\n    imagee: x\n";
        let errs = load_one(text).err().unwrap();
        assert_eq!(errs.len(), 1);
        let e = &errs[0];
        assert_eq!(e.code, "kinject::config::unknown_field");
        assert_eq!(e.location, "c.yaml:7:5");
        assert_eq!(e.help.as_deref(), Some("did you mean `image`?"));
    }

    #[test]
    fn unknown_sidecar_and_kind() {
        let text = "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: proxy\nrules:\
                    \n- name: r\n  match: {kinds: [Deploymnet]}\n  inject: [proxi]\n";
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
        let text = "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: p\n  containers:\
                    \n  - name: p\n    image: \"x{{ a + }}\"\n";
        let errs = load_one(text).err().unwrap();
        assert_eq!(errs[0].code, "kinject::config::template_syntax");
        assert!(
            errs[0].location.starts_with("c.yaml:7:"),
            "{}",
            errs[0].location
        );
    }
}
