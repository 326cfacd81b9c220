//! What every request reads: the configuration in force (replaced whole, never half-loaded),
//! the TLS configuration in force, and what `/readyz` says about both.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use super::decide::Webhook;
use crate::config::{Config, Set};
use crate::diagnostic::Located;

/// A configuration that loaded and that the server can decide alone, the webhook
/// configuration it needs, and the fingerprint of the files it was read from.
pub(crate) struct Engine {
    pub config: Config,
    pub webhook: Webhook,
    pub fingerprint: u64,
}

/// Loads the configuration of `paths` whole: when the files change while they are read (a
/// ConfigMap's update swaps them all at once), what was read is thrown away and `Ok(None)`
/// says to try again. A rule the server cannot decide alone is an error (`decide`).
pub(crate) fn load(paths: &[PathBuf], sets: &[Set]) -> Result<Option<Engine>, Vec<Located>> {
    let before = fingerprint(paths);
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let config = crate::config::load(&refs, sets)?;
    let webhook = super::decide::decide(&config)?;
    if fingerprint(paths) != before {
        return Ok(None);
    }
    Ok(Some(Engine {
        config,
        webhook,
        fingerprint: before,
    }))
}

/// A fingerprint of the configuration files `paths` stand for (a directory for its files),
/// their names and their bytes: equal fingerprints, equal files.
pub(crate) fn fingerprint(paths: &[PathBuf]) -> u64 {
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    match crate::config::files(&refs) {
        Ok(files) => fingerprint_files(files.iter().map(|(file, _)| file)),
        Err(errors) => {
            let mut hasher = DefaultHasher::new();
            errors.len().hash(&mut hasher);
            hasher.finish()
        }
    }
}

/// A fingerprint of files given by name (the certificates): their names and their bytes.
pub(crate) fn fingerprint_files<'p>(paths: impl IntoIterator<Item = &'p PathBuf>) -> u64 {
    let mut hasher = DefaultHasher::new();
    for file in paths {
        file.hash(&mut hasher);
        std::fs::read(file).ok().hash(&mut hasher);
    }
    hasher.finish()
}

/// The state every connection and request shares.
pub(crate) struct Shared {
    engine: RwLock<Arc<Engine>>,
    tls: RwLock<Option<Arc<tokio_rustls::rustls::ServerConfig>>>,
    /// Why the last reload of the configuration failed, while the one before serves.
    config_failure: Mutex<Option<String>>,
    certificate_failure: Mutex<Option<String>>,
    stopping: AtomicBool,
    pub metrics: super::metrics::Metrics,
    /// The bytes of request bodies and answers in flight (`--max-in-flight-bytes`).
    pub budget: Arc<super::budget::Budget>,
}

impl Shared {
    pub(crate) fn new(
        engine: Engine,
        tls: Option<Arc<tokio_rustls::rustls::ServerConfig>>,
        max_in_flight_bytes: usize,
    ) -> Self {
        let metrics = super::metrics::Metrics::new();
        let budget = super::budget::Budget::new(max_in_flight_bytes, metrics.in_flight_bytes());
        Shared {
            engine: RwLock::new(Arc::new(engine)),
            tls: RwLock::new(tls),
            config_failure: Mutex::new(None),
            certificate_failure: Mutex::new(None),
            stopping: AtomicBool::new(false),
            metrics,
            budget,
        }
    }

    /// The state of a server of `config` alone, without TLS: the fuzz target's, which calls
    /// the handler as a request does.
    #[cfg(feature = "oracles")]
    pub(crate) fn of_config(config: Config) -> Result<Self, Vec<Located>> {
        let webhook = super::decide::decide(&config)?;
        Ok(Shared::new(
            Engine {
                config,
                webhook,
                fingerprint: 0,
            },
            None,
            usize::MAX,
        ))
    }

    pub(crate) fn engine(&self) -> Arc<Engine> {
        Arc::clone(&self.engine.read().unwrap_or_else(PoisonError::into_inner))
    }

    pub(crate) fn set_engine(&self, engine: Engine) {
        *self.engine.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(engine);
        *lock(&self.config_failure) = None;
    }

    pub(crate) fn config_failed(&self, why: String) {
        *lock(&self.config_failure) = Some(why);
    }

    pub(crate) fn tls(&self) -> Option<Arc<tokio_rustls::rustls::ServerConfig>> {
        self.tls
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn set_tls(&self, config: Arc<tokio_rustls::rustls::ServerConfig>) {
        *self.tls.write().unwrap_or_else(PoisonError::into_inner) = Some(config);
        *lock(&self.certificate_failure) = None;
    }

    pub(crate) fn certificate_failed(&self, why: String) {
        *lock(&self.certificate_failure) = Some(why);
    }

    pub(crate) fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
    }

    /// `/readyz`: ready (200) while a configuration and certificates are loaded, which
    /// they are from the start, and until SIGTERM; a failed reload is said but does not make
    /// the server unready, as the last good configuration still answers (every replica reads
    /// the same ConfigMap: unready, they would all leave the Service at once).
    pub(crate) fn readiness(&self) -> (bool, String) {
        let engine = self.engine();
        let mut lines = vec![format!(
            "[+]config ok: {} sidecars, {} rules (fingerprint {:016x})",
            engine.config.sidecars.len(),
            engine.config.rules.len(),
            engine.fingerprint
        )];
        if let Some(why) = &*lock(&self.config_failure) {
            lines.push(format!(
                "[-]config-reload failed, the configuration above still serves: {why}"
            ));
        }
        lines.push(if self.tls().is_some() {
            "[+]certificates ok".to_owned()
        } else {
            "[+]plain HTTP: no certificates (--insecure-plain-http)".to_owned()
        });
        if let Some(why) = &*lock(&self.certificate_failure) {
            lines.push(format!(
                "[-]certificate-reload failed, the certificates before still serve: {why}"
            ));
        }
        let stopping = self.stopping.load(Ordering::SeqCst);
        if stopping {
            lines.push("[-]shutting down".to_owned());
        }
        let ready = !stopping;
        lines.push(
            if ready {
                "readyz check passed"
            } else {
                "readyz check failed"
            }
            .to_owned(),
        );
        (ready, lines.join("\n") + "\n")
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nmetadata:\n  name: t\nsidecars:\n  \
        - name: proxy\n    containers:\n      - name: proxy\n        image: proxy:1\nrules:\n  - name: all\n    \
        inject: [proxy]\n";

    fn dir_with(config: &str) -> (tempfile::TempDir, Vec<PathBuf>) {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("sidecars.yaml"), config).expect("write");
        let paths = vec![dir.path().to_path_buf()];
        (dir, paths)
    }

    #[test]
    fn a_fingerprint_changes_with_any_file_of_a_directory() {
        let (dir, paths) = dir_with(CONFIG);
        let before = fingerprint(&paths);
        assert_eq!(before, fingerprint(&paths));
        std::fs::write(dir.path().join("more.yaml"), "values: {}\n").expect("write");
        let added = fingerprint(&paths);
        assert_ne!(before, added);
        // A hidden file (a ConfigMap volume's `..data`) is not configuration.
        std::fs::write(dir.path().join(".hidden.yaml"), "x").expect("write");
        assert_eq!(added, fingerprint(&paths));
    }

    #[test]
    fn a_failed_reload_is_said_and_the_loaded_configuration_kept() {
        let (dir, paths) = dir_with(CONFIG);
        let engine = load(&paths, &[])
            .expect("loads")
            .expect("unchanged while read");
        let shared = Shared::new(engine, None, usize::MAX);
        std::fs::write(dir.path().join("sidecars.yaml"), "sidecars: [").expect("write");
        let errors = match load(&paths, &[]) {
            Err(errors) => errors,
            Ok(_) => panic!("a broken configuration does not load"),
        };
        shared.config_failed(
            errors
                .iter()
                .map(Located::one_line)
                .collect::<Vec<_>>()
                .join("; "),
        );
        let (ready, text) = shared.readiness();
        assert!(ready, "{text}");
        assert!(text.contains("[+]config ok: 1 sidecars, 1 rules"), "{text}");
        assert!(text.contains("[-]config-reload failed"), "{text}");
        assert!(text.contains("sidecars.yaml:1:"), "located: {text}");
        assert_eq!(shared.engine().config.sidecars.len(), 1);
        shared.stop();
        let (ready, text) = shared.readiness();
        assert!(!ready && text.contains("[-]shutting down"), "{text}");
    }
}
