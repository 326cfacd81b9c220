//! `kinject serve`: wiring only.

use crate::args::ServeArgs;
#[cfg(feature = "serve")]
use crate::args::{FailurePolicy, OnError};
#[cfg(feature = "serve")]
use crate::cli::discover;
#[cfg(feature = "serve")]
use crate::cli::report;
use crate::cli::report::eprint;
use crate::cli::status::ExitStatus;

#[cfg(not(feature = "serve"))]
pub(crate) fn run(_: &ServeArgs) -> ExitStatus {
    eprint("error: this kinject was built without the server (cargo feature `serve`)\n");
    ExitStatus::Error
}

#[cfg(feature = "serve")]
pub(crate) fn run(args: &ServeArgs) -> ExitStatus {
    if args.print_manifests {
        return print_manifests(args);
    }
    use std::time::Duration;

    use crate::integrations::admission;
    use crate::serve::{Limits, Options, StartError, TlsFiles};

    let config = match discover::paths(&args.config, false) {
        Ok(paths) => paths,
        Err(e) => {
            eprint(&format!("error: {e}\n"));
            return ExitStatus::Error;
        }
    };
    let seconds = |s: f64| Duration::from_secs_f64(s.max(0.0));
    let tls = args.tls_cert_file.as_ref().map(|cert| TlsFiles {
        cert: cert.clone(),
        key: args
            .tls_private_key_file
            .clone()
            .unwrap_or_else(|| cert.clone()),
        client_ca: args.client_ca_file.clone(),
    });
    let options = Options {
        config,
        sets: args.config.overrides(),
        listen: args.listen,
        tls,
        probe_listen: args.probe_listen,
        path: args.path.clone(),
        on_error: match args.on_error {
            OnError::Deny => admission::OnError::Deny,
            OnError::Allow => admission::OnError::Allow,
        },
        limits: Limits {
            max_request_bytes: args.max_request_bytes,
            max_in_flight_bytes: args.max_in_flight_bytes,
            max_connections: args.max_connections,
            header_timeout: seconds(args.header_timeout),
            request_timeout: seconds(args.request_timeout),
            write_timeout: seconds(args.write_timeout),
            review: crate::integrations::admission::Limits {
                max_values: Some(args.max_request_values),
                max_containers: Some(args.max_containers),
            },
        },
        shutdown_delay: seconds(args.shutdown_delay),
        shutdown_timeout: seconds(args.shutdown_timeout),
        reload_interval: seconds(args.reload_interval).max(Duration::from_millis(100)),
    };
    match crate::serve::run(options) {
        Ok(()) => ExitStatus::Success,
        Err(StartError::Config(errors)) => {
            report::diagnostics(errors);
            ExitStatus::Error
        }
        Err(StartError::Other(message)) => {
            eprint(&format!("error: {message}\n"));
            ExitStatus::Error
        }
    }
}

/// `--print-manifests`: the configuration loaded and decided as the server would at start-up
/// (its errors and refusals said, exit 2), then what to apply on stdout.
#[cfg(feature = "serve")]
fn print_manifests(args: &ServeArgs) -> ExitStatus {
    use std::path::{Path, PathBuf};

    use crate::cli::output::stdout;
    use crate::cli::report::diagnostics;
    use crate::serve::{decide, manifests};

    // The image a cluster pulls: there is no default one (a default named an image no
    // registry has, behind a webhook that fails closed: no pod could be created).
    let Some(image) = args.image.clone() else {
        eprint(
            "error: --print-manifests needs --image IMAGE: the kinject image your cluster pulls (a release would \
                push ghcr.io/kinject/kinject:<version>; none is pushed yet: build and push one as \
                docs/container-image.md says)\n",
        );
        return ExitStatus::Error;
    };
    let paths = match discover::paths(&args.config, false) {
        Ok(p) => p,
        Err(e) => {
            eprint(&format!("error: {e}\n"));
            return ExitStatus::Error;
        }
    };
    let Some(config) = crate::cli::configs::load(&paths, &args.config.overrides()) else {
        return ExitStatus::Error;
    };
    let webhook = match decide::decide(&config) {
        Ok(w) => w,
        Err(refused) => {
            diagnostics(refused);
            return ExitStatus::Error;
        }
    };
    let paths: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let files = match crate::config::texts(&paths) {
        Ok(f) => f,
        Err(errors) => {
            diagnostics(errors);
            return ExitStatus::Error;
        }
    };
    for (flag, given) in [
        ("--tls-cert-file", args.tls_cert_file.is_some()),
        ("--client-ca-file", args.client_ca_file.is_some()),
        ("--insecure-plain-http", args.insecure_plain_http),
    ] {
        if given {
            eprint(&format!(
                "warning: {flag} is not carried into the manifests (docs/serve.md)\n"
            ));
        }
    }
    let options = manifests::Options {
        image,
        namespace: args.namespace.clone(),
        replicas: args.replicas,
        failure_policy: match args.failure_policy {
            FailurePolicy::Fail => "Fail",
            FailurePolicy::Ignore => "Ignore",
        },
        timeout_seconds: args.timeout_seconds,
        cert_manager: !args.without_cert_manager,
        port: args.listen.port(),
        probe_port: args.probe_listen.map_or(8080, |a| a.port()),
        path: args.path.clone(),
        shutdown_seconds: args.shutdown_timeout,
        args: server_flags(args),
    };
    // What the webhook will intercept, said before anything is applied.
    let (scope, warning) = manifests::scope(&webhook, &options);
    for line in scope {
        report::people(&format!("{line}\n"));
    }
    if let Some(w) = warning {
        eprint(&format!("warning: {w}\n"));
    }
    stdout(&manifests::manifests(&files, &webhook, &options))
}

/// The server's arguments after its configuration files: `--set-json` and `--set` as given,
/// and its flags given other than their defaults. The request timeout stays under the
/// webhook's `timeoutSeconds` (at most 80 % of it, as the defaults are: 8 s of 10).
#[cfg(feature = "serve")]
fn server_flags(args: &ServeArgs) -> Vec<String> {
    let mut out = Vec::new();
    for (flag, values) in [
        ("--set-json", &args.config.values.set_json),
        ("--set", &args.config.values.sets),
    ] {
        for v in values {
            out.extend([flag.to_owned(), v.clone()]);
        }
    }
    let request_timeout = args
        .request_timeout
        .min(f64::from(args.timeout_seconds) * 0.8);
    let numbers = [
        (
            "--max-request-bytes",
            args.max_request_bytes as f64,
            ServeArgs::MAX_REQUEST_BYTES as f64,
        ),
        (
            "--max-request-values",
            args.max_request_values as f64,
            ServeArgs::MAX_REQUEST_VALUES as f64,
        ),
        (
            "--max-containers",
            args.max_containers as f64,
            ServeArgs::MAX_CONTAINERS as f64,
        ),
        (
            "--max-in-flight-bytes",
            args.max_in_flight_bytes as f64,
            ServeArgs::MAX_IN_FLIGHT_BYTES as f64,
        ),
        (
            "--max-connections",
            args.max_connections as f64,
            ServeArgs::MAX_CONNECTIONS as f64,
        ),
        (
            "--header-timeout",
            args.header_timeout,
            ServeArgs::HEADER_TIMEOUT,
        ),
        (
            "--request-timeout",
            request_timeout,
            ServeArgs::REQUEST_TIMEOUT,
        ),
        (
            "--write-timeout",
            args.write_timeout,
            ServeArgs::WRITE_TIMEOUT,
        ),
        (
            "--shutdown-timeout",
            args.shutdown_timeout,
            ServeArgs::SHUTDOWN_TIMEOUT,
        ),
        (
            "--reload-interval",
            args.reload_interval,
            ServeArgs::RELOAD_INTERVAL,
        ),
    ];
    for (flag, value, default) in numbers {
        if value != default {
            out.extend([flag.to_owned(), value.to_string()]);
        }
    }
    if args.on_error == OnError::Allow {
        out.extend(["--on-error".to_owned(), "allow".to_owned()]);
    }
    out
}
