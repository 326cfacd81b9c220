//! Where a run may read and write: the one rule for every path kinject opens or writes.
//!
//! A run is given trees: a directory named on the command line (walked), the tree a name is
//! written in (its git work tree, else the current directory, else its own directory:
//! `Tree::kept_in`), the git repository a configuration is found in.
//! Nothing is read or written through a path that leads out of its tree — a symlink whose
//! target lies elsewhere, or a `..` that climbs out: not a file of a walk, not a
//! configuration found beside the manifests or what it `inherits:`, not a manifest that
//! widening adds, not a kustomize base's resource, not a file rewritten in place, not
//! `--output-file` or `--report-file`. An output is never an input, the configuration, or a
//! manifest inside an input directory (`output_refused`). Which configuration applies to a
//! file is `discover`'s (the nearest one, never above the repository).
//! docs/security.md's threat model lists each surface and the test that holds it.
//!
//! This file names the parts and says which outputs are refused (`output_refused`); a tree
//! and the paths it bounds are `bounds.rs`. The parts import each other, never this file.

mod bounds;
mod discover;

use std::fs;
use std::path::{Path, PathBuf};

pub(crate) use bounds::{Names, Outside, Tree, canonical, name_outside, normalize, resolved};
pub(crate) use discover::{
    CONFIG_NAMES, CONFIG_NAMES_SAID, Nearest, NotFound, TEST_CASE_VARIABLE, boundary, in_test_case,
    repository, shown, shown_dir,
};

use crate::diagnostic::printable_name;

/// Whether a directory walk reads the file at `path` (by its extension: .yaml, .yml, .json).
pub(crate) fn is_manifest(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    )
}

/// Why `output`, named by `flag` (`--output-file`), cannot be written by a run that reads
/// `inputs` with the configuration files `configs`: it is one of them, a manifest inside an
/// input directory, or it leads out of the tree it is named in (a committed symlink to a
/// shell's rc file). Writing an input this way would skip what `--in-place` guarantees (a
/// file changed meanwhile is not replaced, unchanged files are not touched, exit 1 when a
/// file changed), and a file in an input directory is read as a manifest by the next run.
pub(crate) fn output_refused(
    flag: &str,
    output: &Path,
    inputs: &[PathBuf],
    configs: &[PathBuf],
) -> Option<String> {
    let name = printable_name(&output.display().to_string()).into_owned();
    if let Some(outside) = name_outside(output) {
        return Some(format!(
            "{flag} {name}: {outside}: not written through (name a file inside it)"
        ));
    }
    // A link that leads nowhere is not written through (`write::create_new`): said here,
    // where it is, rather than as the write's "File exists".
    if fs::symlink_metadata(output).is_ok_and(|m| m.is_symlink()) && fs::metadata(output).is_err() {
        let to = fs::read_link(output).unwrap_or_default();
        let to = printable_name(&to.display().to_string()).into_owned();
        return Some(format!(
            "{flag} {name} is a symlink to {to}, which does not exist: no file is made through a link (name the file \
                itself)"
        ));
    }
    let target = resolved(output);
    for config in configs {
        if resolved(config) == target {
            return Some(format!(
                "{flag} {name} is the configuration: write the output elsewhere"
            ));
        }
    }
    for input in inputs.iter().filter(|p| p.as_os_str() != "-") {
        let Ok(input_target) = fs::canonicalize(input) else {
            continue;
        };
        let input_name = printable_name(&input.display().to_string()).into_owned();
        if input_target == target {
            return Some(format!(
                "{flag} {name} is also an input: to rewrite the manifests kinject reads, use -i/--in-place (it leaves \
                    unchanged files alone and does not replace a file edited meanwhile)"
            ));
        }
        if input_target.is_dir() && target.starts_with(&input_target) && is_manifest(&target) {
            return Some(format!(
                "{flag} {name} is inside the input directory {input_name}: the next run would read it as a manifest \
                    too; write it outside the inputs (or name it other than .yaml, .yml, .json)"
            ));
        }
    }
    None
}
