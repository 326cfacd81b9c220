//! `--output-file`: where the output goes instead of stdout, and the files it may not be.

use std::path::{Path, PathBuf};

/// Why `output` cannot be the output file of a run reading `inputs`: it is one of them, or
/// a manifest inside an input directory. Writing it would be safe for this run (the output
/// replaces it by rename, after every input was read), but not what was meant: an input
/// rewritten this way skips what `--in-place` guarantees (a file changed meanwhile is not
/// replaced, unchanged files are not touched, exit 1 when a file changed), and a file in an
/// input directory is read as a manifest by the next run, its objects then twice in the output.
pub(crate) fn refused(output: &Path, inputs: &[PathBuf]) -> Option<String> {
    let target = resolved(output)?;
    let name = crate::diagnostic::printable_name(&output.display().to_string()).into_owned();
    for input in inputs.iter().filter(|p| p.as_os_str() != "-") {
        let Ok(input_target) = std::fs::canonicalize(input) else {
            continue;
        };
        let input_name =
            crate::diagnostic::printable_name(&input.display().to_string()).into_owned();
        if input_target == target {
            return Some(format!(
                "--output-file {name} is also an input: to rewrite the manifests kinject reads, use -i/--in-place (it leaves unchanged files alone and does not replace a file edited meanwhile)"
            ));
        }
        if input_target.is_dir()
            && target.starts_with(&input_target)
            && crate::read::is_manifest(&target)
        {
            return Some(format!(
                "--output-file {name} is inside the input directory {input_name}: the next run would read it as a manifest too; write it outside the inputs (or name it other than .yaml, .yml, .json)"
            ));
        }
    }
    None
}

/// The file `path` names, symlinks resolved, whether it exists or not (`None` when its
/// directory does not exist either: nothing there can be an input).
fn resolved(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = std::fs::canonicalize(path) {
        return Some(p);
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Some(std::fs::canonicalize(dir).ok()?.join(path.file_name()?))
}
