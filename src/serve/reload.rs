//! Reloads: the configuration and the certificate files are checked every interval; a change
//! is loaded whole once the files have held still for an interval (a file written in parts is
//! not loaded half-written) and, when it loads, replaces what serves. When it does not, the
//! last good one keeps serving, and the log, `/metrics` and `/readyz` say why.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::log;
use super::state::{self, Shared};
use super::tls::{self, TlsFiles};
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
    let config_seen = shared.engine().fingerprint;
    let tls_seen = watched
        .tls
        .as_ref()
        .map(|t| state::fingerprint_files(&t.paths()));
    let mut config = Files::new(config_seen);
    let mut tls = tls_seen.map(Files::new);
    let mut ticks = tokio::time::interval(watched.interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let (s, w) = (Arc::clone(&shared), Arc::clone(&watched));
        let checked = tokio::task::spawn_blocking(move || {
            if config.still(state::fingerprint(&w.config)) {
                config.loaded(check_config(&s, &w, config.seen));
            }
            if let (Some(files), Some(seen)) = (&w.tls, &mut tls)
                && seen.still(state::fingerprint_files(&files.paths()))
            {
                seen.loaded(check_tls(&s, files, seen.seen));
            }
            (config, tls)
        })
        .await;
        if let Ok(checked) = checked {
            (config, tls) = checked;
        }
    }
}

/// What the watch knows of a set of files: the fingerprint loaded (or refused) last, and a
/// different one seen at the last look, if any.
#[derive(Clone, Copy)]
struct Files {
    seen: u64,
    changed: Option<u64>,
}

impl Files {
    fn new(seen: u64) -> Files {
        Files {
            seen,
            changed: None,
        }
    }

    /// Whether the files, now `now`, changed from what was loaded and have held still since
    /// the last look: then they are to be loaded.
    fn still(&mut self, now: u64) -> bool {
        if now == self.seen {
            self.changed = None;
            return false;
        }
        let still = self.changed == Some(now);
        self.changed = Some(now);
        still
    }

    /// The outcome of a load: the fingerprint now loaded or refused, or None to look again.
    fn loaded(&mut self, outcome: Option<u64>) {
        if let Some(fingerprint) = outcome {
            self.seen = fingerprint;
            self.changed = None;
        }
    }
}

/// Loads the configuration, whose files changed from `seen` and held still: the fingerprint
/// now loaded or refused, or None to look again next time (changing while read).
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

/// Loads the certificates, whose files changed and held still: the fingerprint now loaded or
/// refused, or None.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_loaded_once_they_held_still_for_a_look() {
        let mut files = Files::new(1);
        assert!(!files.still(1));
        // Changed: not yet.
        assert!(!files.still(2));
        // Changed again (written in parts): not yet.
        assert!(!files.still(3));
        // The same as at the last look: now.
        assert!(files.still(3));
        files.loaded(Some(3));
        assert!(!files.still(3));
        // Changed and changed back before it held still: nothing to load.
        assert!(!files.still(4));
        assert!(!files.still(3));
        assert!(!files.still(3));
    }
}
