//! A tree's bounds: the directory nothing is read or written outside of (`Tree`), a path that
//! leads out of it (`Outside`), and paths resolved (`resolved`, `normalize`) to tell.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::diagnostic::printable_name;

/// A directory that nothing is read or written outside of: its canonical path, and how the
/// user knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tree {
    root: PathBuf,
    shown: String,
}

/// A path that leads out of its tree: where it leads, whether a symlink takes it there
/// (else a `..` does), and whether it is a `.git` directory inside the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Outside {
    pub target: PathBuf,
    pub link: bool,
    pub tree: String,
    pub git: bool,
}

impl std::fmt::Display for Outside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let target = printable_name(&self.target.display().to_string()).into_owned();
        let place = if self.git {
            format!("in a .git directory of {}", self.tree)
        } else {
            format!("outside {}", self.tree)
        };
        if self.link {
            write!(f, "a symlink to {target}, {place}")
        } else {
            write!(f, "{target} is {place}")
        }
    }
}

impl Tree {
    /// The tree of the directory `dir`, shown as the user named it.
    pub(crate) fn new(dir: &Path) -> io::Result<Tree> {
        Ok(Tree {
            root: canonical(dir)?,
            shown: printable_name(&dir.display().to_string()).into_owned(),
        })
    }

    /// The tree of the directory `dir`, shown as `shown` says.
    pub(crate) fn shown_as(dir: &Path, shown: String) -> io::Result<Tree> {
        Ok(Tree {
            root: canonical(dir)?,
            shown,
        })
    }

    /// The tree whose canonical path is `root` (already resolved), shown as it is.
    pub(crate) fn canonical(root: &Path) -> Tree {
        Tree {
            root: root.to_owned(),
            shown: printable_name(&root.display().to_string()).into_owned(),
        }
    }

    /// The tree a file named on the command line is kept in (`kept_in` from the current
    /// directory).
    pub(crate) fn of_name(path: &Path) -> Option<Tree> {
        Tree::kept_in(path, std::env::current_dir().ok().as_deref())
    }

    /// The tree a name given in the directory `cwd` is kept in (`Walk`): the git work tree
    /// holding it; else the current directory when the name lies in it, written or resolved
    /// (a checkout reached through a symlinked `$PWD` is the current directory), unless that
    /// is `/` (the image's, which bounds nothing); else the name's directory as far as it is
    /// written before a symlink below the top level.
    pub(crate) fn kept_in(path: &Path, cwd: Option<&Path>) -> Option<Tree> {
        let absolute = normalize(&cwd.map_or_else(|| path.to_owned(), |c| c.join(path)));
        let walk = Walk::of(absolute.parent()?);
        if let Some(work_tree) = walk.work_tree {
            return Tree::new(&work_tree).ok();
        }
        if let Some(cwd) = cwd.filter(|c| c.parent().is_some())
            && let Ok(real) = canonical(cwd)
            && (absolute.starts_with(normalize(cwd)) || resolved(&absolute).starts_with(&real))
        {
            return Tree::new(cwd).ok();
        }
        let written = if walk.written.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            walk.written
        };
        Tree::new(&written).ok()
    }

    /// Its canonical path.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the file at `path` lies in the tree once symlinks are resolved: `Err` says
    /// where it leads when that is outside. A path that does not exist is resolved as far
    /// as it does, the rest as written. A `.git` directory below the root is not part of the
    /// tree (a path written through one too: `inherits: ../.git/config` is written so): it
    /// holds what git and CI put there (actions/checkout's token in `.git/config`), not what
    /// was committed, and a committed symlink into it read that token or replaced
    /// the checkout's git configuration.
    pub(crate) fn check(&self, path: &Path) -> Result<PathBuf, Outside> {
        let target = resolved(path);
        let git = target.strip_prefix(&self.root).is_ok_and(in_git_directory);
        if target.starts_with(&self.root) && !git {
            return Ok(target);
        }
        Err(Outside {
            target,
            link: fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()),
            tree: self.shown.clone(),
            git,
        })
    }
}

/// `path` with every symlink resolved, as `fs::canonicalize` (`realpath`) gives it, in time
/// linear in its length: the kernel resolves the path once (an `O_PATH` open) and says where
/// the file is (`/proc/self/fd`), where `realpath` looks up each prefix of the path in turn,
/// quadratic in its depth and cubic over a walk of a deep tree of links (a pull request can
/// commit one). The name `/proc` gives is taken only when it names the file opened (device
/// and inode), which a file deleted since, or one renamed to end in ` (deleted)`, does not;
/// then, and without `/proc`, `realpath`.
pub(crate) fn canonical(path: &Path) -> io::Result<PathBuf> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::{Mode, OFlags};
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::MetadataExt;
        if let Ok(fd) = rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty())
            && let Ok(at) = fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
            && at.is_absolute()
            && let (Ok(opened), Ok(named)) = (fs::File::from(fd).metadata(), fs::metadata(&at))
            && (opened.dev(), opened.ino()) == (named.dev(), named.ino())
        {
            return Ok(at);
        }
    }
    fs::canonicalize(path)
}

/// `path` with symlinks resolved: canonical when it exists, else its nearest existing
/// ancestor's canonical path with the rest joined as written (`.` and `..` resolved).
pub(crate) fn resolved(path: &Path) -> PathBuf {
    if let Ok(p) = canonical(path) {
        return p;
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let absolute = normalize(&cwd.join(path));
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    while let Some(parent) = existing.parent() {
        rest.push(existing.file_name().map(PathBuf::from).unwrap_or_default());
        existing = parent;
        if let Ok(real) = canonical(existing) {
            return rest.iter().rev().fold(real, |p, c| p.join(c));
        }
    }
    absolute
}

/// What a walk along a directory's name, from the root, finds: the git work tree holding it,
/// and how far it is written before a symlink. A symlink met before any work tree is the
/// machine's or the user's (`/tmp -> private/tmp`, `~/src -> /data/src`, a symlinked CI
/// workspace): followed, and the work tree looked for where it leads. A symlink inside a work
/// tree is the tree's content, which a pull request can commit: the walk stops there, so no
/// such link chooses the tree (`pr/platform/tests` with `platform -> ../victim` is judged
/// against `pr`). Symlinks at the top level (`/tmp`, `/var`, `/home` on some systems) are the
/// system's and followed for `written` too.
struct Walk {
    /// The innermost git work tree entered (a folder holding `.git`), by its real path.
    work_tree: Option<PathBuf>,
    /// The real path of the directory as far as it is written before its first symlink below
    /// the top level (the whole directory when it has none; empty for a relative name).
    written: PathBuf,
}

impl Walk {
    fn of(dir: &Path) -> Walk {
        let holds_git = |d: &Path| fs::symlink_metadata(d.join(".git")).is_ok();
        let mut real = PathBuf::new();
        let mut written = None;
        let mut work_tree: Option<PathBuf> = None;
        for (depth, c) in dir.components().enumerate() {
            let next = real.join(c);
            let Ok(meta) = fs::symlink_metadata(&next) else {
                break;
            };
            if !meta.file_type().is_symlink() {
                real = next;
                if holds_git(&real) {
                    work_tree = Some(real.clone());
                }
                continue;
            }
            if work_tree.is_some() {
                break;
            }
            if depth > 1 && written.is_none() {
                written = Some(real.clone());
            }
            let Ok(target) = canonical(&next) else {
                break;
            };
            real = target;
            work_tree = real.ancestors().find(|d| holds_git(d)).map(Path::to_owned);
        }
        Walk {
            work_tree,
            written: written.unwrap_or(real),
        }
    }
}

/// Whether the path `rel` (relative to a tree's root) goes through a `.git` directory (any
/// case: `.GIT` is `.git` on a case-insensitive file system).
fn in_git_directory(rel: &Path) -> bool {
    rel.components()
        .any(|c| c.as_os_str().eq_ignore_ascii_case(".git"))
}

/// `p` with `.` removed and `..` resolved lexically (without reading the file system).
pub(crate) fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_checked_where_it_leads() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir_all(root.join("repo/k8s")).unwrap();
        fs::create_dir_all(root.join("outside")).unwrap();
        fs::write(root.join("outside/secret"), "x").unwrap();
        std::os::unix::fs::symlink("../../outside/secret", root.join("repo/k8s/link")).unwrap();
        std::os::unix::fs::symlink("../k8s", root.join("repo/k8s/up")).unwrap();
        let tree = Tree::shown_as(&root.join("repo"), "the repository".to_owned()).unwrap();
        let out = tree.check(&root.join("repo/k8s/link")).unwrap_err();
        assert_eq!(out.target, root.join("outside/secret"));
        assert!(out.link);
        assert!(out.to_string().starts_with("a symlink to "), "{out}");
        // Climbing with `..`, to a file that exists or not.
        let out = tree
            .check(&root.join("repo/k8s/../../outside/secret"))
            .unwrap_err();
        assert!(!out.link);
        assert!(
            tree.check(&root.join("repo/k8s/../../outside/none"))
                .is_err()
        );
        assert!(tree.check(Path::new("/proc/self/environ")).is_err());
        // Inside, through a link or not, existing or not.
        assert_eq!(
            tree.check(&root.join("repo/k8s/up/new.yaml")),
            Ok(root.join("repo/k8s/new.yaml"))
        );
        assert!(tree.check(&root.join("repo/k8s/../k8s/x/y")).is_ok());
        // Inside, but in a `.git` directory (the repository's, a submodule's): refused.
        fs::create_dir_all(root.join("repo/.git")).unwrap();
        fs::write(root.join("repo/.git/config"), "x").unwrap();
        std::os::unix::fs::symlink("../.git/config", root.join("repo/k8s/git")).unwrap();
        let out = tree.check(&root.join("repo/k8s/git")).unwrap_err();
        assert!(out.git && out.link, "{out}");
        assert!(out.to_string().contains("in a .git directory of"), "{out}");
        assert!(tree.check(&root.join("repo/sub/.GIT/hooks/x")).is_err());
        assert!(tree.check(&root.join("repo/k8s/.gitignore")).is_ok());
    }

    #[test]
    fn canonical_is_what_realpath_gives() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::create_dir_all(d.join("a/b")).unwrap();
        fs::write(d.join("a/b/f"), "").unwrap();
        symlink("a/b", d.join("l")).unwrap();
        symlink("../b/f", d.join("a/b/g")).unwrap();
        symlink("nowhere", d.join("dangling")).unwrap();
        symlink("loop", d.join("loop")).unwrap();
        for p in [
            "a", "a/b/f", "l", "l/g", "l/../b/f", "a/./b//f", "dangling", "loop", "none", "a/b/f/",
        ] {
            let p = d.join(p);
            let got = canonical(&p).map_err(|e| e.kind());
            let want = fs::canonicalize(&p).map_err(|e| e.kind());
            assert_eq!(got, want, "{}", p.display());
        }
        assert_eq!(canonical(Path::new(".")).ok(), fs::canonicalize(".").ok());
        // A file whose name ends as /proc marks a deleted one's is still itself.
        fs::write(d.join("f (deleted)"), "").unwrap();
        symlink("f (deleted)", d.join("to-deleted")).unwrap();
        let named = d.join("to-deleted");
        assert_eq!(
            canonical(&named).unwrap(),
            fs::canonicalize(&named).unwrap()
        );
    }

    #[test]
    fn a_name_is_kept_in_its_work_tree_else_the_current_directory_else_its_own() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        for d in [
            "repo/.git",
            "repo/k8s",
            "pr/tests",
            "victim/tests",
            "plain/k8s",
            "ci",
        ] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        symlink("../victim", root.join("pr/platform")).unwrap();
        symlink("../victim", root.join("repo/platform")).unwrap();
        symlink("repo", root.join("checkout")).unwrap();
        let kept = |name: &str, cwd: &str| {
            Tree::kept_in(Path::new(name), Some(&root.join(cwd))).map(|t| t.root)
        };
        // In a git work tree: that tree, from wherever it is named, through a symlink or not.
        for (name, cwd) in [
            ("k8s/a.yaml", "repo"),
            ("a.yaml", "repo/k8s"),
            ("../repo/k8s/a.yaml", "ci"),
            ("repo/platform/tests", ""),
            ("../repo/platform/tests", "ci"),
        ] {
            assert_eq!(
                kept(name, cwd),
                Some(root.join("repo")),
                "{name} from {cwd}"
            );
        }
        let outside = |name: &str, cwd: &str| {
            let tree = Tree::kept_in(Path::new(name), Some(&root.join(cwd))).unwrap();
            tree.check(&root.join(cwd).join(name)).is_err()
        };
        assert!(outside("../repo/platform/tests", "ci"));
        assert!(outside("repo/platform/tests", ""));
        // Outside a work tree and the current directory: the name's directory, as far as
        // it is written before a symlink (`platform` chooses nothing).
        assert_eq!(kept("../pr/platform/tests", "ci"), Some(root.join("pr")));
        assert!(outside("../pr/platform/tests", "ci"));
        assert_eq!(
            kept("../plain/k8s/a.yaml", "ci"),
            Some(root.join("plain/k8s"))
        );
        // In the current directory, written or resolved (a symlinked checkout's `$PWD`).
        assert_eq!(kept("k8s/a.yaml", "plain"), Some(root.join("plain")));
        assert_eq!(kept("pr/platform/tests", ""), Some(root.clone()));
        let typed = root.join("checkout/k8s");
        let tree = Tree::kept_in(&typed, Some(&root.join("repo"))).unwrap();
        assert_eq!(tree.check(&typed), Ok(root.join("repo/k8s")));
        // A symlink above the checkouts is the user's (`~/src -> /data/src`): followed to
        // find the work tree, whose own links still lead nowhere; outside a work tree, the
        // tree is where the name is written up to that link.
        symlink(".", root.join("ws")).unwrap();
        for cwd in ["ci", "", "repo"] {
            let name = root.join("ws/repo/platform/tests");
            let tree = Tree::kept_in(&name, Some(&root.join(cwd))).unwrap();
            assert_eq!(tree.root, root.join("repo"), "from {cwd}");
            assert!(tree.check(&name).is_err());
            assert!(tree.check(&root.join("ws/repo/k8s")).is_ok());
        }
        let plain = root.join("ws/plain/k8s/a.yaml");
        let tree = Tree::kept_in(&plain, Some(&root.join("ci"))).unwrap();
        assert_eq!(tree.root, root);
        assert!(tree.check(&plain).is_ok());
        // `/` as the current directory bounds nothing: the name's own tree is used.
        let tree = Tree::kept_in(&root.join("pr/platform/tests"), Some(Path::new("/"))).unwrap();
        assert_eq!(tree.root, root.join("pr"));
        assert!(tree.check(&root.join("pr/platform/tests")).is_err());
    }
}
