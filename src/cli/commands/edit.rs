//! `--in-place`, `--check` and `--diff`: compare each file's new text with the old, show or
//! write the difference. A file with an error is never written; the others still are.

use std::io::IsTerminal;

use crate::cli::write::{Expected, atomic_write, encode};
use crate::pipeline::FileResult;
use crate::render::RenderError;
use crate::render::yaml::YamlOutput;

use crate::diagnostic::codes;
use crate::render::report::Files;

use crate::args::EditArgs;
use crate::cli::output;
use crate::cli::report;
use crate::cli::status::ExitStatus;

/// Handles every file, with its YAML output (`made`, in the same order); `failed` says
/// whether errors were already reported. Returns the exit code. The report comes after the
/// writes, so that it names the files not written; its summary counts the files.
pub(crate) fn run(
    files: &[FileResult],
    made: Vec<Result<YamlOutput, RenderError>>,
    args: &EditArgs,
    mut failed: bool,
) -> ExitStatus {
    let color = crate::cli::terminal::colour(std::io::stdout().is_terminal());
    let mut out = String::new();
    let (mut changed, mut unchanged) = (0usize, 0usize);
    let mut unwritten: Vec<(String, String)> = Vec::new();
    for (f, made) in files.iter().zip(made) {
        let name = &f.input.source.name;
        if !f.errors.is_empty() {
            continue;
        }
        let path = f.input.source.path.as_ref();
        if path.is_none() && args.in_place {
            report::error(
                codes::USAGE,
                None,
                "--in-place needs files, not standard input",
            );
            failed = true;
            continue;
        }
        let new = match made {
            Ok(y) => y.into_text(&f.input),
            Err(e) => {
                report::error(codes::INTERNAL, Some(&e.file), &e.to_string());
                failed = true;
                continue;
            }
        };
        // --check / --diff of stdin compare against it like a file.
        if new == *f.input.text {
            unchanged += 1;
            continue;
        }
        changed += 1;
        if args.diff {
            out.push_str(&unified_diff(&f.input.text, &new, name, color));
        } else if args.check {
            out.push_str(name);
            out.push('\n');
        }
        let Some(path) = path.filter(|_| args.in_place) else {
            continue;
        };
        let bytes = encode(&new, f.input.encoding);
        let expected = Expected {
            stamp: f.input.stamp,
            within: f.input.source.within.as_deref(),
        };
        if let Err(e) = atomic_write(path, &bytes, &expected) {
            let e = e.to_string();
            report::error(
                codes::OUTPUT_WRITE,
                Some(name),
                &format!("{name}: cannot write: {e} (the file is unchanged)"),
            );
            failed = true;
            changed -= 1;
            unwritten.push((name.clone(), e));
        }
    }
    report::files(Files {
        changed,
        unchanged,
        not_written: unwritten.len(),
    });
    report::results(files, &[], &unwritten);
    let code = output::stdout(&out);
    if failed || code != ExitStatus::Success {
        ExitStatus::Error
    } else if changed > 0 {
        ExitStatus::Changed
    } else {
        ExitStatus::Success
    }
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
