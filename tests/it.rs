//! kinject's integration tests, one binary (`cargo test --test it`): each file of `tests/` is a
//! module here, and `cargo test --test it golden::` runs one file's tests. `tests/cost.rs` is a
//! binary of its own (`Cargo.toml` says why).
//!
//! The modules share one process: a test changes no environment variable, no current
//! directory, no resource limit and no signal disposition of it. What needs any of those runs
//! kinject as a child with them (`prlimit`, `ulimit` in `bash -c`, `current_dir`, `env`).

mod common;

/// `kinject admission`: AdmissionReviews in, webhook responses out.
mod admission;
/// The Argo CD Config Management Plugin (`deploy/argocd/`): its files and its generate command.
mod argocd;
/// Where the configuration comes from (`-c`, discovery), flags that clash, exit codes.
mod cli;
/// The other injectors' own suites, ported (`testdata/compat/`).
mod compat;
/// Every corpus folder: no-op, idempotent, byte-exact uninject, kubectl's reading.
mod corpus;
/// Every shell block of README.md and docs/*.md, run as written.
mod examples;
/// Nothing lost when writing fails (read-only files, a full disk).
mod faults;
/// The floors of `src/`: no import climbs, no parent and child import each other.
mod floors;
/// Other injectors' configuration files over real inputs (the corpus); their own tests are
/// `compat`'s.
mod formats;
/// The fuzz targets' seeds as tests.
mod fuzz;
/// Completions, man pages and the JSON Schema are current.
mod generated;
/// The golden cases, `testdata/cases/<name>/`, with their three invariants.
mod golden;
/// The Helm post-renderer plugin (`helm-plugin/`): its manifest and the contract Helm relies on.
mod helm;
/// Hostile inputs refused with their diagnostics, within their bounds.
mod hostile;
/// The container image, built with podman and run.
mod image;
/// `--in-place`, `--check` and `--diff` on real files.
mod inplace;
/// Inputs that once did nothing in silence (a terminal, empty input).
mod inputs;
/// kinject as a KRM function (ResourceLists).
mod krm;
/// kinject inside the real `kubectl kustomize`.
mod kustomize;
/// kinject against the YAML reader Kubernetes uses.
mod oracle;
/// What `cargo package` puts in the crate.
mod package;
/// The krew manifest and Homebrew formula made from a release (`scripts/packaging.py`).
mod packaging;
/// The real `pre-commit` running the hooks.
mod precommit;
/// Properties over generated manifests and configurations (proptest).
mod properties;
/// `scripts/release`: the artefacts, their checksums and SBOM, and its refusals.
mod release;
/// The report: text, `-v`, `--report json` and its schema.
mod report;
/// The seed documents' own examples.
mod seeds;
/// `kinject serve` over loopback TLS: answers, reloads, bounds, faults.
mod serve;
/// `kinject serve --print-manifests`, validated.
mod serve_manifests;
/// The stable interface (docs/stability.md, docs/stable.txt).
mod stable;
/// Standard input a window at a time.
mod stream;
/// `kinject test`: `--update`, JUnit XML, JSON Lines, case folders that lead out of themselves.
mod test_command;
/// `kinject test` on cases a pull request wrote: configurations, command lines, special files.
mod test_untrusted;
/// Nothing read or written outside the tree a run was given.
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
