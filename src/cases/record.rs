//! The record `kinject test --update` keeps beside a case's expectation, `input.sha256`: the
//! SHA-256 of what the case feeds kinject when the expectation was written — its input, its
//! `args`, its `stdin.yaml`, and every other file of the folder its `args` names as an input
//! (`-f review.json`, `inject other.yaml`); not its configurations, whose change is what an
//! update is for. An update refuses to rewrite the expectation of a case whose input changed
//! since (without `--force`): the new output would be blessed for an input no one reviewed
//! against the old expectation.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::layout::{EXPECTATIONS, INPUTS, Layout, Rules, read_case_file, read_regular};

/// The record's file name, in the case folder.
pub(crate) const RECORD: &str = "input.sha256";

/// The files of a case that are not what it feeds kinject, beside its expectations.
const OWN: [&str; 9] = [
    RECORD,
    "report.txt",
    "expect-error",
    "no-uninject",
    EXPECTATIONS[0],
    EXPECTATIONS[1],
    EXPECTATIONS[2],
    EXPECTATIONS[3],
    EXPECTATIONS[4],
];

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
    /// The record of the case in `dir` against its input hashed now (`hash`); `Err` when the
    /// record is there but cannot be read as a case file (a symlink out, a fifo, too large).
    pub fn of(dir: &Path, hash: &str, rules: &Rules) -> Result<Record, String> {
        let path = Record::path(dir);
        if std::fs::symlink_metadata(&path).is_err() {
            return Ok(Record::Missing);
        }
        let text = read_case_file(dir, &path, rules)?;
        let same = String::from_utf8_lossy(&text).trim() == format!("sha256:{hash}");
        Ok(if same { Record::Same } else { Record::Changed })
    }

    /// The record's text for `hash`.
    pub fn text(hash: &str) -> String {
        format!("sha256:{hash}\n")
    }

    /// The record's path in `dir`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(RECORD)
    }
}

/// The SHA-256 (hex) of what the case in `layout` feeds kinject: each file's name, length and
/// bytes, in a fixed order (a folder's files sorted by path; a symlink as where it leads, and
/// the bytes there when that is a file of the case folder).
pub fn input_hash(layout: &Layout, rules: &Rules) -> Result<String, String> {
    let dir = &crate::tree::normalize(&layout.dir);
    // The fixed names first, in the order records were first written with.
    let mut roots: Vec<PathBuf> = INPUTS
        .iter()
        .chain(&["args", "stdin.yaml"])
        .map(|name| dir.join(name))
        .collect();
    let mut named: Vec<PathBuf> = layout
        .reads
        .iter()
        .filter(|r| *r != "-")
        .map(|r| crate::tree::normalize(&dir.join(r)))
        .filter(|p| !roots.contains(p))
        .collect();
    named.sort();
    named.dedup();
    roots.extend(named);
    // Not the case's own files (its expectation, this record), nor its configurations (a
    // changed configuration is what an update is for), when a folder named holds them
    // (`inject .`).
    let own: Vec<PathBuf> = OWN
        .iter()
        .copied()
        .chain(layout.configs.iter().map(String::as_str))
        .map(|name| crate::tree::normalize(&dir.join(name)))
        .collect();
    // Each file with whether a walk that follows no symlink found it (inside by construction).
    let mut files: Vec<(PathBuf, bool)> = Vec::new();
    for root in roots {
        let Ok(meta) = std::fs::symlink_metadata(&root) else {
            continue;
        };
        let is_dir = std::fs::metadata(&root).is_ok_and(|m| m.is_dir());
        if !is_dir || meta.is_symlink() {
            files.push((root.clone(), false));
        }
        let leads_out =
            || crate::tree::Tree::new(dir).map_or(true, |tree| tree.check(&root).is_err());
        if !is_dir || (meta.is_symlink() && leads_out()) {
            continue;
        }
        // A folder, or a symlink to a folder of the case (its files counted where it leads).
        let mut inside: Vec<(PathBuf, bool)> = walkdir::WalkDir::new(&root)
            .follow_links(false)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| !e.file_type().is_dir())
            .map(|e| (e.file_type().is_file(), e.into_path()))
            .filter(|(_, p)| !own.contains(p))
            .map(|(regular, p)| (p, regular))
            .collect();
        inside.sort();
        files.extend(inside);
    }
    let mut hasher = Sha256::new();
    let mut add = |name: &str, bytes: &[u8]| {
        hasher.update((name.len() as u64).to_le_bytes());
        hasher.update(name.as_bytes());
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    for (path, walked_regular) in files {
        let name = path
            .strip_prefix(dir)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        if walked_regular {
            add(&name, &read_regular(dir, &path, rules)?);
            continue;
        }
        match std::fs::read_link(&path) {
            Ok(target) => {
                // A symlink: where it leads, and what the run reads through it when it may (a
                // file of the case folder).
                add(&format!("{name} ->"), target.as_os_str().as_encoded_bytes());
                if let Ok(bytes) = read_case_file(dir, &path, rules) {
                    add(&name, &bytes);
                }
            }
            Err(_) => add(&name, &read_case_file(dir, &path, rules)?),
        }
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}
