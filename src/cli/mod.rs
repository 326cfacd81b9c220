//! The command line: flags declared once with their help, one file per subcommand, and the
//! one place that decides what the user sees and the exit code.

mod admission;
mod configs;
mod edit;
mod explain;
mod format_flag;
mod held;
mod inject;
mod krm;
mod output;
mod overlay;
mod plugin;
mod progress;
mod report_sink;
mod run;
mod serve;
mod stream;
mod tips;
pub(crate) mod write;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

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
// Each subcommand's arguments are built when that subcommand runs (or for help, completions
// and man pages), not at every start: `serve` alone has 23 (docs/performance.md). The
// `Args` structs it flattens have `//` comments, not doc comments: see `InputArgs`.
#[command(defer = true)]
pub enum Command {
    /// Inject sidecars into manifests (stdin, files or directories) and write the result.
    #[command(after_help = "Examples:
  kinject inject -c sidecars.yaml deploy.yaml
  kubectl kustomize overlays/prod | kinject inject -c sidecars.yaml | kubectl apply -f -
  kinject inject -c sidecars.yaml -n prod-eu -l app=web -o patch k8s/
  kinject inject -c sidecars.yaml --check k8s/       # exit 1 when a file would change
  kinject inject -c sidecars.yaml -i k8s/            # rewrite the files in place

Exit status: 0 done; 1 files changed (--in-place) or would change (--check, --diff);
2 an error (nothing written on stdout).")]
    Inject(InjectArgs),
    /// Remove everything kinject injected (as its status annotation records it).
    #[command(after_help = "Examples:
  kinject uninject -c sidecars.yaml injected.yaml
  kinject uninject -c sidecars.yaml -i k8s/

Exit status: 0 done; 1 files changed (--in-place) or would change (--check, --diff);
2 an error (nothing written on stdout).")]
    Uninject(UninjectArgs),
    /// Say, for every object, which rules match, which do not and why, and what would be
    /// injected.
    #[command(after_help = "Examples:
  kinject explain -c sidecars.yaml deploy.yaml
  kinject explain -c sidecars.yaml -n prod-eu --report json k8s/")]
    Explain(ExplainArgs),
    /// Run as a KRM function: a ResourceList on stdin (its functionConfig is the configuration),
    /// the ResourceList with injected items and results on stdout. Also what `kinject` with no
    /// subcommand does when stdin is not a terminal.
    #[command(after_help = "Examples:
  kinject krm < resource-list.yaml
  kinject krm -c sidecars.yaml < resource-list.yaml
  kinject krm --set version=2.2 --namespace-labels shop=team=shop < resource-list.yaml")]
    Krm(KrmArgs),
    /// Answer an `admission.k8s.io/v1` AdmissionReview on stdin with the response a mutating
    /// webhook returns: `allowed`, and the base64 JSONPatch when the object changes.
    #[command(after_help = "Examples:
  kinject admission -c sidecars.yaml < review.json
  kinject admission -c sidecars.yaml -f review.json")]
    Admission(AdmissionArgs),
    /// Serve AdmissionReviews over HTTPS as the cluster's mutating webhook: the answer of
    /// `kinject admission` for each request, the configuration and certificates reloaded when
    /// their files change (docs/serve.md).
    #[command(after_help = "Examples:
  kinject serve -c sidecars.yaml --print-manifests --image registry.example.com/kinject:0.1.0 | kubectl apply -f -
  kinject serve -c /etc/kinject/config --tls-cert-file tls.crt --tls-private-key-file tls.key
  kinject serve -c sidecars.yaml --insecure-plain-http --listen 127.0.0.1:8080

Exit status: 0 stopped by SIGTERM or SIGINT after in-flight requests completed; 2 an error
at start-up (the configuration, the certificates, the address).")]
    Serve(ServeArgs),
    /// Print the JSON Schema of the configuration file (for editors and CI validation).
    #[command(after_help = "Examples:
  kinject schema > kinject.schema.json")]
    Schema,
    /// Print kinject's version, the commit it was built from and its date (as `--version`).
    #[command(after_help = "Examples:
  kinject version
  kinject version -o json")]
    Version {
        /// `text` (as `--version`) or `json` (`{"kinject": {"version": …, "build": …}}`).
        #[arg(short = 'o', long, value_enum, default_value_t = ReportFormat::Text)]
        output: ReportFormat,
    },
    /// Print a shell completion script.
    #[command(after_help = "Examples:
  mkdir -p ~/.local/share/bash-completion/completions
  kinject completions bash > ~/.local/share/bash-completion/completions/kinject")]
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
}

// Where manifests come from. (`//`, not `///`: clap would make a doc comment the about
// text of the subcommands that flatten it, their arguments being built deferred.)
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
    /// Only objects whose own labels (`metadata.labels`) this kubectl label selector selects
    /// (`app=web`, `app!=web`, `tier in (a,b)`, `tier notin (a)`, `key`, `!key`, `ver>1`,
    /// `ver<3`, joined by commas), read and applied as Kubernetes does (a selector it refuses
    /// is refused); the others pass through unchanged, reported as `not_selected`.
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Not flags here: the namespace facts the rules read, given by the commands that have
    /// rules (`inject`, `explain`: `RuleScopeArgs`); `uninject` has none and offers none.
    #[arg(skip)]
    pub scope: RuleScopeArgs,
    /// Not a flag: whether the command rewrites the inputs in place (then only regular files
    /// are read; a FIFO is refused before it is opened).
    #[arg(skip)]
    pub rewrite: bool,
    /// Not a flag: whether the command rewrites the inputs or says how it would (`-i`,
    /// `--check`, `--diff`): then no name leading out of its tree is read (`read::Intent`).
    #[arg(skip)]
    pub edit: bool,
    /// Not a flag: the inputs, when already found (`configs::plan`); else the paths are
    /// walked when the inputs are read.
    #[arg(skip)]
    pub sources: Option<Vec<crate::read::Source>>,
}

// What rules that match namespaces read of the objects' namespaces. (`//`, not `///`: clap would make a doc comment the about
// text of the subcommands that flatten it, their arguments being built deferred.)
#[derive(Debug, Clone, Default, Args)]
pub struct RuleScopeArgs {
    /// Namespace of objects that do not name one (for rules that match namespaces).
    #[arg(short = 'n', long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// A label of a namespace, for rules' `namespaceSelector` (repeatable; `Namespace` objects
    /// in the input count too).
    #[arg(long = "namespace-labels", value_name = "NS=KEY=VALUE")]
    pub namespace_labels: Vec<String>,
}

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
        configs::load(&paths, &self.overrides())
    }

    /// The configuration files: those given, or the nearest default one (`find_default`).
    pub(crate) fn paths(&self, stdin_read: bool) -> Result<Vec<PathBuf>, String> {
        if self.configs.is_empty() {
            return find_default(&self.discovery);
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

/// The nearest `.kinject.yaml` or `kinject.yaml` of the current directory (`tree::Nearest`):
/// in it or one above it, up to the root of the git repository it is in; outside a
/// repository, in the current directory only. None with `--no-discovery`.
fn find_default(discovery: &DiscoveryArgs) -> Result<Vec<PathBuf>, String> {
    discovery.allowed()?;
    if let Some(found) = nearest_here()? {
        return Ok(vec![found]);
    }
    let where_ = if std::env::current_dir()
        .ok()
        .is_some_and(|cwd| crate::tree::repository(&cwd).is_some())
    {
        "here or in a directory above it, up to the repository's root"
    } else {
        "here (outside a git repository, directories above are not looked in)"
    };
    Err(format!(
        "no configuration: pass -c FILE, or add {} {where_}",
        crate::tree::CONFIG_NAMES.join(" or ")
    ))
}

/// The nearest configuration of the current directory (`tree::Nearest`), `None` when there
/// is none; `Err` when the nearest one is refused (a symlink out of the repository).
pub(crate) fn nearest_here() -> Result<Option<PathBuf>, String> {
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    match crate::tree::Nearest::default().of_directory(&cwd, &cwd) {
        Ok(found) => Ok(Some(found)),
        Err(crate::tree::NotFound::Refused(why)) => Err(format!("no configuration: {why}")),
        Err(crate::tree::NotFound::Looked(_)) => Ok(None),
    }
}

// Whether a configuration is looked for beside the manifests. (`//`, not `///`: clap would
// make a doc comment the about text of the subcommands that flatten it.)
#[derive(Debug, Clone, Default, Args)]
pub struct DiscoveryArgs {
    /// Never look for a `.kinject.yaml` or `kinject.yaml` beside the manifests: without -c the
    /// run is refused. For CI, where a configuration a pull request adds would otherwise
    /// configure every file below it (docs/security.md).
    #[arg(long, env = "KINJECT_NO_DISCOVERY", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_discovery: bool,
}

impl DiscoveryArgs {
    /// `Err` when no configuration may be looked for.
    pub(crate) fn allowed(&self) -> Result<(), String> {
        if self.no_discovery {
            return Err("no configuration: --no-discovery (or KINJECT_NO_DISCOVERY) is set, so none is looked for beside the manifests: pass -c FILE".to_owned());
        }
        Ok(())
    }
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
        parse_namespace_labels(&self.scope.namespace_labels, &mut given)?;
        let namespace = self.scope.namespace.clone();
        let mut settings = crate::inject::Settings::new(config, namespace, mode);
        if let Some(text) = &self.selector {
            let selector = crate::select::kubectl_selector(text)
                .map_err(|e| format!("-l/--selector `{text}`: {e}"))?;
            settings.selector = Some(selector);
        }
        Ok(settings.with_namespace_labels(inputs, given))
    }

    /// What the inputs are read for.
    pub(crate) fn intent(&self) -> crate::read::Intent {
        match (self.rewrite, self.edit) {
            (true, _) => crate::read::Intent::Rewrite,
            (false, true) => crate::read::Intent::Preview,
            (false, false) => crate::read::Intent::Read,
        }
    }

    /// These arguments, for the files `edit` says what to do with.
    fn for_edit(&self, edit: &EditArgs) -> Self {
        InputArgs {
            rewrite: edit.in_place,
            edit: edit.in_place || edit.check || edit.diff,
            ..self.clone()
        }
    }

    /// The size of the inputs, when they are all files (for a progress line).
    pub(crate) fn total_bytes(&self) -> Option<u64> {
        let sizes: Option<Vec<u64>> = match &self.sources {
            Some(sources) => sources
                .iter()
                .map(|s| std::fs::metadata(s.path.as_ref()?).ok().map(|m| m.len()))
                .collect(),
            None => self
                .all_paths()
                .iter()
                .map(|p| {
                    std::fs::metadata(p)
                        .ok()
                        .filter(|m| m.is_file())
                        .map(|m| m.len())
                })
                .collect(),
        };
        sizes.map(|s| s.iter().sum()).filter(|t| *t > 0)
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

// Which configuration to use. (`//`, not `///`: clap would make a doc comment the about
// text of the subcommands that flatten it, their arguments being built deferred.)
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
    /// Override a template value with a string: `--set image.tag=1.10` (`values.image.tag`;
    /// the leading `values.` may be written). A key no template reads is an error.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Override a template value with a JSON value: `--set-json replicas=3`,
    /// `--set-json 'ports=[80,443]'` (applied before `--set`).
    #[arg(long = "set-json", value_name = "KEY=JSON")]
    pub set_json: Vec<String>,
    #[command(flatten)]
    pub discovery: DiscoveryArgs,
}

impl ConfigArgs {
    /// The `--set` and `--set-json` arguments, for loading.
    pub(crate) fn overrides(&self) -> Vec<crate::config::Set> {
        overrides(&self.sets, &self.set_json)
    }
}

/// `--set` and `--set-json` values, for loading: `--set-json` first, as Helm applies them.
pub(crate) fn overrides(sets: &[String], set_json: &[String]) -> Vec<crate::config::Set> {
    let json = set_json.iter().map(crate::config::Set::json);
    json.chain(sets.iter().map(crate::config::Set::string))
        .collect()
}

// What to write, and how to report. (`//`, not `///`: clap would make a doc comment the about
// text of the subcommands that flatten it, their arguments being built deferred.)
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Output format on stdout.
    #[arg(short = 'o', long, value_parser = format_flag::FormatParser, default_value = "yaml")]
    pub output: Format,
    /// Write the output to FILE instead of stdout: atomically (a temporary file beside it,
    /// renamed over it), and only when the run succeeds (when it fails, FILE is neither created
    /// nor changed). Not an input, nor a manifest inside an input directory.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["in_place", "check", "diff"])]
    pub output_file: Option<PathBuf>,
    /// Report format: `text`, for people (the objects acted on, warnings, errors and a
    /// summary line), or `json`, JSON Lines for machines (every object, diagnostic, error and
    /// warning, each with a `code`, then a summary; nothing else on its stream).
    #[arg(long, value_enum, default_value_t = ReportFormat::Text, value_name = "FORMAT")]
    pub report: ReportFormat,
    /// Write the report to FILE instead of stderr (stderr then shows diagnostics, errors and
    /// warnings, as with -q). As kustomize's plugin, whose stderr kustomize shows only when
    /// it fails, set KINJECT_REPORT_FILE to see the report of a build that succeeds.
    #[arg(long, value_name = "FILE", env = "KINJECT_REPORT_FILE")]
    pub report_file: Option<PathBuf>,
    /// No report on stderr (errors are still shown).
    #[arg(short, long)]
    pub quiet: bool,
    /// Report every object, those skipped and unchanged too (by default only the objects
    /// acted on, opted out or in error are listed; the summary counts the others).
    #[arg(short, long, conflicts_with = "quiet")]
    pub verbose: bool,
}

// Rewriting files instead of printing them: the pre-commit workflow. (`//`, not `///`: clap would make a doc comment the about
// text of the subcommands that flatten it, their arguments being built deferred.)
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

    /// Why these flags cannot go together, or with the inputs `input` names, before anything
    /// is read: `--check` promises to write nothing, `--in-place` to write (`--in-place --diff`
    /// is the diff of what was written), and standard input cannot be rewritten in place.
    pub(crate) fn refused_for(&self, input: &InputArgs) -> Option<&'static str> {
        if self.in_place && self.check {
            return Some(
                "--in-place and --check cannot be used together: --in-place rewrites the files, --check writes nothing and lists the files that would change (exit 1 if any); use --check in CI, --in-place to fix the files (--in-place --diff also shows what it changed)",
            );
        }
        (self.in_place && input.reads_stdin()).then_some(
            "--in-place needs files, not standard input: name the files to rewrite (or drop --in-place to write the result on stdout)",
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
    /// One JSON value: a kubectl `List` of every input document, in order (as `kubectl get -o
    /// json` prints several objects).
    JsonList,
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
    pub scope: RuleScopeArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub edit: EditArgs,
    /// Write a kustomize overlay to DIR whose patches apply the injection to the given bases
    /// (directories with a kustomization.yaml), instead of printing the injected manifests.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["in_place", "check", "diff", "output_file"])]
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
    #[command(flatten)]
    pub discovery: DiscoveryArgs,
    /// Remove what the status annotation says was added for sidecars no configuration given
    /// defines, on its word: kinject then checks only that its records are consistent, not
    /// that kinject added what they name (a manifest's annotation could name the pod's own
    /// containers).
    #[arg(long)]
    pub trust_status: bool,
    /// Accepted, with a warning that it does nothing here, and not in --help: uninject
    /// consults no rules (it removes what the status annotation records), but flags are never
    /// removed (docs/stability.md).
    #[arg(short = 'n', long, value_name = "NAMESPACE", hide = true)]
    pub namespace: Option<String>,
    /// Accepted and ignored, as `-n` is.
    #[arg(long = "namespace-labels", value_name = "NS=KEY=VALUE", hide = true)]
    pub namespace_labels: Vec<String>,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub edit: EditArgs,
}

#[derive(Debug, Clone, Args)]
pub struct AdmissionArgs {
    /// The AdmissionReview request: a file, or `-` or nothing for standard input.
    #[arg(value_name = "PATH", conflicts_with = "filename")]
    pub path: Option<PathBuf>,
    /// The AdmissionReview request file, as kubectl takes it (same as PATH).
    #[arg(short = 'f', long = "filename", value_name = "PATH")]
    pub filename: Option<PathBuf>,
    #[command(flatten)]
    pub config: ConfigArgs,
    /// A label of a namespace, for rules' `namespaceSelector` (repeatable).
    #[arg(long = "namespace-labels", value_name = "NS=KEY=VALUE")]
    pub namespace_labels: Vec<String>,
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// The address to serve the webhook on (HTTPS).
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:8443")]
    pub listen: std::net::SocketAddr,
    /// The server's certificate chain (PEM), re-read when the file changes.
    #[arg(long, value_name = "FILE", required_unless_present_any = ["insecure_plain_http", "print_manifests"])]
    pub tls_cert_file: Option<PathBuf>,
    /// The server's private key (PEM), re-read when the file changes.
    #[arg(long, value_name = "FILE", requires = "tls_cert_file")]
    pub tls_private_key_file: Option<PathBuf>,
    /// Accept only clients with a certificate signed by a CA of this file (PEM): the API
    /// server's client certificate. Probes then go to `--probe-listen`.
    #[arg(long, value_name = "FILE", requires = "tls_cert_file")]
    pub client_ca_file: Option<PathBuf>,
    /// Serve plain HTTP, without TLS, for local testing only: the API server calls webhooks
    /// over HTTPS alone.
    #[arg(long, conflicts_with_all = ["tls_cert_file", "client_ca_file"])]
    pub insecure_plain_http: bool,
    /// Also serve `/healthz`, `/readyz` and `/metrics` on this address, in plain HTTP (for
    /// the kubelet's probes and Prometheus, which have no client certificate).
    #[arg(long, value_name = "ADDR")]
    pub probe_listen: Option<std::net::SocketAddr>,
    /// The path the API server posts AdmissionReviews to.
    #[arg(long, value_name = "PATH", default_value = "/mutate")]
    pub path: String,
    /// What to answer for an object kinject cannot inject correctly (a conflict, an unknown
    /// requested sidecar): `deny` it with the located message (as `kinject admission` and
    /// `inject` do), or `allow` it unchanged with the message in the response's `warnings`.
    #[arg(long, value_enum, default_value_t = OnError::Deny)]
    pub on_error: OnError,
    /// Larger request bodies are refused with 413.
    #[arg(long, value_name = "BYTES", default_value_t = ServeArgs::MAX_REQUEST_BYTES)]
    pub max_request_bytes: usize,
    /// A review whose JSON holds more values than this (objects, arrays, strings, numbers,
    /// booleans, nulls, keys included) is refused, saying where: each costs the server up to
    /// 400 bytes of memory while it is reviewed.
    #[arg(long, value_name = "N", default_value_t = ServeArgs::MAX_REQUEST_VALUES)]
    pub max_request_values: usize,
    /// A pod with more containers than this (`containers`, `initContainers` and
    /// `ephemeralContainers` together) is refused, saying where, as a pod kinject cannot
    /// inject (`--on-error`): each container costs the server edits and patch operations.
    #[arg(long, value_name = "N", default_value_t = ServeArgs::MAX_CONTAINERS)]
    pub max_containers: usize,
    /// The bytes of request bodies being read and of answers not yet written, all requests
    /// together: a request beyond it gets 503 (this bounds the server's memory, with
    /// `--max-connections` and the review limits; docs/serve.md says how much).
    #[arg(long, value_name = "BYTES", default_value_t = ServeArgs::MAX_IN_FLIGHT_BYTES)]
    pub max_in_flight_bytes: usize,
    /// At most this many connections open at once: beyond, a new one ends the connection that
    /// has done nothing for the longest (idle ones first), so that connections sending
    /// nothing cannot keep others out.
    #[arg(long, value_name = "N", default_value_t = ServeArgs::MAX_CONNECTIONS)]
    pub max_connections: usize,
    /// A connection is closed when it has had no request in progress for this many seconds:
    /// from its start (the TLS handshake included) to its first request's headers, and
    /// between requests, over HTTP/1.1 and HTTP/2 alike.
    #[arg(long, value_name = "SECONDS", default_value_t = ServeArgs::HEADER_TIMEOUT)]
    pub header_timeout: f64,
    /// A request must be read and answered within this many seconds (keep it under the
    /// webhook's `timeoutSeconds`), or it gets 408 (body too slow) or 504 (no answer in
    /// time), for which the API server applies the webhook's `failurePolicy`.
    #[arg(long, value_name = "SECONDS", default_value_t = ServeArgs::REQUEST_TIMEOUT)]
    pub request_timeout: f64,
    /// An answer must be written within this many seconds of being ready (the client reading
    /// it), or the connection is closed and the answer dropped.
    #[arg(long, value_name = "SECONDS", default_value_t = ServeArgs::WRITE_TIMEOUT)]
    pub write_timeout: f64,
    /// On SIGTERM, keep accepting connections this many seconds while `/readyz` says the
    /// server is stopping, so that the Service stops sending it requests before it stops
    /// listening (the endpoints' update takes a moment to reach every API server).
    #[arg(long, value_name = "SECONDS", default_value_t = 0.0)]
    pub shutdown_delay: f64,
    /// Then, in-flight requests are given this many seconds to complete.
    #[arg(long, value_name = "SECONDS", default_value_t = ServeArgs::SHUTDOWN_TIMEOUT)]
    pub shutdown_timeout: f64,
    /// How often the configuration and certificate files are checked for changes. A change
    /// is loaded once the files have held still for an interval (not caught half-written).
    #[arg(long, value_name = "SECONDS", default_value_t = ServeArgs::RELOAD_INTERVAL)]
    pub reload_interval: f64,
    /// Print what to apply to run this server in a cluster, made from this configuration:
    /// Namespace, ServiceAccount, ConfigMap, Deployment, PodDisruptionBudget, Service,
    /// MutatingWebhookConfiguration and cert-manager's Issuer and Certificate. Serves nothing.
    #[arg(long)]
    pub print_manifests: bool,
    /// With `--print-manifests` (and needed by it): the image the cluster pulls, built and
    /// pushed as docs/container-image.md says.
    #[arg(long, value_name = "IMAGE", requires = "print_manifests")]
    pub image: Option<String>,
    /// With `--print-manifests`: the namespace the server runs in.
    #[arg(
        long,
        value_name = "NAMESPACE",
        default_value = "kinject-system",
        requires = "print_manifests"
    )]
    pub namespace: String,
    /// With `--print-manifests`: the server's replicas.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 2,
        requires = "print_manifests"
    )]
    pub replicas: u32,
    /// With `--print-manifests`: the webhook's `failurePolicy` (`Fail`: a pod is not created
    /// while no server answers; `Ignore`: it is created without its sidecars).
    #[arg(long, value_enum, default_value_t = FailurePolicy::Fail, requires = "print_manifests")]
    pub failure_policy: FailurePolicy,
    /// With `--print-manifests`: the webhook's `timeoutSeconds` (1 to 30).
    #[arg(long, value_name = "SECONDS", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=30), requires = "print_manifests")]
    pub timeout_seconds: u32,
    /// With `--print-manifests`: no cert-manager objects; the certificate's Secret and the
    /// webhook's `caBundle` are yours to make (docs/serve.md says how).
    #[arg(long, requires = "print_manifests")]
    pub without_cert_manager: bool,
}

/// `kinject serve`'s defaults: the flags' and those `--print-manifests` leaves out of the
/// server's arguments.
impl ServeArgs {
    // The limits' defaults are measured (docs/performance.md, "Bounds"): with them, two of
    // the costliest reviews at once and the budget full stay under the 256 MiB the printed
    // Deployment gives the server.
    pub(crate) const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;
    pub(crate) const MAX_REQUEST_VALUES: usize = crate::integrations::review_cost::SERVE_MAX_VALUES;
    pub(crate) const MAX_CONTAINERS: usize = crate::integrations::review_cost::SERVE_MAX_CONTAINERS;
    pub(crate) const MAX_IN_FLIGHT_BYTES: usize = 32 * 1024 * 1024;
    pub(crate) const MAX_CONNECTIONS: usize = 1024;
    pub(crate) const WRITE_TIMEOUT: f64 = 2.0;
    pub(crate) const HEADER_TIMEOUT: f64 = 5.0;
    pub(crate) const REQUEST_TIMEOUT: f64 = 8.0;
    pub(crate) const SHUTDOWN_TIMEOUT: f64 = 20.0;
    pub(crate) const RELOAD_INTERVAL: f64 = 2.0;
}

/// What `kinject serve` answers for an object it cannot inject correctly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnError {
    Deny,
    Allow,
}

/// A webhook's `failurePolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailurePolicy {
    #[value(name = "Fail")]
    Fail,
    #[value(name = "Ignore")]
    Ignore,
}

#[derive(Debug, Clone, Default, Args)]
pub struct KrmArgs {
    /// Configuration file to use instead of the ResourceList's functionConfig (repeatable).
    #[arg(short = 'c', long = "config", value_name = "FILE")]
    pub configs: Vec<PathBuf>,
    /// Override a template value of the configuration (the functionConfig, or the files of
    /// `-c`) with a string, as `inject --set` does (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Override a template value with a JSON value, as `inject --set-json` does (repeatable).
    #[arg(long = "set-json", value_name = "KEY=JSON")]
    pub set_json: Vec<String>,
    #[command(flatten)]
    pub scope: RuleScopeArgs,
}

#[derive(Debug, Clone, Args)]
pub struct ExplainArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub scope: RuleScopeArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Explanation format on stdout (`--report`, as `inject` names its report's; `-o` and
    /// `--output` say the same).
    #[arg(
        short = 'o',
        long = "report",
        visible_alias = "output",
        value_enum,
        default_value_t = ReportFormat::Text,
        value_name = "FORMAT"
    )]
    pub output: ReportFormat,
    /// Write the explanation to FILE instead of stdout (atomically; see `inject --help`).
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
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
        let mut opts = miette::MietteHandlerOpts::new();
        if !output::unicode() {
            opts = opts.unicode(false);
        }
        if !output::colour(true) {
            opts = opts.color(false);
        }
        Box::new(
            opts.width(100)
                .terminal_links(false)
                // A line breaks at a space, never inside a name (`log-\nshipper`).
                .word_separator(textwrap::WordSeparator::AsciiSpace)
                .word_splitter(textwrap::WordSplitter::NoHyphenation)
                .break_words(false)
                .build(),
        )
    }));
    let args = plugin_args().unwrap_or_else(|| std::env::args_os().collect());
    let matches = command_as_run()
        .try_get_matches_from(&args)
        .unwrap_or_else(|e| tips::with_tip(e, subcommand_given(&args)).exit());
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let command = match cli.command {
        Some(c) => c,
        // kustomize and kpt run an exec function with no arguments.
        None if !std::io::IsTerminal::is_terminal(&std::io::stdin()) => {
            Command::Krm(KrmArgs::default())
        }
        None => {
            let _ = command_as_run().print_help();
            return ExitCode::from(ExitStatus::Error);
        }
    };
    if let Some(refused) = output_refused(&command) {
        eprint(&format!("error: {refused}\n"));
        return ExitCode::from(ExitStatus::Error);
    }
    let report = match &command {
        Command::Inject(args) => Some((&args.output, &args.edit, false)),
        Command::Uninject(args) => Some((&args.output, &args.edit, true)),
        _ => None,
    };
    if let Some((output, edit, uninject)) = report {
        let wording = crate::render::report::Wording {
            uninject,
            dry_run: (edit.check || edit.diff) && !edit.in_place,
        };
        if let Err(e) = report_sink::start(output, wording) {
            eprint(&format!("error: {e}\n"));
            return ExitCode::from(ExitStatus::Error);
        }
    }
    let code = match command {
        Command::Krm(args) => krm::run(&args),
        Command::Admission(args) => admission::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Inject(mut args) => {
            args.input.scope = args.scope.clone();
            inject::run_inject(&args)
        }
        Command::Uninject(args) => inject::run_uninject(&args),
        Command::Explain(mut args) => {
            args.input.scope = args.scope.clone();
            explain::run(&args)
        }
        Command::Schema => {
            let text =
                serde_json::to_string_pretty(&crate::model::schema::document()).unwrap_or_default();
            output::stdout(&format!("{text}\n"))
        }
        Command::Version { output } => output::stdout(&version(output)),
        Command::Completions { shell } => {
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "kinject", &mut buf);
            output::stdout(&String::from_utf8_lossy(&buf))
        }
    };
    ExitCode::from(report_sink::finish(code))
}

/// The subcommand of a command line (its first argument that is one), if any.
fn subcommand_given(args: &[std::ffi::OsString]) -> Option<&str> {
    let names: Vec<String> = Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect();
    args.iter()
        .skip(1)
        .filter_map(|a| a.to_str())
        .find(|a| names.iter().any(|n| n == a))
}

/// Why the command's `--output-file` or `--report-file` cannot be written
/// (`tree::output_refused`): they are neither inputs nor the configuration, nor a file a
/// configuration would be found as.
fn output_refused(command: &Command) -> Option<String> {
    let (outputs, input, configs) = match command {
        Command::Inject(a) => (
            [
                ("--output-file", a.output.output_file.as_deref()),
                ("--report-file", a.output.report_file.as_deref()),
            ],
            &a.input,
            &a.config.configs,
        ),
        Command::Uninject(a) => (
            [
                ("--output-file", a.output.output_file.as_deref()),
                ("--report-file", a.output.report_file.as_deref()),
            ],
            &a.input,
            &a.configs,
        ),
        Command::Explain(a) => (
            [("--output-file", a.output_file.as_deref()), ("", None)],
            &a.input,
            &a.config.configs,
        ),
        _ => return None,
    };
    outputs.iter().find_map(|(flag, file)| {
        let file = (*file)?;
        let found_as_configuration = file
            .file_name()
            .is_some_and(|n| crate::tree::CONFIG_NAMES.iter().any(|c| n == *c));
        if found_as_configuration {
            return Some(format!(
                "{flag} {}: a configuration file's name (kinject would find it as one): write the output elsewhere",
                crate::diagnostic::printable_name(&file.display().to_string())
            ));
        }
        crate::tree::output_refused(flag, file, &input.all_paths(), configs)
    })
}

/// `--version`'s text, or the same facts as JSON.
fn version(format: ReportFormat) -> String {
    let full = env!("KINJECT_VERSION");
    match format {
        ReportFormat::Text => format!("kinject {full}\n"),
        ReportFormat::Json => {
            let (version, build) = full.split_once(' ').unwrap_or((full, ""));
            let build = build.trim_start_matches('(').trim_end_matches(')');
            let value = serde_json::json!({"kinject": {"version": version, "build": build}});
            format!(
                "{}\n",
                serde_json::to_string_pretty(&value).unwrap_or_default()
            )
        }
    }
}

/// The name kubectl runs a plugin by: installed as `kubectl-kinject`, kinject is `kubectl
/// kinject`.
const KUBECTL_PLUGIN_NAME: &str = "kubectl-kinject";

/// The command line's definition, named as the user ran it: `kubectl kinject` as kubectl's
/// plugin (help and errors then show what to type), else `kinject`.
fn command_as_run() -> clap::Command {
    let argv0 = std::env::args_os().next().map(PathBuf::from);
    let as_plugin = argv0
        .as_deref()
        .and_then(std::path::Path::file_name)
        .is_some_and(|n| n == KUBECTL_PLUGIN_NAME);
    let command = Cli::command();
    if as_plugin {
        command.bin_name("kubectl kinject")
    } else {
        command
    }
}

/// The file name kustomize gives a legacy exec transformer plugin of kind `InjectionConfig`.
pub(crate) const KUSTOMIZE_PLUGIN_NAME: &str = "InjectionConfig";

/// Installed (or symlinked) as kustomize's plugin file `InjectionConfig`, kinject is run as
/// `InjectionConfig <config file> [args…]` with the resources on stdin: that is
/// `kinject inject -c <config file> [args…] -`. Its report says what was injected, and
/// warns when nothing was: kustomize (v4 and later) shows a plugin's stderr when it fails;
/// `KINJECT_REPORT_FILE` (`--report-file`) keeps the report of a build that succeeds.
fn plugin_args() -> Option<Vec<std::ffi::OsString>> {
    let mut args = std::env::args_os();
    let argv0 = PathBuf::from(args.next()?);
    if argv0.file_name()? != KUSTOMIZE_PLUGIN_NAME {
        return None;
    }
    let config = args.next()?;
    let mut out: Vec<std::ffi::OsString> =
        ["kinject", "inject", "-c"].iter().map(Into::into).collect();
    out.push(plugin::config_file(config));
    out.extend(args);
    out.push("-".into());
    Some(out)
}

/// Says `text` (`error: …` and `warning: …` lines) on stderr, or in the JSON report.
fn eprint(text: &str) {
    report_sink::said(text);
}

/// `text` on stderr as it is (a progress line cleared first).
fn write_stderr(text: &str) {
    progress::clear();
    let _ = std::io::stderr().write_all(text.as_bytes());
}
