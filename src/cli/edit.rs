//! `--in-place`, `--check` and `--diff`: compare each file's new text with the old, show or
//! write the difference. A file with an error is never written; the others still are.

use std::io::IsTerminal;

use crate::cli::write::{Expected, atomic_write, encode};
use crate::pipeline::FileResult;
use crate::render;

use super::{EditArgs, ExitStatus, OutputArgs, ReportFormat, eprint, output};

/// Handles every file; `failed` says whether errors were already reported. Returns the exit
/// code. The report comes after the writes, so that it names the files not written.
pub(crate) fn run(
    files: &[FileResult],
    args: &EditArgs,
    mut failed: bool,
    output_args: &OutputArgs,
) -> ExitStatus {
    let quiet = output_args.quiet;
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let mut out = String::new();
    let (mut changed, mut unchanged) = (0usize, 0usize);
    let mut unwritten: Vec<(String, String)> = Vec::new();
    for f in files {
        let name = &f.input.source.name;
        if !f.errors.is_empty() {
            continue;
        }
        let Some(path) = &f.input.source.path else {
            if args.in_place {
                eprint("error: --in-place needs files, not standard input\n");
                failed = true;
                continue;
            }
            // --check / --diff of stdin compare against it like a file.
            if let Some(code) =
                compare(f, name, args, color, &mut out, &mut changed, &mut unchanged)
            {
                failed |= code == ExitStatus::Error;
            }
            continue;
        };
        match compare(f, name, args, color, &mut out, &mut changed, &mut unchanged) {
            Some(ExitStatus::Error) => failed = true,
            Some(_) if args.in_place => {
                let written = render::yaml::render(f)
                    .map_err(|e| e.to_string())
                    .and_then(|y| {
                        let bytes = encode(&y.text(&f.input), f.input.encoding);
                        let expected = Expected {
                            stamp: f.input.stamp,
                            within: f.input.source.within.as_deref(),
                        };
                        atomic_write(path, &bytes, &expected).map_err(|e| e.to_string())
                    });
                if let Err(e) = written {
                    // With `--report json` the file's entries say it (`not written: …`).
                    if output_args.report != ReportFormat::Json {
                        eprint(&format!(
                            "error: {name}: cannot write: {e} (the file is unchanged)\n"
                        ));
                    }
                    failed = true;
                    changed -= 1;
                    unwritten.push((name.clone(), e));
                }
            }
            _ => {}
        }
    }
    output::report(files, output_args, &[], &unwritten);
    // The summary is for people; `--report json` writes only the report on stderr.
    if !quiet && output_args.report != ReportFormat::Json {
        let verb = if args.in_place {
            "changed"
        } else {
            "would change"
        };
        let unwritten = if unwritten.is_empty() {
            String::new()
        } else {
            format!(", {} not written", unwritten.len())
        };
        eprint(&format!(
            "{changed} file(s) {verb}, {unchanged} unchanged{unwritten}\n"
        ));
    }
    let code = output::stdout(&out);
    if failed || code != ExitStatus::Success {
        ExitStatus::Error
    } else if changed > 0 {
        ExitStatus::Changed
    } else {
        ExitStatus::Success
    }
}

/// Renders `f` and records whether it changes: `None` unchanged, `Some(ExitStatus::Changed)` changed,
/// `Some(ExitStatus::Error)` when it cannot be rendered.
fn compare(
    f: &FileResult,
    name: &str,
    args: &EditArgs,
    color: bool,
    out: &mut String,
    changed: &mut usize,
    unchanged: &mut usize,
) -> Option<ExitStatus> {
    let new = match render::yaml::render(f) {
        Ok(y) => y.into_text(&f.input),
        Err(e) => {
            eprint(&format!("error: {e}\n"));
            return Some(ExitStatus::Error);
        }
    };
    if *new == *f.input.text {
        *unchanged += 1;
        return None;
    }
    *changed += 1;
    if args.diff {
        out.push_str(&unified_diff(&f.input.text, &new, name, color));
    } else if args.check {
        out.push_str(name);
        out.push('\n');
    }
    Some(ExitStatus::Changed)
}

/// `git diff`-style unified diff of one file.
pub(crate) fn unified_diff(old: &str, new: &str, name: &str, color: bool) -> String {
    let diff = similar::TextDiff::from_lines(old, new);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{name}"), &format!("b/{name}"))
        .to_string();
    if !color {
        return text;
    }
    text.lines()
        .map(|l| {
            let code = match l.as_bytes().first() {
                Some(b'+') if !l.starts_with("+++") => "32",
                Some(b'-') if !l.starts_with("---") => "31",
                Some(b'@') => "36",
                _ => return format!("{l}\n"),
            };
            format!("\x1b[{code}m{l}\x1b[0m\n")
        })
        .collect()
}
