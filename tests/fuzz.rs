//! The fuzz targets' inputs as tests: every seed (`fuzz/seeds/<target>/`, made by
//! `scripts/fuzz-seeds`) and every input fuzzing once crashed on (`fuzz/regressions/<target>/`)
//! goes through the target's entry point in `kinject::fuzz`, which panics where an invariant
//! breaks. `cargo fuzz` runs the same entry points (docs/security.md).

use std::path::Path;

fn run(target: &str, entry: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut count = 0;
    for dir in ["seeds", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        let mut paths: Vec<_> = entries.map(|e| e.expect("entry").path()).collect();
        paths.sort();
        for path in paths {
            let data = std::fs::read(&path).expect("read");
            // kinject's threads have 16 MiB stacks; a debug build needs them for the deepest
            // documents it reads.
            let result = std::thread::Builder::new()
                .stack_size(16 << 20)
                .spawn(move || entry(&data))
                .expect("thread")
                .join();
            assert!(
                result.is_ok(),
                "{}: the {target} target fails",
                path.display()
            );
            count += 1;
        }
    }
    assert!(count > 0, "no inputs for the {target} target");
}

#[test]
fn read() {
    run("read", kinject::fuzz::read);
}

#[test]
fn config() {
    run("config", kinject::fuzz::config);
}

#[test]
fn template() {
    run("template", kinject::fuzz::template);
}

#[test]
fn inject() {
    run("inject", kinject::fuzz::inject);
}

#[test]
fn admission() {
    run("admission", kinject::fuzz::admission);
}

#[test]
fn serve() {
    run("serve", kinject::fuzz::serve);
}

/// The fuzz targets are built with the versions of kinject's dependencies that kinject is
/// built with: `fuzz/Cargo.lock` had drifted to newer ones (granit-parser 2.2.0 for 2.1.0,
/// minijinja 3.1.0 for 3.0.5), so fuzzing tested a reader kinject does not ship. (After
/// `cargo update`, `cargo update -p NAME --precise VERSION` in `fuzz/` brings it back.)
#[test]
fn fuzzing_builds_the_dependencies_kinject_ships() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let versions = |path: &Path| {
        let text = std::fs::read_to_string(path).expect("lock file");
        let mut out = std::collections::BTreeMap::<String, Vec<String>>::new();
        for block in text.split("[[package]]").skip(1) {
            let field = |key: &str| {
                block
                    .lines()
                    .find_map(|l| l.strip_prefix(&format!("{key} = \"")))
                    .map(|v| v.trim_end_matches('"').to_owned())
                    .expect("name and version")
            };
            out.entry(field("name")).or_default().push(field("version"));
        }
        out
    };
    let kinject = versions(&root.join("Cargo.lock"));
    let fuzz = versions(&root.join("fuzz/Cargo.lock"));
    let drifted: Vec<String> = fuzz
        .iter()
        .filter_map(|(name, v)| {
            let shipped = kinject.get(name)?;
            let other: Vec<&String> = v.iter().filter(|x| !shipped.contains(x)).collect();
            (!other.is_empty()).then(|| format!("{name} {other:?} (kinject: {shipped:?})"))
        })
        .collect();
    assert!(drifted.is_empty(), "fuzz/Cargo.lock differs: {drifted:?}");
}
