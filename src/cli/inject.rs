//! `kinject inject` and `kinject uninject`: wiring only.

use crate::config::{self, Config};
use crate::inject::Mode;
use crate::pipeline::FileResult;
use crate::render;
use crate::render::yaml::YamlStream;

use super::configs::{self, Configs};
use super::output::{diagnostics, report, write_output, write_slices};
use super::run::{Loaded, StdinWindows, read_while};
use super::{
    EditArgs, ExitStatus, Format, InjectArgs, InputArgs, OutputArgs, UninjectArgs, eprint,
    report_sink,
};
use crate::diagnostic::codes;

pub(crate) fn run_inject(args: &InjectArgs) -> ExitStatus {
    if let Some(why) = args.edit.refused_for(&args.input) {
        eprint(&format!("error: {why}\n"));
        return ExitStatus::Error;
    }
    let input_args = &args.input.for_edit(&args.edit);
    input_args.hint_on_terminal("inject");
    let mut stdin = open_stdin(input_args, &args.edit);
    // A ResourceList on standard input: kinject is a KRM function.
    let resource_list = stdin.as_mut().is_some_and(|s| {
        s.first
            .as_mut()
            .is_ok_and(crate::integrations::krm::starts_with_resource_list)
    });
    if resource_list && let Some(s) = stdin.take() {
        match s.whole() {
            Ok(mut input) => {
                input.parse_all();
                if crate::integrations::krm::is_resource_list(&input) {
                    return super::krm::run_input(
                        input,
                        &args.config.configs,
                        &args.config.overrides(),
                        &input_args.scope,
                    );
                }
                stdin = Some(StdinWindows::from_whole(input));
            }
            Err(e) => {
                diagnostics(vec![e]);
                return ExitStatus::Error;
            }
        }
    }
    if args.emit_kustomize.is_none() && per_file(args, input_args) {
        return run_per_file(args, input_args, stdin);
    }
    let (config, early) = match &args.emit_kustomize {
        None => read_while(input_args, || args.config.load(input_args.reads_stdin())),
        Some(_) => (args.config.load(input_args.reads_stdin()), None),
    };
    let Some(config) = config else {
        return ExitStatus::Error;
    };
    match &args.emit_kustomize {
        Some(dir) => super::overlay::run(&config, input_args, dir, &args.output),
        None => run(
            Configs::one(config),
            Mode::Inject,
            Inputs {
                args: input_args,
                stdin,
                early,
            },
            &args.output,
            &args.edit,
        ),
    }
}

/// Whether the inputs' configurations are decided per file (`configs::plan`): files are
/// named and no `-c` is given, or a run that checks or rewrites files may need to widen to
/// those a configuration among them applies to.
fn per_file(args: &InjectArgs, input: &InputArgs) -> bool {
    let files = input.all_paths().iter().any(|p| p.as_os_str() != "-");
    files && (args.config.configs.is_empty() || args.edit.any())
}

/// `inject` with each file's own configuration.
fn run_per_file(args: &InjectArgs, input: &InputArgs, stdin: Option<StdinWindows>) -> ExitStatus {
    let planned = configs::Planned {
        edit: args.edit.any(),
        quiet: args.output.quiet,
        ..configs::Planned::default()
    };
    let Some((plan, input)) = configs::plan(&args.config, input, planned) else {
        return ExitStatus::Error;
    };
    let (configs, early) = read_while(&input, || plan.load(&args.config.overrides()));
    let Some(configs) = configs else {
        return ExitStatus::Error;
    };
    let inputs = Inputs {
        args: &input,
        stdin,
        early,
    };
    run(configs, Mode::Inject, inputs, &args.output, &args.edit)
}

pub(crate) fn run_uninject(args: &UninjectArgs) -> ExitStatus {
    if let Some(why) = args.edit.refused_for(&args.input) {
        eprint(&format!("error: {why}\n"));
        return ExitStatus::Error;
    }
    warn_of_rule_flags(args);
    let input_args = &args.input.for_edit(&args.edit);
    input_args.hint_on_terminal("uninject");
    let stdin = open_stdin(input_args, &args.edit);
    let mode = if args.trust_status {
        Mode::UninjectTrustingStatus
    } else {
        Mode::Uninject
    };
    // Files named without `-c`: each with its own nearest configuration, as `inject` finds
    // them (a two-team repository uninjected from its root found none for either team).
    let files_named = input_args.all_paths().iter().any(|p| p.as_os_str() != "-");
    if files_named && args.configs.is_empty() && !args.discovery.no_discovery {
        let found = super::ConfigArgs {
            configs: Vec::new(),
            sets: Vec::new(),
            set_json: Vec::new(),
            discovery: args.discovery.clone(),
        };
        let planned = configs::Planned {
            edit: args.edit.any(),
            quiet: args.output.quiet,
            uninject: true,
            trusting: args.trust_status,
        };
        let Some((plan, input)) = configs::plan(&found, input_args, planned) else {
            return ExitStatus::Error;
        };
        let (configs, early) = read_while(&input, || plan.load(&[]));
        let Some(configs) = configs else {
            return ExitStatus::Error;
        };
        let inputs = Inputs {
            args: &input,
            stdin,
            early,
        };
        return run(configs, mode, inputs, &args.output, &args.edit);
    }
    // The configuration given, else the nearest default one (unless `--no-discovery`), else
    // none (then every record needs `--trust-status`).
    let found = if !args.configs.is_empty() {
        super::ConfigArgs {
            configs: args.configs.clone(),
            sets: Vec::new(),
            set_json: Vec::new(),
            discovery: args.discovery.clone(),
        }
        .paths(input_args.reads_stdin())
    } else if args.discovery.no_discovery {
        Ok(Vec::new())
    } else {
        super::nearest_here().map(|found| found.into_iter().collect())
    };
    let found = match found {
        Ok(found) => found,
        Err(e) => {
            eprint(&format!("error: {e}\n"));
            return ExitStatus::Error;
        }
    };
    let paths: Vec<&std::path::Path> = found.iter().map(|p| p.as_path()).collect();
    let (config, early) = read_while(input_args, || {
        if paths.is_empty() {
            Ok(Config::empty())
        } else {
            config::load_untried(&paths)
        }
    });
    match config {
        Ok(config) => run(
            Configs::one(config),
            mode,
            Inputs {
                args: input_args,
                stdin,
                early,
            },
            &args.output,
            &args.edit,
        ),
        Err(errors) => {
            diagnostics(errors);
            ExitStatus::Error
        }
    }
}

/// Says that `-n` and `--namespace-labels`, which `uninject` accepts (flags are never
/// removed), change nothing: it consults no rules.
fn warn_of_rule_flags(args: &UninjectArgs) {
    let given: Vec<&str> = [
        ("-n/--namespace", args.namespace.is_some()),
        ("--namespace-labels", !args.namespace_labels.is_empty()),
    ]
    .into_iter()
    .filter_map(|(flag, given)| given.then_some(flag))
    .collect();
    if !given.is_empty() {
        let verb = if given.len() == 1 { "has" } else { "have" };
        super::output::print_warnings(&[format!(
            "{} {verb} no effect on uninject: it removes what the status annotation records, and consults no rules",
            given.join(" and ")
        )]);
    }
}

/// Standard input read a window at a time, when it is the only input and its output goes
/// to stdout.
fn open_stdin(input: &InputArgs, edit: &EditArgs) -> Option<StdinWindows> {
    let stdin_only = input.all_paths().iter().all(|p| p.as_os_str() == "-");
    (stdin_only && !edit.any()).then(StdinWindows::open)
}

/// Where a run's manifests come from.
struct Inputs<'a> {
    args: &'a InputArgs,
    stdin: Option<StdinWindows>,
    /// Files read while the configuration loaded.
    early: Option<Loaded>,
}

fn run(
    mut configs: Configs,
    mode: Mode,
    inputs: Inputs<'_>,
    output: &OutputArgs,
    edit: &EditArgs,
) -> ExitStatus {
    let Inputs {
        args: input,
        stdin,
        early,
    } = inputs;
    super::progress::start(report_sink::progress_allowed(), input.total_bytes());
    if edit.any() && output.output != Format::Yaml {
        report_sink::error(
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
        super::held::process_all(&mut configs, input, stdin, early, mode, output.output)
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
        super::output::no_objects_in_stdin();
        failed = true;
    }
    let (text, notes) = match made {
        Made::Yaml(made) if edit.any() => return super::edit::run(&files, made, edit, failed),
        Made::Yaml(made) => {
            let (yaml, notes, render_errors) = yaml_all(&files, made);
            failed |= !render_errors.is_empty();
            for e in &render_errors {
                report_sink::error(codes::INTERNAL, Some(&e.file), &e.to_string());
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
        report_sink::nothing_written();
    }
    report(&files, &notes, &[]);
    if failed {
        // Nothing on stdout: a partial stream piped into `kubectl apply` would be worse.
        report_sink::people("error: nothing was written because of the errors above\n");
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
    Held(super::held::Held),
}

/// Each input's YAML output, in order, for one stream.
type Yaml<'a> = Vec<(&'a crate::read::Input, render::yaml::YamlOutput)>;

/// What goes to stdout.
enum Output<'a> {
    Yaml(Yaml<'a>),
    Held(crate::cli::write::Spool),
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
