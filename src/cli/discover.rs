//! Which configuration files a run reads when it is not given them per file: `-c`, or the
//! nearest `.kinject.yaml` or `kinject.yaml` of the current directory (`tree::Nearest`, the
//! one rule that also finds each file's own, `configs::plan`).

use std::path::PathBuf;

use crate::args::{ConfigArgs, DiscoveryArgs};

/// The configuration files of `config`: those given with `-c`, or the nearest default one.
pub(crate) fn paths(config: &ConfigArgs, stdin_read: bool) -> Result<Vec<PathBuf>, String> {
    files(&config.configs, &config.discovery, stdin_read)
}

/// The configuration files: those `given` (`-c`), or the nearest default one
/// (`find_default`).
pub(crate) fn files(
    given: &[PathBuf],
    discovery: &DiscoveryArgs,
    stdin_read: bool,
) -> Result<Vec<PathBuf>, String> {
    if given.is_empty() {
        return find_default(discovery);
    }
    if stdin_read && let Some(p) = given.iter().find(|p| is_stdin(p)) {
        return Err(format!(
            "-c {} is standard input, which holds the manifests: give the configuration as a file",
            crate::diagnostic::printable(&p.display().to_string())
        ));
    }
    Ok(given.to_vec())
}

/// The nearest `.kinject.yaml` or `kinject.yaml` of the current directory (`tree::Nearest`):
/// in it or one above it, up to the root of the git repository it is in; outside a
/// repository, in the current directory only. None with `--no-discovery`.
fn find_default(discovery: &DiscoveryArgs) -> Result<Vec<PathBuf>, String> {
    allowed(discovery)?;
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

/// `Err` when no configuration may be looked for (`--no-discovery`).
pub(crate) fn allowed(discovery: &DiscoveryArgs) -> Result<(), String> {
    if discovery.no_discovery {
        return Err(concat!(
            "no configuration: --no-discovery (or KINJECT_NO_DISCOVERY) is set, so none is ",
            "looked for beside the manifests: pass -c FILE"
        )
        .to_owned());
    }
    Ok(())
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
