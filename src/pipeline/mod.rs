//! One input through the stages: its documents, the objects in them, the injection plan for
//! each object, and the edit operations that the renderers turn into output.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::diagnostic::Located;
use crate::diagnostic::codes;
use crate::inject::{self, Outcome, Settings};
use crate::json::patch::{self, Op};
use crate::json::{Fields, Pointer};
use crate::read::{self, Input};
use crate::yaml::{NodeKind, ScalarKind};

mod sink;

pub use sink::Values;
pub(crate) use sink::{Changed, Done, Sink, checked};

/// Who an object is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Identity {
    pub api_version: String,
    pub kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    pub name: String,
    /// `metadata.generateName`, for an object the API server names when it creates it (a
    /// Workflow's `steps-`, a Job's pods).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub generate_name: String,
}

impl Identity {
    pub fn of(object: &Value) -> Self {
        let s = |p: &str| {
            object
                .at_pointer(p)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        Identity {
            api_version: s("/apiVersion"),
            kind: s("/kind"),
            namespace: s("/metadata/namespace"),
            name: s("/metadata/name"),
            generate_name: s("/metadata/generateName"),
        }
    }

    /// `deployment/web` (kubectl's short form), with the namespace when known.
    pub fn short(&self) -> String {
        let kind = if self.kind.is_empty() {
            "object".to_owned()
        } else {
            self.kind.to_lowercase()
        };
        let generated;
        let name = if !self.name.is_empty() {
            &self.name
        } else if !self.generate_name.is_empty() {
            generated = format!("{}<generated>", self.generate_name);
            &generated
        } else {
            "<unnamed>"
        };
        if self.namespace.is_empty() {
            format!("{kind}/{name}")
        } else {
            format!("{kind}/{name} -n {}", self.namespace)
        }
    }
}

/// Why an object could not be injected (the located diagnostic is in `FileResult::errors`).
#[derive(Debug, Clone)]
pub struct ObjectError {
    pub code: &'static str,
    pub message: String,
    /// JSON pointer, in the object, of what the error is about.
    pub at: Option<String>,
}

/// One object's result.
#[derive(Debug)]
pub struct ObjectResult {
    /// JSON pointer of the object in its document (`""`, or `/items/3` in a List).
    pub pointer: String,
    pub identity: Identity,
    /// Line of the object in its input.
    pub line: usize,
    pub outcome: Result<Outcome, ObjectError>,
    /// Operations on the object (relative to the object), when the sink keeps values
    /// (`Sink::KEEPS_VALUES`; a sink that makes every document's output has them until then).
    pub ops: Vec<Op>,
}

/// One document's result.
#[derive(Debug)]
pub struct DocResult {
    pub index: usize,
    pub objects: Vec<ObjectResult>,
    /// The document's value after the operations, when any changed it and the sink keeps
    /// values (`Sink::KEEPS_VALUES`).
    /// Boxed: most documents have none, and a result is kept for every document.
    pub target: Option<Box<Value>>,
    /// Operations on the document (object operations with their pointer in front).
    pub ops: Vec<Op>,
}

impl DocResult {
    /// How the nulls the operations write were written before kinject filled them, where
    /// not empty, by pointer of the document.
    pub(crate) fn null_as(&self) -> BTreeMap<String, String> {
        null_as(&self.objects)
    }
}

fn null_as(objects: &[ObjectResult]) -> BTreeMap<String, String> {
    objects
        .iter()
        .filter_map(|o| Some((&o.pointer, &o.outcome.as_ref().ok()?.null_as)))
        .flat_map(|(at, by)| by.iter().map(move |(p, s)| (format!("{at}{p}"), s.clone())))
        .collect()
}

/// An input's result: the input itself, its documents, and its errors.
#[derive(Debug)]
pub struct FileResult {
    pub input: Input,
    pub docs: Vec<DocResult>,
    pub errors: Vec<Located>,
    /// Duplicate keys and similar findings, already located.
    pub warnings: Vec<String>,
}

impl FileResult {
    /// The result of document `index` (documents that did not parse have none).
    pub fn doc(&self, index: usize) -> Option<&DocResult> {
        // Results are in document order.
        self.docs
            .binary_search_by_key(&index, |d| d.index)
            .ok()
            .map(|i| &self.docs[i])
    }
}

/// The worker threads, started once, before their first use (a run that needs none, such as
/// `--version` or one small file, starts none). Documents are read, injected and freed on
/// them, recursively, down to the deepest nesting kinject accepts (`yaml::MAX_DEPTH`): they
/// get the command's stack size (`STACK`), not the 2 MiB threads get by default. Only what is
/// used is ever touched.
///
/// A process whose memory limit leaves no room for that many stacks (`ulimit -v` on a runner
/// with many cores) gets fewer workers, halved until they start; `None` when not even one
/// does, and the work is then done one piece after another on the calling thread, which has
/// the same stack. A pool of kinject's own, not rayon's global one: a global pool that failed
/// to start cannot be started again, and rayon then panics on its first use.
pub(crate) fn workers() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        let mut threads = cores();
        loop {
            let built = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .stack_size(STACK)
                .build();
            match built {
                Ok(pool) => return Some(pool),
                Err(_) if threads > 1 => threads /= 2,
                Err(_) => return None,
            }
        }
    })
    .as_ref()
}

/// `f` of every item of `items`, in order: on the workers when there are any, else here.
pub(crate) fn map_on_workers<T: Send, R: Send>(
    items: impl rayon::iter::IntoParallelIterator<Item = T> + IntoIterator<Item = T> + Send,
    f: impl Fn(T) -> R + Sync + Send,
) -> Vec<R> {
    use rayon::prelude::*;
    match workers() {
        Some(pool) => pool.install(|| items.into_par_iter().map(f).collect()),
        None => items.into_iter().map(f).collect(),
    }
}

/// How many worker threads `workers` starts: `RAYON_NUM_THREADS` when it is a number above
/// zero (as rayon reads it), otherwise the cores this process may use; no more than fit in
/// its address-space limit (`fitting_workers`). Counted once: finding the cores reads the
/// cgroup files (a few hundred microseconds), which a run with a large input does while the
/// input is read.
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| {
        std::env::var("RAYON_NUM_THREADS")
            .ok()
            .and_then(|n| n.parse().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
            .min(fitting_workers(address_space_limit()))
    })
}

/// The address space a worker takes besides what it processes: its stack, and the 32 MiB
/// segment mimalloc gives each thread that allocates.
const WORKER_SPACE: u64 = STACK as u64 + (32 << 20);

/// How many workers fit in an address-space limit (`ulimit -v`) when they take at most a
/// quarter of it, the rest being for the inputs and what is made of them (at least one).
/// Without the bound, 32 workers under a 2 GiB limit (a 32-core runner with a memory cap)
/// started and then failed to allocate: an abort.
fn fitting_workers(limit: Option<u64>) -> usize {
    limit.map_or(usize::MAX, |limit| {
        usize::try_from(limit / 4 / WORKER_SPACE)
            .unwrap_or(usize::MAX)
            .max(1)
    })
}

/// The address-space limit of this process, if it has one.
fn address_space_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::As).current
}

/// The stack of every thread documents are processed on.
pub const STACK: usize = 16 << 20;

/// `work` on a thread with the workers' stack (the command line runs on one: a run that
/// processes one input needs no workers). An error when that thread cannot start (a memory
/// limit too low for its stack): `work` is not run on a smaller stack, where a deeply nested
/// input could overflow it.
pub fn on_stack<T: Send>(work: impl FnOnce() -> T + Send) -> std::io::Result<T> {
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .stack_size(STACK)
            .spawn_scoped(scope, work)?;
        Ok(handle
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    })
}

/// Runs every object of `input` through injection and hands each document to `sink`; the
/// result and what the sink made of the input. Documents are read (parsed) here when the
/// input was loaded without reading them, several at a time on several cores; results stay in
/// document order.
pub fn process<S: Sink>(
    mut input: Input,
    settings: &Settings<'_>,
    mut sink: S,
) -> (FileResult, S::Output) {
    let mut documents = std::mem::take(&mut input.documents);
    // Documents no rule can touch are only reported: when their output is their text as it
    // is, they are checked and identified, not read in full.
    let shallow = !S::READS_VALUES && settings.mode == inject::Mode::Inject;
    let config = settings.config;
    let json = input.is_json();
    // Small inputs are not worth the threads.
    let parallel = documents.len() > 16 && input.text.len() > PARALLEL_BYTES;
    let mut docs = Vec::with_capacity(documents.len());
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    // A chunk at a time: what the sink made of one chunk is pushed to it (and let go of)
    // before the next is made. Chunks are large: each ends with the cores waiting for its
    // slowest document (chunks of 256 documents took 5-10 % longer).
    let mut rest = &mut documents[..];
    while !rest.is_empty() {
        let mut bytes = 0;
        let len = rest
            .iter()
            .take_while(|d| {
                bytes += d.range.len();
                bytes <= S::CHUNK
            })
            .count()
            .max(1);
        let (chunk, tail) = rest.split_at_mut(len);
        rest = tail;
        let work = |doc: &mut read::Document| {
            let parsed = doc.parsed.take().map(|p| *p).unwrap_or_else(|| {
                let text = input.doc_text(doc);
                shallow
                    .then(|| {
                        crate::yaml::parse_identity(text, |kind| {
                            !crate::kinds::may_be_workload(kind, &config.kinds)
                        })
                    })
                    .flatten()
                    .map_or_else(|| read::read_document(text, json), Ok)
            });
            let out = process_document(&input, doc, &parsed, settings, &sink);
            if S::KEEPS_VALUES {
                doc.parsed = Some(Box::new(parsed));
            }
            out
        };
        let outs: Vec<DocOut<S::Made>> = if parallel {
            map_on_workers(&mut *chunk, work)
        } else {
            chunk.iter_mut().map(work).collect()
        };
        DONE[0].fetch_add(len as u64, std::sync::atomic::Ordering::Relaxed);
        let chunk_bytes: usize = chunk.iter().map(|d| d.range.len()).sum();
        DONE[1].fetch_add(chunk_bytes as u64, std::sync::atomic::Ordering::Relaxed);
        for (doc, out) in chunk.iter().zip(outs) {
            sink.push(&input, doc, out.made);
            docs.extend(out.result);
            errors.extend(out.errors);
            warnings.extend(out.warnings);
        }
    }
    input.documents = documents;
    let output = sink.finish(&input);
    let file = FileResult {
        input,
        docs,
        errors,
        warnings,
    };
    (file, output)
}

/// Documents `process` has got through in this process, and their bytes: what a progress
/// line says of a long run (counted a chunk at a time, off the documents' way).
pub(crate) static DONE: [std::sync::atomic::AtomicU64; 2] = [
    std::sync::atomic::AtomicU64::new(0),
    std::sync::atomic::AtomicU64::new(0),
];

/// Above this many bytes of text an input is processed on several cores.
pub(crate) const PARALLEL_BYTES: usize = 64 * 1024;

/// How much text `process` processes at a time, by default (`Sink::CHUNK`).
const CHUNK: usize = 4 << 20;

/// One document's share of a `FileResult`, and what the sink made of it.
struct DocOut<M> {
    result: Option<DocResult>,
    /// What the sink made of it, when it changed.
    made: Option<M>,
    errors: Vec<Located>,
    warnings: Vec<String>,
}

fn process_document<S: Sink>(
    input: &Input,
    doc: &read::Document,
    parsed: &Result<crate::yaml::Parsed, crate::yaml::ParseError>,
    settings: &Settings<'_>,
    sink: &S,
) -> DocOut<S::Made> {
    let mut out = DocOut {
        result: None,
        made: None,
        errors: Vec::new(),
        warnings: Vec::new(),
    };
    let parsed = match parsed {
        Ok(p) => p,
        Err(e) => {
            out.errors.push(located_syntax(input, doc, e));
            return out;
        }
    };
    let Some(root) = &parsed.root else {
        return out;
    };
    let at = Place { input, doc, root };
    let (mut objects, mut doc_ops) = plan_objects(&at, parsed, settings, sink, &mut out.errors);
    // A key written twice is read as Kubernetes reads it (the last one wins), but nothing
    // is edited through one: which of the two the author meant would be a guess.
    if duplicates_on_edit_path(&at, parsed, &doc_ops, &mut out) {
        doc_ops.clear();
        let changed = |o: &ObjectResult| o.outcome.as_ref().is_ok_and(|o| o.target.is_some());
        for o in objects.iter_mut().filter(|o| changed(o)) {
            o.ops.clear();
            o.outcome = Err(ObjectError {
                code: codes::INPUT_DUPLICATE_KEY,
                message: "a duplicate key where it would be changed".to_owned(),
                at: None,
            });
        }
    }
    // The document after the operations, built from the planned objects (their key order
    // is where new keys go in the text; they are moved, not copied: nothing reads them
    // afterwards), handed to the sink with the operations, which it checks against it: YAML
    // output reads its edited text back, the others apply the operations to the input.
    let mut target = None;
    if !doc_ops.is_empty() {
        let planned = Box::new(planned(&parsed.value, &mut objects));
        let changed = Changed {
            input,
            doc,
            parsed,
            ops: &doc_ops,
            objects: &objects,
        };
        (out.made, target) = sink.make(changed, planned, &mut out.errors);
    }
    if S::EVERY_DOCUMENT {
        let done = sink::Done {
            input,
            doc,
            value: target.as_deref().unwrap_or(&parsed.value),
            objects: &objects,
        };
        out.made = sink.document(done, out.made.take());
        if !S::KEEPS_VALUES {
            target = None;
            for o in &mut objects {
                o.ops = Vec::new();
            }
        }
    }
    if !S::KEEPS_VALUES {
        // What the sink made is all that is needed of the operations.
        doc_ops = Vec::new();
    }
    out.result = Some(DocResult {
        index: doc.index,
        objects,
        target,
        ops: doc_ops,
    });
    out
}

/// Where a document is: its input, its place in it, and its span tree.
struct Place<'a> {
    input: &'a Input,
    doc: &'a read::Document,
    root: &'a crate::yaml::Node,
}

/// Plans every object of the document: their results, and the document's operations (each
/// object's with its pointer in front). A refusal is located in `errors`, at what it is about.
fn plan_objects<S: Sink>(
    at: &Place<'_>,
    parsed: &crate::yaml::Parsed,
    settings: &Settings<'_>,
    sink: &S,
    errors: &mut Vec<Located>,
) -> (Vec<ObjectResult>, Vec<Op>) {
    let Place { input, doc, root } = *at;
    let found = read::objects(&parsed.value);
    // Exactly as many as there are: most documents hold one object.
    let mut objects = Vec::with_capacity(found.len());
    let mut doc_ops = Vec::new();
    for (pointer, object) in found {
        let toks = crate::json::tokens(&pointer);
        let start = doc.range.start + root.at(&toks).map_or(root.start, |n| n.start);
        let line = input.line_in(doc, start);
        let identity = Identity::of(object);
        // The node of a pointer of the object.
        let node_at = |p: &str| {
            let mut path = toks.clone();
            path.extend(crate::json::tokens(p));
            root.at(&path)
        };
        // How a null of the object is written, where not empty (`null`, `~`).
        let null_text = |p: &str| {
            let n = node_at(p)?;
            let plain = matches!(n.kind, NodeKind::Scalar(ScalarKind::Plain)) && !n.decorated;
            plain.then(|| input.doc_text(doc)[n.start..n.end].to_owned())
        };
        let outcome =
            inject::plan_in_text(object, settings, sink.verdicts(), &null_text).map_err(|e| {
                // Point at what the error is about, or at the object.
                let span = e.at.as_deref().and_then(node_at).map(|n| {
                    (
                        doc.range.start + n.start,
                        doc.range.start + n.end.max(n.start),
                    )
                });
                let from = origin(object)
                    .map(|path| format!(" (kustomize read it from {path})"))
                    .unwrap_or_default();
                let mut l = Located::new(
                    e.code,
                    &input.source.name,
                    input.shared_text(),
                    span.unwrap_or((start, start)),
                    format!("{}{from}: {}", identity.short(), e.message),
                );
                if let Some(h) = &e.help {
                    l = l.help(h.clone());
                }
                errors.push(l);
                ObjectError {
                    code: e.code,
                    message: e.message,
                    at: e.at,
                }
            });
        let mut ops = match &outcome {
            Ok(o) => o
                .target
                .as_ref()
                .map(|t| patch::diff(object, t))
                .unwrap_or_default(),
            Err(_) => Vec::new(),
        };
        if !S::KEEPS_VALUES && !S::EVERY_DOCUMENT {
            // Only the document's operations are needed, for the sink (the object's are
            // let go of, with their room: a report entry is kept per object).
            doc_ops.extend(
                std::mem::take(&mut ops)
                    .into_iter()
                    .map(|op| op.within(&pointer)),
            );
        } else {
            doc_ops.extend(ops.iter().map(|op| op.prefixed(&pointer)));
        }
        objects.push(ObjectResult {
            pointer,
            identity,
            line,
            outcome,
            ops,
        });
    }
    (objects, doc_ops)
}

/// Whether a key of the document written twice is on the path of an operation: located as
/// an error then, else a warning (both in `out`).
fn duplicates_on_edit_path<M>(
    at: &Place<'_>,
    parsed: &crate::yaml::Parsed,
    doc_ops: &[Op],
    out: &mut DocOut<M>,
) -> bool {
    let Place { input, doc, root } = *at;
    let mut ambiguous = false;
    // The paths the operations edit, split once (only for documents with duplicate keys).
    let edited: Vec<Vec<String>> = if parsed.duplicates.is_empty() {
        Vec::new()
    } else {
        doc_ops
            .iter()
            .map(|op| crate::json::tokens(op.path()))
            .collect()
    };
    for (offset, key) in &parsed.duplicates {
        let at = doc.range.start + offset;
        let on_edit_path = !edited.is_empty() && {
            let path = root.key_path(*offset).unwrap_or_default();
            edited.iter().any(|tokens| tokens.starts_with(&path))
        };
        if on_edit_path {
            ambiguous = true;
            out.errors.push(
                Located::new(
                    codes::INPUT_DUPLICATE_KEY,
                    &input.source.name,
                    input.shared_text(),
                    (at, at),
                    format!("duplicate key `{key}` where kinject would change the document"),
                )
                .help("remove one of them (kubectl refuses duplicate fields too, with its default --validate=strict)"),
            );
        } else {
            let (line, col) = input.line_col(at);
            let name = &input.source.name;
            out.warnings.push(format!(
                "{name}:{line}:{col}: duplicate key `{key}`: the last one wins"
            ));
        }
    }
    ambiguous
}

/// The document with its objects' targets in their places, taken out of the outcomes.
fn planned(document: &Value, objects: &mut [ObjectResult]) -> Value {
    let targets = objects.iter_mut().filter_map(|o| {
        let target = o.outcome.as_mut().ok()?.target.take()?;
        Some((o.pointer.as_str(), target))
    });
    let mut planned = None;
    for (pointer, target) in targets {
        if pointer.is_empty() {
            // The document is the object (all but Lists).
            return *target;
        }
        let doc = planned.get_or_insert_with(|| document.clone());
        if let Some(slot) = doc.at_pointer_mut(pointer) {
            *slot = *target;
        }
    }
    planned.unwrap_or_else(|| document.clone())
}

/// The file kustomize took an object from, when its annotations say
/// (`config.kubernetes.io/origin` with `buildMetadata: [originAnnotations]`, a KRM function's
/// `config.kubernetes.io/path`): a diagnostic located in kustomize's stream (kinject as its
/// plugin reads `<stdin>`) also names the file the author edits.
fn origin(object: &Value) -> Option<String> {
    let annotations = object.at_pointer("/metadata/annotations")?;
    let origin = annotations
        .field("config.kubernetes.io/origin")
        .and_then(Value::as_str)
        .and_then(|o| {
            o.lines()
                .find_map(|l| l.trim().strip_prefix("path:"))
                .map(|p| p.trim().trim_matches(['\'', '"']).to_owned())
        });
    let path = origin.or_else(|| {
        [
            "internal.config.kubernetes.io/path",
            "config.kubernetes.io/path",
        ]
        .iter()
        .find_map(|k| {
            annotations
                .field(k)
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
    })?;
    Some(crate::diagnostic::printable_name(&path).into_owned())
}

/// A document's syntax error, located in its input.
pub(crate) fn located_syntax(
    input: &Input,
    doc: &read::Document,
    e: &crate::yaml::ParseError,
) -> Located {
    let at = doc.range.start + e.offset;
    let located = Located::new(
        codes::INPUT_SYNTAX,
        &input.source.name,
        input.shared_text(),
        (at, at),
        format!("invalid YAML: {}", e.message),
    );
    match crate::yaml::syntax_help(&input.text, at, &e.message) {
        Some(help) => located.help(help),
        None => located,
    }
}
