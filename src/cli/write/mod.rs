//! Rewriting files in place, atomically: the new bytes go to a temporary file in the same
//! directory, are flushed to disk, take the original's owner, group, permissions and extended
//! attributes, and replace it by rename. A crash at any moment leaves either the old file or
//! the new one, never a mix. A file is not replaced when that would lose something: when it
//! changed since it was read, has other hard links, is no regular file, or is reached through
//! a symlink that leads out of the directory it was found in.

mod keep;
mod temp;

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use crate::read::{Encoding, Stamp};

use temp::Temp;

/// What a rewrite expects of the file it replaces.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Expected<'a> {
    /// What the file was when it was read: a file changed since is not replaced.
    pub stamp: Option<Stamp>,
    /// The directory the file was found in: it is not written through a symlink that leads
    /// out of it.
    pub within: Option<&'a Path>,
}

/// Writes `bytes` over the file at `path` atomically, keeping its owner, group, permissions
/// and extended attributes. A symlink is followed (its target is replaced, the link stays)
/// when its target is inside `expected.within`.
pub(crate) fn atomic_write(path: &Path, bytes: &[u8], expected: &Expected<'_>) -> io::Result<()> {
    let target = crate::tree::canonical(path)?;
    if let Some(root) = expected.within
        && let Err(outside) = crate::tree::Tree::canonical(root).check(path)
    {
        return Err(io::Error::other(format!(
            "{outside}: not written through (name the file itself to rewrite it)"
        )));
    }
    let meta = fs::symlink_metadata(&target)?;
    replaceable(&meta, expected.stamp)?;
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Removed by its drop, unless renamed.
    let mut temp = Temp::create(dir, &name)?;
    temp.file.write_all(bytes)?;
    keep::keep(&target, &meta, &temp.file)?;
    temp.file.sync_all()?;
    // It may have changed while the new text was written.
    if Stamp::of(&fs::symlink_metadata(&target)?) != Stamp::of(&meta) {
        return Err(changed());
    }
    temp.rename_to(&target)?;
    // The rename itself is durable once the directory is.
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Writes `bytes` to a new file at `path`, atomically; fails if anything is there (a symlink
/// there, even one that leads nowhere, is not followed).
pub(crate) fn create_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut temp = Temp::create(dir, &name)?;
    temp.file.write_all(bytes)?;
    temp.file.sync_all()?;
    temp.link_as(path)?;
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Writes what `fill` writes to the file at `path` (`--output-file`), atomically
/// (`Replacement`). Nothing at `path` changes when `fill` or any step fails.
pub(crate) fn write_file_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(1 << 20, Replacement::create(path)?);
    fill(&mut out)?;
    out.into_inner()
        .map_err(io::IntoInnerError::into_error)?
        .commit()
}

/// A file written whole before it is put in place (`--output-file`, `--report-file`): its
/// bytes go to a temporary file beside it, which `commit` renames over it (keeping its owner,
/// group, permissions and extended attributes, following a symlink inside the tree
/// `tree::output_refused` checked) or, where nothing is, links in as a new file. Dropped
/// uncommitted, or killed by a signal, it leaves nothing; the file at `path` is never seen
/// half-written.
pub(crate) struct Replacement {
    temp: Temp,
    /// The file replaced, symlinks resolved, and what it was (`None`: there is none).
    existing: Option<(std::path::PathBuf, fs::Metadata)>,
    path: std::path::PathBuf,
    dir: std::path::PathBuf,
}

impl Replacement {
    /// A replacement for the file at `path`, refused when what is there may not be replaced
    /// (not a regular file, other hard links, read-only).
    pub(crate) fn create(path: &Path) -> io::Result<Replacement> {
        let existing = match crate::tree::canonical(path) {
            Ok(target) => {
                let meta = fs::symlink_metadata(&target)?;
                replaceable(&meta, None)?;
                Some((target, meta))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        let dir = match existing
            .as_ref()
            .map_or(path, |(t, _)| t.as_path())
            .parent()
        {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => Path::new(".").to_path_buf(),
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // Removed by its drop, unless renamed or linked.
        let temp = Temp::create(&dir, &name)?;
        Ok(Replacement {
            temp,
            existing,
            path: path.to_owned(),
            dir,
        })
    }

    /// Puts the bytes written in place.
    pub(crate) fn commit(self) -> io::Result<()> {
        if let Some((target, meta)) = &self.existing {
            keep::keep(target, meta, &self.temp.file)?;
        }
        self.temp.file.sync_all()?;
        match self.existing {
            Some((target, _)) => self.temp.rename_to(&target)?,
            None => self.temp.link_as(&self.path)?,
        }
        if let Ok(d) = fs::File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Write for Replacement {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.temp.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.temp.file.flush()
    }
}

/// Whether the file of metadata `meta`, read as `stamp`, may be replaced.
fn replaceable(meta: &fs::Metadata, stamp: Option<Stamp>) -> io::Result<()> {
    if !meta.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    if stamp.is_some_and(|s| s != Stamp::of(meta)) {
        return Err(changed());
    }
    let links = hard_links(meta);
    if links > 1 {
        return Err(io::Error::other(format!(
            "it has {links} hard links, and replacing it would leave the others with the old text"
        )));
    }
    // A file its owner made read-only is not replaced behind its back (the directory may
    // well allow it, and root may write anything).
    if meta.permissions().readonly() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "the file is read-only",
        ));
    }
    Ok(())
}

fn changed() -> io::Error {
    io::Error::other(
        "it changed since kinject read it (edited meanwhile?), and kinject does not overwrite that: run kinject again",
    )
}

#[cfg(unix)]
fn hard_links(meta: &fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::nlink(meta)
}

#[cfg(not(unix))]
fn hard_links(_: &fs::Metadata) -> u64 {
    1
}

/// Makes a write that would pass the file-size limit (`ulimit -f`) fail with "File too large"
/// instead of killing the process: the signal that limit sends, SIGXFSZ, is caught (by a
/// handler that only sets a flag), so the file is reported as not written, its temporary file
/// removed, and the other files still written.
pub(crate) fn fail_writes_past_the_file_size_limit() {
    #[cfg(unix)]
    {
        static SIGNALLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        let _ = signal_hook::flag::register(signal_hook::consts::SIGXFSZ, &SIGNALLED);
    }
}

/// Output held back until the run is known to have succeeded: in memory up to `limit`
/// bytes, then in an unnamed temporary file (created in the temporary directory and
/// unlinked at once, so nothing is left behind whatever happens to the process).
pub(crate) struct Spool {
    memory: Vec<u8>,
    /// Written a buffer at a time: outputs are held back in many small pieces.
    file: Option<io::BufWriter<fs::File>>,
    limit: usize,
}

impl Spool {
    pub(crate) fn new(limit: usize) -> Self {
        Spool {
            memory: Vec::new(),
            file: None,
            limit,
        }
    }

    /// Copies everything written to `out`.
    pub(crate) fn copy_to(self, out: &mut dyn Write) -> io::Result<()> {
        match self.file {
            Some(f) => {
                use std::io::Seek;
                let mut f = f.into_inner().map_err(io::IntoInnerError::into_error)?;
                f.seek(io::SeekFrom::Start(0))?;
                io::copy(&mut io::BufReader::with_capacity(1 << 20, f), out)?;
            }
            None => out.write_all(&self.memory)?,
        }
        out.flush()
    }
}

/// How much a spool writes to its file at a time.
const SPOOL_BUFFER: usize = 256 << 10;

impl Write for Spool {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if self.file.is_none() && self.memory.len() + bytes.len() > self.limit {
            let file = Temp::create(&std::env::temp_dir(), "spool")?.unnamed()?;
            let mut file = io::BufWriter::with_capacity(SPOOL_BUFFER, file);
            file.write_all(&std::mem::take(&mut self.memory))?;
            self.file = Some(file);
        }
        match &mut self.file {
            Some(f) => f.write_all(bytes)?,
            None => self.memory.extend_from_slice(bytes),
        }
        Ok(bytes.len())
    }

    /// Nothing: what is written is held until `copy_to`.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The bytes of `text` in the encoding the input came in.
pub(crate) fn encode(text: &str, encoding: Encoding) -> Vec<u8> {
    match encoding {
        Encoding::Utf8 | Encoding::Utf8Bom => text.as_bytes().to_vec(),
        Encoding::Utf16Le => std::iter::once(0xFEFF_u16)
            .chain(text.encode_utf16())
            .flat_map(u16::to_le_bytes)
            .collect(),
        Encoding::Utf16Be => std::iter::once(0xFEFF_u16)
            .chain(text.encode_utf16())
            .flat_map(u16::to_be_bytes)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn spool_gives_back_what_was_written_from_memory_or_a_file() {
        for limit in [0, 5, 1000] {
            let mut spool = super::Spool::new(limit);
            for piece in ["abc", "defg", "", "hij"] {
                spool.write_all(piece.as_bytes()).unwrap();
            }
            assert_eq!(spool.file.is_some(), limit < 10);
            let mut out = Vec::new();
            spool.copy_to(&mut out).unwrap();
            assert_eq!(out, b"abcdefghij");
        }
    }

    use super::*;

    #[test]
    fn replaces_content_and_keeps_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.yaml");
        fs::write(&p, "old\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
        }
        atomic_write(&p, b"new\n", &Expected::default()).unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "new\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                fs::metadata(&p).unwrap().permissions().mode() & 0o777,
                0o640
            );
        }
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file left"
        );
    }

    #[cfg(unix)]
    #[test]
    fn follows_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.yaml");
        let link = dir.path().join("link.yaml");
        fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        atomic_write(&link, b"new", &Expected::default()).unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
    }

    /// The stamp of the file at `p` now.
    fn stamp(p: &Path) -> Stamp {
        Stamp::of(&fs::metadata(p).unwrap())
    }

    #[test]
    fn a_file_changed_since_it_was_read_is_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.yaml");
        fs::write(&p, "old\n").unwrap();
        let read = stamp(&p);
        // Same size, and an mtime that may well be the same: the ctime and the inode differ.
        for edit in [
            |p: &Path| fs::write(p, "new\n").unwrap(),
            |p: &Path| {
                fs::write(p.with_extension("tmp"), "old\n").unwrap();
                fs::rename(p.with_extension("tmp"), p).unwrap();
            },
        ] {
            edit(&p);
            let now = fs::read(&p).unwrap();
            let expected = Expected {
                stamp: Some(read),
                within: None,
            };
            let err = atomic_write(&p, b"kinject\n", &expected).unwrap_err();
            assert!(
                err.to_string()
                    .starts_with("it changed since kinject read it")
            );
            assert_eq!(fs::read(&p).unwrap(), now);
            assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        }
        let expected = Expected {
            stamp: Some(stamp(&p)),
            within: None,
        };
        atomic_write(&p, b"kinject\n", &expected).unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "kinject\n");
    }

    #[cfg(unix)]
    #[test]
    fn links_out_of_the_tree_hard_links_and_fifos_are_not_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let tree = fs::canonicalize(dir.path()).unwrap().join("tree");
        let outside = tree.with_file_name("outside.yaml");
        fs::create_dir(&tree).unwrap();
        fs::write(&outside, "old").unwrap();
        std::os::unix::fs::symlink("../outside.yaml", tree.join("out.yaml")).unwrap();
        let within = Expected {
            stamp: None,
            within: Some(&tree),
        };
        let err = atomic_write(&tree.join("out.yaml"), b"new", &within).unwrap_err();
        assert!(err.to_string().starts_with("a symlink to "), "{err}");
        assert_eq!(fs::read_to_string(&outside).unwrap(), "old");
        fs::hard_link(&outside, tree.join("hard.yaml")).unwrap();
        let err = atomic_write(&outside, b"new", &Expected::default()).unwrap_err();
        assert!(err.to_string().starts_with("it has 2 hard links"), "{err}");
        assert_eq!(fs::read_to_string(tree.join("hard.yaml")).unwrap(), "old");
        let fifo = tree.join("fifo.yaml");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let err = atomic_write(&fifo, b"new", &within).unwrap_err();
        assert_eq!(err.to_string(), "not a regular file");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(fs::read_dir(&tree).unwrap().count(), 3);
    }

    #[cfg(unix)]
    #[test]
    fn a_new_file_is_made_only_where_nothing_is() {
        let dir = tempfile::tempdir().unwrap();
        let (new, link) = (dir.path().join("new.yaml"), dir.path().join("link.yaml"));
        std::os::unix::fs::symlink("elsewhere.yaml", &link).unwrap();
        create_new(&new, b"made").unwrap();
        assert_eq!(fs::read_to_string(&new).unwrap(), "made");
        for existing in [&new, &link] {
            let err = create_new(existing, b"again").unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        }
        assert_eq!(fs::read_to_string(&new).unwrap(), "made");
        assert!(!dir.path().join("elsewhere.yaml").exists());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[cfg(unix)]
    #[test]
    fn an_output_file_is_made_or_replaced_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let (out, link) = (dir.path().join("out.yaml"), dir.path().join("link.yaml"));
        let fill = |text: &'static str| move |w: &mut dyn Write| w.write_all(text.as_bytes());
        write_file_with(&out, fill("made\n")).unwrap();
        assert_eq!(fs::read_to_string(&out).unwrap(), "made\n");
        // Through a symlink: its target is replaced, the link stays.
        std::os::unix::fs::symlink("out.yaml", &link).unwrap();
        write_file_with(&link, fill("again\n")).unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&out).unwrap(), "again\n");
        // A write that fails half-way changes nothing.
        let failing = |w: &mut dyn Write| {
            w.write_all(b"half")?;
            Err(io::Error::other("no space left"))
        };
        assert!(write_file_with(&out, failing).is_err());
        assert!(write_file_with(&dir.path().join("new.yaml"), failing).is_err());
        assert_eq!(fs::read_to_string(&out).unwrap(), "again\n");
        // A symlink that leads nowhere is not followed.
        std::os::unix::fs::symlink("nowhere.yaml", dir.path().join("dangling.yaml")).unwrap();
        let err = write_file_with(&dir.path().join("dangling.yaml"), fill("x")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert!(!dir.path().join("nowhere.yaml").exists());
        let mut names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["dangling.yaml", "link.yaml", "out.yaml"]);
    }

    #[test]
    fn utf16_round_trip() {
        let bytes = encode("a: 1\n", Encoding::Utf16Le);
        let input = crate::read::from_bytes(crate::read::Source::stdin(), &bytes).unwrap();
        assert_eq!(&*input.text, "a: 1\n");
    }
}
