//! kinject's integration tests, one binary (`cargo test --test it`): each file of `tests/` is a
//! module here, and `cargo test --test it golden::` runs one file's tests. `tests/cost.rs` is a
//! binary of its own (`Cargo.toml` says why).
//!
//! The modules share one process: a test changes no environment variable, no current
//! directory, no resource limit and no signal disposition of it. What needs any of those runs
//! kinject as a child with them (`prlimit`, `ulimit` in `bash -c`, `current_dir`, `env`).

mod common;

mod admission;
mod cli;
mod compat;
mod corpus;
mod examples;
mod faults;
mod floors;
mod formats;
mod fuzz;
mod generated;
mod golden;
mod hostile;
mod image;
mod inplace;
mod inputs;
mod krm;
mod kustomize;
mod oracle;
mod package;
mod precommit;
mod properties;
mod release;
mod report;
mod seeds;
mod serve;
mod serve_manifests;
mod stable;
mod stream;
mod trees;

/// Every `.rs` file of `tests/` is built: a module of this binary, or a `[[test]]` of
/// `Cargo.toml` (with `autotests = false`, cargo builds only the test binaries it names, and a
/// file no one names would never run).
#[test]
fn every_test_file_is_built() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |name: &str| std::fs::read_to_string(root.join(name)).expect("read");
    let (this, manifest) = (read("tests/it.rs"), read("Cargo.toml"));
    let modules: Vec<&str> = this
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .collect();
    let unbuilt: Vec<String> = common::entries(&root.join("tests"))
        .into_iter()
        .filter(|name| {
            let module = name.strip_suffix(".rs").unwrap_or(name);
            !modules.contains(&module) && !manifest.contains(&format!("path = \"tests/{name}\""))
        })
        .collect();
    assert!(
        unbuilt.is_empty(),
        "in tests/, neither a module of tests/it.rs nor a [[test]] of Cargo.toml: {unbuilt:?}"
    );
}
