//! Which files a command line names, and reading them. A directory is walked for manifests
//! without leaving it: a symlink whose target lies outside the directory given is named and
//! not followed. A file is read once however often it is named, and what it was when read
//! (its `Stamp`) goes with its text, so that a rewrite can tell whether it changed since.

use std::collections::HashSet;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::error::InputError;
use super::input::{Source, Stamp};
use crate::diagnostic::printable_name;
use crate::tree::{Outside, Tree, is_manifest};

/// What the inputs are read for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Intent {
    /// To print a result: a FIFO named on the command line is read, as `cat` reads one, and
    /// a name is followed wherever it leads (`bazel-bin/…`, Nix's `result`).
    Read,
    /// To say how they would be rewritten (`--check`, `--diff`): as `Rewrite`, but a FIFO is
    /// read.
    Preview,
    /// To rewrite them in place: regular files only, and a name (a file or a directory) is
    /// read only when it stays in the tree it is named in (`Names::tree_of`): the names come
    /// from `git ls-files | xargs` and pre-commit, so a committed symlink among them (to a
    /// credential file, to a directory of another checkout) is a pull request's. Such a file
    /// could not be written back anyway.
    Rewrite,
}

/// Expands paths into sources: `-` is stdin, a directory is walked recursively for
/// `.yaml`/`.yml`/`.json` files (hidden entries skipped), sorted for a stable order. A file
/// named more than once (also through `./`, a link or its directory) is a source once.
pub(crate) fn discover(paths: &[PathBuf], intent: Intent) -> (Vec<Source>, Vec<InputError>) {
    let mut found = Found::default();
    // Each name's walk starts where an earlier one's went (one name per file, as
    // `git ls-files | xargs` gives them).
    let mut names = crate::tree::Names::new();
    if paths.is_empty() {
        found.sources.push(Source::stdin());
    }
    for path in paths {
        if path.as_os_str() == "-" {
            found.sources.push(Source::stdin());
            continue;
        }
        if intent != Intent::Read
            && let Some(outside) = names.outside(path)
        {
            let why = format!(
                "{outside}, not read: --in-place, --check and --diff keep to the tree a name is in (name the file it \
                    leads to, to read it)"
            );
            found.error(path, io::Error::other(why));
            continue;
        }
        match fs::metadata(path) {
            Ok(m) if m.is_dir() => walk(path, &mut found),
            Ok(m) => match refused(m.file_type(), intent).or_else(|| linked_fifo(path, &m, intent))
            {
                None => found.add(path, &m, names.tree_of(path).map(|t| t.root().to_owned())),
                Some(why) => found.error(path, io::Error::other(why)),
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound && looks_like_an_option(path) => {
                found.errors.push(InputError::OptionAfterSeparator {
                    name: printable_name(&path.display().to_string()).into_owned(),
                });
            }
            Err(e) => found.error(path, e),
        }
    }
    (found.sources, found.errors)
}

/// Sources found so far, and why the others could not be.
#[derive(Default)]
struct Found {
    sources: Vec<Source>,
    errors: Vec<InputError>,
    /// Device and inode of every file found.
    seen: HashSet<(u64, u64)>,
}

impl Found {
    /// Adds the file at `path` (of metadata `meta`), unless it was found before.
    fn add(&mut self, path: &Path, meta: &fs::Metadata, tree: Option<PathBuf>) {
        let id = Stamp::of(meta).id;
        if id != (0, 0) && !self.seen.insert(id) {
            return;
        }
        let mut source = Source::file(path);
        source.within = tree;
        self.sources.push(source);
    }

    fn error(&mut self, path: &Path, error: io::Error) {
        self.errors.push(InputError::Io {
            name: printable_name(&path.display().to_string()).into_owned(),
            error,
        });
    }
}

/// Why a file named on the command line is not read: anything but a regular file, save a FIFO
/// read for printing.
fn refused(file_type: fs::FileType, intent: Intent) -> Option<String> {
    let what = match kind(file_type) {
        None => return None,
        Some("a FIFO") if intent != Intent::Rewrite => return None,
        Some(what) => what,
    };
    Some(format!("not a regular file ({what})"))
}

/// Why a FIFO reached through a symlink is not read to say how it would be rewritten: the
/// names `--check` and `--diff` are given come from `git ls-files` and pre-commit, and git
/// stores no FIFO; a committed link to one (`/dev/stdin`, `/dev/stderr` as pipes) would read
/// the caller's input or wait on its own output. Named itself, a FIFO is read as `cat` reads one.
fn linked_fifo(path: &Path, meta: &fs::Metadata, intent: Intent) -> Option<String> {
    let linked = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    (intent == Intent::Preview && linked && kind(meta.file_type()) == Some("a FIFO"))
        .then(|| "a symlink to a FIFO, not read: --check and --diff read a FIFO only when it is named itself".to_owned())
}

/// What a file that is not a regular file is (`None` for a regular file).
fn kind(file_type: fs::FileType) -> Option<&'static str> {
    if file_type.is_file() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return Some("a FIFO");
        }
        if file_type.is_char_device() {
            return Some("a character device");
        }
        if file_type.is_block_device() {
            return Some("a block device");
        }
        if file_type.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a file of text")
}

/// A missing path that looks like an option: after `--` every name is a file, so an option
/// put there (`args:` of a pre-commit hook whose `entry:` ends with `--`) arrives as one.
fn looks_like_an_option(path: &Path) -> bool {
    path.to_str()
        .is_some_and(|p| p.len() > 1 && p.starts_with('-'))
}

/// Walks `dir` for manifests. A symlink is followed when its target lies inside `dir`;
/// one that leads out of it is reported by name, as loops are, when it would have been read.
fn walk(dir: &Path, found: &mut Found) {
    let tree = match Tree::new(dir) {
        Ok(tree) => tree,
        Err(e) => return found.error(dir, e),
    };
    let root = tree.root().to_owned();
    let mut outside = Vec::new();
    // Whether a manifest was met (read now, or named before).
    let mut any = false;
    let walker = walkdir::WalkDir::new(dir)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            if e.depth() == 0 {
                return true;
            }
            if e.file_name().to_string_lossy().starts_with('.') {
                return false;
            }
            match leaves(e, &tree) {
                Some(why) => {
                    if e.file_type().is_dir() || is_manifest(e.path()) {
                        outside.push((e.path().to_owned(), why));
                    }
                    false
                }
                None => true,
            }
        });
    for entry in walker {
        match entry {
            Ok(e) if e.file_type().is_file() && is_manifest(e.path()) => match e.metadata() {
                Ok(m) => {
                    any = true;
                    found.add(e.path(), &m, Some(root.clone()));
                }
                Err(err) => found.error(e.path(), err.into()),
            },
            Ok(_) => {}
            Err(err) => walk_error(dir, err, found),
        }
    }
    if !any && outside.is_empty() {
        found.errors.push(InputError::EmptyDirectory {
            name: printable_name(&dir.display().to_string()).into_owned(),
        });
    }
    for (link, why) in outside {
        let why = format!("{why}, not followed (name it on the command line to read it)");
        found.error(&link, io::Error::other(why));
    }
}

/// Where the symlink `e` leads when that is outside `tree` (`None` for what is no symlink,
/// stays inside, or cannot be resolved: the walk reports the last itself).
fn leaves(e: &walkdir::DirEntry, tree: &Tree) -> Option<Outside> {
    if !e.path_is_symlink() || crate::tree::canonical(e.path()).is_err() {
        return None;
    }
    tree.check(e.path()).err()
}

/// Reports an entry the walk could not read: a loop, or an unreadable entry (a broken link
/// that would not have been read is no error).
fn walk_error(dir: &Path, err: walkdir::Error, found: &mut Found) {
    let path = err.path().unwrap_or(dir).to_owned();
    let error = match err.loop_ancestor() {
        Some(ancestor) => io::Error::other(format!(
            "a symlink loop (it leads back to {}), not followed",
            printable_name(&ancestor.display().to_string())
        )),
        None => {
            let manifest = is_manifest(&path);
            match err.into_io_error() {
                Some(e) if e.kind() == io::ErrorKind::NotFound && !manifest => return,
                Some(e) => e,
                None => io::Error::other("unreadable directory entry"),
            }
        }
    };
    found.error(&path, error);
}

/// The bytes of the file at `path` and what it was when read. A regular file is read whole;
/// a FIFO as `until_binary` reads; anything else is refused.
pub(crate) fn read(path: &Path) -> io::Result<(Vec<u8>, Stamp)> {
    let mut file = fs::File::open(path)?;
    let meta = file.metadata()?;
    let mut bytes = Vec::new();
    match kind(meta.file_type()) {
        None => {
            let size = usize::try_from(meta.len()).unwrap_or(usize::MAX);
            bytes.try_reserve_exact(size.saturating_add(1))?;
            file.read_to_end(&mut bytes)?;
        }
        Some("a FIFO") => until_binary(&mut file, &mut bytes)?,
        Some(what) => return Err(io::Error::other(format!("not a regular file ({what})"))),
    }
    Ok((bytes, Stamp::of(&meta)))
}

/// Reads `reader` to its end, or to the end of the first block that holds a NUL byte when the
/// text is not UTF-16: such text is refused as a binary file at its first NUL, which is then
/// already read, so an endless stream (`/dev/zero` through a pipe) is not read until memory
/// runs out.
pub(crate) fn until_binary(reader: &mut dyn Read, bytes: &mut Vec<u8>) -> io::Result<()> {
    const BLOCK: u64 = 64 * 1024;
    loop {
        let start = bytes.len();
        let n = (&mut *reader).take(BLOCK).read_to_end(bytes)?;
        let utf16 = matches!(bytes.get(..2), Some([0xFF, 0xFE] | [0xFE, 0xFF]));
        if (n as u64) < BLOCK || (!utf16 && memchr::memchr(0, &bytes[start..]).is_some()) {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_stops_at_the_block_holding_the_first_nul() {
        let mut endless = io::repeat(b'a').take(300_000).chain(io::repeat(0));
        let mut bytes = Vec::new();
        until_binary(&mut endless, &mut bytes).unwrap();
        assert_eq!(bytes.len(), 5 * 64 * 1024);
        // UTF-16 holds NULs: read to the end.
        let mut utf16 = [0xFF, 0xFE, b'a', 0].repeat(40_000);
        let mut bytes = Vec::new();
        until_binary(&mut &utf16[..], &mut bytes).unwrap();
        assert_eq!(bytes, utf16);
        utf16.truncate(3);
        let mut bytes = Vec::new();
        until_binary(&mut &utf16[..], &mut bytes).unwrap();
        assert_eq!(bytes, utf16);
    }
}
