//! Which configuration a file uses when none is given: the nearest `.kinject.yaml` or
//! `kinject.yaml`, from the file's directory up to the root of its git repository (outside a
//! repository, up to the current directory). A configuration found so is trusted as far as
//! whoever may commit to its directory: it is read only when it is a regular file inside that
//! boundary (a symlink planted to `/proc/self/environ`, or to another checkout, is refused by
//! name, never read, and never skipped for one further up).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::bounds::{Tree, canonical, normalize, resolved};
use crate::diagnostic::printable_name;

/// File names looked for when no `-c` is given, nearest first in each directory.
pub(crate) const CONFIG_NAMES: [&str; 2] = [".kinject.yaml", "kinject.yaml"];

/// `CONFIG_NAMES` as a message says them.
pub(crate) const CONFIG_NAMES_SAID: &str = ".kinject.yaml or kinject.yaml";

/// The variable `kinject test` sets for every run of a case (docs/test.md): the current
/// directory is a case folder, which a pull request may have written, configurations given
/// with `-c` from it included.
pub(crate) const TEST_CASE_VARIABLE: &str = "KINJECT_TEST_CASE";

/// Whether this process runs a case of `kinject test` (`TEST_CASE_VARIABLE` set, to anything):
/// what a configuration inside the current directory names is then read only inside it.
pub(crate) fn in_test_case() -> bool {
    std::env::var_os(TEST_CASE_VARIABLE).is_some()
}

/// Why a file has no configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotFound {
    /// None in any directory looked in: where it looked (`in k8s/ or a directory above it,
    /// up to ./ (the repository's root)`).
    Looked(String),
    /// The nearest one cannot be read as a configuration: why (`k8s/.kinject.yaml is a
    /// symlink to /proc/self/environ, outside the repository ./: not read`).
    Refused(String),
}

/// The nearest configuration of files, a directory at a time (remembered: many files share
/// a directory).
#[derive(Default)]
pub(crate) struct Nearest {
    /// The configuration in each directory looked in, if any.
    found: HashMap<PathBuf, Option<Result<PathBuf, String>>>,
    /// The answer for the files of each directory (from each working directory): many files
    /// share one, and its boundary (the repository's root) takes a walk up the tree to find.
    of_dir: HashMap<(PathBuf, PathBuf), Result<PathBuf, NotFound>>,
    /// The repository of each directory looked at (`repository`, remembered).
    repositories: HashMap<PathBuf, Option<PathBuf>>,
}

impl Nearest {
    /// The nearest `.kinject.yaml` or `kinject.yaml` of the file at `path` (absolute): in
    /// its directory or one above it, up to the root of its git repository; outside a
    /// repository, up to the current directory when the file is in it, else in the file's
    /// directory only (a configuration in some directory above — a shared temporary
    /// directory, a home directory — would be used without anyone having chosen it).
    pub(crate) fn of(&mut self, path: &Path, cwd: &Path) -> Result<PathBuf, NotFound> {
        let path = normalize(path);
        let dir = path.parent().unwrap_or(Path::new("/"));
        self.of_directory(dir, cwd)
    }

    /// `of` for a manifest rewritten or checked: from where the file really is (its symlinks
    /// and `..` resolved as the kernel resolves them), not where its name puts it. A committed
    /// `a/0.yaml -> b/x.yaml` is `a/b/x.yaml`, which rewriting `a/0.yaml` rewrites: its
    /// configuration is `a/b/`'s, not one the link's folder chose. So for a link out of a
    /// submodule back into the repository holding it, and for a name through a link to a
    /// checkout's sub-folder: the repository is the one the file is really in.
    pub(crate) fn of_manifest(&mut self, path: &Path, cwd: &Path) -> Result<PathBuf, NotFound> {
        let real = self.real_name(path, cwd);
        self.of(&real, cwd)
    }

    /// Where the file at `path` (absolute) really is, spelled as the user spells the place:
    /// from the root of the repository its name is in, else from the current directory, when
    /// it lies there; else its real path.
    pub(crate) fn real_name(&mut self, path: &Path, cwd: &Path) -> PathBuf {
        let real = resolved(path);
        let root = normalize(path)
            .parent()
            .and_then(|dir| self.repository_of(dir));
        for base in root.iter().map(PathBuf::as_path).chain([cwd]) {
            if let Ok(base_real) = canonical(base)
                && let Ok(rest) = real.strip_prefix(&base_real)
            {
                return base.join(rest);
            }
        }
        real
    }

    /// The nearest configuration of what is read in `dir` (standard input: the current
    /// directory's).
    pub(crate) fn of_directory(&mut self, dir: &Path, cwd: &Path) -> Result<PathBuf, NotFound> {
        let key = (dir.to_owned(), cwd.to_owned());
        if let Some(answer) = self.of_dir.get(&key) {
            return answer.clone();
        }
        let answer = self.search(dir, cwd);
        self.of_dir.insert(key, answer.clone());
        answer
    }

    /// The root of the git repository `dir` is in (`repository`), remembered: a directory's
    /// is its parent's unless it holds `.git`, so the directories of a deep tree cost one look
    /// each rather than one per directory above them.
    pub(crate) fn repository_of(&mut self, dir: &Path) -> Option<PathBuf> {
        let mut unknown = Vec::new();
        let mut answer = None;
        for d in dir.ancestors() {
            if let Some(known) = self.repositories.get(d) {
                answer = known.clone();
                break;
            }
            unknown.push(d);
            if d.join(".git").exists() {
                answer = Some(d.to_owned());
                break;
            }
        }
        for d in unknown {
            self.repositories.insert(d.to_owned(), answer.clone());
        }
        answer
    }

    /// `of` for the files of `dir`: its own configuration, else (below the boundary) its
    /// parent's answer, which is remembered, so a deep tree is not walked up from each of its
    /// directories.
    fn search(&mut self, dir: &Path, cwd: &Path) -> Result<PathBuf, NotFound> {
        let repository = self.repository_of(dir);
        let top = match &repository {
            Some(root) => root.as_path(),
            None if dir.starts_with(cwd) => cwd,
            None => dir,
        };
        let found = self
            .found
            .entry(dir.to_owned())
            .or_insert_with(|| in_directory(dir, top, cwd));
        match found {
            Some(Ok(found)) => return Ok(found.clone()),
            Some(Err(why)) => return Err(NotFound::Refused(why.clone())),
            None => {}
        }
        if dir != top
            && let Some(parent) = dir.parent()
        {
            match self.of_directory(parent, cwd) {
                Err(NotFound::Looked(_)) => {}
                answer => return answer,
            }
        }
        let within = if top == dir {
            format!("in {}", shown_dir(dir, cwd))
        } else {
            format!(
                "in {} or a directory above it, up to {}",
                shown_dir(dir, cwd),
                shown_dir(top, cwd)
            )
        };
        let why = if repository.is_some() {
            "the repository's root"
        } else if top == dir {
            "outside a git repository, directories above the file's are looked in only up to the current directory"
        } else {
            "the current directory, outside a git repository"
        };
        Err(NotFound::Looked(format!("{within} ({why})")))
    }
}

/// The configuration in `dir` itself, if any, checked: a regular file that lies inside
/// `top` (the boundary of the search) once symlinks are resolved. `Err` says why the one
/// there is not read.
fn in_directory(dir: &Path, top: &Path, cwd: &Path) -> Option<Result<PathBuf, String>> {
    let candidate = CONFIG_NAMES
        .iter()
        .map(|name| dir.join(name))
        .find(|candidate| std::fs::symlink_metadata(candidate).is_ok())?;
    let name = shown(&candidate, cwd);
    let tree = match Tree::shown_as(top, boundary_said(top, cwd)) {
        Ok(tree) => tree,
        Err(e) => return Some(Err(format!("{name}: {e}"))),
    };
    if let Err(outside) = tree.check(&candidate) {
        return Some(Err(format!("{name} is {outside}: not read")));
    }
    match std::fs::metadata(&candidate) {
        Ok(m) if m.is_file() => Some(Ok(candidate)),
        Ok(_) => Some(Err(format!(
            "{name} is not a regular file: not read as a configuration"
        ))),
        Err(e) => Some(Err(format!("{name}: {e}"))),
    }
}

/// The boundary `top` as a message names it.
fn boundary_said(top: &Path, cwd: &Path) -> String {
    let dir = shown_dir(top, cwd);
    if repository(top) == Some(top) {
        format!("the repository {dir}")
    } else {
        dir
    }
}

/// The highest directory a configuration of a file in `dir` is looked for in.
pub(crate) fn boundary<'a>(dir: &'a Path, cwd: &'a Path) -> &'a Path {
    match repository(dir) {
        Some(root) => root,
        None if dir.starts_with(cwd) => cwd,
        None => dir,
    }
}

/// The root of the git repository `dir` is in.
pub(crate) fn repository(dir: &Path) -> Option<&Path> {
    dir.ancestors().find(|d| d.join(".git").exists())
}

/// `path` as the user would write it: relative to the current directory when inside it.
pub(crate) fn shown(path: &Path, cwd: &Path) -> String {
    let path = path.strip_prefix(cwd).unwrap_or(path);
    printable_name(&path.display().to_string()).into_owned()
}

/// `dir` as the user would write it, `./` for the current directory.
pub(crate) fn shown_dir(dir: &Path, cwd: &Path) -> String {
    match dir.strip_prefix(cwd) {
        Ok(rel) if rel.as_os_str().is_empty() => "./".to_owned(),
        Ok(rel) => format!("{}/", shown(rel, cwd)),
        Err(_) => format!("{}/", shown(dir, cwd)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_file_uses_the_configuration_nearest_it_up_to_the_repository() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let repo = root.join("repo");
        for d in ["repo/.git", "repo/team-a/k8s", "repo/team-b", "elsewhere/x"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in [
            "kinject.yaml",
            "repo/team-a/.kinject.yaml",
            "elsewhere/.kinject.yaml",
        ] {
            std::fs::write(root.join(f), "").unwrap();
        }
        let mut nearest = Nearest::default();
        let of = |n: &mut Nearest, p: &str, cwd: &Path| n.of(&root.join(p), cwd);
        assert_eq!(
            of(&mut nearest, "repo/team-a/k8s/a.yaml", &repo),
            Ok(repo.join("team-a/.kinject.yaml"))
        );
        // Not above the repository's root.
        let Err(NotFound::Looked(err)) = of(&mut nearest, "repo/team-b/b.yaml", &repo) else {
            panic!("found")
        };
        assert!(err.contains("up to ./"), "{err}");
        // Outside a repository: up to the current directory, not above it.
        assert_eq!(
            of(&mut nearest, "elsewhere/x/c.yaml", &root.join("elsewhere")),
            Ok(root.join("elsewhere/.kinject.yaml"))
        );
        let Err(NotFound::Looked(err)) = of(
            &mut nearest,
            "elsewhere/x/c.yaml",
            &root.join("elsewhere/x"),
        ) else {
            panic!("found")
        };
        assert!(err.contains("in ./"), "{err}");
    }

    #[test]
    fn a_configuration_leading_out_of_the_repository_is_refused_not_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let repo = root.join("repo");
        for d in ["repo/.git", "repo/k8s", "repo/platform", "outside"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("repo/.kinject.yaml"), "").unwrap();
        std::fs::write(root.join("repo/platform/c.yaml"), "").unwrap();
        std::fs::write(root.join("outside/c.yaml"), "").unwrap();
        let link = root.join("repo/k8s/.kinject.yaml");
        std::os::unix::fs::symlink("../../outside/c.yaml", &link).unwrap();
        let answer = Nearest::default().of(&root.join("repo/k8s/a.yaml"), &repo);
        let Err(NotFound::Refused(why)) = answer else {
            panic!("{answer:?}")
        };
        assert!(
            why.starts_with("k8s/.kinject.yaml is a symlink to ")
                && why.ends_with(", outside the repository ./: not read"),
            "{why}"
        );
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink("../platform/c.yaml", &link).unwrap();
        let answer = Nearest::default().of(&root.join("repo/k8s/a.yaml"), &repo);
        assert_eq!(answer, Ok(link));
    }
}
