//! Reloads: the configuration and the certificate files are checked every interval; a change
//! is loaded whole and, when it loads, replaces what serves. When it does not, the last good
//! one keeps serving, and the log, `/metrics` and `/readyz` say why.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::state::{self, Shared};
use super::{TlsFiles, log, tls};
use crate::config::Set;
use crate::diagnostic::{Located, codes};

/// What is watched.
pub(crate) struct Watched {
    pub config: Vec<PathBuf>,
    pub sets: Vec<Set>,
    pub tls: Option<TlsFiles>,
    pub interval: Duration,
}

/// Checks for changes until the task is aborted.
pub(crate) async fn watch(shared: Arc<Shared>, watched: Watched) {
    let watched = Arc::new(watched);
    let mut config_seen = shared.engine().fingerprint;
    let mut tls_seen = watched
        .tls
        .as_ref()
        .map(|t| state::fingerprint_files(&t.paths()));
    let mut ticks = tokio::time::interval(watched.interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let (s, w) = (Arc::clone(&shared), Arc::clone(&watched));
        let checked = tokio::task::spawn_blocking(move || {
            let config = check_config(&s, &w, config_seen);
            let tls = w
                .tls
                .as_ref()
                .and_then(|files| tls_seen.and_then(|seen| check_tls(&s, files, seen)));
            (config, tls)
        })
        .await;
        if let Ok((config, tls)) = checked {
            config_seen = config.unwrap_or(config_seen);
            if tls.is_some() {
                tls_seen = tls;
            }
        }
    }
}

/// Loads the configuration when its files changed from `seen`: the fingerprint now seen,
/// or None to look again next time (unchanged, or changing while read).
fn check_config(shared: &Shared, watched: &Watched, seen: u64) -> Option<u64> {
    let now = state::fingerprint(&watched.config);
    if now == seen {
        return None;
    }
    let loaded = state::load(&watched.config, &watched.sets).and_then(|engine| match engine {
        Some(e) if e.webhook != shared.engine().webhook => {
            Err(vec![webhook_changed(&e, &watched.config)])
        }
        engine => Ok(engine),
    });
    match loaded {
        Ok(None) => None,
        Ok(Some(engine)) => {
            let fingerprint = engine.fingerprint;
            log::info(
                "configuration reloaded",
                json!({
                    "sidecars": engine.config.sidecars.len(),
                    "rules": engine.config.rules.len(),
                    "fingerprint": format!("{fingerprint:016x}"),
                }),
            );
            shared.set_engine(engine);
            shared.metrics.loaded("config", true, true);
            Some(fingerprint)
        }
        Err(errors) => {
            let said: Vec<String> = errors.iter().map(Located::one_line).collect();
            log::error(
                "configuration not reloaded: the last good one still serves",
                json!({"errors": said}),
            );
            shared.config_failed(said.join("; "));
            shared.metrics.loaded("config", false, true);
            Some(now)
        }
    }
}

/// The refusal of a configuration that would need another webhook configuration than the
/// one the cluster has (its selectors or resources changed): the server cannot see the
/// cluster's, and answering by the new rules requests sent under the old selectors would be
/// answering by rules the API server does not apply. Located at the first rule.
fn webhook_changed(engine: &state::Engine, files: &[PathBuf]) -> Located {
    let message = "this configuration needs another webhook configuration than the one it \
                   replaces: its rules change what the API server must send (namespaceSelector, \
                   objectSelector, resources or skipped namespaces)";
    let located = match engine.config.rules.first() {
        Some(rule) => rule.origin.error(codes::SERVE_WEBHOOK_CHANGED, message),
        None => {
            let name = files
                .first()
                .map(|f| f.display().to_string())
                .unwrap_or_default();
            Located::new(
                codes::SERVE_WEBHOOK_CHANGED,
                &name,
                &std::sync::Arc::<str>::from(""),
                (0, 0),
                message,
            )
        }
    };
    located
        .help("apply what `kinject serve --print-manifests` prints for it: its pods start with it")
}

/// Loads the certificates when their files changed: the fingerprint now seen, or None.
fn check_tls(shared: &Shared, files: &TlsFiles, seen: u64) -> Option<u64> {
    let now = state::fingerprint_files(&files.paths());
    if now == seen {
        return None;
    }
    // A rotation that writes the certificate and the key one after the other (not a
    // Secret volume's swap of both at once) may be seen half done: that pair fails, and is
    // loaded when the second file changes too.
    match tls::server_config(files) {
        Ok(config) => {
            shared.set_tls(config);
            shared.metrics.loaded("certificate", true, true);
            log::info("certificates reloaded", json!({}));
            Some(now)
        }
        Err(why) => {
            log::error(
                "certificates not reloaded: the last good ones still serve",
                json!({"error": why}),
            );
            shared.certificate_failed(why);
            shared.metrics.loaded("certificate", false, true);
            Some(now)
        }
    }
}
