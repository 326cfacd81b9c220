//! `kinject inject` and `kinject uninject`: wiring only.

use crate::config::{self, Config};
use crate::inject::Mode;
use crate::pipeline::FileResult;
use crate::render;
use crate::report;

use super::output::{diagnostics, process_inputs, read_stdin, stdout};
use super::{
    EXIT_ERROR, EditArgs, Format, InjectArgs, InputArgs, OutputArgs, ReportFormat, UninjectArgs,
    eprint,
};

pub(crate) fn run_inject(args: &InjectArgs) -> u8 {
    // A ResourceList on standard input: kinject is a KRM function.
    let stdin_only = args.input.all_paths().iter().all(|p| p.as_os_str() == "-");
    let mut stdin = None;
    if stdin_only && !args.edit.any() {
        match read_stdin() {
            Ok(bytes) => {
                if let Ok(input) = crate::krm::input(&bytes)
                    && crate::krm::is_resource_list(&input)
                {
                    return super::krm::run_input(
                        input,
                        &args.config.configs,
                        &args.config.sets,
                        args.input.namespace.clone(),
                    );
                }
                stdin = Some(bytes);
            }
            Err(e) => {
                eprint(&format!("error: cannot read <stdin>: {e}\n"));
                return EXIT_ERROR;
            }
        }
    }
    let Some(config) = args.config.load() else {
        return EXIT_ERROR;
    };
    match &args.emit_kustomize {
        Some(dir) => super::overlay::run(&config, &args.input, dir, &args.output),
        None => run(
            &config,
            Mode::Inject,
            &args.input,
            stdin,
            &args.output,
            &args.edit,
        ),
    }
}

pub(crate) fn run_uninject(args: &UninjectArgs) -> u8 {
    let paths: Vec<&std::path::Path> = args.configs.iter().map(|p| p.as_path()).collect();
    let config = if paths.is_empty() {
        Ok(Config::empty())
    } else {
        config::load(&paths, &[])
    };
    match config {
        Ok(config) => run(
            &config,
            Mode::Uninject,
            &args.input,
            None,
            &args.output,
            &args.edit,
        ),
        Err(errors) => {
            diagnostics(errors);
            EXIT_ERROR
        }
    }
}

fn run(
    config: &Config,
    mode: Mode,
    input: &InputArgs,
    stdin: Option<Vec<u8>>,
    output: &OutputArgs,
    edit: &EditArgs,
) -> u8 {
    if edit.any() && output.output != Format::Yaml {
        eprint(
            "error: --in-place, --check and --diff work on YAML output, not -o json or -o patch\n",
        );
        return EXIT_ERROR;
    }
    let keep = if output.output == Format::Yaml {
        crate::pipeline::Keep::YamlText
    } else {
        crate::pipeline::Keep::Values
    };
    let (files, input_errors) = match process_inputs(input, stdin, config, mode, keep) {
        Ok(r) => r,
        Err(code) => return code,
    };
    // The process ends after this command: freeing every parsed document one by one would
    // take a fifth of the run (docs/performance.md).
    let mut files = std::mem::ManuallyDrop::new(files);
    let mut failed = !input_errors.is_empty() || files.iter().any(|f| !f.errors.is_empty());
    diagnostics(input_errors);
    for f in files.iter() {
        diagnostics(f.errors.clone());
    }
    if edit.any() {
        report(&files, output, &[]);
        return super::edit::run(&files, edit, failed, output.quiet);
    }
    let (text, notes, render_errors) = render_all(&mut files, output.output);
    failed |= !render_errors.is_empty();
    for e in &render_errors {
        eprint(&format!("error: {e}\n"));
    }
    report(&files, output, &notes);
    if failed {
        // Nothing on stdout: a partial stream piped into `kubectl apply` would be worse.
        eprint("error: nothing was written because of the errors above\n");
        return EXIT_ERROR;
    }
    stdout(&text)
}

fn report(files: &[FileResult], output: &OutputArgs, notes: &[String]) {
    if output.quiet {
        return;
    }
    let entries = report::entries(files);
    match output.report {
        ReportFormat::Text => eprint(&report::text(&entries)),
        ReportFormat::Json => eprint(&format!(
            "{}\n",
            serde_json::to_string_pretty(&entries).unwrap_or_default()
        )),
    }
    for w in files.iter().flat_map(|f| &f.warnings).chain(notes) {
        eprint(&format!("warning: {w}\n"));
    }
}

/// Renders every file in `format`: (text, notes, errors).
fn render_all(
    files: &mut [FileResult],
    format: Format,
) -> (String, Vec<String>, Vec<render::RenderError>) {
    let mut notes = Vec::new();
    let mut errors = Vec::new();
    let text = match format {
        Format::Yaml => {
            let mut out = String::new();
            for f in files.iter_mut() {
                match render::yaml::render_taking(f) {
                    Ok(y) if out.is_empty() => {
                        // The first (often the only) file: its text is the stream so far.
                        out = y.text;
                        notes.extend(y.notes);
                    }
                    Ok(y) => {
                        join_stream(&mut out, &y.text);
                        notes.extend(y.notes);
                    }
                    Err(e) => errors.push(e),
                }
            }
            out
        }
        Format::Json => {
            let values: Vec<serde_json::Value> =
                files.iter().flat_map(render::json::documents).collect();
            render::json::render(&values)
        }
        Format::Patch => {
            let entries: Vec<_> = files.iter().flat_map(render::patch::entries).collect();
            format!(
                "{}\n",
                serde_json::to_string_pretty(&entries).unwrap_or_default()
            )
        }
    };
    (text, notes, errors)
}

/// Appends one file's YAML to a stream of several: a line break and a `---` between them
/// where the next file does not start with one.
fn join_stream(out: &mut String, next: &str) {
    if out.is_empty() {
        out.push_str(next);
        return;
    }
    if next.trim().is_empty() {
        return;
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    let starts_with_marker = next
        .lines()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .is_some_and(|l| l.starts_with("---"));
    if !starts_with_marker {
        out.push_str("---\n");
    }
    out.push_str(next);
}
