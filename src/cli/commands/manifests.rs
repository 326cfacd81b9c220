//! `inject`'s and `uninject`'s run over manifests: every input processed with its
//! configuration, the report, and the output written (to stdout, `--output-file`, or the
//! files in place).

use crate::config::Config;
use crate::diagnostic::codes;
use crate::inject::Mode;
use crate::pipeline::FileResult;
use crate::render::RenderError;
use crate::render::json::Framed;
use crate::render::output::{self, Output, yaml_all, yaml_slices};
use crate::render::yaml::{YamlOutput, YamlStream};

use crate::args::{EditArgs, OutputArgs};
use crate::cli::configs::Configs;
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
    let out = output.output.output(Spool::new(held::OUTPUT_IN_MEMORY));
    if edit.any() && !out.is_yaml() {
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
            return super::stream::run(&configs.list[0], mode, input, s, out, output);
        }
        Some(s) => Some(s.whole()),
        None => None,
    };
    // Every output is made while processing, by the pipeline's sink: YAML as pieces of the
    // inputs' texts and of what the edits wrote, the other formats straight into one output
    // held back.
    let processed = match out {
        Output::Yaml(_) => configs
            .process(input, stdin, early, mode, YamlStream::new)
            .map(|(files, errors)| {
                let (files, made) = files.into_iter().unzip();
                (files, errors, Made::Yaml(made))
            }),
        Output::Values(out) => held::process_all(&mut configs, input, stdin, early, mode, out)
            .map(|(files, errors, held)| (files, errors, Made::Values(held))),
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
            (Some(Written::Yaml(yaml)), notes)
        }
        Made::Values(held) => match held.finish() {
            Ok(spool) => (Some(Written::Held(spool)), Vec::new()),
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
        Some(Written::Yaml(yaml)) => write_output(to, |out| write_slices(out, &yaml_slices(&yaml))),
        Some(Written::Held(spool)) => write_output(to, |out| spool.copy_to(out)),
        // Only when the output could not be held back: failed, returned above.
        None => ExitStatus::Error,
    }
}

/// What the processing made of the inputs.
enum Made {
    /// Each input's YAML output (or why it could not be made), in order.
    Yaml(Vec<Result<YamlOutput, RenderError>>),
    /// One output of every input's values, held back (`-o json`, `json-list`, `patch`).
    Values(Framed<Spool>),
}

/// What goes to the output.
enum Written<'a> {
    /// The inputs' YAML, joined into one stream as it is written.
    Yaml(output::Yaml<'a>),
    Held(Spool),
}
