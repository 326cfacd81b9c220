//! The configuration once loaded: one `Config` of sidecars and rules, each with where it
//! was written, and the run's defaults.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::diagnostic::Located;
use crate::model::{CustomKind, JobPolicy, Rule, Sidecar};
use crate::select::Matcher;
use crate::template::Templates;
use crate::yaml::Node;

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
    /// Read from another injector's format: where it may go is what that format's rules
    /// say, and an object's `kinject.dev/inject` request does not reach past them.
    pub converted: bool,
    /// Pod annotations its format would read into it, left unread (an object that has one is
    /// told so).
    pub unread: Vec<UnreadAnnotations>,
}

pub struct RuleDef {
    pub spec: Rule,
    pub matcher: Matcher,
    pub origin: Origin,
    /// Read from another injector's format (its scope, and whether an object may decline it,
    /// are that injector's).
    pub converted: bool,
}

/// Pod annotations another injector's format reads into a sidecar, which lets a manifest
/// change the sidecar: left unread unless the configuration's `formats` turns that on.
#[derive(Debug, Clone, PartialEq)]
pub struct UnreadAnnotations {
    /// The sidecars they would change.
    pub sidecars: Vec<String>,
    /// The annotations: these keys, or every key with this prefix but those listed.
    pub keys: AnnotationKeys,
    /// What the format makes of them, as a warning says it ("salesforce's `annotationConfig`
    /// makes such annotations volume mounts").
    pub effect: &'static str,
    /// The `formats` flag that turns it on (`formats.expedia.allowAnnotationEnv`).
    pub flag: &'static str,
}

/// Which pod annotations an `UnreadAnnotations` is about.
#[derive(Debug, Clone, PartialEq)]
pub enum AnnotationKeys {
    Keys(Vec<String>),
    Prefix { prefix: String, except: Vec<String> },
}

impl AnnotationKeys {
    /// Whether `key` is one of them.
    pub fn holds(&self, key: &str) -> bool {
        match self {
            AnnotationKeys::Keys(keys) => keys.iter().any(|k| k == key),
            AnnotationKeys::Prefix { prefix, except } => key
                .strip_prefix(prefix.as_str())
                .is_some_and(|rest| !rest.is_empty() && !except.iter().any(|e| e == rest)),
        }
    }
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

/// Where a sidecar is written: its file, its document, and its node there.
pub(super) struct SidecarPlace {
    pub(super) file: String,
    pub(super) text: Arc<str>,
    /// Where its document starts in `text`, and the document's length.
    pub(super) base: usize,
    pub(super) len: usize,
    pub(super) node: Node,
    /// Written in a native configuration (not converted from another injector's format,
    /// whose text holds no node for what it defines).
    pub(super) native: bool,
}

impl SidecarPlace {
    /// Where the sidecar's field at `path` is written: the nearest node the text has on the
    /// way (the sidecar itself, for another injector's format).
    pub(super) fn origin(&self, path: &[String]) -> Origin {
        let start = Origin {
            file: self.file.clone(),
            text: Arc::clone(&self.text),
            span: (self.base, self.base),
        };
        if !self.native {
            return start;
        }
        let node = (0..=path.len())
            .rev()
            .find_map(|end| self.node.at(&path[..end]))
            .unwrap_or(&self.node);
        Origin {
            span: (self.base + node.start, self.base + node.end.max(node.start)),
            ..start
        }
    }
}

#[cfg(test)]
mod tests {
    use super::AnnotationKeys;

    #[test]
    fn annotation_keys() {
        let keys = AnnotationKeys::Keys(vec!["a.example.com/mounts".to_owned()]);
        assert!(keys.holds("a.example.com/mounts"));
        assert!(!keys.holds("a.example.com/mounts-2"));
        let prefix = AnnotationKeys::Prefix {
            prefix: "sidecar-injector.expedia.com/".to_owned(),
            except: vec!["inject".to_owned(), "status".to_owned()],
        };
        assert!(prefix.holds("sidecar-injector.expedia.com/LD_PRELOAD"));
        assert!(!prefix.holds("sidecar-injector.expedia.com/inject"));
        assert!(!prefix.holds("sidecar-injector.expedia.com/status"));
        assert!(!prefix.holds("sidecar-injector.expedia.com/"));
        assert!(!prefix.holds("other.example.com/LD_PRELOAD"));
    }
}
