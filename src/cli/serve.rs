//! `kinject serve`: wiring only.

use super::{ExitStatus, ServeArgs, eprint};

#[cfg(not(feature = "serve"))]
pub(crate) fn run(_: &ServeArgs) -> ExitStatus {
    eprint("error: this kinject was built without the server (cargo feature `serve`)\n");
    ExitStatus::Error
}

#[cfg(feature = "serve")]
pub(crate) fn run(args: &ServeArgs) -> ExitStatus {
    use std::time::Duration;

    use crate::serve::{Limits, Options, StartError, TlsFiles};

    let config = match args.config.paths(false) {
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
        limits: Limits {
            max_request_bytes: args.max_request_bytes,
            header_timeout: seconds(args.header_timeout),
            request_timeout: seconds(args.request_timeout),
            allow_errors: args.on_error == super::OnError::Allow,
        },
        shutdown_delay: seconds(args.shutdown_delay),
        shutdown_timeout: seconds(args.shutdown_timeout),
        reload_interval: seconds(args.reload_interval).max(Duration::from_millis(100)),
    };
    match crate::serve::run(options) {
        Ok(()) => ExitStatus::Success,
        Err(StartError::Config(errors)) => {
            super::output::diagnostics(errors);
            ExitStatus::Error
        }
        Err(StartError::Other(message)) => {
            eprint(&format!("error: {message}\n"));
            ExitStatus::Error
        }
    }
}
