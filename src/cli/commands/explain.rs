//! `kinject explain`: per object, which rules matched and why the others did not.

use serde::Serialize;

use crate::inject::{ActionKind, Mode};
use crate::pipeline::{Identity, Values};
use crate::select::{Criterion, Reason, RuleVerdict};

use crate::args::{EditArgs, ExplainArgs, ReportFormat};
use crate::cli::configs;
use crate::cli::inputs::Inputs;
use crate::cli::output::write_output;
use crate::cli::report::{diagnostics, eprint};
use crate::cli::run::{process_inputs, read_while, take_errors};
use crate::cli::status::ExitStatus;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Explanation {
    file: String,
    line: usize,
    #[serde(flatten)]
    identity: Identity,
    decision: Decision,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    sidecars: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<Reason>,
    rules: Vec<RuleVerdict>,
    /// The object's own annotation and the skips that apply to it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    policy: Vec<Criterion>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// What `inject` would do with an object, in `explain`'s words (`decision`, docs/stability.md):
/// the report's action, named as a decision not yet carried out.
#[derive(Serialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum Decision {
    Inject,
    Unchanged,
    Skip,
    Error,
}

impl Decision {
    /// The decision for what injecting did (explain runs in `Mode::Inject`: an object is
    /// injected, unchanged or skipped).
    fn of(kind: ActionKind) -> Decision {
        match kind {
            ActionKind::Injected => Decision::Inject,
            ActionKind::Unchanged => Decision::Unchanged,
            ActionKind::Skipped | ActionKind::Uninjected | ActionKind::NotInjected => {
                Decision::Skip
            }
        }
    }

    fn word(self) -> &'static str {
        match self {
            Decision::Inject => "inject",
            Decision::Unchanged => "unchanged",
            Decision::Skip => "skip",
            Decision::Error => "error",
        }
    }
}

/// `kinject explain`.
pub(crate) fn run(args: &ExplainArgs) -> ExitStatus {
    let inputs = &Inputs::new(&args.input, &args.scope, &EditArgs::default());
    inputs.hint_on_terminal("explain");
    let verdicts = || Values { verdicts: true };
    // As `inject` decides: files named without `-c` each explained with their own nearest
    // configuration, else the one given (or found for standard input).
    let processed = if inputs.files_named() && args.config.configs.is_empty() {
        let planned = configs::Planned::default();
        let Some((plan, input)) = configs::plan(&[], &args.config.discovery, inputs, planned)
        else {
            return ExitStatus::Error;
        };
        let (configs, early) = read_while(&input, || plan.load(&args.config.overrides()));
        let Some(mut configs) = configs else {
            return ExitStatus::Error;
        };
        configs.process(&input, None, early, Mode::Inject, verdicts)
    } else {
        let (config, early) = read_while(inputs, || {
            configs::load_one(&args.config, inputs.reads_stdin())
        });
        let Some(config) = config else {
            return ExitStatus::Error;
        };
        process_inputs(inputs, None, early, &config, Mode::Inject, verdicts)
    };
    let (files, input_errors) = match processed {
        Ok(r) => r,
        Err(code) => return code,
    };
    let mut files: Vec<_> = files.into_iter().map(|(f, ())| f).collect();
    // Inputs that cannot be read, documents that are not YAML, objects injection refuses:
    // said on stderr, and the exit code is 2; what could be read is still explained.
    let errors = take_errors(&mut files);
    let failed = !input_errors.is_empty() || !errors.is_empty();
    diagnostics(input_errors);
    diagnostics(errors);
    let mut out = Vec::new();
    for f in &files {
        for d in &f.docs {
            for o in &d.objects {
                let mut e = Explanation {
                    file: f.input.source.raw_name(),
                    line: o.line,
                    identity: o.identity.clone(),
                    decision: Decision::Error,
                    sidecars: Vec::new(),
                    reason: None,
                    rules: Vec::new(),
                    policy: Vec::new(),
                    error: None,
                };
                match &o.outcome {
                    Err(err) => e.error = Some(err.message.clone()),
                    Ok(outcome) => {
                        e.decision = Decision::of(outcome.action.kind());
                        e.sidecars = outcome.action.sidecars().to_vec();
                        e.reason = outcome.action.reason();
                        e.rules = outcome.verdicts.rules.clone();
                        e.policy = outcome.verdicts.policy.clone();
                    }
                }
                out.push(e);
            }
        }
    }
    let text = match args.output {
        ReportFormat::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&out).unwrap_or_default()
        ),
        ReportFormat::Text => text(&out),
    };
    match &args.output_file {
        // A file is written only by a run that succeeds, whatever it holds.
        Some(path) if failed => {
            eprint(&format!(
                "error: {} was not written because of the errors above\n",
                crate::diagnostic::printable_name(&path.display().to_string())
            ));
            ExitStatus::Error
        }
        to => {
            let code = write_output(to.as_deref(), |out| out.write_all(text.as_bytes()));
            if failed { ExitStatus::Error } else { code }
        }
    }
}

fn text(items: &[Explanation]) -> String {
    let mut lines = Vec::new();
    for e in items {
        lines.push(format!("{}:{}: {}", e.file, e.line, e.identity.short()));
        match (e.decision, &e.error) {
            (_, Some(err)) => lines.push(format!("  error: {err}")),
            (Decision::Skip, _) => lines.push(format!(
                "  skip: {}",
                e.reason.map_or("unknown", Reason::code)
            )),
            (d, _) => lines.push(format!("  {}: {}", d.word(), e.sidecars.join(", "))),
        }
        for c in &e.policy {
            lines.push(format!("  policy: {}", not_matched(c)));
        }
        for r in &e.rules {
            rule_lines(r, &mut lines);
        }
    }
    // A value with a line break in it (a name, an annotation in a message) stays on its line.
    lines
        .iter()
        .map(|l| format!("{}\n", crate::diagnostic::one_line(l)))
        .collect()
}

/// A rule's verdict: a line for each criterion it failed, one for those it met.
fn rule_lines(r: &RuleVerdict, lines: &mut Vec<String>) {
    if r.matched {
        lines.push(format!("  rule {}: matched", r.rule));
    } else {
        lines.push(format!(
            "  rule {}: not matched ({})",
            r.rule,
            r.reasons.join(", ")
        ));
    }
    for c in r.criteria.iter().filter(|c| !c.matched) {
        lines.push(format!("    no: {}", not_matched(c)));
    }
    let met: Vec<String> = r
        .criteria
        .iter()
        .filter(|c| c.matched)
        .map(|c| format!("{} {}", c.field, c.actual.as_ref().unwrap_or(&c.expected)))
        .collect();
    if !met.is_empty() {
        lines.push(format!("    ok: {}", met.join(", ")));
    }
}

/// `field wants …, has …` and the hint.
fn not_matched(c: &Criterion) -> String {
    let mut line = format!(
        "{} wants {}, has {}",
        c.field,
        c.expected,
        c.actual.as_deref().unwrap_or("none")
    );
    if let Some(hint) = c.hint {
        line.push_str(&format!(" ({hint})"));
    }
    line
}
