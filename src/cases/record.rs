//! The record `kinject test --update` keeps beside a case's expectation, `input.sha256`: the
//! SHA-256 of what the case feeds kinject (its input, its `args`, its `stdin.yaml`) when the
//! expectation was written. An update refuses to rewrite the expectation of a case whose
//! input changed since (without `--force`): the new output would be blessed for an input no
//! one reviewed against the old expectation.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::layout::{INPUTS, Rules, read_case_file};

/// The record's file name, in the case folder.
pub(crate) const RECORD: &str = "input.sha256";

/// What the record says against what the case holds now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// No record: the expectation was not written by `--update` (or is new).
    Missing,
    /// The input is the one the expectation was written for.
    Same,
    /// The input changed since.
    Changed,
}

impl Record {
    /// The record of the case in `dir` against its input hashed now (`hash`).
    pub fn of(dir: &Path, hash: &str) -> Record {
        match std::fs::read_to_string(dir.join(RECORD)) {
            Err(_) => Record::Missing,
            Ok(text) if text.trim() == format!("sha256:{hash}") => Record::Same,
            Ok(_) => Record::Changed,
        }
    }

    /// The record's text for `hash`.
    pub fn text(hash: &str) -> String {
        format!("sha256:{hash}\n")
    }

    /// The record's path in `dir`.
    pub fn path(dir: &Path) -> std::path::PathBuf {
        dir.join(RECORD)
    }
}

/// The SHA-256 (hex) of the case's input files, `args` and `stdin.yaml`: each one's name,
/// length and bytes, in a fixed order (an `input/` folder's regular files sorted by path).
pub fn input_hash(dir: &Path, rules: &Rules) -> Result<String, String> {
    let mut files = Vec::new();
    for name in INPUTS.iter().chain(&["args", "stdin.yaml"]) {
        let path = dir.join(name);
        if path.is_dir() {
            let mut inside: Vec<_> = walkdir::WalkDir::new(&path)
                .follow_links(false)
                .into_iter()
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_file())
                .map(walkdir::DirEntry::into_path)
                .collect();
            inside.sort();
            files.extend(inside);
        } else if path.exists() {
            files.push(path);
        }
    }
    let mut hasher = Sha256::new();
    for path in files {
        let bytes = read_case_file(dir, &path, rules)?;
        let name = path
            .strip_prefix(dir)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        hasher.update((name.len() as u64).to_le_bytes());
        hasher.update(name.as_bytes());
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}
