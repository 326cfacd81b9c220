//! The published crate: what `cargo package` puts in it. It holds the code, what the code
//! embeds, and what a user reads or installs; not the tests, their data, the benchmarks or
//! the fuzz targets and corpora (`Cargo.toml`'s `include`). `.ci/run` also packages the crate
//! and checks its library and binary from the unpacked package, with clippy: what the code
//! needs and the package lacks fails there.

use std::path::Path;
use std::process::Command;

#[test]
fn the_package_holds_what_users_need_and_no_test_data() {
    let out = Command::new(env!("CARGO"))
        .args(["package", "--list", "--locked", "--allow-dirty"])
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .output()
        .expect("cargo package --list");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    for needed in [
        "Cargo.toml",
        "Cargo.lock",
        "build.rs",
        "src/main.rs",
        "src/lib.rs",
        "src/model/config.validation.json",
        "README.md",
        "CHANGELOG.md",
        "LICENSE",
        "docs/stability.md",
        "man/kinject.1",
        "completions/kinject.bash",
        // Embedded by src/fuzz.rs (`include_str!`).
        "testdata/cases/hostile-alias-bomb/config.yaml",
    ] {
        assert!(
            files.iter().any(|f| f == needed),
            "{needed} is not in the package"
        );
    }
    let unwanted: Vec<&String> = files
        .iter()
        .filter(|f| {
            ["fuzz/", "tests/", "benches/", "scripts/", ".ci/"]
                .iter()
                .any(|p| f.starts_with(p))
                || (f.starts_with("testdata/")
                    && !f.starts_with("testdata/cases/hostile-alias-bomb/"))
        })
        .collect();
    assert!(unwanted.is_empty(), "in the package: {unwanted:?}");
}
