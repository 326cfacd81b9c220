//! `kinject inject --emit-kustomize DIR BASE…`: wiring only.

use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::inject::Mode;
use crate::integrations::kustomize;
use crate::pipeline;
use crate::read;

use crate::args::OutputArgs;
use crate::cli::inputs::Inputs;
use crate::cli::report::{self, diagnostics, eprint};
use crate::cli::status::ExitStatus;
use crate::cli::write;

pub(crate) fn run(config: &Config, input: &Inputs, dir: &Path, output: &OutputArgs) -> ExitStatus {
    let bases = input.paths.clone();
    if bases.is_empty() {
        eprint("error: --emit-kustomize needs the base directories to patch\n");
        return ExitStatus::Error;
    }
    let mut resources = Vec::new();
    let mut patches = Vec::new();
    let mut files = Vec::new();
    let mut failed = false;
    let mut read_bases = Vec::new();
    for base_dir in &bases {
        let base = match kustomize::base(base_dir) {
            Ok(b) => {
                read_bases.push(b.clone());
                b
            }
            Err(e) => {
                eprint(&format!("error: {e}\n"));
                failed = true;
                continue;
            }
        };
        match kustomize::relative(dir, base_dir) {
            Ok(r) => resources.push(r),
            Err(e) => {
                eprint(&format!("error: {e}\n"));
                failed = true;
            }
        }
        // Objects are matched in the namespace the base puts them in (`namespace:`), as
        // kustomize builds them; `-n` names it for objects of bases that set none.
        let mut namespaced = input.clone();
        if base.namespace.is_some() {
            namespaced.scope.namespace = base.namespace.clone();
        }
        let settings = match namespaced.settings(config, Mode::Inject, &[]) {
            Ok(s) => s,
            Err(e) => {
                eprint(&format!("error: {e}\n"));
                return ExitStatus::Error;
            }
        };
        for path in &base.files {
            match read::load(&read::Source::file(path), &mut std::io::empty()) {
                Ok(i) => {
                    let (result, ()) = pipeline::process(i, &settings, pipeline::Values::default());
                    for d in &result.docs {
                        for o in d.objects.iter().filter(|o| !o.ops.is_empty()) {
                            patches.push((kustomize::target(&o.identity, &base), o.ops.clone()));
                        }
                    }
                    files.push(result);
                }
                Err(e) => {
                    diagnostics(vec![e]);
                    failed = true;
                }
            }
        }
    }
    for f in &files {
        failed |= !f.errors.is_empty();
        diagnostics(f.errors.clone());
    }
    if let Err(e) = kustomize::apart_from_bases(dir, &read_bases) {
        eprint(&format!("error: --emit-kustomize: {e}\n"));
        failed = true;
    }
    if failed {
        report::nothing_written();
    }
    let mut entries = crate::render::report::entries(&files);
    report::text(&report::entries(&mut entries));
    if failed {
        report::people("error: nothing was written because of the errors above\n");
        return ExitStatus::Error;
    }
    let text = kustomize::kustomization(&resources, &patches);
    match write_kustomization(dir, &text) {
        Ok(path) => {
            if !output.quiet {
                eprint(&format!(
                    "wrote {} ({} patch{})\n",
                    path.display(),
                    patches.len(),
                    if patches.len() == 1 { "" } else { "es" }
                ));
            }
            ExitStatus::Success
        }
        Err(e) => {
            eprint(&format!("error: {e}\n"));
            ExitStatus::Error
        }
    }
}

/// Writes `text` as `dir`'s kustomization.yaml and returns its path. A kustomization there
/// that kinject did not write (or under another name kustomize reads) is not replaced, and
/// none is written through a symlink.
fn write_kustomization(dir: &Path, text: &str) -> Result<PathBuf, String> {
    let path = dir.join(kustomize::KUSTOMIZATION_FILES[0]);
    let cannot = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    std::fs::create_dir_all(dir).map_err(cannot)?;
    let mut stamp = None;
    for name in kustomize::KUSTOMIZATION_FILES {
        let p = dir.join(name);
        if let Some(s) = generated(&p)? {
            stamp = Some(s);
        }
    }
    match stamp {
        None => write::create_new(&path, text.as_bytes()).map_err(cannot)?,
        Some(stamp) => {
            let within = std::fs::canonicalize(dir).map_err(cannot)?;
            let expected = write::Expected {
                stamp: Some(stamp),
                within: Some(&within),
            };
            write::atomic_write(&path, text.as_bytes(), &expected).map_err(cannot)?;
        }
    }
    Ok(path)
}

/// When a kustomization at `p` is one kinject wrote as `kustomization.yaml`: what it was when
/// read. `None` when there is none; an error when there is one kinject may not replace.
fn generated(p: &Path) -> Result<Option<crate::read::Stamp>, String> {
    use std::io::Read;
    let meta = match std::fs::symlink_metadata(p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", p.display())),
        Ok(m) => m,
    };
    if meta.file_type().is_symlink() {
        return Err(format!("{} is a symlink: not written through", p.display()));
    }
    let not_ours = || {
        format!(
            "{} was not written by kinject: not replaced (it does not start with `{}`; move it, or write the overlay \
                to another directory)",
            p.display(),
            kustomize::GENERATED
        )
    };
    if p.file_name() != Some(std::ffi::OsStr::new(kustomize::KUSTOMIZATION_FILES[0]))
        || !meta.is_file()
    {
        return Err(not_ours());
    }
    let mut file =
        std::fs::File::open(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
    let stamp = crate::read::Stamp::of(&file.metadata().map_err(|e| e.to_string())?);
    let mut head = Vec::new();
    let _ = file
        .by_ref()
        .take(kustomize::GENERATED.len() as u64)
        .read_to_end(&mut head);
    if head != kustomize::GENERATED.as_bytes() {
        return Err(not_ours());
    }
    Ok(Some(stamp))
}
