//! `kinject inject --emit-kustomize DIR BASE…`: wiring only.

use std::path::Path;

use crate::config::Config;
use crate::inject::{Mode, Settings};
use crate::integrations::kustomize;
use crate::pipeline;
use crate::read;

use super::output::diagnostics;
use super::{EXIT_ERROR, InputArgs, OutputArgs, eprint};

pub(crate) fn run(config: &Config, input: &InputArgs, dir: &Path, output: &OutputArgs) -> u8 {
    let mut settings = Settings::new(config, input.namespace.clone(), Mode::Inject);
    if let Err(e) =
        super::parse_namespace_labels(&input.namespace_labels, &mut settings.namespace_labels)
    {
        eprint(&format!("error: {e}\n"));
        return EXIT_ERROR;
    }
    let bases = input.all_paths();
    if bases.is_empty() {
        eprint("error: --emit-kustomize needs the base directories to patch\n");
        return EXIT_ERROR;
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
        for path in &base.files {
            match read::load(&read::Source::file(path), &mut std::io::empty()) {
                Ok(i) => {
                    let result = pipeline::process(i, &settings, pipeline::Keep::Values);
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
    if !output.quiet {
        eprint(&crate::render::report::text(
            &crate::render::report::entries(&files),
        ));
    }
    if failed {
        eprint("error: nothing was written because of the errors above\n");
        return EXIT_ERROR;
    }
    let text = kustomize::kustomization(&resources, &patches);
    match kustomize::write(dir, &text) {
        Ok(path) => {
            if !output.quiet {
                eprint(&format!(
                    "wrote {} ({} patches)\n",
                    path.display(),
                    patches.len()
                ));
            }
            0
        }
        Err(e) => {
            eprint(&format!("error: {e}\n"));
            EXIT_ERROR
        }
    }
}
