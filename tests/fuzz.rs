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
