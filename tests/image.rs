//! kinject's container image (`Dockerfile`, `scripts/image`), built with podman and checked
//! from the outside and the inside: its configuration (`podman image inspect`), every file it
//! holds (the layers of `podman save --format oci-dir`), the binary taken out of it and run
//! here, and the image run by podman, alone and as kustomize's container function. Without
//! podman the test says so on stderr, past cargo's capture; with `KINJECT_REQUIRE_PODMAN=1`
//! (CI) it fails instead.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::common::{self, objects, objects_of_documents};

const TRIPLE: &str = "x86_64-unknown-linux-gnu";
/// The image's size must stay below this; it was 9.5 MB at 0.1.0 (9,499,459 to 9,499,462
/// bytes). A binary with debug line tables (38.7 MB) would not fit.
const SIZE_BOUND: u64 = 16 * 1024 * 1024;
/// The user the image runs as: distroless's `nonroot`.
const USER: &str = "65532:65532";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

#[test]
fn container_image() {
    let Some(podman) = common::on_path("podman") else {
        common::skipped("podman not installed — the container image was not built");
        return;
    };
    let started = std::time::Instant::now();
    let image = Image::build(&podman);
    common::loud(&format!(
        "tests/image.rs: built {} in {:.0?}",
        image.tag,
        started.elapsed()
    ));

    configuration_is_a_non_root_krm_function(&image);
    let files = image.files();
    holds_only_kinject_and_its_users(&files);
    let kinject = binary_runs_here(&image, &files);

    match run_settings(&image) {
        Some(conf) => {
            runs_as_kustomize_runs_it(&image, conf.as_deref(), &kinject);
            runs_as_a_kustomize_container_function(&image, conf.as_deref());
        }
        None => common::skipped("podman cannot run containers here — the image was built, not run"),
    }
    common::loud(&format!(
        "tests/image.rs: all checks in {:.0?}",
        started.elapsed()
    ));
}

/// An image built by `scripts/image` under a tag of this run's own, removed when dropped.
struct Image {
    podman: PathBuf,
    tag: String,
    /// The static binary `scripts/image` built and put into the image.
    binary: PathBuf,
    dir: tempfile::TempDir,
}

impl Image {
    fn build(podman: &Path) -> Image {
        // The target directory `cargo test` uses (CARGO_TARGET_TMPDIR is its `tmp`); the
        // script builds in a directory of its own inside it, `image/`.
        let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .parent()
            .expect("target directory")
            .to_owned();
        let tag = format!("localhost/kinject-test:{}", std::process::id());
        let out = Command::new(root().join("scripts/image"))
            .arg(&tag)
            .env("CARGO_TARGET_DIR", &target)
            .output()
            .expect("run scripts/image");
        let image = Image {
            podman: podman.to_owned(),
            tag,
            binary: target.join("image").join(TRIPLE).join("release/kinject"),
            dir: tempfile::tempdir().expect("tempdir"),
        };
        assert!(
            out.status.success(),
            "scripts/image failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        image
    }

    /// `podman image inspect`'s object for the image.
    fn inspect(&self) -> Value {
        let out = self.podman(&["image", "inspect", &self.tag]);
        let list: Value = serde_json::from_slice(&out.stdout).expect("inspect JSON");
        list[0].clone()
    }

    fn podman(&self, args: &[&str]) -> Output {
        let out = Command::new(&self.podman)
            .args(args)
            .output()
            .expect("run podman");
        assert!(
            out.status.success(),
            "podman {args:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Every entry of every layer, by path, as `podman save` writes the image (uncompressed
    /// OCI layout: index → manifest → layer tars).
    fn files(&self) -> BTreeMap<String, Entry> {
        let oci = self.dir.path().join("oci");
        let oci_str = oci.to_str().expect("utf-8 path");
        self.podman(&[
            "save",
            "--quiet",
            "--format",
            "oci-dir",
            "--uncompressed",
            "-o",
            oci_str,
            &self.tag,
        ]);
        let blob = |digest: &Value| {
            let digest = digest.as_str().expect("digest");
            let hex = digest.strip_prefix("sha256:").expect("sha256 digest");
            oci.join("blobs/sha256").join(hex)
        };
        let json = |path: PathBuf| -> Value {
            serde_json::from_slice(&std::fs::read(path).expect("read blob")).expect("JSON")
        };
        let index = json(oci.join("index.json"));
        let manifest = json(blob(&index["manifests"][0]["digest"]));
        let mut files = BTreeMap::new();
        for layer in manifest["layers"].as_array().expect("layers") {
            let file = std::fs::File::open(blob(&layer["digest"])).expect("layer");
            let mut archive = tar::Archive::new(file);
            for entry in archive.entries().expect("layer tar") {
                let mut entry = entry.expect("layer entry");
                let header = entry.header();
                let path = entry.path().expect("path");
                let path = path.to_string_lossy().trim_end_matches('/').to_owned();
                let mut content = Vec::new();
                let kind = header.entry_type();
                let mode = header.mode().expect("mode") & 0o7777;
                let owner = (header.uid().expect("uid"), header.gid().expect("gid"));
                std::io::Read::read_to_end(&mut entry, &mut content).expect("entry content");
                let entry = Entry {
                    kind: format!("{kind:?}"),
                    mode,
                    owner,
                    content,
                };
                files.insert(path, entry);
            }
        }
        files
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        let _ = Command::new(&self.podman)
            .args(["rmi", "--force", &self.tag])
            .output();
    }
}

/// One file or directory of a layer.
struct Entry {
    kind: String,
    mode: u32,
    owner: (u64, u64),
    content: Vec<u8>,
}

/// What the image runs, as whom, and what its labels say (the package's own fields).
fn configuration_is_a_non_root_krm_function(image: &Image) {
    let inspect = image.inspect();
    let config = &inspect["Config"];
    assert_eq!(config["Entrypoint"], json!(["/kinject"]));
    assert_eq!(
        config["Cmd"],
        json!(["krm"]),
        "no arguments = a KRM function"
    );
    assert_eq!(config["User"], USER, "numeric, so no lookup is needed");
    let labels = &config["Labels"];
    let label = |name: &str| labels[format!("org.opencontainers.image.{name}")].clone();
    assert_eq!(label("source"), env!("CARGO_PKG_REPOSITORY"));
    assert_eq!(label("licenses"), env!("CARGO_PKG_LICENSE"));
    assert_eq!(label("version"), env!("CARGO_PKG_VERSION"));
    assert_eq!(label("description"), env!("CARGO_PKG_DESCRIPTION"));
    let revision = label("revision");
    let revision = revision.as_str().expect("revision label");
    assert!(
        revision == "unknown" || revision.len() == 40,
        "a commit: {revision}"
    );

    let layers = inspect["RootFS"]["Layers"].as_array().expect("layers");
    assert_eq!(layers.len(), 1, "no base image, one layer: {layers:?}");
    let size = inspect["Size"].as_u64().expect("size");
    common::loud(&format!("tests/image.rs: the image is {size} bytes"));
    assert!(size < SIZE_BOUND, "{size} bytes: over {SIZE_BOUND}");
}

/// The image holds kinject and the two files naming its users: no shell, no libc, nothing
/// writable by the user it runs as.
fn holds_only_kinject_and_its_users(files: &BTreeMap<String, Entry>) {
    let listing: Vec<String> = files
        .iter()
        .map(|(path, e)| format!("{path} {} {:o} {}:{}", e.kind, e.mode, e.owner.0, e.owner.1))
        .collect();
    assert_eq!(
        listing,
        [
            "etc Directory 755 0:0",
            "etc/group Regular 644 0:0",
            "etc/passwd Regular 644 0:0",
            "kinject Regular 755 0:0",
        ],
        "the image's files"
    );
    assert!(!files.contains_key("bin/sh") && !files.keys().any(|p| p.starts_with("bin")));
    for name in ["passwd", "group"] {
        let ours = std::fs::read(root().join("image/etc").join(name)).expect("image/etc");
        assert_eq!(files[&format!("etc/{name}")].content, ours, "/etc/{name}");
    }
    let passwd = String::from_utf8_lossy(&files["etc/passwd"].content).into_owned();
    assert!(passwd.contains("nobody:x:65534:65534:"), "{passwd}");
    assert!(passwd.contains("nonroot:x:65532:65532:"), "{passwd}");
}

/// `/kinject`, taken out of the image and run on this machine: the binary `scripts/image`
/// built, static, the same version as this checkout's, and injecting through `kinject krm`.
/// Returns its path.
fn binary_runs_here(image: &Image, files: &BTreeMap<String, Entry>) -> PathBuf {
    let content = &files["kinject"].content;
    assert!(
        *content == std::fs::read(&image.binary).expect("built binary"),
        "the image holds {}",
        image.binary.display()
    );
    assert!(is_static(content), "/kinject has a program interpreter");

    // Written here, then copied by `cp`: a file this process wrote is not run (ETXTBSY,
    // `common::copy_executable`).
    let taken = image.dir.path().join("kinject.taken");
    std::fs::write(&taken, content).expect("write kinject");
    let kinject = image.dir.path().join("kinject");
    common::copy_executable(&taken, &kinject);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&kinject, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let version = |binary: &Path| {
        let out = Command::new(binary)
            .arg("--version")
            .output()
            .expect("--version");
        assert!(out.status.success());
        String::from_utf8(out.stdout).expect("utf-8")
    };
    assert_eq!(
        version(&kinject),
        version(Path::new(env!("CARGO_BIN_EXE_kinject")))
    );

    let out = run_with_stdin(Command::new(&kinject).arg("krm"), &resource_list());
    krm_output_is_the_golden_case(&out);
    kinject
}

/// The kms-plugin golden case as a ResourceList: its configuration as the functionConfig,
/// its input's objects as the items.
fn resource_list() -> Vec<u8> {
    let case = root().join("testdata/cases/kms-plugin");
    let read = |name: &str| std::fs::read_to_string(case.join(name)).expect("golden case");
    let list = json!({
        "apiVersion": "config.kubernetes.io/v1",
        "kind": "ResourceList",
        "items": objects(&read("input.yaml")),
        "functionConfig": objects_of_documents(&read("config.yaml"))[0],
    });
    serde_json::to_vec(&list).expect("JSON")
}

/// The items kinject gave back are the golden case's expected objects.
fn krm_output_is_the_golden_case(out: &Output) {
    assert!(
        out.status.success(),
        "kinject krm failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: Value = serde_json::from_slice(&out.stdout).expect("a JSON ResourceList");
    let expected = std::fs::read_to_string(root().join("testdata/cases/kms-plugin/expected.yaml"))
        .expect("expected.yaml");
    assert_eq!(list["items"], Value::Array(objects(&expected)));
    assert_eq!(list["results"][1]["message"], "injected: kms");
}

/// Whether podman can run containers here, and with which containers.conf: its own, or
/// `testdata/image/containers.conf` (runc, lower limits) where its own fails, as in kinject's
/// build sandbox. None when neither starts the image.
fn run_settings(image: &Image) -> Option<Option<PathBuf>> {
    let sandbox = root().join("testdata/image/containers.conf");
    let mut refusals = String::new();
    for conf in [None, Some(sandbox)] {
        let mut command = Command::new(&image.podman);
        command.args(["run", "--rm", &image.tag, "--version"]);
        if let Some(conf) = &conf {
            command.env("CONTAINERS_CONF", conf);
        }
        let out = command.output().expect("run podman");
        if out.status.success() {
            common::loud(&format!(
                "tests/image.rs: podman runs the image with {}",
                conf.as_ref()
                    .map_or("its own settings".to_owned(), |c| c.display().to_string())
            ));
            return Some(conf);
        }
        refusals += &String::from_utf8_lossy(&out.stderr);
    }
    common::loud(&format!("tests/image.rs: podman run failed:\n{refusals}"));
    None
}

/// The image run with the flags kustomize gives `docker run` (kyaml's container runtime):
/// no arguments, so its command is `krm`; user nobody, no network, no new privileges. It
/// writes what the binary run here writes.
fn runs_as_kustomize_runs_it(image: &Image, conf: Option<&Path>, kinject: &Path) {
    let mut command = Command::new(&image.podman);
    command.args([
        "run",
        "--rm",
        "-i",
        "--network",
        "none",
        "--user",
        "nobody",
        "--security-opt=no-new-privileges",
        &image.tag,
    ]);
    if let Some(conf) = conf {
        command.env("CONTAINERS_CONF", conf);
    }
    let list = resource_list();
    let out = run_with_stdin(&mut command, &list);
    krm_output_is_the_golden_case(&out);
    let here = run_with_stdin(Command::new(kinject).arg("krm"), &list);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&here.stdout)
    );
}

/// `kubectl kustomize --enable-alpha-plugins` over testdata/kustomize/container-function,
/// whose configuration names the image as its container function; kustomize runs `docker`,
/// here podman under that name.
fn runs_as_a_kustomize_container_function(image: &Image, conf: Option<&Path>) {
    let dir = image.dir.path().join("kustomize");
    let bin = image.dir.path().join("bin");
    std::fs::create_dir_all(&dir).expect("kustomize dir");
    std::fs::create_dir_all(&bin).expect("bin dir");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&image.podman, bin.join("docker")).expect("docker symlink");
    let source = root().join("testdata/kustomize/container-function");
    for entry in std::fs::read_dir(&source).expect("testdata") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("read");
        let text = text.replace("image: kinject:0.1.0", &format!("image: {}", image.tag));
        std::fs::write(dir.join(path.file_name().expect("name")), text).expect("write");
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&path)))
        .expect("PATH");
    let mut command = Command::new(common::kubectl());
    command
        .args(["kustomize", "--enable-alpha-plugins"])
        .arg(&dir)
        .env("PATH", path);
    if let Some(conf) = conf {
        command.env("CONTAINERS_CONF", conf);
    }
    let out = command.output().expect("run kubectl");
    assert!(
        out.status.success(),
        "kubectl kustomize failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let objs = objects(&String::from_utf8(out.stdout).expect("utf-8"));
    let deployment = objs
        .iter()
        .find(|o| o["kind"] == "Deployment")
        .expect("deployment");
    assert_eq!(deployment["metadata"]["name"], "shop-web");
    assert_eq!(common::container_names(deployment), ["web", "log-shipper"]);
}

/// A 64-bit little-endian ELF file without a program interpreter (`PT_INTERP`): the kernel
/// starts it with no dynamic loader and no shared library.
fn is_static(elf: &[u8]) -> bool {
    const PT_INTERP: u32 = 3;
    let u16_at = |at: usize| u16::from_le_bytes([elf[at], elf[at + 1]]) as usize;
    let u32_at = |at: usize| u32::from_le_bytes(elf[at..at + 4].try_into().expect("4 bytes"));
    let u64_at = |at: usize| u64::from_le_bytes(elf[at..at + 8].try_into().expect("8 bytes"));
    assert_eq!(
        &elf[..6],
        b"\x7fELF\x02\x01",
        "a 64-bit little-endian ELF file"
    );
    let (offset, size, count) = (u64_at(0x20) as usize, u16_at(0x36), u16_at(0x38));
    (0..count).all(|i| u32_at(offset + i * size) != PT_INTERP)
}

fn run_with_stdin(command: &mut Command, stdin: &[u8]) -> Output {
    use std::process::Stdio;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut pipe = child.stdin.take().expect("stdin");
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let _ = pipe.write_all(stdin);
        });
        child.wait_with_output().expect("wait")
    })
}
