//! `inject`'s and `uninject`'s run over manifests: every input processed with its
//! configuration, the report, and the output written (to stdout, `--output-file`, or the
//! files in place).

use crate::config::Config;
use crate::diagnostic::codes;
use crate::inject::Mode;
use crate::pipeline::FileResult;
use crate::render;
use crate::render::yaml::YamlStream;

use crate::cli::args::{EditArgs, OutputArgs};
use crate::cli::configs::Configs;
use crate::cli::format_flag::Format;
use crate::cli::held;
use crate::cli::inputs::Inputs;
use crate::cli::output::{write_output, write_slices};
use crate::cli::progress;
use crate::cli::report::{self, diagnostics};
use crate::cli::run::{Loaded, StdinWindows};
use crate::cli::status::ExitStatus;
use crate::cli::write::Spool;

/// Standard input read a window at a time, when it is the only input and its output goes
/// to stdout.
pub(super) fn open_stdin(input: &Inputs, edit: &EditArgs) -> Option<StdinWindows> {
    let stdin_only = input.paths.iter().all(|p| p.as_os_str() == "-");
    (stdin_only && !edit.any()).then(StdinWindows::open)
}

/// Where a run's manifests come from.
pub(super) struct Given<'a> {
    pub(super) inputs: &'a Inputs,
    /// Standard input, when it is read a window at a time.
    pub(super) stdin: Option<StdinWindows>,
    /// Files read while the configuration loaded.
    pub(super) early: Option<Loaded>,
}

/// Processes the inputs `given` with `configs`, reports, and writes the output.
pub(super) fn run(
    mut configs: Configs,
    mode: Mode,
    given: Given<'_>,
    output: &OutputArgs,
    edit: &EditArgs,
) -> ExitStatus {
    let Given {
        inputs: input,
        stdin,
        early,
    } = given;
    progress::start(report::progress_allowed(), input.total_bytes());
    if edit.any() && output.output != Format::Yaml {
        report::error(
            codes::USAGE,
            None,
            "--in-place, --check and --diff work on YAML output, not -o json, json-list or patch",
        );
        return ExitStatus::Error;
    }
    // A stream longer than a window is processed window by window, unless a rule selects
    // on the labels of Namespace objects, which may come anywhere in it.
    let needs_whole = configs.list.iter().any(Config::selects_on_namespace_labels);
    let stdin = match stdin {
        Some(s) if !s.is_whole() && !needs_whole => {
            return super::stream::run(&configs.list[0], mode, input, s, output);
        }
        Some(s) => Some(s.whole()),
        None => None,
    };
    // Every output is made while processing, by the pipeline's sink: YAML as pieces of the
    // inputs' texts and of what the edits wrote, the other formats straight into one output
    // held back.
    let processed = if output.output == Format::Yaml {
        configs
            .process(input, stdin, early, mode, YamlStream::new)
            .map(|(files, errors)| {
                let (files, made) = files.into_iter().unzip();
                (files, errors, Made::Yaml(made))
            })
    } else {
        held::process_all(&mut configs, input, stdin, early, mode, output.output)
            .map(|(files, errors, held)| (files, errors, Made::Held(held)))
    };
    let (files, input_errors, made): (Vec<FileResult>, _, _) = match processed {
        Ok(r) => r,
        Err(code) => return code,
    };
    // The process ends after this command: freeing every parsed document one by one would
    // take a fifth of the run (docs/performance.md).
    let files = std::mem::ManuallyDrop::new(files);
    let mut failed = !input_errors.is_empty() || files.iter().any(|f| !f.errors.is_empty());
    diagnostics(input_errors);
    for f in files.iter() {
        diagnostics(f.errors.clone());
    }
    let stdin_empty = files
        .iter()
        .any(|f| f.input.source.path.is_none() && f.docs.iter().all(|d| d.objects.is_empty()));
    if stdin_empty {
        report::no_objects_in_stdin();
        failed = true;
    }
    let (text, notes) = match made {
        Made::Yaml(made) if edit.any() => return super::edit::run(&files, made, edit, failed),
        Made::Yaml(made) => {
            let (yaml, notes, render_errors) = yaml_all(&files, made);
            failed |= !render_errors.is_empty();
            for e in &render_errors {
                report::error(codes::INTERNAL, Some(&e.file), &e.to_string());
            }
            (Some(Output::Yaml(yaml)), notes)
        }
        Made::Held(held) => match held.finish() {
            Ok(spool) => (Some(Output::Held(spool)), Vec::new()),
            Err(e) => {
                failed |= !super::stream::cannot_hold(&e, "output");
                (None, Vec::new())
            }
        },
    };
    if failed {
        report::nothing_written();
    }
    report::results(&files, &notes, &[]);
    if failed {
        // Nothing on stdout: a partial stream piped into `kubectl apply` would be worse.
        report::people("error: nothing was written because of the errors above\n");
        return ExitStatus::Error;
    }
    let to = output.output_file.as_deref();
    match text {
        Some(Output::Yaml(yaml)) => write_output(to, |out| write_slices(out, &yaml_slices(&yaml))),
        Some(Output::Held(spool)) => write_output(to, |out| spool.copy_to(out)),
        // Only when the output could not be held back: failed, returned above.
        None => ExitStatus::Error,
    }
}

/// What the processing made of the inputs.
enum Made {
    /// Each input's YAML output (or why it could not be made), in order.
    Yaml(Vec<Result<render::yaml::YamlOutput, render::RenderError>>),
    /// One output of every input, held back (`-o json`, `json-list`, `patch`).
    Held(held::Held),
}

/// Each input's YAML output, in order, for one stream.
type Yaml<'a> = Vec<(&'a crate::read::Input, render::yaml::YamlOutput)>;

/// What goes to stdout.
enum Output<'a> {
    Yaml(Yaml<'a>),
    Held(Spool),
}

/// Every file's YAML output, made while processing: (outputs, notes, errors). No input's
/// text is copied: the stream is written from the inputs and their edited documents.
fn yaml_all(
    files: &[FileResult],
    made: Vec<Result<render::yaml::YamlOutput, render::RenderError>>,
) -> (Yaml<'_>, Vec<String>, Vec<render::RenderError>) {
    let mut notes = Vec::new();
    let mut errors = Vec::new();
    let mut yaml = Vec::with_capacity(files.len());
    for (f, y) in files.iter().zip(made) {
        match y {
            Ok(mut y) => {
                notes.append(&mut y.notes);
                yaml.push((&f.input, y));
            }
            Err(e) => errors.push(e),
        }
    }
    (yaml, notes, errors)
}

/// The inputs' YAML as one stream, in the pieces it is written in (of the inputs' texts and
/// of what the edits wrote), holding the documents the inputs hold, no more: between two
/// inputs a line break, then a `---` where the next starts with content, nothing where it
/// starts with either marker or holds only comments (a `---` before it would add an empty
/// document); an input with nothing but blanks adds nothing. (No input starts with a
/// directive: they are refused, as Kubernetes refuses them.)
fn yaml_slices<'a>(yaml: &'a Yaml<'_>) -> Vec<&'a [u8]> {
    let mut slices = Vec::new();
    // Whether anything was written, and whether it ended a line.
    let (mut any, mut line_ended) = (false, false);
    for (input, y) in yaml {
        if any {
            let start = first_line(y.pieces(input));
            if start == Start::Blank {
                continue;
            }
            if !line_ended {
                slices.push(&b"\n"[..]);
            }
            if start == Start::Content {
                slices.push(&b"---\n"[..]);
            }
        }
        for p in y.pieces(input).filter(|p| !p.is_empty()) {
            slices.push(p.as_bytes());
            any = true;
            line_ended = p.ends_with('\n');
        }
    }
    slices
}

/// What the first line of a text that is neither blank nor a comment is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// There is none, nor any comment.
    Blank,
    /// There is none: only comments (and blanks).
    Comment,
    /// A document marker: `---` (a start) or `...` (an end).
    Marker,
    Content,
}

/// What the first line of `text` (in pieces) that is neither blank nor a comment is.
fn first_line<'a>(text: impl Iterator<Item = &'a str>) -> Start {
    let mut comment = false;
    let mut kind = |l: &str| {
        let t = l.trim();
        if t.is_empty() {
            return None;
        }
        if t.starts_with('#') {
            comment = true;
            return None;
        }
        Some(if l.starts_with("---") || l.starts_with("...") {
            Start::Marker
        } else {
            Start::Content
        })
    };
    // The line read so far (a line may go on in the next piece).
    let mut line = String::new();
    for piece in text {
        let mut parts = piece.split('\n').peekable();
        while let Some(part) = parts.next() {
            line.push_str(part);
            if parts.peek().is_none() {
                break;
            }
            if let Some(start) = kind(&line) {
                return start;
            }
            line.clear();
        }
    }
    match kind(&line) {
        Some(start) => start,
        None if comment => Start::Comment,
        None => Start::Blank,
    }
}

#[cfg(test)]
mod tests {
    use super::{Start, first_line};

    #[test]
    fn the_first_content_line_decides_whatever_the_pieces() {
        let cases: [(&[&str], Start); 10] = [
            (&["---\na: 1\n"], Start::Marker),
            (&["a: 1\n"], Start::Content),
            (&["# c\n\n", "--- # x\n"], Start::Marker),
            (&["  # c\n-", "--\n"], Start::Marker),
            (&["#", " c\n", "-", "-", "-"], Start::Marker),
            (&["\n", "", "a: 1\n---\n"], Start::Content),
            (&["", "# only a comment\n"], Start::Comment),
            (&["...\n"], Start::Marker),
            (&["\n", "  \n"], Start::Blank),
            (&[], Start::Blank),
        ];
        for (pieces, start) in cases {
            assert_eq!(first_line(pieces.iter().copied()), start, "{pieces:?}");
        }
    }
}
