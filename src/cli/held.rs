//! The outputs made from documents' values (`-o json`, `json-list` and `patch`) of `inject` and
//! `uninject`: each document's part is made as the document is processed and written, in
//! order, into one output held back in a spool (memory, then a temporary file) until the run
//! is known to have succeeded. Nothing else is kept of a document but its report entry, so
//! memory stays near the inputs' size, as for YAML output (every parsed document was kept and
//! rendered at the end: about 25 KB a document, 54 times a 13.6 MB input).
//!
//! Inputs are processed a chunk at a time, as `pipeline::process` processes documents: as
//! many as hold `CHUNK` bytes of text side by side on the cores, each into a part of its own,
//! the parts appended in order once the chunk is done; a larger input alone, straight into
//! the output (in parallel inside).

use crate::cli::write::Spool;
use crate::pipeline::{self, FileResult};
use crate::read::{Input, InputError};
use crate::render::json::Framed;
use crate::render::output::process_values;

use super::configs::Configs;
use super::inputs::Inputs;
use super::run::{Loaded, Prepared};
use super::status::ExitStatus;

/// Output kept in memory before it goes to a temporary file.
pub(crate) const SPOOL_IN_MEMORY: usize = 4 << 20;

/// The output kept in memory before it goes to a temporary file: a quarter of the report's
/// (`SPOOL_IN_MEMORY`), as the output is larger and held as it grows (10k documents: 4 MB
/// less at the peak).
pub(crate) const OUTPUT_IN_MEMORY: usize = 1 << 20;

/// How much text of inputs is processed side by side at a time: what is made of them is held
/// until the chunk is done (as `JsonStream::CHUNK`).
const CHUNK: usize = 1 << 20;

/// What a run over its inputs made: each input's result, the inputs that could not be read,
/// and the output of every input's values.
pub(crate) type Processed = (Vec<FileResult>, Vec<InputError>, Framed<Spool>);

/// Every input of the run (`configs::Configs::prepare`) processed into one output of values
/// (`out`), in the order the inputs were named: each input's result, the inputs that could
/// not be read, and the output.
pub(crate) fn process_all(
    configs: &mut Configs,
    args: &Inputs,
    stdin: Option<Result<Input, InputError>>,
    early: Option<Loaded>,
    mode: crate::inject::Mode,
    mut out: Framed<Spool>,
) -> Result<Processed, ExitStatus> {
    let Prepared {
        inputs,
        errors,
        settings,
    } = configs.prepare(args, stdin, early, mode)?;
    let mut files = Vec::with_capacity(inputs.len());
    let mut inputs = inputs.into_iter().peekable();
    while inputs.peek().is_some() {
        let mut bytes = 0;
        let mut chunk = Vec::new();
        while let Some((i, _)) = inputs.peek()
            && (chunk.is_empty() || bytes + i.text.len() <= CHUNK)
        {
            bytes += i.text.len();
            chunk.extend(inputs.next());
        }
        if chunk.len() == 1 {
            let (input, s) = chunk.swap_remove(0);
            files.push(process_values(input, &settings[s], &mut out));
            continue;
        }
        let framing = out.framing();
        let parts = pipeline::map_on_workers(chunk, |(input, s)| {
            let mut part = Framed::part(framing);
            (process_values(input, &settings[s], &mut part), part)
        });
        for (file, part) in parts {
            out.append(part);
            files.push(file);
        }
    }
    Ok((files, errors, out))
}
