//! One input through the stages: its documents, the objects in them, the injection plan for
//! each object, and the edit operations that the renderers turn into output.
//!
//! This file runs the stages (`process`); what they find is `result.rs`, the threads they run
//! on `runtime.rs`, what each document is handed to `sink.rs`. The parts import each other,
//! never this file.

use serde_json::Value;

use crate::diagnostic::Located;
use crate::diagnostic::codes;
use crate::inject::{self, InjectError, Settings};
use crate::json::patch::{self, Op};
use crate::json::{Fields, Pointer};
use crate::read::{self, Input};
use crate::yaml::{NodeKind, ScalarKind};

mod result;
mod runtime;
mod sink;

pub(crate) use result::{DocResult, FileResult, Identity, ObjectResult};
pub use runtime::{STACK, on_stack};
pub(crate) use runtime::{cores, map_on_workers};
pub use sink::Values;
pub(crate) use sink::{Changed, Done, Sink, checked};

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
            o.outcome = Err(InjectError::new(
                codes::INPUT_DUPLICATE_KEY,
                "a duplicate key where it would be changed",
            ));
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
        let outcome = inject::plan_in_text(object, settings, sink.verdicts(), &null_text)
            .inspect_err(|e| {
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
