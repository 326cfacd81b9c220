//! kinject's release (`scripts/release`, docs/release.md): the artefacts it writes, checked as a
//! user checks a download (unpacked, `sha256sum -c`, `--version`) and as a packager reads them
//! (the folder inside, the SBOM, cargo-binstall's templates); its refusals, each in a checkout
//! of its own with stubs, before anything is built; and the hosted CI's release workflow
//! against the script.
//!
//! The release run here reuses the static binary `scripts/image` builds (`scripts/static-binary`,
//! `$CARGO_TARGET_DIR/image`): no second fat-LTO build. Its SBOM tool is installed from crates.io
//! into the target directory on the first run (`.ci/run` says so). Without podman the image is
//! left out, said on stderr past cargo's capture; with `KINJECT_REQUIRE_PODMAN=1` (CI) that
//! fails instead, as in tests/image.rs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::common;

/// What `scripts/release` builds here: the static glibc binary (musl is the hosted CI's).
const TARGET: &str = "x86_64-unknown-linux-gnu";
/// The hosted CI's x86_64 Linux target, built here by the ignored test below.
const MUSL: &str = "x86_64-unknown-linux-musl";
const VERSION: &str = env!("CARGO_PKG_VERSION");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

/// The target directory `cargo test` uses (CARGO_TARGET_TMPDIR is its `tmp`): the script
/// builds the static binary in its `image/`, where tests/image.rs's run builds it too.
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target directory")
        .to_owned()
}

fn release(out: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(root().join("scripts/release"));
    // The tree may hold a developer's uncommitted work: the artefacts are checked, not the tree.
    command.args(["--allow-dirty", "--out"]).arg(out).args(args);
    let out = command
        .env("CARGO_TARGET_DIR", target_dir())
        .output()
        .expect("run scripts/release");
    assert!(
        out.status.success(),
        "scripts/release failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn the_release_holds_the_checkouts_binary_and_verifies() {
    let image = common::on_path("podman").is_some();
    if !image {
        common::skipped("podman not installed — the release was made with --no-image");
    }
    let started = std::time::Instant::now();
    let dir = tempfile::tempdir().expect("tempdir");
    let (first, second) = (dir.path().join("first"), dir.path().join("second"));
    let flags: &[&str] = if image { &[] } else { &["--no-image"] };
    let said = release(&first, flags);
    common::loud(&format!(
        "tests/release.rs: scripts/release in {:.0?}",
        started.elapsed()
    ));

    let name = format!("kinject-{VERSION}-{TARGET}");
    let mut artefacts = vec![format!("{name}.tar.gz"), format!("{name}.cdx.json")];
    if image {
        artefacts.push(format!("kinject-{VERSION}-image-amd64.oci.tar"));
    }
    let printed: Vec<String> = artefacts
        .iter()
        .map(|a| first.join(a).display().to_string())
        .collect();
    assert_eq!(
        String::from_utf8_lossy(&said.stdout)
            .lines()
            .collect::<Vec<_>>(),
        printed,
        "it prints what it wrote"
    );
    let mut expected: Vec<String> = artefacts
        .iter()
        .flat_map(|a| [a.clone(), format!("{a}.sha256")])
        .chain(["SHA256SUMS".to_owned()])
        .collect();
    expected.sort();
    assert_eq!(common::entries(&first), expected, "the files of --out");

    sums_verify(&first, &artefacts);
    let unpacked = dir.path().join("unpacked");
    let binary = tarball_is_the_checkouts(&first.join(format!("{name}.tar.gz")), &name, &unpacked);
    binary_is_the_image_build_and_names_the_version(&binary, &name);
    // The binary users download passes every golden case (no `KINJECT_BLESS` here: a bless
    // writes what the test build prints).
    if std::env::var_os("KINJECT_BLESS").is_none() {
        crate::golden::every_case_passes_with(&binary);
    }
    binstall_finds_it(TARGET, &name, &unpacked);
    let crates =
        sbom_lists_the_crates_of_the_binary(TARGET, &first.join(format!("{name}.cdx.json")));
    notices_name_every_crate_and_c_library(TARGET, &unpacked.join(&name), &crates);
    if image {
        image_archive_names_the_release_reference(
            &first.join(format!("kinject-{VERSION}-image-amd64.oci.tar")),
        );
    }

    // The same commit gives the same bytes, whatever the time and the order of the run.
    release(&second, flags);
    for file in &expected {
        let (a, b) = (read(&first.join(file)), read(&second.join(file)));
        assert!(a == b, "{file} differs between two runs");
    }
    common::loud(&format!(
        "tests/release.rs: all checks in {:.0?}",
        started.elapsed()
    ));
}

/// The x86_64 musl release, as the hosted CI makes it (.github/workflows/release.yml): built
/// with musl-tools' C compiler for ring, linked with the musl and libunwind of Rust's toolchain,
/// and named with them in the notices and the SBOM. It is a second fat-LTO build of its own, so
/// CI does not run it: `cargo test --test it release:: -- --ignored` does, where
/// `rustup target add x86_64-unknown-linux-musl` and `apt-get install musl-tools` were run.
#[test]
#[ignore = "a second fat-LTO build (x86_64 musl): run with --ignored where musl-tools is installed"]
fn the_musl_release_names_the_c_libraries_linked_in() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (first, second) = (dir.path().join("first"), dir.path().join("second"));
    let flags = ["--target", MUSL, "--no-image"];
    release(&first, &flags);
    let name = format!("kinject-{VERSION}-{MUSL}");
    let artefacts = vec![format!("{name}.tar.gz"), format!("{name}.cdx.json")];
    sums_verify(&first, &artefacts);
    let unpacked = dir.path().join("unpacked");
    let binary = tarball_is_the_checkouts(&first.join(format!("{name}.tar.gz")), &name, &unpacked);
    let ldd = Command::new("ldd").arg(&binary).output().expect("ldd");
    let said = String::from_utf8_lossy(&ldd.stdout) + String::from_utf8_lossy(&ldd.stderr);
    assert!(
        said.contains("statically linked") || said.contains("not a dynamic executable"),
        "{said}"
    );
    let version = command_output(&binary.display().to_string(), &["--version"]);
    assert!(
        version.starts_with(&format!("kinject {VERSION} (")),
        "{version}"
    );
    crate::golden::every_case_passes_with(&binary);
    binstall_finds_it(MUSL, &name, &unpacked);
    let crates = sbom_lists_the_crates_of_the_binary(MUSL, &first.join(format!("{name}.cdx.json")));
    notices_name_every_crate_and_c_library(MUSL, &unpacked.join(&name), &crates);
    release(&second, &flags);
    for file in artefacts.iter().chain(&["SHA256SUMS".to_owned()]) {
        let (a, b) = (read(&first.join(file)), read(&second.join(file)));
        assert!(a == b, "{file} differs between two runs");
    }
}

/// musl's COPYRIGHT, which the musl releases ship, is upstream's file of that release byte for
/// byte: the git blob of COPYRIGHT at tag v1.2.5 of git.musl-libc.org/musl is c1628e9….
/// And the musl the installed toolchain links (where its musl target is installed) has its
/// COPYRIGHT here, so a toolchain that moves to another musl fails here before a release does.
#[test]
fn the_musl_notice_is_upstreams_and_the_toolchains() {
    let blobs = [("1.2.5", "c1628e9ac84f927fe791124ec172fb61c760bb9b")];
    let notices = root().join("scripts/notices");
    let mut kept: Vec<String> = common::entries(&notices);
    kept.sort();
    let wanted: Vec<String> = blobs
        .iter()
        .map(|(v, _)| format!("musl-{v}-COPYRIGHT"))
        .collect();
    assert_eq!(kept, wanted, "scripts/notices holds these only");
    for (version, blob) in blobs {
        let file = notices.join(format!("musl-{version}-COPYRIGHT"));
        let file = file.display().to_string();
        let hashed = command_output("git", &["hash-object", "--no-filters", &file]);
        assert_eq!(hashed.trim(), blob, "{file}");
    }
    match musl_version(MUSL) {
        Some(version) => assert!(
            notices.join(format!("musl-{version}-COPYRIGHT")).is_file(),
            "the toolchain links musl {version}: add its COPYRIGHT to scripts/notices"
        ),
        None => common::skipped("the x86_64 musl target is not installed (rustup target add)"),
    }
}

/// Each artefact's `.sha256` is `sha256sum`'s line for it, and `sha256sum -c` agrees with it
/// and with SHA256SUMS, which lists every other file of the directory.
fn sums_verify(out: &Path, artefacts: &[String]) {
    let line = |file: &str| format!("{}  {file}\n", hex(&Sha256::digest(read(&out.join(file)))));
    for artefact in artefacts {
        let sha = format!("{artefact}.sha256");
        assert_eq!(
            String::from_utf8(read(&out.join(&sha))).expect("utf-8"),
            line(artefact),
            "{sha}"
        );
    }
    let listed: String = common::entries(out)
        .iter()
        .filter(|f| *f != "SHA256SUMS")
        .map(|f| line(f))
        .collect();
    assert_eq!(
        String::from_utf8(read(&out.join("SHA256SUMS"))).expect("utf-8"),
        listed,
        "SHA256SUMS"
    );
    let mut checked = artefacts
        .iter()
        .map(|a| format!("{a}.sha256"))
        .collect::<Vec<_>>();
    checked.push("SHA256SUMS".to_owned());
    for sums in checked {
        let out = Command::new("sha256sum")
            .args(["--check", "--strict", &sums])
            .current_dir(out)
            .output()
            .expect("sha256sum");
        assert!(
            out.status.success(),
            "sha256sum -c {sums}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// The tarball holds one folder, named as the tarball, with the binary and the checkout's
/// LICENSE, README.md, CHANGELOG.md, man pages and completions; its entries sorted, owned by
/// root, dated at the commit. Returns the unpacked binary.
fn tarball_is_the_checkouts(tarball: &Path, name: &str, into: &Path) -> PathBuf {
    let tar = gunzip(tarball);
    let epoch: u64 = git(&["log", "-1", "--format=%ct"]).parse().expect("epoch");
    let mut paths = Vec::new();
    for entry in tar::Archive::new(tar.as_slice())
        .entries()
        .expect("tar entries")
    {
        let entry = entry.expect("tar entry");
        let header = entry.header();
        let path = entry.path().expect("path").to_string_lossy().into_owned();
        assert_eq!(
            (header.uid().expect("uid"), header.gid().expect("gid")),
            (0, 0),
            "{path}"
        );
        assert_eq!(
            header.mtime().expect("mtime"),
            epoch,
            "{path}: the commit's time"
        );
        let mode = header.mode().expect("mode") & 0o7777;
        let wanted = if path.ends_with('/') || path == format!("{name}/kinject") {
            0o755
        } else {
            0o644
        };
        assert_eq!(mode, wanted, "{path}: mode {mode:o}");
        paths.push(path.trim_end_matches('/').to_owned());
    }
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted, "entries in name order");

    let listing = |dir: &str| -> Vec<String> {
        common::entries(&root().join(dir))
            .into_iter()
            .map(|f| format!("{name}/{dir}/{f}"))
            .collect()
    };
    let mut expected: Vec<String> = [
        name.to_owned(),
        format!("{name}/CHANGELOG.md"),
        format!("{name}/LICENSE"),
        format!("{name}/README.md"),
        format!("{name}/THIRD-PARTY-LICENSES"),
        format!("{name}/completions"),
        format!("{name}/kinject"),
        format!("{name}/man"),
    ]
    .into_iter()
    .chain(listing("completions"))
    .chain(listing("man").into_iter().filter(|f| f.ends_with(".1")))
    .collect();
    expected.sort();
    assert_eq!(paths, expected, "the tarball's entries");

    std::fs::create_dir_all(into).expect("mkdir");
    let out = Command::new("tar")
        .arg("-xzf")
        .arg(tarball)
        .arg("-C")
        .arg(into)
        .output()
        .expect("tar");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let folder = into.join(name);
    for file in paths
        .iter()
        .filter_map(|p| p.strip_prefix(&format!("{name}/")))
    {
        let ours = root().join(file);
        if ours.is_file() {
            assert!(
                read(&folder.join(file)) == read(&ours),
                "{file}: the checkout's"
            );
        }
    }
    folder.join("kinject")
}

/// The unpacked binary is the static one scripts/image builds (not a second build), and says
/// the version the tarball is named by, and this checkout's commit.
fn binary_is_the_image_build_and_names_the_version(binary: &Path, name: &str) {
    let built = target_dir()
        .join("image")
        .join(TARGET)
        .join("release/kinject");
    assert!(
        read(binary) == read(&built),
        "the binary is {}",
        built.display()
    );
    let out = Command::new(binary)
        .arg("--version")
        .output()
        .expect("--version");
    assert!(out.status.success());
    let said = String::from_utf8(out.stdout).expect("utf-8");
    let commit = git(&["log", "-1", "--format=%H %cs"]);
    let (hash, date) = commit.split_once(' ').expect("hash and date");
    assert_eq!(
        said,
        format!("kinject {VERSION} ({} {date})\n", &hash[..12])
    );
    let version = said.split(' ').nth(1).expect("a version");
    assert!(
        name.starts_with(&format!("kinject-{version}-")),
        "{name} names {version}"
    );
}

/// `[package.metadata.binstall]`: its templates, filled as cargo-binstall fills them for this
/// target, name the tarball and the binary inside it.
fn binstall_finds_it(target: &str, name: &str, unpacked: &Path) {
    let (url, bin_dir) = binstall_templates(target);
    let file = url.rsplit('/').next().expect("a file name");
    assert_eq!(file, format!("{name}.tar.gz"));
    assert_eq!(
        url,
        format!(
            "{}/releases/download/v{VERSION}/{file}",
            env!("CARGO_PKG_REPOSITORY")
        )
    );
    assert!(
        unpacked.join(&bin_dir).is_file(),
        "{bin_dir} in the tarball"
    );
}

/// cargo-binstall's `pkg-url` and `bin-dir` for `target`, filled (its `{ name }`-style
/// variables: SUPPORT.md of cargo-bins/cargo-binstall), the target's override applied.
fn binstall_templates(target: &str) -> (String, String) {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    let section = |header: &str| -> Vec<(String, String)> {
        let start = manifest
            .find(&format!("\n{header}\n"))
            .map(|at| at + header.len() + 2);
        let Some(start) = start else {
            return Vec::new();
        };
        manifest[start..]
            .lines()
            .take_while(|l| !l.starts_with('['))
            .filter_map(|l| {
                let (key, value) = l.split_once(" = ")?;
                Some((key.to_owned(), value.trim_matches('"').to_owned()))
            })
            .collect()
    };
    let mut keys = section("[package.metadata.binstall]");
    keys.extend(section(&format!(
        "[package.metadata.binstall.overrides.{target}]"
    )));
    let get = |key: &str| {
        keys.iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("binstall's {key}"))
    };
    let exe = if target.contains("-windows-") {
        ".exe"
    } else {
        ""
    };
    let fill = |template: String| {
        template
            .replace("{ repo }", env!("CARGO_PKG_REPOSITORY"))
            .replace("{ name }", env!("CARGO_PKG_NAME"))
            .replace("{ version }", VERSION)
            .replace("{ target }", target)
            .replace("{ bin }", "kinject")
            .replace("{ binary-ext }", exe)
    };
    let format = get("pkg-fmt");
    let (url, bin_dir) = (fill(get("pkg-url")), fill(get("bin-dir")));
    let suffix = match format.as_str() {
        "tgz" => ".tar.gz",
        "zip" => ".zip",
        other => panic!("pkg-fmt {other}"),
    };
    assert!(url.ends_with(suffix), "{url} is a {format}");
    assert!(
        !url.contains('{') && !bin_dir.contains('{'),
        "{url} {bin_dir}"
    );
    (url, bin_dir)
}

/// The SBOM describes kinject at this version and target, at the commit's time, and lists the
/// crates the binary is built from: cargo's resolution of the `kinject` binary's normal
/// dependency graph for this target with default features (`cargo tree -e normal`), the crates
/// compiled into it and the procedural macros that write part of its code. Not build
/// dependencies (they only run build scripts), not dev-dependencies, and not what
/// `cargo metadata`'s resolve adds by unifying features that dev-dependencies ask for (hyper's
/// client: `want`, `try-lock`), which the binary does not hold: that resolve is the SBOM tool's
/// source, and the script drops what it adds. Each crate listed is a package of Cargo.lock.
/// The C libraries linked in statically beside the crates, as the machine's toolchain says:
/// name, version, and what their licence expression holds. glibc on `*-linux-gnu` (the version
/// `getconf GNU_LIBC_VERSION` gives); on `*-linux-musl` the musl and LLVM libunwind Rust's
/// toolchain ships for the target (musl's version in its libc.a, LLVM's in `rustc -vV`).
fn c_libraries(target: &str) -> Vec<(String, String, &'static str)> {
    if target.ends_with("-linux-gnu") {
        let said = command_output("getconf", &["GNU_LIBC_VERSION"]);
        let glibc = said.split_whitespace().nth(1).expect("glibc X.Y");
        vec![("glibc".into(), glibc.into(), "LGPL-2.1-or-later")]
    } else if target.ends_with("-linux-musl") {
        let llvm = command_output("rustc", &["-vV"])
            .lines()
            .find_map(|l| l.strip_prefix("LLVM version: "))
            .expect("LLVM version")
            .to_owned();
        vec![
            (
                "musl".into(),
                musl_version(target).expect("musl target"),
                "MIT",
            ),
            ("libunwind".into(), llvm, "Apache-2.0 WITH LLVM-exception"),
        ]
    } else {
        Vec::new()
    }
}

/// The version of the musl Rust's toolchain links into `target`'s binaries: the string of
/// version.lo in its self-contained libc.a; None where that target is not installed.
fn musl_version(target: &str) -> Option<String> {
    let libdir = command_output("rustc", &["--print", "target-libdir", "--target", target]);
    let libc = Path::new(libdir.trim()).join("self-contained/libc.a");
    if !libc.is_file() {
        return None;
    }
    let object = Command::new("ar")
        .arg("p")
        .arg(&libc)
        .arg("version.lo")
        .output()
        .expect("ar");
    assert!(
        object.status.success(),
        "ar p {} version.lo",
        libc.display()
    );
    let version = object
        .stdout
        .split(|&b| b == 0)
        .filter_map(|s| std::str::from_utf8(s).ok())
        .find(|s| s.split('.').count() == 3 && s.split('.').all(|n| n.parse::<u32>().is_ok()))
        .unwrap_or_else(|| panic!("no version in {}'s version.lo", libc.display()));
    Some(version.to_owned())
}

fn command_output(program: &str, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().expect(program);
    assert!(out.status.success(), "{program} {args:?}");
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The SBOM names the crates `cargo tree` builds the binary from, each in Cargo.lock, and the
/// C libraries linked in with their licences; returns the crates.
fn sbom_lists_the_crates_of_the_binary(target: &str, sbom: &Path) -> BTreeSet<(String, String)> {
    let bom: Value = serde_json::from_slice(&read(sbom)).expect("the SBOM is JSON");
    assert_eq!(bom["bomFormat"], "CycloneDX");
    let component = &bom["metadata"]["component"];
    assert_eq!(
        (&component["name"], &component["version"]),
        (&Value::from("kinject"), &Value::from(VERSION))
    );
    assert_eq!(
        bom["metadata"]["properties"][0]["value"], target,
        "{}",
        bom["metadata"]["properties"]
    );
    let epoch: i64 = git(&["log", "-1", "--format=%ct"]).parse().expect("epoch");
    let stamp = bom["metadata"]["timestamp"].as_str().expect("timestamp");
    assert!(
        stamp.starts_with(&utc_date(epoch)),
        "{stamp}: the commit's time"
    );

    let mut listed: BTreeSet<(String, String)> = bom["components"]
        .as_array()
        .expect("components")
        .iter()
        .map(|c| {
            let field = |f: &str| c[f].as_str().expect("name and version").to_owned();
            (field("name"), field("version"))
        })
        .collect();
    let tree = Command::new("cargo")
        .args([
            "tree", "--locked", "--quiet", "-e", "normal", "--target", target,
        ])
        .args(["-p", "kinject", "--prefix", "none", "-f", "{p}"])
        .current_dir(root())
        .output()
        .expect("cargo tree");
    assert!(
        tree.status.success(),
        "{}",
        String::from_utf8_lossy(&tree.stderr)
    );
    let built: BTreeSet<(String, String)> = String::from_utf8(tree.stdout)
        .expect("utf-8")
        .lines()
        .filter_map(|l| {
            let mut words = l.split(' ');
            let (name, version) = (words.next()?, words.next()?.strip_prefix('v')?);
            Some((name.to_owned(), version.to_owned()))
        })
        .filter(|(name, _)| name != "kinject")
        .collect();
    assert!(built.len() > 100, "{built:?}");
    let libraries = c_libraries(target);
    assert!(!libraries.is_empty(), "{target} links a C library in");
    for (name, version, licence) in libraries {
        assert!(
            listed.remove(&(name.clone(), version.clone())),
            "{name} {version} not in the SBOM"
        );
        let component = bom["components"]
            .as_array()
            .expect("components")
            .iter()
            .find(|c| c["name"] == name.as_str())
            .expect("listed");
        let expression = component["licenses"][0]["expression"].as_str();
        assert!(
            expression.is_some_and(|e| e.contains(licence)),
            "{component}"
        );
        assert_eq!(
            component["purl"],
            format!("pkg:generic/{name}@{version}"),
            "{component}"
        );
    }
    assert_eq!(listed, built, "the SBOM's crates are the binary's");

    let lock = std::fs::read_to_string(root().join("Cargo.lock")).expect("Cargo.lock");
    for (name, version) in &listed {
        let entry = format!("[[package]]\nname = \"{name}\"\nversion = \"{version}\"\n");
        assert!(
            lock.contains(&entry),
            "{name} {version} is not in Cargo.lock"
        );
    }
    // Every `dependsOn` names a component listed (or kinject itself).
    let refs: BTreeSet<&str> = bom["components"]
        .as_array()
        .expect("components")
        .iter()
        .chain([&bom["metadata"]["component"]])
        .filter_map(|c| c["bom-ref"].as_str())
        .collect();
    for dependency in bom["dependencies"].as_array().expect("dependencies") {
        for on in dependency["dependsOn"].as_array().into_iter().flatten() {
            let on = on.as_str().expect("a ref");
            assert!(refs.contains(on), "{on}: not a component");
        }
    }
    listed
}

/// THIRD-PARTY-LICENSES names every crate the binary holds, with its licence and the licence
/// files its package holds, and each C library linked in with its licence's texts.
fn notices_name_every_crate_and_c_library(
    target: &str,
    folder: &Path,
    crates: &BTreeSet<(String, String)>,
) {
    let text = String::from_utf8(read(&folder.join("THIRD-PARTY-LICENSES"))).expect("utf-8");
    let headings: BTreeSet<(String, String)> = text
        .split(&format!("{}\n", "=".repeat(78)))
        .skip(1)
        .filter_map(|section| {
            let mut words = section.lines().next()?.split(' ');
            Some((words.next()?.to_owned(), words.next()?.to_owned()))
        })
        .collect();
    let mut wanted = crates.clone();
    let section = |name: &str| {
        text.split(&format!("{}\n", "=".repeat(78)))
            .find(|s| s.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no section for {name}"))
    };
    for (name, version, licence) in c_libraries(target) {
        let section = section(&name);
        assert!(
            section.starts_with(&format!("{name} {version} (")),
            "{section}"
        );
        assert!(
            section.contains(&format!("Licence: {licence}")),
            "{section}"
        );
        // Its licence's text: from the machine (the LGPL from /usr/share/common-licenses,
        // where it is), kept in scripts/notices (musl's COPYRIGHT), or the toolchain's
        // (LLVM's Apache-2.0 with its exception).
        let texts: &[&str] = match name.as_str() {
            "glibc" if Path::new("/usr/share/common-licenses/LGPL-2.1").is_file() => {
                &["GNU LESSER GENERAL PUBLIC LICENSE"]
            }
            "musl" => &["musl as a whole is licensed under the following standard MIT license"],
            "libunwind" => &["--- Apache-2.0.txt", "--- LLVM-exception.txt"],
            _ => &[],
        };
        for wanted in texts {
            assert!(section.contains(wanted), "{name}: no {wanted:?}");
        }
        wanted.insert((name, version));
    }
    assert_eq!(headings, wanted, "a section per crate, and per C library");
    // serde's package holds both texts of its `MIT OR Apache-2.0`.
    let serde = section("serde");
    assert!(
        serde.contains("--- LICENSE-MIT") && serde.contains("--- LICENSE-APACHE"),
        "{serde}"
    );
}

/// `YYYY-MM-DDTHH:MM:SS` of a Unix time, in UTC (the civil-from-days algorithm).
fn utc_date(epoch: i64) -> String {
    let (days, secs) = (epoch.div_euclid(86_400), epoch.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        secs / 3_600,
        secs % 3_600 / 60,
        secs % 60
    )
}

/// The image archive is an OCI archive whose one image is named by the version.
fn image_archive_names_the_release_reference(oci: &Path) {
    let file = std::fs::File::open(oci).expect("oci archive");
    let mut archive = tar::Archive::new(file);
    let mut index = None;
    for entry in archive.entries().expect("entries") {
        let mut entry = entry.expect("entry");
        if entry.path().expect("path").to_string_lossy() == "index.json" {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut entry, &mut text).expect("index.json");
            index = Some(serde_json::from_str::<Value>(&text).expect("JSON"));
        }
    }
    let index = index.expect("index.json in the archive");
    let manifests = index["manifests"].as_array().expect("manifests");
    assert_eq!(manifests.len(), 1, "{index}");
    let reference = &manifests[0]["annotations"]["org.opencontainers.image.ref.name"];
    assert!(
        reference.as_str().is_some_and(|r| r.ends_with(VERSION)),
        "{reference}"
    );
}

/// A checkout of its own for the refusals: `Cargo.toml` at version 9.9.9, committed, beside
/// the real `scripts/release` and a stub `scripts/static-binary` that leaves a mark when called
/// and prints the path of a stub `kinject` saying `said` (`{commit}` and `{date}`: HEAD's).
/// What the real script would go on to build, install or write is never reached.
struct Checkout {
    dir: tempfile::TempDir,
}

impl Checkout {
    fn new(said: &str) -> Checkout {
        let dir = tempfile::tempdir().expect("tempdir");
        let at = dir.path();
        std::fs::create_dir_all(at.join("scripts")).expect("mkdir");
        std::fs::write(
            at.join("Cargo.toml"),
            "[package]\nname = \"kinject\"\nversion = \"9.9.9\"\n",
        )
        .expect("Cargo.toml");
        common::copy_executable(&root().join("scripts/release"), &at.join("scripts/release"));
        let checkout = Checkout { dir };
        checkout.git(&["init", "-q"]);
        checkout.git(&["add", "Cargo.toml", "scripts/release"]);
        checkout.git(&["commit", "-q", "-m", "a checkout"]);
        let kinject = format!(
            "#!/bin/sh\ncd \"$(dirname \"$0\")\"\necho \"kinject {}\"\n",
            said.replace("{commit}", "$(git rev-parse HEAD | cut -c1-12)")
                .replace("{date}", "$(git log -1 --format=%cs)")
        );
        checkout.stub("kinject", &kinject);
        checkout.stub(
            "scripts/static-binary",
            "#!/bin/sh\ncd \"$(dirname \"$0\")/..\"\ntouch built\necho \"$PWD/kinject\"\n",
        );
        checkout
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// An executable, untracked (scripts/release asks only about changes to tracked files);
    /// written by `cp` from a file this process wrote (ETXTBSY: `common::copy_executable`).
    fn stub(&self, name: &str, text: &str) {
        let written = self.path().join("stub.tmp");
        std::fs::write(&written, text).expect("write stub");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&written, std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
        }
        common::copy_executable(&written, &self.path().join(name));
        std::fs::remove_file(written).expect("rm");
    }

    fn git(&self, args: &[&str]) {
        let out = Command::new("git")
            .args([
                "-c",
                "user.name=kinject",
                "-c",
                "user.email=kinject@example.invalid",
            ])
            .args(args)
            .current_dir(self.path())
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// scripts/release run with `args`; it must refuse (exit 2) before building anything,
    /// saying `why` on stderr and nothing on stdout.
    fn refuses(&self, args: &[&str], why: &str) {
        let out = Command::new(self.path().join("scripts/release"))
            .args(args)
            .env("CARGO_TARGET_DIR", self.path().join("target"))
            .current_dir(self.path())
            .output()
            .expect("run scripts/release");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(why), "{args:?}: `{why}` not in:\n{stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
        self.nothing_built(args);
    }

    fn nothing_built(&self, args: &[&str]) {
        assert!(
            !self.path().join("built").exists(),
            "{args:?}: a build was started"
        );
    }
}

/// A binary whose `--version` is not Cargo.toml's version and HEAD's commit is not shipped:
/// an older version, the right version of another commit, a date off. Nothing is written.
#[test]
fn a_stale_binary_is_not_shipped() {
    for said in [
        "9.9.8 ({commit} {date})",
        "9.9.9 (0123456789ab {date})",
        "9.9.9 ({commit} 1999-01-01)",
        "9.9.9",
    ] {
        let checkout = Checkout::new(said);
        let out = Command::new(checkout.path().join("scripts/release"))
            .args(["--out", "out", "--no-image"])
            .env("CARGO_TARGET_DIR", checkout.path().join("target"))
            .current_dir(checkout.path())
            .output()
            .expect("run scripts/release");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{said}: {stderr}");
        assert!(stderr.contains("a stale binary"), "{said}: {stderr}");
        assert!(checkout.path().join("built").exists(), "the stub was built");
        assert!(
            !checkout.path().join("out").exists(),
            "{said}: --out was written"
        );
        assert!(
            !checkout.path().join("target/tools").exists(),
            "{said}: the SBOM tool was installed before the binary was checked"
        );
    }
}

/// Uncommitted changes to tracked files would ship under a commit that does not hold them.
#[test]
fn a_dirty_tree_is_refused_before_anything_is_built() {
    let checkout = Checkout::new("9.9.9 ({commit} {date})");
    let manifest = checkout.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).expect("Cargo.toml");
    std::fs::write(&manifest, text + "# changed\n").expect("write");
    checkout.refuses(&["--no-image"], "the tree has uncommitted changes");
    checkout.refuses(&["--no-image", "--out", "out"], "Cargo.toml");
    assert!(!checkout.path().join("out").exists());
    // Untracked files where the release reads: shipped (man/, completions/) or building the
    // binary (.cargo/config.toml), so as dirty as a changed tracked file.
    checkout.git(&["checkout", "-q", "--", "Cargo.toml"]);
    for untracked in [
        "man/kinject-gone.1",
        "completions/old-kinject.zsh",
        ".cargo/config.toml",
    ] {
        let path = checkout.path().join(untracked);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, "not committed").expect("write");
        checkout.refuses(&["--no-image"], "untracked files where the release reads");
        std::fs::remove_file(&path).expect("rm");
    }
}

/// `--out` holds the release's own files only: anything else in it, a link in it, or a link
/// as it, is refused before anything is built, and left as it was.
#[test]
fn an_output_directory_holding_other_files_is_refused() {
    let checkout = Checkout::new("9.9.9 ({commit} {date})");
    let at = checkout.path();
    let out = at.join("out");
    std::fs::create_dir_all(&out).expect("mkdir");
    std::fs::write(out.join("notes.txt"), "mine").expect("write");
    checkout.refuses(&["--no-image", "--out", "out"], "notes.txt");
    assert_eq!(read(&out.join("notes.txt")), b"mine");

    let elsewhere = at.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    std::fs::write(elsewhere.join("precious"), "keep").expect("write");
    #[cfg(unix)]
    {
        let linked = at.join("linked");
        std::fs::create_dir_all(&linked).expect("mkdir");
        std::os::unix::fs::symlink(
            elsewhere.join("precious"),
            linked.join("kinject-9.9.9-x86_64-unknown-linux-gnu.tar.gz"),
        )
        .expect("symlink");
        checkout.refuses(
            &["--no-image", "--out", "linked"],
            "kinject-9.9.9-x86_64-unknown-linux-gnu.tar.gz",
        );
        std::os::unix::fs::symlink(&elsewhere, at.join("link")).expect("symlink");
        checkout.refuses(&["--no-image", "--out", "link"], "is a symbolic link");
        checkout.refuses(&["--no-image", "--out", "link/"], "is a symbolic link");
        checkout.refuses(&["--no-image", "--out", "link//"], "is a symbolic link");
        assert_eq!(read(&elsewhere.join("precious")), b"keep");
    }
    // Named like the release's files, but not one of them.
    let named = at.join("named");
    std::fs::create_dir_all(&named).expect("mkdir");
    std::fs::write(named.join("kinject-9.9.9-anything.txt"), "").expect("write");
    checkout.refuses(
        &["--no-image", "--out", "named"],
        "kinject-9.9.9-anything.txt",
    );
    let dotted = at.join("dotted");
    std::fs::create_dir_all(dotted.join(".git")).expect("mkdir");
    checkout.refuses(&["--no-image", "--out", "dotted"], ".git");
    // An earlier run's files of the same version are the release's own: not refused.
    let earlier = at.join("earlier");
    std::fs::create_dir_all(&earlier).expect("mkdir");
    std::fs::write(
        earlier.join("kinject-9.9.9-aarch64-apple-darwin.tar.gz"),
        "",
    )
    .expect("write");
    std::fs::write(earlier.join("SHA256SUMS"), "").expect("write");
    let out = Command::new(at.join("scripts/release"))
        .args(["--dry-run", "--no-image", "--out", "earlier"])
        .current_dir(at)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    checkout.nothing_built(&["--dry-run"]);
}

/// A target it cannot build here is refused, saying why; a target that is not a triple cannot
/// name files. `--host` only plans (`--dry-run`).
#[test]
fn a_target_it_cannot_build_here_is_refused() {
    let checkout = Checkout::new("9.9.9 ({commit} {date})");
    let host = host();
    for (target, why) in [
        ("aarch64-apple-darwin", "it needs a macOS host"),
        (
            "x86_64-pc-windows-msvc",
            "only the host's own target is built here",
        ),
        ("../../etc", "is not a target triple"),
        ("x86_64-unknown-linux-gnu/..", "is not a target triple"),
    ] {
        checkout.refuses(&["--no-image", "--target", target], why);
    }
    if host != "aarch64-unknown-linux-gnu" {
        checkout.refuses(
            &["--no-image", "--target", "aarch64-unknown-linux-musl"],
            "it needs a Linux aarch64 host",
        );
    }
    checkout.refuses(
        &[
            "--target",
            "aarch64-unknown-linux-musl",
            "--dry-run",
            "--host",
            "aarch64-unknown-linux-gnu",
        ],
        "pass --no-image",
    );
    checkout.refuses(
        &["--host", "aarch64-apple-darwin"],
        "--host goes with --dry-run only",
    );
    checkout.refuses(&["--out"], "--out needs a directory");
    checkout.refuses(&["--frobnicate"], "unknown argument");
}

/// The hosted CI's release workflow: every target of its matrix is one scripts/release accepts
/// on that runner (`--dry-run --host`), the files it uploads are the ones the script writes,
/// binstall's templates name each target's archive, and the publish job pushes the image file
/// the script writes. The workflow itself runs only on GitHub (its header says so).
#[test]
fn the_workflow_builds_what_the_script_accepts() {
    let text =
        std::fs::read_to_string(root().join(".github/workflows/release.yml")).expect("release.yml");
    let workflow = common::objects_of_documents(&text).remove(0);
    let build = &workflow["jobs"]["build"];
    let steps = build["steps"].as_array().expect("steps");
    let run = steps
        .iter()
        .filter_map(|s| s["run"].as_str())
        .find(|r| r.starts_with("scripts/release"))
        .expect("a step running scripts/release");
    assert_eq!(
        run,
        "scripts/release --target ${{ matrix.target }} ${{ matrix.flags }} --out dist"
    );
    let upload = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/upload-artifact@"))
        })
        .expect("an upload step");
    assert_eq!(upload["with"]["path"], "dist/kinject-*");
    for step in steps.iter().chain(
        workflow["jobs"]["publish"]["steps"]
            .as_array()
            .expect("steps"),
    ) {
        if let Some(uses) = step["uses"].as_str() {
            let pin = uses.split_once('@').map(|(_, pin)| pin).unwrap_or_default();
            assert!(
                pin.len() == 40 && pin.bytes().all(|b| b.is_ascii_hexdigit()),
                "{uses}: pinned by commit"
            );
        }
    }

    // The runners' own triples (GitHub's hosted runner images).
    let runner_host = |runner: &str| match runner {
        "ubuntu-24.04" => "x86_64-unknown-linux-gnu",
        "ubuntu-24.04-arm" => "aarch64-unknown-linux-gnu",
        "macos-15" => "aarch64-apple-darwin",
        "windows-2025" => "x86_64-pc-windows-msvc",
        other => panic!("runner {other}: which triple is it?"),
    };
    let matrix = build["strategy"]["matrix"]["include"]
        .as_array()
        .expect("matrix");
    let mut targets = BTreeSet::new();
    let mut uploaded = BTreeSet::new();
    for entry in matrix {
        let target = entry["target"].as_str().expect("target");
        let flags = entry["flags"].as_str().expect("flags");
        let host = runner_host(entry["runner"].as_str().expect("runner"));
        let out = Command::new(root().join("scripts/release"))
            .args([
                "--dry-run",
                "--host",
                host,
                "--target",
                target,
                "--out",
                "dist",
            ])
            .args(flags.split_whitespace())
            .output()
            .expect("run scripts/release");
        assert!(
            out.status.success(),
            "{target} on {host}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dist = root().join("dist");
        let files: Vec<String> = String::from_utf8(out.stdout)
            .expect("utf-8")
            .lines()
            .map(|l| {
                Path::new(l)
                    .strip_prefix(&dist)
                    .expect("in dist")
                    .display()
                    .to_string()
            })
            .collect();
        assert_eq!(files.last().map(String::as_str), Some("SHA256SUMS"));
        let (url, bin_dir) = binstall_templates(target);
        let archive = url.rsplit('/').next().expect("file");
        assert!(
            files.iter().any(|f| f == archive),
            "{target}: binstall's {archive} in {files:?}"
        );
        let exe = if target.contains("-windows-") {
            "kinject.exe"
        } else {
            "kinject"
        };
        assert_eq!(bin_dir, format!("kinject-{VERSION}-{target}/{exe}"));
        for file in &files[..files.len() - 1] {
            assert!(
                file.starts_with("kinject-"),
                "{file}: the upload's pattern dist/kinject-*"
            );
            assert!(
                uploaded.insert(file.clone()),
                "{file} uploaded by two targets"
            );
        }
        targets.insert(target.to_owned());
    }
    assert_eq!(
        targets.into_iter().collect::<Vec<_>>(),
        [
            "aarch64-apple-darwin",
            "aarch64-unknown-linux-musl",
            "x86_64-apple-darwin",
            "x86_64-pc-windows-msvc",
            "x86_64-unknown-linux-musl",
        ],
        "the issue's targets"
    );
    let publish = serde_json::to_string(&workflow["jobs"]["publish"]).expect("JSON");
    let image = format!("kinject-{VERSION}-image-amd64.oci.tar");
    assert!(uploaded.contains(&image), "{image} is built");
    assert!(
        publish.contains("dist/kinject-$version-image-amd64.oci.tar"),
        "the publish job pushes {image}"
    );
}

fn host() -> String {
    command_output("rustc", &["-vV"])
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("host")
        .to_owned()
}

fn gunzip(file: &Path) -> Vec<u8> {
    let out = Command::new("gzip")
        .arg("-dc")
        .arg(file)
        .output()
        .expect("gzip");
    assert!(out.status.success(), "gzip -dc {}", file.display());
    out.stdout
}

fn git(args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(root())
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_owned()
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
