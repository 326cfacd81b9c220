//! A tree's bounds: the directory nothing is read or written outside of (`Tree`), a path that
//! leads out of it (`Outside`), and paths resolved (`resolved`, `normalize`) to tell.

use std::collections::HashMap;
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

    /// The tree a name given in the directory `cwd` is kept in, and the walk along it
    /// (`Walk`): the git work tree holding it; else the current directory when the name lies
    /// in it, written or resolved, unless that is `/` (the image's, which bounds nothing);
    /// else the name's directory as far as it is written before a symlink below the top
    /// level. A name that begins with the shell's `$PWD` (a checkout reached through a
    /// symlinked workspace) is read from the current directory.
    fn kept_in(path: &Path, cwd: Option<&Path>, walks: &mut Walks) -> Option<(Tree, Walk)> {
        let name = match cwd {
            Some(cwd) => from_pwd(path, cwd).unwrap_or_else(|| cwd.join(path)),
            None => path.to_owned(),
        };
        let walk = Walk::of(&name, walks);
        if let Some(work_tree) = &walk.work_tree {
            return Some((Tree::new(work_tree).ok()?, walk));
        }
        if let Some(cwd) = cwd.filter(|c| c.parent().is_some())
            && let Ok(real) = canonical(cwd)
            && (normalize(&name).starts_with(normalize(cwd)) || walk.real.starts_with(&real))
        {
            return Some((Tree::new(cwd).ok()?, walk));
        }
        let written = if walk.written.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            walk.written.clone()
        };
        Some((Tree::new(&written).ok()?, walk))
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

/// Where a name given on the command line leads out of the tree it is written in (`None`
/// when it stays in, or names nothing that can be judged): through a symlink inside its work
/// tree that leads out of it, even one that a later link brings back (a dotfiles `$HOME`
/// whose `src -> /data/src` holds a checkout whose committed link leads back into `$HOME`),
/// or to a place outside it.
pub(crate) fn name_outside(path: &Path) -> Option<Outside> {
    Names::new().outside(path)
}

/// Names given on the command line, judged one after another (the tree each is kept in, where
/// one leads out of it) with the walks along them remembered: `git ls-files | xargs` and pre-commit
/// give one name per file, and a walk per name from the root cost d lookups of paths up to d
/// long for each of the d files of a d-deep tree.
pub(crate) struct Names {
    /// The current directory the names are given in.
    cwd: Option<PathBuf>,
    walks: Walks,
}

impl Names {
    /// Names given in the current directory.
    pub(crate) fn new() -> Names {
        Names {
            cwd: std::env::current_dir().ok(),
            walks: Walks::default(),
        }
    }

    /// The tree a file named on the command line is kept in (`kept_in` from the current
    /// directory).
    pub(crate) fn tree_of(&mut self, path: &Path) -> Option<Tree> {
        Tree::kept_in(path, self.cwd.as_deref(), &mut self.walks).map(|(tree, _)| tree)
    }

    /// `name_outside`, with the walks so far.
    pub(crate) fn outside(&mut self, path: &Path) -> Option<Outside> {
        outside_from(path, self.cwd.as_deref(), &mut self.walks)
    }
}

/// `name_outside` for a name given in the directory `cwd`.
fn outside_from(path: &Path, cwd: Option<&Path>, walks: &mut Walks) -> Option<Outside> {
    let (tree, walk) = Tree::kept_in(path, cwd, walks)?;
    let path = cwd.map_or_else(|| path.to_owned(), |c| c.join(path));
    if let Some(target) = walk.leaves {
        return Some(Outside {
            target,
            link: true,
            tree: tree.shown,
            git: false,
        });
    }
    tree.check(&path).err()
}

/// `path` (absolute) read from `cwd` when it begins with the shell's `$PWD` and that is the
/// current directory: the user's own spelling of where they are, whatever links it goes
/// through (a CI workspace, `~/src -> /data/src`).
fn from_pwd(path: &Path, cwd: &Path) -> Option<PathBuf> {
    let pwd = PathBuf::from(std::env::var_os("PWD")?);
    let rest = path.strip_prefix(&pwd).ok()?;
    (pwd.is_absolute() && canonical(&pwd).ok()? == canonical(cwd).ok()?).then(|| cwd.join(rest))
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

/// What a walk along a name finds, component by component from the root as the kernel
/// resolves it (`..` goes to the real parent): the git work tree holding it, how far it is
/// written before a symlink, and where it really leads. A symlink met before any work tree
/// is the machine's or the user's (`/tmp -> private/tmp`, `~/src -> /data/src`, a symlinked
/// CI workspace, a link into a checkout's sub-folder): followed, its target walked the same
/// way, so a link a checkout commits is met as one. A symlink inside a work tree is the
/// tree's content, which a pull request can commit: followed only where it stays in the tree;
/// one that leads out ends the walk (`leaves`), whatever a later link would make of it.
/// Symlinks at the top level (`/tmp`, `/var`, `/home` on some systems) are the system's, and
/// followed for `written` too.
struct Walk {
    /// The innermost git work tree the name is in (a folder holding `.git`), by its real path.
    work_tree: Option<PathBuf>,
    /// The real path of the name as far as it is written before its first symlink below the
    /// top level (its directory when it has none; empty for a relative name).
    written: PathBuf,
    /// Where the walk ended: the name's real path, the part that does not exist as written.
    real: PathBuf,
    /// Where a symlink inside the work tree leads, when that is out of it.
    leaves: Option<PathBuf>,
}

/// Where walks went along plain paths: for each absolute directory a walk reached from `/` with
/// no symlink followed and no `..`, the work tree it was in and whether it exists. There, the
/// walk's state is that directory's alone, so a later walk along it starts from there.
#[derive(Default)]
struct Walks {
    plain: HashMap<PathBuf, (Option<PathBuf>, bool)>,
}

impl Walks {
    /// That a plain walk reached `dir`, in `work_tree`, and whether `dir` exists.
    fn remember(&mut self, dir: &Path, work_tree: &Option<PathBuf>, exists: bool) {
        self.plain
            .insert(dir.to_owned(), (work_tree.clone(), exists));
    }
}

impl Walk {
    /// How many symlinks a walk follows before it stops, as the kernel's `ELOOP` does.
    const MAX_LINKS: usize = 40;

    fn of(name: &Path, walks: &mut Walks) -> Walk {
        use std::collections::VecDeque;
        use std::ffi::OsString;
        let holds_git = |d: &Path| fs::symlink_metadata(d.join(".git")).is_ok();
        let owned = |c: Component<'_>| match c {
            Component::Normal(n) => Some(n.to_owned()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::RootDir => Some(OsString::from("/")),
            Component::CurDir | Component::Prefix(_) => None,
        };
        let mut queue: VecDeque<OsString> = name.components().filter_map(owned).collect();
        let mut walk = Walk {
            work_tree: None,
            written: PathBuf::new(),
            real: PathBuf::new(),
            leaves: None,
        };
        let mut exists = true;
        // A plain name (absolute, no `..`) starts where a walk along it went before: its
        // nearest directory remembered. The number of looks up is at most one more than the
        // directories this walk then remembers.
        let mut plain = name.is_absolute() && !queue.iter().any(|p| p == "..");
        if plain {
            let known = name.ancestors().skip(1).find_map(|d| {
                let (work_tree, exists) = walks.plain.get(d)?;
                Some((d, work_tree.clone(), *exists))
            });
            if let Some((dir, work_tree, known_exists)) = known {
                // As a walk spells it (`//` and `/./` are not kept).
                walk.real = dir.components().collect();
                walk.work_tree = work_tree;
                exists = known_exists;
                let done = dir.components().count();
                queue = name.components().skip(done).filter_map(owned).collect();
            }
        }
        let mut written = None;
        let mut links = 0;
        // Whether a link inside a work tree was followed (the walk is where it put it).
        let mut followed_inside = false;
        while let Some(part) = queue.pop_front() {
            if part == "/" {
                walk.real = PathBuf::from("/");
                continue;
            }
            if part == ".." {
                walk.real.pop();
                let left = walk
                    .work_tree
                    .as_ref()
                    .is_some_and(|t| !walk.real.starts_with(t));
                if left && followed_inside {
                    // Where a committed link put the walk, `..` climbs from: out of the tree
                    // is where the pull request chose (`a/up -> ..`, then `a/up/../other`).
                    walk.leaves = Some(walk.real.clone());
                    break;
                }
                if left {
                    walk.work_tree = walk
                        .real
                        .ancestors()
                        .find(|d| holds_git(d))
                        .map(Path::to_owned);
                }
                continue;
            }
            let next = walk.real.join(&part);
            let meta = if exists {
                fs::symlink_metadata(&next).ok()
            } else {
                None
            };
            let Some(meta) = meta else {
                // What does not exist is taken as written.
                exists = false;
                walk.real = next;
                if plain && !queue.is_empty() {
                    walks.remember(&walk.real, &walk.work_tree, exists);
                }
                continue;
            };
            if !meta.file_type().is_symlink() || links == Walk::MAX_LINKS {
                walk.real = next;
                if meta.is_dir() && holds_git(&walk.real) {
                    walk.work_tree = Some(walk.real.clone());
                }
                if plain && meta.is_dir() && !queue.is_empty() {
                    walks.remember(&walk.real, &walk.work_tree, exists);
                }
                continue;
            }
            plain = false;
            links += 1;
            if let Some(tree) = &walk.work_tree {
                let to = link_target(&next);
                if !to.starts_with(tree) || in_another_clone(tree, &to) {
                    walk.leaves = Some(to);
                    walk.real = next;
                    break;
                }
                walk.real = to;
                followed_inside = true;
                continue;
            }
            if written.is_none() && walk.real.components().count() > 1 {
                written = Some(walk.real.clone());
            }
            let Ok(target) = fs::read_link(&next) else {
                walk.real = next;
                continue;
            };
            for part in target.components().rev().filter_map(owned) {
                queue.push_front(part);
            }
        }
        walk.written = written.unwrap_or_else(|| {
            let dir = walk.real.parent().unwrap_or(&walk.real);
            dir.to_owned()
        });
        walk
    }
}

/// Where the symlink `link` leads: its target with every link resolved, or, when that does
/// not resolve (it leads nowhere yet, or to what is no path: `/dev/stderr` is a pipe's
/// `pipe:[…]`), its target as written, from the link's folder.
fn link_target(link: &Path) -> PathBuf {
    if let Ok(to) = canonical(link) {
        return to;
    }
    // A chain of links, each read where the last one's folder really is (`zz -> /dev/stderr
    // -> /proc/self/fd/2 -> pipe:[…]`), up to where it stops.
    let mut at = link.to_owned();
    for _ in 0..Walk::MAX_LINKS {
        let Ok(written) = fs::read_link(&at) else {
            break;
        };
        let from = resolved(at.parent().unwrap_or(Path::new("/")));
        at = normalize(&from.join(written));
    }
    at
}

/// Whether `to` (inside the work tree `tree`) lies in another git clone nested in it (a second
/// repository checked out into the first's folder, as actions/checkout's `path:` does): a
/// folder below `tree` holding a `.git` directory, or a `.git` file naming a git directory
/// that is not `tree`'s (a submodule's or a worktree's lies in `tree/.git`: the same
/// repository's).
fn in_another_clone(tree: &Path, to: &Path) -> bool {
    let own = git_directory(tree);
    to.ancestors()
        .take_while(|d| *d != tree && d.starts_with(tree))
        .any(|d| {
            let git = d.join(".git");
            match fs::symlink_metadata(&git) {
                Ok(m) if m.is_file() => !git_directory(d).starts_with(&own),
                Ok(_) => true,
                Err(_) => false,
            }
        })
}

/// The git directory of the work tree `tree`: its `.git` folder, or where its `.git` file
/// (a submodule's, a worktree's) says it is.
fn git_directory(tree: &Path) -> PathBuf {
    let git = tree.join(".git");
    match fs::read_to_string(&git) {
        Ok(text) => {
            let dir = text.trim().strip_prefix("gitdir:").unwrap_or("").trim();
            normalize(&tree.join(dir))
        }
        Err(_) => git,
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

    /// A walk that starts where an earlier one went (`Names`) judges every name as a walk
    /// from the root does, whatever the order the names come in: in and out of work trees,
    /// through links in and out of them, a clone inside another, names that do not exist,
    /// `..`.
    #[test]
    fn remembered_walks_judge_as_fresh_ones() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let root = canonical(dir.path()).unwrap();
        for d in [
            "repo/.git",
            "repo/k8s/a/b",
            "repo/clone/.git",
            "repo/clone/x",
            "repo/clone2/.git",
            "victim/x",
            "plain/a/b",
        ] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in [
            "repo/k8s/a/b/f.yaml",
            "repo/clone/x/f.yaml",
            "victim/x/f.yaml",
        ] {
            fs::write(root.join(f), "").unwrap();
        }
        symlink("../victim", root.join("repo/out")).unwrap();
        symlink("k8s/a", root.join("repo/in")).unwrap();
        symlink("../clone/x", root.join("repo/k8s/cl")).unwrap();
        symlink("repo", root.join("checkout")).unwrap();
        symlink("../victim/x", root.join("plain/a/v")).unwrap();
        symlink("../../victim/x/f.yaml", root.join("repo/clone2/out.yaml")).unwrap();
        let names = [
            "repo/k8s/a/b/f.yaml",
            "repo/k8s/a/f.yaml",
            "repo/k8s/a/b/none/deeper/f.yaml",
            "repo/out/x/f.yaml",
            "repo/in/b/f.yaml",
            "repo/k8s/cl/f.yaml",
            "repo/clone/x/f.yaml",
            "repo/k8s/../out/x/f.yaml",
            "checkout/k8s/a/b/f.yaml",
            "checkout/out/x/f.yaml",
            "plain/a/b/f.yaml",
            "plain/a/v/f.yaml",
            "victim/x/f.yaml",
            "none/f.yaml",
            "repo//k8s/./a/b/f.yaml",
            "repo//clone/x/f.yaml",
            // A work tree met past where a remembered walk starts, named with `//`: its
            // refusal names it as a fresh walk does.
            "repo//clone2/out.yaml",
        ];
        let judge = |name: &str, cwd: &str, walks: &mut Walks| {
            let cwd = root.join(cwd);
            let tree = Tree::kept_in(Path::new(name), Some(&cwd), walks).map(|(t, _)| t.root);
            (tree, outside_from(Path::new(name), Some(&cwd), walks))
        };
        // Relative from the top, absolute from elsewhere (a relative name with `..` is
        // walked from the root each time).
        for cwd in [".", "repo", "plain", "repo/k8s/a"] {
            let names: Vec<String> = names
                .iter()
                .map(|n| match cwd {
                    "." => (*n).to_owned(),
                    _ => root.join(n).display().to_string(),
                })
                .collect();
            let fresh: Vec<_> = names
                .iter()
                .map(|n| judge(n, cwd, &mut Walks::default()))
                .collect();
            for order in [false, true] {
                let walks = &mut Walks::default();
                let mut names: Vec<(usize, &String)> = names.iter().enumerate().collect();
                if order {
                    names.reverse();
                }
                for (i, name) in names {
                    assert_eq!(judge(name, cwd, walks), fresh[i], "{name} from {cwd}");
                }
                assert!(walks.plain.len() > 5, "walks were remembered");
            }
        }
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
            "other/.git",
            "other/tests",
            "home/.git",
            "home/.ssh/tests",
            "data/proj/.git",
            "data/proj/tests",
        ] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        symlink("../victim", root.join("pr/platform")).unwrap();
        symlink("../victim", root.join("repo/platform")).unwrap();
        symlink("k8s", root.join("repo/inside")).unwrap();
        symlink("repo", root.join("checkout")).unwrap();
        let tree = |name: &str, cwd: &str| {
            let walks = &mut Walks::default();
            let (tree, _) = Tree::kept_in(Path::new(name), Some(&root.join(cwd)), walks).unwrap();
            tree.root
        };
        let outside = |name: &str, cwd: &str| {
            outside_from(
                Path::new(name),
                Some(&root.join(cwd)),
                &mut Walks::default(),
            )
        };
        // In a git work tree: that tree, from wherever it is named, through a symlink or not.
        for (name, cwd) in [
            ("k8s/a.yaml", "repo"),
            ("a.yaml", "repo/k8s"),
            ("../repo/k8s/a.yaml", "ci"),
            ("repo/platform/tests", ""),
            ("../repo/platform/tests", "ci"),
        ] {
            assert_eq!(tree(name, cwd), root.join("repo"), "{name} from {cwd}");
        }
        assert!(outside("../repo/platform/tests", "ci").is_some());
        assert!(outside("repo/platform/tests", "").is_some());
        assert!(outside("../repo/inside/a.yaml", "ci").is_none());
        // `..` after a committed link is where the kernel goes: out of the tree through it.
        assert!(outside("repo/platform/../victim/tests", "").is_some());
        // Outside a work tree and the current directory: the name's directory, as far as it
        // is written before a symlink (`platform` chooses nothing).
        assert_eq!(tree("../pr/platform/tests", "ci"), root.join("pr"));
        assert!(outside("../pr/platform/tests", "ci").is_some());
        assert_eq!(tree("../plain/k8s/a.yaml", "ci"), root.join("plain/k8s"));
        // In the current directory, written or resolved (a symlinked checkout).
        assert_eq!(tree("k8s/a.yaml", "plain"), root.join("plain"));
        assert_eq!(tree("pr/platform/tests", ""), root.clone());
        let typed = root.join("checkout/k8s");
        assert!(outside(typed.to_str().unwrap(), "repo").is_none());
        // A symlink above the checkouts is the user's (`~/src -> /data/src`): followed to
        // find the work tree, whose own links still lead nowhere.
        symlink(".", root.join("ws")).unwrap();
        for cwd in ["ci", "", "repo"] {
            let name = root.join("ws/repo/platform/tests");
            assert_eq!(
                tree(name.to_str().unwrap(), cwd),
                root.join("repo"),
                "from {cwd}"
            );
            assert!(outside(name.to_str().unwrap(), cwd).is_some());
            assert!(outside(root.join("ws/repo/k8s").to_str().unwrap(), cwd).is_none());
        }
        let plain = root.join("ws/plain/k8s/a.yaml");
        assert_eq!(tree(plain.to_str().unwrap(), "ci"), root);
        assert!(outside(plain.to_str().unwrap(), "ci").is_none());
        // The user's link into a checkout's sub-folder is walked, not resolved at once: the
        // checkout's committed link to another checkout is met as one.
        symlink("../victim", root.join("repo/to-victim")).unwrap();
        symlink("../other", root.join("repo/to-other")).unwrap();
        symlink("repo/to-other", root.join("deploy")).unwrap();
        assert_eq!(tree("deploy/tests", ""), root.join("repo"));
        assert!(outside("../deploy/tests", "ci").is_some());
        assert!(outside("deploy/tests", "").is_some());
        // A work tree holding the user's link to the checkouts (a dotfiles `$HOME` with
        // `src -> /data`): a name through it leaves that tree, whatever it comes back to.
        symlink("../data", root.join("home/src")).unwrap();
        symlink("../../home/.ssh", root.join("data/proj/platform")).unwrap();
        let back = root.join("home/src/proj/platform/tests");
        assert!(outside(back.to_str().unwrap(), "ci").is_some());
        assert!(outside("platform/tests", "data/proj").is_some());
        assert!(outside("tests", "data/proj").is_none());
        // A committed link that stays in the tree, then `..`: out of it is where the link
        // put the walk, not where the name says.
        fs::create_dir_all(root.join("repo/a")).unwrap();
        symlink("..", root.join("repo/a/up")).unwrap();
        assert!(outside("repo/a/up/../other/tests", "").is_some());
        assert!(outside("a/up/k8s/a.yaml", "repo").is_none());
        // A link to what is no path (a pipe behind /dev/stderr) leads out.
        symlink("/dev/stderr", root.join("repo/err.yaml")).unwrap();
        assert!(outside("err.yaml", "repo").is_some());
        // A clone checked out inside the checkout (actions/checkout's `path:`) is another
        // tree; a submodule or worktree of the checkout (a `.git` file naming its git
        // directory) is the same one.
        fs::create_dir_all(root.join("repo/my-tools/.git")).unwrap();
        fs::create_dir_all(root.join("repo/my-tools/tests")).unwrap();
        fs::create_dir_all(root.join("repo/sub/tests")).unwrap();
        fs::write(root.join("repo/sub/.git"), "gitdir: ../.git/modules/sub\n").unwrap();
        symlink("my-tools/tests", root.join("repo/t2")).unwrap();
        symlink("sub/tests", root.join("repo/t3")).unwrap();
        assert!(outside("t2", "repo").is_some());
        assert!(outside("t3", "repo").is_none());
        assert!(outside("my-tools/tests", "repo").is_none());
        // A chain of committed links to what is no path leads out too.
        symlink("err.yaml", root.join("repo/err2.yaml")).unwrap();
        symlink("/proc/self/fd", root.join("repo/fdl")).unwrap();
        symlink("fdl/0", root.join("repo/in2.yaml")).unwrap();
        assert!(outside("err2.yaml", "repo").is_some());
        assert!(outside("in2.yaml", "repo").is_some());
        // A checkout that is a worktree: its submodules' git directories are under its own.
        fs::create_dir_all(root.join("main/.git/worktrees/wt/modules/sub")).unwrap();
        fs::create_dir_all(root.join("wt/sub/tests")).unwrap();
        fs::write(
            root.join("wt/.git"),
            format!(
                "gitdir: {}\n",
                root.join("main/.git/worktrees/wt").display()
            ),
        )
        .unwrap();
        fs::write(
            root.join("wt/sub/.git"),
            format!(
                "gitdir: {}\n",
                root.join("main/.git/worktrees/wt/modules/sub").display()
            ),
        )
        .unwrap();
        symlink("sub/tests", root.join("wt/t")).unwrap();
        assert!(outside("t", "wt").is_none());
        // `/` as the current directory bounds nothing: the name's own tree is used.
        let name = root.join("pr/platform/tests");
        let walks = &mut Walks::default();
        let (tree, _) = Tree::kept_in(&name, Some(Path::new("/")), walks).unwrap();
        assert_eq!(tree.root, root.join("pr"));
        assert!(outside_from(&name, Some(Path::new("/")), walks).is_some());
    }
}
