//! The krew plugin manifest and the Homebrew formula that `scripts/packaging.py` makes from a
//! release's `.sha256` files: golden files for the fixture release in
//! `testdata/packaging/release/` (every target scripts/release names), krew's manifest rules
//! and Homebrew's `desc` rules re-implemented from their sources (cited at each), and the
//! inputs the generator refuses.
//!
//! Regenerate the golden files with `KINJECT_BLESS=1 cargo test --test it packaging::`, then
//! read the diff. Neither krew nor brew runs here (neither is installed, and both would
//! download the archives of a release that does not exist yet): the rules they apply are
//! checked instead.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::common;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

fn fixture() -> PathBuf {
    root().join("testdata/packaging/release")
}

/// `scripts/packaging.py KIND --version VERSION --dir DIR`.
fn generate(kind: &str, version: &str, dir: &Path) -> Output {
    Command::new("python3")
        .arg(root().join("scripts/packaging.py"))
        .args([kind, "--version", version, "--dir"])
        .arg(dir)
        .output()
        .expect("run python3")
}

/// Compares `actual` with the golden file `name` under testdata/packaging/ (writes it with
/// KINJECT_BLESS).
fn golden(name: &str, actual: &str) {
    let path = root().join("testdata/packaging").join(name);
    if std::env::var_os("KINJECT_BLESS").is_some() {
        std::fs::write(&path, actual).expect("write golden");
        return;
    }
    let expected = std::fs::read_to_string(&path).expect("read golden");
    assert!(
        expected == actual,
        "{} differs (KINJECT_BLESS=1 to rewrite it, then read the diff):\n{}",
        path.display(),
        similar::TextDiff::from_lines(&expected, actual)
            .unified_diff()
            .header("expected", "actual")
    );
}

/// The archives of the fixture release: (file name, sha256), from its `.sha256` files.
fn fixture_archives() -> Vec<(String, String)> {
    common::entries(&fixture())
        .into_iter()
        .filter(|n| n.ends_with(".tar.gz.sha256") || n.ends_with(".zip.sha256"))
        .map(|n| {
            let text = std::fs::read_to_string(fixture().join(&n)).expect("read");
            let (hex, file) = text.trim_end().split_once("  ").expect("sha256sum format");
            (file.to_owned(), hex.to_owned())
        })
        .collect()
}

fn text<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// Whether `s` is what k8s.io/apimachinery's `version.ParseSemantic` accepts after krew's
/// `semver.Parse` required the leading `v` (krew internal/installation/semver/version.go):
/// three dot-separated numbers without leading zeros, then an optional `-pre` and `+build` of
/// dot-separated `[0-9A-Za-z-]+` parts.
fn krew_semver(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('v') else {
        return false;
    };
    let end = rest.find(['-', '+']).unwrap_or(rest.len());
    let (core, extra) = rest.split_at(end);
    let numbers: Vec<&str> = core.split('.').collect();
    let number = |n: &&str| {
        !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && (*n == "0" || !n.starts_with('0'))
    };
    let parts = |p: &str| {
        p.split('.')
            .all(|x| !x.is_empty() && x.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    };
    let (pre, build) = match extra.split_once('+') {
        Some((pre, build)) => (pre, Some(build)),
        None => (extra, None),
    };
    numbers.len() == 3
        && numbers.iter().all(number)
        && (pre.is_empty() || pre.strip_prefix('-').is_some_and(parts))
        && build.is_none_or(parts)
}

/// The (os, arch) pairs krew supports: `allPlatforms` of krew's
/// cmd/validate-krew-manifest/main.go.
const KREW_PLATFORMS: [(&str, &str); 11] = [
    ("windows", "386"),
    ("windows", "amd64"),
    ("windows", "arm64"),
    ("linux", "386"),
    ("linux", "amd64"),
    ("linux", "arm"),
    ("linux", "arm64"),
    ("linux", "ppc64le"),
    ("darwin", "386"),
    ("darwin", "amd64"),
    ("darwin", "arm64"),
];

/// Whether a platform's `matchLabels` selects `(os, arch)` (this manifest's selectors use
/// `matchLabels` only; one using `matchExpressions` is reported as unsupported here).
fn selects(selector: &Value, (os, arch): (&str, &str)) -> bool {
    let labels = selector.get("matchLabels").and_then(Value::as_object);
    labels.is_some_and(|l| {
        l.iter().all(|(k, v)| match k.as_str() {
            "os" => v == os,
            "arch" => v == arch,
            _ => false,
        })
    })
}

/// What krew says is wrong with the manifest of the plugin `name` (its file `name.yaml`):
/// `ValidatePlugin`, `validatePlatform`, `validateFiles` and `validateSelector` of krew's
/// internal/index/validation/validate.go, and what cmd/validate-krew-manifest/main.go adds
/// (every platform matches a supported one, no supported one is matched twice, a LICENSE
/// file is installed). Empty when krew accepts it.
fn krew_violations(name: &str, plugin: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut must = |ok: bool, what: &str| {
        if !ok {
            out.push(what.to_owned());
        }
    };
    must(
        text(plugin, "/apiVersion") == "krew.googlecontainertools.github.com/v1alpha2",
        "apiVersion is krew's CurrentAPIVersion (pkg/constants/constants.go)",
    );
    must(text(plugin, "/kind") == "Plugin", "kind is Plugin");
    let safe = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    must(safe, "the name matches ^[\\w-]+$");
    must(
        text(plugin, "/metadata/name") == name,
        "metadata.name is the file's name",
    );
    let short = text(plugin, "/spec/shortDescription");
    must(!short.is_empty(), "a short description");
    must(
        !short.contains(['\r', '\n']),
        "no line break in the short description",
    );
    must(
        krew_semver(text(plugin, "/spec/version")),
        "spec.version is v + a semantic version",
    );
    let platforms = plugin
        .pointer("/spec/platforms")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    must(!platforms.is_empty(), "a platform");
    for (i, p) in platforms.iter().enumerate() {
        let at = |what: &str| format!("platforms[{i}]: {what}");
        must(!text(p, "/uri").is_empty(), &at("uri is set"));
        let sha = text(p, "/sha256");
        must(
            sha.len() == 64 && sha.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
            &at("sha256 matches ^[a-f0-9]{64}$"),
        );
        must(!text(p, "/bin").is_empty(), &at("bin is set"));
        match p.get("files") {
            None | Some(Value::Null) => {}
            Some(Value::Array(files)) => {
                must(!files.is_empty(), &at("files unspecified or non-empty"));
                for f in files {
                    must(
                        !text(f, "/from").is_empty() && !text(f, "/to").is_empty(),
                        &at("every file has from and to"),
                    );
                }
            }
            Some(_) => must(false, &at("files is a list")),
        }
        let selector = p.get("selector").cloned().unwrap_or(Value::Null);
        let labels = selector.get("matchLabels").and_then(Value::as_object);
        let expressions = selector.get("matchExpressions");
        must(!selector.is_null(), &at("a selector"));
        must(
            labels.is_some_and(|l| !l.is_empty()) && expressions.is_none(),
            &at("a non-empty matchLabels (matchExpressions are not checked here)"),
        );
        must(
            labels.is_some_and(|l| l.keys().all(|k| k == "os" || k == "arch")),
            &at("selector keys are os and arch only"),
        );
        must(
            KREW_PLATFORMS.iter().any(|&pair| selects(&selector, pair)),
            &at("the selector matches a platform krew supports"),
        );
        // krew installs `files` then links `bin` (pkg/index/types.go): the binary and a
        // licence must both be among what is copied in.
        let installed: Vec<String> = p
            .get("files")
            .and_then(Value::as_array)
            .map(|fs| {
                fs.iter()
                    .filter(|f| text(f, "/to") == ".")
                    .filter_map(|f| text(f, "/from").rsplit('/').next().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        must(
            installed.iter().any(|f| *f == text(p, "/bin")),
            &at("bin is among the files installed"),
        );
        must(
            installed.iter().any(|f| f.eq_ignore_ascii_case("LICENSE")),
            &at("a LICENSE file is installed (validateLicenseFileExists)"),
        );
    }
    for pair in KREW_PLATFORMS {
        let matching = platforms
            .iter()
            .filter(|p| selects(p.get("selector").unwrap_or(&Value::Null), pair))
            .count();
        must(
            matching <= 1,
            &format!("{}/{} matched by one platform at most", pair.0, pair.1),
        );
    }
    out
}

fn the_manifest(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout.clone()).expect("utf-8");
    let documents = common::objects_of_documents(&stdout);
    assert_eq!(documents.len(), 1, "one document:\n{stdout}");
    documents.into_iter().next().expect("one")
}

#[test]
fn the_krew_manifest_is_the_golden_one_and_passes_krews_rules() {
    let output = generate("krew", "0.1.0", &fixture());
    let plugin = the_manifest(&output);
    golden("kinject.yaml", &String::from_utf8_lossy(&output.stdout));
    assert_eq!(krew_violations("kinject", &plugin), Vec::<String>::new());
    // Each archive of the release is one platform, at its URL, with its checksum.
    let platforms = plugin["spec"]["platforms"].as_array().expect("platforms");
    let archives = fixture_archives();
    assert_eq!(platforms.len(), archives.len());
    for (file, sha) in &archives {
        let url = format!("https://github.com/kinject/kinject/releases/download/v0.1.0/{file}");
        let platform = platforms
            .iter()
            .find(|p| text(p, "/uri") == url)
            .unwrap_or_else(|| panic!("no platform for {file}"));
        assert_eq!(text(platform, "/sha256"), sha, "{file}");
        let folder = file
            .trim_end_matches(".tar.gz")
            .trim_end_matches(".zip")
            .to_owned();
        let bin = text(platform, "/bin");
        assert!(
            platform["files"]
                .as_array()
                .expect("files")
                .iter()
                .any(|f| text(f, "/from") == format!("{folder}/{bin}")),
            "{file}: the binary is taken from the archive's one folder, {folder}/"
        );
    }
}

/// The checker above is not vacuous: each rule it holds refuses a manifest that breaks it.
#[test]
fn the_krew_rules_refuse_what_krew_refuses() {
    let good = the_manifest(&generate("krew", "0.1.0", &fixture()));
    type Break = fn(&mut Value);
    let broken: [(&str, Break); 9] = [
        ("no short description", |m| {
            m["spec"]["shortDescription"] = "".into()
        }),
        ("a line break", |m| {
            m["spec"]["shortDescription"] = "a\nb".into()
        }),
        ("version without v", |m| {
            m["spec"]["version"] = "0.1.0".into()
        }),
        ("version 01.1.0", |m| {
            m["spec"]["version"] = "v01.1.0".into()
        }),
        ("no platforms", |m| {
            m["spec"]["platforms"] = Value::Array(vec![])
        }),
        ("a short sha256", |m| {
            m["spec"]["platforms"][0]["sha256"] = "abc".into()
        }),
        ("a selector key", |m| {
            m["spec"]["platforms"][0]["selector"]["matchLabels"]["distro"] = "debian".into()
        }),
        ("two platforms for one", |m| {
            let first = m["spec"]["platforms"][0].clone();
            m["spec"]["platforms"]
                .as_array_mut()
                .expect("list")
                .push(first)
        }),
        ("no LICENSE", |m| {
            m["spec"]["platforms"][0]["files"]
                .as_array_mut()
                .expect("files")
                .pop();
        }),
    ];
    for (what, break_it) in broken {
        let mut manifest = good.clone();
        break_it(&mut manifest);
        assert!(
            !krew_violations("kinject", &manifest).is_empty(),
            "{what}: accepted"
        );
    }
    assert!(!krew_violations("kubectl-kinject.bad", &good).is_empty());
    assert!(krew_semver("v1.2.3-rc.1+build.5") && !krew_semver("v1.2"));
}

/// What Homebrew's `desc` cop (Library/Homebrew/rubocops/shared/desc_helper.rb) says is wrong
/// with a formula's `desc`.
fn desc_violations(name: &str, desc: &str) -> Vec<&'static str> {
    let first = desc.split_whitespace().next().unwrap_or("");
    [
        (desc.is_empty(), "empty"),
        (desc.trim() != desc, "leading or trailing spaces"),
        (desc.chars().count() > 80, "longer than 80 characters"),
        (
            ["the", "a", "an"].contains(&first.to_lowercase().as_str()),
            "starts with an article",
        ),
        (
            desc.starts_with(|c: char| c.is_ascii_lowercase()),
            "starts with a lowercase letter",
        ),
        (
            desc.to_lowercase().starts_with(name),
            "starts with the formula's name",
        ),
        (
            desc.ends_with('.') && !desc.ends_with("etc."),
            "ends with a full stop",
        ),
        (
            desc.to_lowercase().contains("command line"),
            "command line, not command-line",
        ),
    ]
    .into_iter()
    .filter(|(bad, _)| *bad)
    .map(|(_, what)| what)
    .collect()
}

/// The quoted argument of each line of `formula` that starts with `word ` (after indentation).
fn calls<'a>(formula: &'a str, word: &str) -> Vec<&'a str> {
    formula
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix(word)?.strip_prefix(' '))
        .filter_map(|rest| rest.strip_prefix('"')?.split('"').next())
        .collect()
}

#[test]
fn the_homebrew_formula_is_the_golden_one_and_installs_what_the_archive_holds() {
    let output = generate("brew", "0.1.0", &fixture());
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let formula = String::from_utf8(output.stdout).expect("utf-8");
    golden("kinject.rb", &formula);
    let desc = calls(&formula, "desc");
    assert_eq!(desc.len(), 1);
    assert_eq!(desc_violations("kinject", desc[0]), Vec::<&str>::new());
    assert!(!desc_violations("kinject", "kinject does it.").is_empty());
    // Every macOS and Linux archive, each url followed by its own sha256; Windows is not
    // Homebrew's.
    let (urls, shas) = (calls(&formula, "url"), calls(&formula, "sha256"));
    let archives: Vec<(String, String)> = fixture_archives()
        .into_iter()
        .filter(|(f, _)| !f.ends_with(".zip"))
        .collect();
    assert_eq!((urls.len(), shas.len()), (archives.len(), archives.len()));
    for (url, sha) in urls.iter().zip(&shas) {
        let file = url.rsplit('/').next().expect("file");
        assert!(
            archives.iter().any(|(f, s)| f == file && s == sha),
            "{url} {sha}"
        );
    }
    for (block, os_and_cpu) in [
        ("on_macos do", ["apple-darwin"; 2]),
        ("on_linux do", ["unknown-linux"; 2]),
    ] {
        let start = formula.find(block).expect(block);
        let end = start + formula[start..].find("\n  end\n").expect("end");
        let inner = &formula[start..end];
        for (cpu, triple) in [("on_arm do", "aarch64-"), ("on_intel do", "x86_64-")] {
            let at = inner.find(cpu).expect(cpu);
            let url = inner[at..].lines().nth(1).expect("url line");
            assert!(
                url.contains(&format!("{triple}{}", os_and_cpu[0])),
                "{block} {cpu}: {url}"
            );
        }
    }
    // What `install` takes from the archive exists in it: scripts/release copies man/*.1 and
    // completions/* of the repository under the archive's one folder (which Homebrew enters).
    for path in [
        "completions/kinject.bash",
        "completions/_kinject",
        "completions/kinject.fish",
    ] {
        assert!(formula.contains(&format!("\"{path}\"")), "{path}");
        assert!(
            root().join(path).is_file(),
            "{path} is not in the repository"
        );
    }
    assert!(
        common::entries(&root().join("man"))
            .iter()
            .any(|m| m.ends_with(".1"))
    );
    assert!(formula.contains("shell_output(\"#{bin}/kinject --version\")"));
}

/// What the generator is given as a release is checked, not guessed around: each refusal
/// exits 2, says why on stderr, and prints nothing.
#[test]
fn a_release_folder_that_is_not_one_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let write = |name: &str, text: &str| std::fs::write(tmp.path().join(name), text).expect("w");
    let hex = "a".repeat(64);
    let musl = "kinject-0.1.0-x86_64-unknown-linux-musl.tar.gz";
    write(&format!("{musl}.sha256"), &format!("{hex}  {musl}\n"));
    // scripts/release here builds the static glibc target: one platform, linux/amd64.
    let plugin = the_manifest(&generate("krew", "0.1.0", tmp.path()));
    assert_eq!(
        plugin["spec"]["platforms"].as_array().map(Vec::len),
        Some(1)
    );
    let refused = |dir: &Path, version: &str, why: &str| {
        for kind in ["krew", "brew"] {
            let out = generate(kind, version, dir);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{kind} {why}: {stderr}");
            assert!(out.stdout.is_empty(), "{kind} {why}: printed something");
            assert!(stderr.contains(why), "{kind}: {stderr}");
        }
    };
    refused(tmp.path(), "v0.1.0", "no leading v");
    let empty = tempfile::tempdir().expect("tempdir");
    refused(
        empty.path(),
        "0.1.0",
        "no kinject-0.1.0-<target>.tar.gz.sha256",
    );
    refused(tmp.path(), "0.2.0", "another version than 0.2.0");
    let gnu = "kinject-0.1.0-x86_64-unknown-linux-gnu.tar.gz";
    write(&format!("{gnu}.sha256"), &format!("{hex}  {gnu}\n"));
    refused(tmp.path(), "0.1.0", "one archive per platform");
    std::fs::remove_file(tmp.path().join(format!("{gnu}.sha256"))).expect("rm");
    let other = "kinject-0.1.0-aarch64-apple-darwin.tar.gz";
    write(&format!("{other}.sha256"), &format!("{hex}  {musl}\n"));
    refused(
        tmp.path(),
        "0.1.0",
        "not `kinject-0.1.0-aarch64-apple-darwin.tar.gz`",
    );
    write(
        &format!("{other}.sha256"),
        &format!("{}  {other}\n", "A".repeat(64)),
    );
    refused(tmp.path(), "0.1.0", "sha256sum's format");
    std::fs::remove_file(tmp.path().join(format!("{other}.sha256"))).expect("rm");
    let riscv = "kinject-0.1.0-riscv64gc-unknown-linux-gnu.tar.gz";
    write(&format!("{riscv}.sha256"), &format!("{hex}  {riscv}\n"));
    refused(
        tmp.path(),
        "0.1.0",
        "unknown target `riscv64gc-unknown-linux-gnu`",
    );
    std::fs::remove_file(tmp.path().join(format!("{riscv}.sha256"))).expect("rm");
    // Checksum files that are not text to read: each refused, none read forever.
    let arm = "kinject-0.1.0-aarch64-unknown-linux-musl.tar.gz";
    let arm_sum = tmp.path().join(format!("{arm}.sha256"));
    std::fs::write(&arm_sum, b"\xff\xfe not utf-8\n").expect("w");
    refused(tmp.path(), "0.1.0", "not UTF-8 text");
    std::fs::write(&arm_sum, format!("{hex}  {arm}\n").repeat(100)).expect("w");
    refused(tmp.path(), "0.1.0", "over 1024 bytes");
    std::fs::remove_file(&arm_sum).expect("rm");
    std::os::unix::fs::symlink("/dev/zero", &arm_sum).expect("symlink");
    refused(tmp.path(), "0.1.0", "not a regular file");
    std::fs::remove_file(&arm_sum).expect("rm");
    std::fs::create_dir(&arm_sum).expect("mkdir");
    refused(tmp.path(), "0.1.0", "not a regular file");
    std::fs::remove_dir(&arm_sum).expect("rmdir");
    // A release of some platforms only is made, with a warning naming the others.
    let out = generate("brew", "0.1.0", tmp.path());
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "warning: no archive for linux/arm64, darwin/amd64, darwin/arm64, windows/amd64"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
