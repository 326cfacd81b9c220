//! The command line's flags as clap reads them: every subcommand's arguments, declared once
//! with their help, and nothing the run decides (that is `cli`'s `inputs::Inputs` and the
//! services beside it). `cli` parses with it; `cases` reads a case's command line with it, as
//! the kinject the case runs will.
//!
//! The `Args` structs that subcommands flatten carry `//` comments, not `///`: clap would
//! make a doc comment the about text of the subcommands that flatten them, their arguments
//! being built deferred.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::render::output::Format;

mod format_flag;

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
// `Args` structs it flattens have `//` comments, not doc comments (see this file's header).
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
    /// Run test cases of a configuration: folders holding an input, an expectation and
    /// optionally the command line (docs/test.md). Each case's output is compared byte for
    /// byte with its expectation, and an inject case's output checked to inject again to
    /// itself, to agree with `-o patch`, and to uninject to the input.
    #[command(after_help = "Examples:
  kinject test -c sidecars.yaml tests/
  kinject test -c sidecars.yaml --run mesh tests/
  kinject test -c sidecars.yaml --update tests/     # write the expectations, then read the diff
  kinject test -c sidecars.yaml --junit report.xml tests/

Exit status: 0 every case passed; 1 a case failed; 2 a case could not run (a bad case
folder, a missing input, an update refused) or no case was found.")]
    Test(TestArgs),
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

// Where manifests come from.
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
}

impl InputArgs {
    /// The PATH arguments, then the `-f` names.
    pub(crate) fn all_paths(&self) -> Vec<PathBuf> {
        self.paths.iter().chain(&self.filenames).cloned().collect()
    }
}

// What rules that match namespaces read of the objects' namespaces.
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

// Whether a configuration is looked for beside the manifests.
#[derive(Debug, Clone, Default, Args)]
pub struct DiscoveryArgs {
    /// Never look for a `.kinject.yaml` or `kinject.yaml` beside the manifests: without -c the
    /// run is refused. For CI, where a configuration a pull request adds would otherwise
    /// configure every file below it (docs/security.md).
    #[arg(long, env = "KINJECT_NO_DISCOVERY", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_discovery: bool,
}

// Which configuration to use.
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
    #[command(flatten)]
    pub values: SetArgs,
    #[command(flatten)]
    pub discovery: DiscoveryArgs,
}

impl ConfigArgs {
    /// The `--set` and `--set-json` arguments, for loading.
    pub(crate) fn overrides(&self) -> Vec<crate::config::Set> {
        self.values.overrides()
    }
}

// The template values the command line overrides (every command that loads a configuration).
// A `//` comment: clap makes a flattened struct's doc comment the `about` of its command.
#[derive(Debug, Clone, Default, Args)]
pub struct SetArgs {
    /// Override a template value with a string: `--set image.tag=1.10` (`values.image.tag`;
    /// the leading `values.` may be written). A key no template reads is an error.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Override a template value with a JSON value: `--set-json replicas=3`,
    /// `--set-json 'ports=[80,443]'` (applied before `--set`).
    #[arg(long = "set-json", value_name = "KEY=JSON")]
    pub set_json: Vec<String>,
}

impl SetArgs {
    /// The values, for loading: `--set-json` first, as Helm applies them.
    pub(crate) fn overrides(&self) -> Vec<crate::config::Set> {
        let json = self.set_json.iter().map(crate::config::Set::json);
        json.chain(self.sets.iter().map(crate::config::Set::string))
            .collect()
    }
}

// What to write, and how to report.
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

// Rewriting files instead of printing them: the pre-commit workflow.
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
    /// Whether any of them is given.
    pub(crate) fn any(&self) -> bool {
        self.in_place || self.check || self.diff
    }

    /// Why these flags cannot go together, or with inputs read from standard input
    /// (`reads_stdin`), before anything is read: `--check` promises to write nothing,
    /// `--in-place` to write (`--in-place --diff` is the diff of what was written), and
    /// standard input cannot be rewritten in place.
    pub(crate) fn refused_for(&self, reads_stdin: bool) -> Option<&'static str> {
        if self.in_place && self.check {
            return Some(
                "--in-place and --check cannot be used together: --in-place rewrites the files, --check writes nothing \
                    and lists the files that would change (exit 1 if any); use --check in CI, --in-place to fix the \
                    files (--in-place --diff also shows what it changed)",
            );
        }
        (self.in_place && reads_stdin).then_some(
            "--in-place needs files, not standard input: name the files to rewrite (or drop --in-place to write the \
                result on stdout)",
        )
    }
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
    /// With `--print-manifests` (and needed by it): the image the cluster pulls, the one a
    /// release would push (`ghcr.io/kinject/kinject:<version>`) or one built and pushed as
    /// docs/container-image.md says.
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
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 10,
        value_parser = clap::value_parser!(u32).range(1..=30),
        requires = "print_manifests"
    )]
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
    // Template values of the configuration (the functionConfig, or the files of `-c`).
    #[command(flatten)]
    pub values: SetArgs,
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

#[derive(Debug, Clone, Args)]
pub struct TestArgs {
    /// Folders holding test cases, at any depth (default: the current directory). A case is
    /// a folder with `input.yaml`, `input.json`, an expectation (`expected.*`) or `args`
    /// (with --update, an `input/` folder too); one holding another case is an error.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Configuration file, or directory of them (repeatable), for the cases that name none
    /// in their `args` and hold no `config.yaml` (else the nearest `.kinject.yaml` or
    /// `kinject.yaml` of the case, as `inject` finds it).
    #[arg(short = 'c', long = "config", value_name = "FILE")]
    pub configs: Vec<PathBuf>,
    /// Only the cases whose name (their path from PATH) contains NAME, or matches it as a
    /// glob when it holds `*`, `?` or `[` (repeatable: any of them).
    #[arg(long = "run", value_name = "NAME")]
    pub run: Vec<String>,
    /// Write each case's expectations from what kinject writes now (and `input.sha256`, the
    /// hash of its input), instead of comparing; the invariants are still checked. A case
    /// whose input changed since its expectation was written is refused, unless --force.
    #[arg(long)]
    pub update: bool,
    /// With --update: write the expectations of cases whose input changed too.
    #[arg(long, requires = "update")]
    pub force: bool,
    /// `text`, for people (a line per failing case with its diff, then a summary), or
    /// `json`, JSON Lines (a line per case, then a summary; docs/report.schema.json).
    #[arg(long, value_enum, default_value_t = ReportFormat::Text, value_name = "FORMAT")]
    pub report: ReportFormat,
    /// Also write the results as JUnit XML to FILE (atomically), for CI systems that show
    /// test results.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// A line for every case, the passing ones too.
    #[arg(short, long)]
    pub verbose: bool,
}
