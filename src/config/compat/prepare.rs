//! What the other formats need done before any document is converted, in one place, so that
//! the generic loader names no format: the files a directory holds that their injector would
//! not read there (tumblr's `*.yaml` glob), salesforce's sidecar files (read ahead: the
//! mutation files that name their entries may come before them), and the other formats'
//! flags in native configurations' `formats` (the last file's apply to files before it too).

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::context::{Catalogs, Context};
use super::salesforce;
use crate::diagnostic::Located;
use crate::diagnostic::codes;
use crate::model::{API_VERSION, Formats, KIND};
use crate::read;

/// What converting a document may read of the others, gathered from all of them first.
#[derive(Default)]
pub(crate) struct Prepared {
    /// The salesforce sidecar files' entries (read before the mutation files that name them).
    catalogs: Catalogs,
    /// The other formats' flags, each injector's from the last native configuration that sets
    /// them (they apply to files given before it too).
    formats: Formats,
    /// tumblr files `inherits` named, each with its whole chain merged in, by canonical path
    /// (see `Context::inherited`).
    inherited: RefCell<HashMap<PathBuf, Value>>,
}

impl Prepared {
    /// Reads document `range` of file `name` (`text`) when a format reads it here, before the
    /// others: a salesforce sidecar file. `None` when it is not one, and the loader parses it;
    /// its errors when it is one that cannot be read.
    pub(crate) fn take(
        &mut self,
        name: &str,
        text: &Arc<str>,
        range: std::ops::Range<usize>,
    ) -> Option<Result<(), Vec<Located>>> {
        salesforce::read_sidecar_file(name, text, range, &mut self.catalogs)
    }

    /// Notes what a parsed document (`value`) tells the other formats: the `formats` of a
    /// native configuration.
    pub(crate) fn note(&mut self, value: &Value) {
        if let Some(f) = value
            .get("formats")
            .filter(|_| is_native(value))
            .and_then(|f| serde_json::from_value::<Formats>(f.clone()).ok())
        {
            self.formats = std::mem::take(&mut self.formats).merged(f);
        }
    }

    /// What converting a document of file `file` may read besides it.
    pub(crate) fn context<'a>(&'a self, file: &'a str) -> Context<'a> {
        Context {
            file,
            options: &self.formats,
            catalogs: &self.catalogs,
            warnings: RefCell::new(Vec::new()),
            unread: RefCell::new(Vec::new()),
            inherited: &self.inherited,
        }
    }

    /// Once every document is converted: the error for sidecar files no mutation file used.
    pub(crate) fn unused(&self) -> Option<Located> {
        self.catalogs.unused()
    }
}

/// Whether `value` starts as a native configuration does (the `apiVersion` and `kind` in
/// which `merge::format_fault` finds no fault): only a native configuration's `formats`
/// count.
fn is_native(value: &Value) -> bool {
    value.get("apiVersion").and_then(Value::as_str) == Some(API_VERSION)
        && value.get("kind").and_then(Value::as_str) == Some(KIND)
}

/// The warning that leaves out a file found in a directory (`path`, named `name`, holding
/// `text`) whose injector would not read it from there; `None` for a file that is read.
pub(crate) fn not_read_in_directory(path: &Path, name: &str, text: &str) -> Option<Located> {
    tumblr_outside_its_glob(path, text).then(|| not_in_tumblr_glob(name, &Arc::from(text)))
}

/// Whether a file found in a directory is a tumblr sidecar configuration that tumblr's
/// `--config-directory` would not read: it loads `<dir>/*.yaml` only (`LoadConfigDirectory`
/// globs so), and a configuration kinject read from `other.yml` would inject what the webhook
/// never does. Files of the other formats keep the directory's `.yml` and `.json` too.
fn tumblr_outside_its_glob(path: &Path, text: &str) -> bool {
    if path.extension().and_then(|e| e.to_str()) == Some("yaml") {
        return false;
    }
    let mut documents = read::documents(text)
        .into_iter()
        .filter_map(|r| crate::yaml::parse_document(&text[r]).ok())
        .filter(|p| !p.value.is_null())
        .peekable();
    documents.peek().is_some() && documents.all(|p| super::tumblr::is_config(&p.value))
}

/// The warning for a tumblr configuration a directory holds outside tumblr's `*.yaml` glob.
fn not_in_tumblr_glob(name: &str, text: &Arc<str>) -> Located {
    Located::new(
        codes::CONFIG_NOT_A_SIDECAR_CONFIG,
        name,
        text,
        (0, 0),
        "a tumblr sidecar configuration not named `*.yaml`: not read, as tumblr's `--config-directory` reads only \
         `*.yaml` files",
    )
    .warning()
    .help("rename it to `.yaml`, or name the file itself with `-c`")
}
