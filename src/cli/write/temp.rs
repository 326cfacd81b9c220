//! Temporary files beside the files they replace, `.<name>.kinject-<pid>-<n>`, with the name
//! part cut short enough for the whole to be a valid file name. Every one in flight is
//! registered: on SIGTERM, SIGINT or SIGHUP they are removed before the process dies of the
//! signal, so only SIGKILL can leave one behind.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// The temporary files that exist now.
static IN_FLIGHT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The number of the next temporary file of this process (names are never used twice).
static NEXT: AtomicU64 = AtomicU64::new(0);

/// Bytes of the original's name kept in a temporary file's name: with the rest (a dot,
/// `.kinject-`, a pid and a number) that stays well within the 255 bytes a name may have.
const NAME_PART: usize = 100;

/// A temporary file, removed when dropped unless it was renamed over its target.
pub(crate) struct Temp {
    pub(crate) path: PathBuf,
    pub(crate) file: fs::File,
    renamed: bool,
}

impl Temp {
    /// A new temporary file in `dir` for the file `name`, created exclusively.
    pub(crate) fn create(dir: &Path, name: &str) -> io::Result<Temp> {
        remove_temporaries_on_signals();
        let mut in_flight = in_flight();
        for _ in 0..1000 {
            let path = dir.join(temp_name(name, NEXT.fetch_add(1, Ordering::Relaxed)));
            let created = fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path);
            match created {
                Ok(file) => {
                    in_flight.push(path.clone());
                    return Ok(Temp {
                        path,
                        file,
                        renamed: false,
                    });
                }
                // Left by an earlier process that had this pid.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other("no free temporary file name"))
    }

    /// Renames the file over `target`.
    pub(crate) fn rename_to(mut self, target: &Path) -> io::Result<()> {
        fs::rename(&self.path, target)?;
        self.renamed = true;
        Ok(())
    }

    /// Gives the file a second name, `target`, which must not exist (a symlink there is not
    /// followed); the temporary name then goes.
    pub(crate) fn link_as(self, target: &Path) -> io::Result<()> {
        fs::hard_link(&self.path, target)
    }

    /// The file, its name removed at once: nothing is left behind whatever happens.
    pub(crate) fn unnamed(mut self) -> io::Result<fs::File> {
        let file = self.file.try_clone()?;
        fs::remove_file(&self.path)?;
        self.renamed = true;
        Ok(file)
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let mut in_flight = in_flight();
        if !self.renamed {
            let _ = fs::remove_file(&self.path);
        }
        if let Some(i) = in_flight.iter().position(|p| *p == self.path) {
            in_flight.swap_remove(i);
        }
    }
}

/// `.<name>.kinject-<pid>-<n>`, with at most `NAME_PART` bytes of `name`.
fn temp_name(name: &str, n: u64) -> String {
    let name = &name[..crate::diagnostic::lines::char_start(name, NAME_PART)];
    format!(".{name}.kinject-{}-{n}", std::process::id())
}

fn in_flight() -> MutexGuard<'static, Vec<PathBuf>> {
    IN_FLIGHT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// From the first temporary file on, SIGTERM, SIGINT and SIGHUP are answered on a thread of
/// their own: it takes the list of temporary files (so that no other is made, and none
/// renamed from it is removed twice), removes them, and ends the process by the signal's
/// default action, as it would have ended without the handler (a shell sees 128 + signal).
/// A signal the process was started with ignored (`nohup`, `trap '' INT`, a background job of
/// a script) stays ignored.
fn remove_temporaries_on_signals() {
    #[cfg(unix)]
    {
        static INSTALLED: std::sync::Once = std::sync::Once::new();
        INSTALLED.call_once(|| {
            use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
            let ignored = ignored_signals();
            let answered = [SIGTERM, SIGINT, SIGHUP]
                .into_iter()
                .filter(|&s| ignored & (1 << (s - 1)) == 0);
            let Ok(mut signals) = signal_hook::iterator::Signals::new(answered) else {
                return;
            };
            // (Without the thread, `signals` is dropped and its handlers with it.)
            let _ = std::thread::Builder::new()
                .name("kinject-signals".into())
                .spawn(move || {
                    if let Some(signal) = signals.forever().next() {
                        let in_flight = in_flight();
                        for path in in_flight.iter() {
                            let _ = fs::remove_file(path);
                        }
                        let _ = signal_hook::low_level::emulate_default_handler(signal);
                        std::process::exit(128 + signal);
                    }
                });
        });
    }
}

/// The signals this process ignores, as a mask (bit n - 1 for signal n): on Linux as
/// /proc/self/status says; elsewhere none is known.
#[cfg(unix)]
fn ignored_signals() -> u64 {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_stay_short_and_unique() {
        let long = "é".repeat(200);
        let name = temp_name(&long, 7);
        assert!(name.len() < 140, "{}", name.len());
        assert!(name.starts_with(&format!(".{}", "é".repeat(50))));
        assert!(name.ends_with(&format!(".kinject-{}-7", std::process::id())));
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (
            Temp::create(dir.path(), "a.yaml").unwrap(),
            Temp::create(dir.path(), "a.yaml").unwrap(),
        );
        assert_ne!(a.path, b.path);
        assert_eq!(in_flight().iter().filter(|p| **p == a.path).count(), 1);
        let a_path = a.path.clone();
        drop(a);
        assert!(!a_path.exists());
        assert!(!in_flight().contains(&a_path));
        b.rename_to(&dir.path().join("a.yaml")).unwrap();
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        assert!(!in_flight().iter().any(|p| p.starts_with(dir.path())));
    }
}
