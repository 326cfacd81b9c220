//! The command line: flags declared once with their help, one file per subcommand, and the
//! one place that decides what the user sees and the exit code.

mod admission;
mod configs;
mod edit;
mod explain;
mod inject;
mod json_stderr;
mod krm;
mod output;
mod overlay;
mod run;
mod stream;
pub(crate) mod write;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

/// Inject sidecar containers into Kubernetes manifests, offline, keeping your files as you
/// wrote them.
#[derive(Debug, Parser)]
#[command(
    name = "kinject",
    version = env!("KINJECT_VERSION"),
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Inject sidecars into manifests (stdin, files or directories) and write the result.
    Inject(InjectArgs),
    /// Remove everything kinject injected (as its status annotation records it).
    Uninject(UninjectArgs),
    /// Say, for every object, which rules match, which do not and why, and what would be
    /// injected.
    Explain(ExplainArgs),
    /// Run as a KRM function: a ResourceList on stdin (its functionConfig is the configuration),
    /// the ResourceList with injected items and results on stdout. Also what `kinject` with no
    /// subcommand does when stdin is not a terminal.
    Krm(KrmArgs),
    /// Answer an `admission.k8s.io/v1` AdmissionReview on stdin with the response a mutating
    /// webhook returns: `allowed`, and the base64 JSONPatch when the object changes.
    Admission(AdmissionArgs),
    /// Print the JSON Schema of the configuration file (for editors and CI validation).
    Schema,
    /// Print a shell completion script.
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
}

/// Where manifests come from.
#[derive(Debug, Clone, Args)]
pub struct InputArgs {
    /// Manifest files or directories (walked recursively for .yaml, .yml and .json; one with
    /// none is an error); `-` or nothing reads standard input (on a terminal, kinject says it
    /// waits for it). After `--` every name is a file, even one that starts
    /// with `-` (the pre-commit hooks end their `entry:` with `--`; so do `xargs kinject inject
    /// -i --` and `find … -exec kinject inject -i -- {} +`).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// A manifest file or directory, as kubectl takes it (same as a PATH argument).
    #[arg(short = 'f', long = "filename", value_name = "PATH")]
    pub filenames: Vec<PathBuf>,
    /// Accepted for kubectl compatibility: directories are always walked recursively.
    #[arg(short = 'R', long)]
    pub recursive: bool,
    /// Namespace of objects that do not name one (for rules that match namespaces).
    #[arg(short = 'n', long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// A label of a namespace, for rules' `namespaceSelector` (repeatable; `Namespace` objects
    /// in the input count too).
    #[arg(long = "namespace-labels", value_name = "NS=KEY=VALUE")]
    pub namespace_labels: Vec<String>,
    /// Not a flag: whether the command rewrites the inputs in place (then only regular files
    /// are read; a FIFO is refused before it is opened).
    #[arg(skip)]
    pub rewrite: bool,
    /// Not a flag: the inputs, when already found (`configs::plan`); else the paths are
    /// walked when the inputs are read.
    #[arg(skip)]
    pub sources: Option<Vec<crate::read::Source>>,
}

/// File names looked for when no `-c` is given.
pub(crate) const DEFAULT_CONFIGS: [&str; 2] = [".kinject.yaml", "kinject.yaml"];

impl ConfigArgs {
    /// Loads the configuration, or reports why it cannot be loaded and returns `None`.
    /// `stdin_read`: whether standard input holds the run's manifests (or request), which a
    /// configuration read from it would take.
    pub(crate) fn load(&self, stdin_read: bool) -> Option<crate::config::Config> {
        let paths = match self.paths(stdin_read) {
            Ok(p) => p,
            Err(e) => {
                eprint(&format!("error: {e}\n"));
                return None;
            }
        };
        let paths: Vec<&std::path::Path> = paths.iter().map(PathBuf::as_path).collect();
        match crate::config::load(&paths, &self.sets) {
            Ok(mut c) => {
                output::diagnostics(std::mem::take(&mut c.warnings));
                Some(c)
            }
            Err(errors) => {
                output::diagnostics(errors);
                None
            }
        }
    }

    /// The configuration files: those given, or the nearest default one (`find_default`).
    pub(crate) fn paths(&self, stdin_read: bool) -> Result<Vec<PathBuf>, String> {
        if self.configs.is_empty() {
            return find_default();
        }
        if stdin_read && let Some(p) = self.configs.iter().find(|p| is_stdin(p)) {
            return Err(format!(
                "-c {} is standard input, which holds the manifests: give the configuration as a file",
                crate::diagnostic::printable(&p.display().to_string())
            ));
        }
        Ok(self.configs.clone())
    }
}

/// The nearest `.kinject.yaml` or `kinject.yaml`: in the current directory or one above it,
/// up to the root of the git repository it is in. Outside a repository only the current
/// directory is looked in: a configuration in some directory above (a shared temporary
/// directory, a home directory) would otherwise be used without anyone having chosen it.
fn find_default() -> Result<Vec<PathBuf>, String> {
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let in_repository = cwd.ancestors().any(|d| d.join(".git").exists());
    for dir in cwd.ancestors() {
        for name in DEFAULT_CONFIGS {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(vec![candidate]);
            }
        }
        if !in_repository || dir.join(".git").exists() {
            break;
        }
    }
    let where_ = if in_repository {
        "here or in a directory above it, up to the repository's root"
    } else {
        "here (outside a git repository, directories above are not looked in)"
    };
    Err(format!(
        "no configuration: pass -c FILE, or add {} {where_}",
        DEFAULT_CONFIGS.join(" or ")
    ))
}

/// The hint for a run that reads manifests from a terminal (`waits`).
fn stdin_hint(waits: bool, command: &str) -> Option<String> {
    waits.then(|| {
        format!(
            "reading manifests from standard input (Ctrl-D to end; kinject {command} --help for usage)\n"
        )
    })
}

/// Whether `path` is this process's standard input (`-`, `/dev/stdin`, `/proc/self/fd/0`, or
/// any other name of the same open file).
fn is_stdin(path: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if path.as_os_str() == "-" {
        return true;
    }
    match (std::fs::metadata(path), std::fs::metadata("/dev/stdin")) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Namespace labels from `--namespace-labels ns=k=v` flags, added to `labels`.
pub(crate) fn parse_namespace_labels(
    flags: &[String],
    labels: &mut crate::inject::NamespaceLabels,
) -> Result<(), String> {
    for flag in flags {
        let mut parts = flag.splitn(3, '=');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(ns), Some(k), Some(v)) if !ns.is_empty() && !k.is_empty() => {
                labels
                    .entry(ns.to_owned())
                    .or_default()
                    .insert(k.to_owned(), serde_json::Value::String(v.to_owned()));
            }
            _ => {
                return Err(format!(
                    "--namespace-labels `{flag}`: expected NS=KEY=VALUE"
                ));
            }
        }
    }
    Ok(())
}

impl InputArgs {
    /// Settings for these inputs: namespace labels from `Namespace` objects among them and
    /// from `--namespace-labels`.
    pub(crate) fn settings<'c>(
        &self,
        config: &'c crate::config::Config,
        mode: crate::inject::Mode,
        inputs: &[crate::read::Input],
    ) -> Result<crate::inject::Settings<'c>, String> {
        let mut given = crate::inject::NamespaceLabels::new();
        parse_namespace_labels(&self.namespace_labels, &mut given)?;
        let settings = crate::inject::Settings::new(config, self.namespace.clone(), mode);
        Ok(settings.with_namespace_labels(inputs, given))
    }

    /// These arguments, for the files `edit` says what to do with.
    fn for_edit(&self, edit: &EditArgs) -> Self {
        InputArgs {
            rewrite: edit.in_place,
            ..self.clone()
        }
    }

    fn all_paths(&self) -> Vec<PathBuf> {
        self.paths.iter().chain(&self.filenames).cloned().collect()
    }

    /// Whether the manifests are read from standard input (no path, or `-`).
    pub(crate) fn reads_stdin(&self) -> bool {
        let paths = self.all_paths();
        paths.is_empty() || paths.iter().any(|p| p.as_os_str() == "-")
    }

    /// Says, on a terminal, that the manifests are awaited there: `kinject inject` with no
    /// file otherwise waits in silence. `command` names the subcommand for its help.
    pub(crate) fn hint_on_terminal(&self, command: &str) {
        let terminal = std::io::IsTerminal::is_terminal(&std::io::stdin());
        if let Some(hint) = stdin_hint(self.reads_stdin() && terminal, command) {
            eprint(&hint);
        }
    }
}

/// Which configuration to use.
#[derive(Debug, Clone, Args)]
pub struct ConfigArgs {
    /// Configuration file, or directory of them (repeatable; later files add sidecars and
    /// rules, and override values and defaults). Also reads OpenKruise SidecarSets and the
    /// salesforce, tumblr and Expedia injectors' files. Default: for each file, the nearest
    /// `.kinject.yaml` or `kinject.yaml` in its directory or above (up to the repository's
    /// root; outside a repository, up to this directory); for standard input, this
    /// directory's or above.
    #[arg(short = 'c', long = "config", value_name = "FILE")]
    pub configs: Vec<PathBuf>,
    /// Override a template value: `--set image.tag=1.2` (the value is read as YAML).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
}

/// What to write, and how to report.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Output format on stdout.
    #[arg(short = 'o', long, value_enum, default_value_t = Format::Yaml)]
    pub output: Format,
    /// Report format on stderr.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text, value_name = "FORMAT")]
    pub report: ReportFormat,
    /// No report on stderr (errors are still shown).
    #[arg(short, long)]
    pub quiet: bool,
}

/// Rewriting files instead of printing them: the pre-commit workflow.
#[derive(Debug, Clone, Default, Args)]
pub struct EditArgs {
    /// Rewrite the files in place (atomically; files that would not change are not touched).
    /// Exits 1 when a file changed, as pre-commit expects from a fixer.
    #[arg(short = 'i', long)]
    pub in_place: bool,
    /// Write nothing; print the paths of the files that would change and exit 1 if any would
    /// (refused with --in-place, which writes).
    #[arg(long)]
    pub check: bool,
    /// Print a unified diff of what would change (coloured on a terminal); exit 1 if anything
    /// would change. With --in-place, the diff of what was changed.
    #[arg(long)]
    pub diff: bool,
}

impl EditArgs {
    fn any(&self) -> bool {
        self.in_place || self.check || self.diff
    }

    /// Why these flags cannot go together: `--check` promises to write nothing, `--in-place`
    /// to write (`--in-place --diff` is the diff of what was written).
    pub(crate) fn refused(&self) -> Option<&'static str> {
        (self.in_place && self.check).then_some(
            "--in-place and --check cannot be used together: --in-place rewrites the files, --check writes nothing and lists the files that would change (exit 1 if any); use --check in CI, --in-place to fix the files (--in-place --diff also shows what it changed)",
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The manifests, edited in place: comments, order, quoting and indentation kept.
    Yaml,
    /// One JSON document per input document.
    Json,
    /// Per object: identity, source, and RFC 6902 operations.
    Patch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Args)]
pub struct InjectArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub edit: EditArgs,
    /// Write a kustomize overlay to DIR whose patches apply the injection to the given bases
    /// (directories with a kustomization.yaml), instead of printing the injected manifests.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["in_place", "check", "diff"])]
    pub emit_kustomize: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct UninjectArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Configuration file, or directory of them (repeatable): what its sidecars add is what
    /// uninject may remove. Default: the nearest `.kinject.yaml` or `kinject.yaml`, as for
    /// `inject`; none found, every record needs `--trust-status`.
    #[arg(short = 'c', long = "config", value_name = "FILE")]
    pub configs: Vec<PathBuf>,
    /// Remove what the status annotation says was added for sidecars no configuration given
    /// defines, on its word: kinject then checks only that its records are consistent, not
    /// that kinject added what they name (a manifest's annotation could name the pod's own
    /// containers).
    #[arg(long)]
    pub trust_status: bool,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub edit: EditArgs,
}

#[derive(Debug, Clone, Args)]
pub struct AdmissionArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// A label of a namespace, for rules' `namespaceSelector` (repeatable).
    #[arg(long = "namespace-labels", value_name = "NS=KEY=VALUE")]
    pub namespace_labels: Vec<String>,
}

#[derive(Debug, Clone, Default, Args)]
pub struct KrmArgs {
    /// Configuration file to use instead of the ResourceList's functionConfig (repeatable).
    #[arg(short = 'c', long = "config", value_name = "FILE")]
    pub configs: Vec<PathBuf>,
    /// Namespace of objects that do not name one.
    #[arg(short = 'n', long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct ExplainArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Explanation format on stdout.
    #[arg(short = 'o', long, value_enum, default_value_t = ReportFormat::Text)]
    pub output: ReportFormat,
}

/// Exit codes: 0 success, 1 files changed (or would), 2 error.
/// How a run ends, as its exit code tells it (docs/output.md; never renumbered,
/// docs/stability.md). Ordered: a run of several parts ends with the worst of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExitStatus {
    /// 0: done (nothing to change, or written).
    Success,
    /// 1: files changed (`--in-place`) or would change (`--check`, `--diff`).
    Changed,
    /// 2: an error; nothing was written on stdout.
    Error,
}

impl ExitStatus {
    /// The process's exit code.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Changed => 1,
            ExitStatus::Error => 2,
        }
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> Self {
        ExitCode::from(status.code())
    }
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    crate::cli::write::fail_writes_past_the_file_size_limit();
    let _ = miette::set_hook(Box::new(|_| {
        Box::new(
            miette::MietteHandlerOpts::new()
                .width(100)
                .terminal_links(false)
                .build(),
        )
    }));
    let cli = Cli::parse_from(plugin_args().unwrap_or_else(|| std::env::args_os().collect()));
    let command = match cli.command {
        Some(c) => c,
        // kustomize and kpt run an exec function with no arguments.
        None if !std::io::IsTerminal::is_terminal(&std::io::stdin()) => {
            Command::Krm(KrmArgs::default())
        }
        None => {
            let _ = Cli::command().print_help();
            return ExitCode::from(ExitStatus::Error);
        }
    };
    let report = match &command {
        Command::Inject(args) => Some(args.output.report),
        Command::Uninject(args) => Some(args.output.report),
        _ => None,
    };
    if report == Some(ReportFormat::Json) {
        json_stderr::start();
    }
    let code = match command {
        Command::Krm(args) => krm::run(&args),
        Command::Admission(args) => admission::run(&args),
        Command::Inject(args) => inject::run_inject(&args),
        Command::Uninject(args) => inject::run_uninject(&args),
        Command::Explain(args) => explain::run(&args),
        Command::Schema => {
            let text =
                serde_json::to_string_pretty(&crate::model::schema::document()).unwrap_or_default();
            output::stdout(&format!("{text}\n"))
        }
        Command::Completions { shell } => {
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "kinject", &mut buf);
            output::stdout(&String::from_utf8_lossy(&buf))
        }
    };
    json_stderr::finish();
    ExitCode::from(code)
}

/// The file name kustomize gives a legacy exec transformer plugin of kind `InjectionConfig`.
pub(crate) const KUSTOMIZE_PLUGIN_NAME: &str = "InjectionConfig";

/// Installed (or symlinked) as kustomize's plugin file `InjectionConfig`, kinject is run as
/// `InjectionConfig <config file> [args…]` with the resources on stdin: that is
/// `kinject inject -q -c <config file> [args…] -`.
fn plugin_args() -> Option<Vec<std::ffi::OsString>> {
    let mut args = std::env::args_os();
    let argv0 = PathBuf::from(args.next()?);
    if argv0.file_name()? != KUSTOMIZE_PLUGIN_NAME {
        return None;
    }
    let config = args.next()?;
    let mut out: Vec<std::ffi::OsString> = ["kinject", "inject", "-q", "-c"]
        .iter()
        .map(Into::into)
        .collect();
    out.push(config);
    out.extend(args);
    out.push("-".into());
    Some(out)
}

fn eprint(text: &str) {
    if json_stderr::on() {
        json_stderr::said(text);
    } else {
        write_stderr(text);
    }
}

/// `text` on stderr as it is.
fn write_stderr(text: &str) {
    let _ = std::io::stderr().write_all(text.as_bytes());
}
