//! Rewriting files in place, atomically: the new bytes go to a temporary file in the same
//! directory, are flushed to disk, take the original's permissions, and replace it by rename.
//! A crash at any moment leaves either the old file or the new one, never a mix.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::read::Encoding;

/// Writes `bytes` to `path` atomically. A symlink is followed: its target is replaced, the
/// link stays.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = fs::canonicalize(path)?;
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let permissions = fs::metadata(&target)?.permissions();
    // A file its owner made read-only is not replaced behind its back (the directory may
    // well allow it, and root may write anything).
    if permissions.readonly() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "the file is read-only",
        ));
    }
    let (tmp_path, mut file) = temp_file(dir, &name)?;
    let result = (|| {
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::set_permissions(&tmp_path, permissions)?;
        drop(file);
        fs::rename(&tmp_path, &target)?;
        // The rename itself is durable once the directory is.
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp_path);
    }
    result
}

/// A new file `.<name>.kinject-<pid>-<n>` in `dir`, created exclusively.
fn temp_file(dir: &Path, name: &str) -> io::Result<(PathBuf, fs::File)> {
    let pid = std::process::id();
    for n in 0..1000 {
        let p = dir.join(format!(".{name}.kinject-{pid}-{n}"));
        match fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&p)
        {
            Ok(f) => return Ok((p, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("no free temporary file name"))
}

/// Output held back until the run is known to have succeeded: in memory up to `limit`
/// bytes, then in an unnamed temporary file (created in the temporary directory and
/// unlinked at once, so nothing is left behind whatever happens to the process).
pub struct Spool {
    memory: Vec<u8>,
    file: Option<fs::File>,
    limit: usize,
}

impl Spool {
    pub fn new(limit: usize) -> Self {
        Spool {
            memory: Vec::new(),
            file: None,
            limit,
        }
    }

    pub fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.file.is_none() && self.memory.len() + bytes.len() > self.limit {
            let (path, mut file) = temp_file(&std::env::temp_dir(), "spool")?;
            let _ = fs::remove_file(&path);
            file.write_all(&std::mem::take(&mut self.memory))?;
            self.file = Some(file);
        }
        match &mut self.file {
            Some(f) => f.write_all(bytes),
            None => {
                self.memory.extend_from_slice(bytes);
                Ok(())
            }
        }
    }

    /// Copies everything written to `out`.
    pub fn copy_to(self, out: &mut dyn Write) -> io::Result<()> {
        match self.file {
            Some(mut f) => {
                use std::io::Seek;
                f.seek(io::SeekFrom::Start(0))?;
                io::copy(&mut io::BufReader::with_capacity(1 << 20, f), out)?;
            }
            None => out.write_all(&self.memory)?,
        }
        out.flush()
    }
}

/// The bytes of `text` in the encoding the input came in.
pub fn encode(text: &str, encoding: Encoding) -> Vec<u8> {
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
                spool.write(piece.as_bytes()).unwrap();
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
        atomic_write(&p, b"new\n").unwrap();
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
        atomic_write(&link, b"new").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
    }

    #[test]
    fn utf16_round_trip() {
        let bytes = encode("a: 1\n", Encoding::Utf16Le);
        let input = crate::read::from_bytes(crate::read::Source::stdin(), &bytes).unwrap();
        assert_eq!(&*input.text, "a: 1\n");
    }
}
