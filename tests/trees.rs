//! Nothing is read or written outside the tree a run was given: the attacks of a pull request
//! on a CI runner (hostile-input review, second round, §A, §C, §E). Each test builds a
//! repository beside an `outside/` directory holding secrets, plants what a pull request can
//! commit (a symlink, a configuration, an `inherits:`, a kustomization) and checks that no
//! secret reaches stdout or stderr, that nothing outside is written, and that the refusal names
//! the path.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const SECRET: &str = "OUTSIDE-SECRET-4d1f";
const CONFIG: &str = "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: s\n  containers:\n  - name: s\n    image: example.com/s:1\nrules:\n- name: all\n  inject: [s]\n";
const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: example.com/app:1\n";

/// `CONFIG` with its one sidecar (and that sidecar's container) named `sidecar`.
fn config_with(sidecar: &str) -> String {
    CONFIG
        .replace("- name: s\n", &format!("- name: {sidecar}\n"))
        .replace("inject: [s]", &format!("inject: [{sidecar}]"))
}

/// A repository (`repo/`, with `.git`, `k8s/app.yaml` and a platform configuration at its
/// root) beside `outside/`, whose files hold `SECRET`.
struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl World {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        let w = World { _dir: dir, root };
        git(&w.repo(), &["init", "-q"]);
        w.write("repo/.kinject.yaml", CONFIG);
        w.write("repo/k8s/app.yaml", DEPLOYMENT);
        w.write(
            "outside/config.json",
            &format!("{{\"auths\": {{\"registry.example.com\": {{\"auth\": \"{SECRET}\"}}}}}}\n"),
        );
        w.write("outside/token", &format!("{SECRET}\n"));
        w.write(
            "outside/static-pod.yaml",
            &format!(
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: etcd\nspec:\n  containers:\n  - name: etcd\n    image: etcd\n    args: [--etcd-password={SECRET}]\n"
            ),
        );
        w.write(
            "outside/broken.yaml",
            &format!("password: {SECRET}\nkey: [unclosed\n"),
        );
        w
    }

    fn repo(&self) -> PathBuf {
        self.root.join("repo")
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    fn link(&self, rel: &str, target: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        let _ = std::fs::remove_file(&path);
        symlink(target, path).expect("symlink");
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).expect("read")
    }

    /// Every file of `outside/`, with its bytes.
    fn outside(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out: Vec<_> = walkdir(&self.path("outside"))
            .into_iter()
            .map(|p| {
                let bytes = std::fs::read(&p).expect("read");
                (p, bytes)
            })
            .collect();
        out.sort();
        out
    }
}

fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            out.extend(walkdir(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn git(dir: &Path, args: &[&str]) {
    std::fs::create_dir_all(dir).expect("mkdir");
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .status()
        .expect("git");
    assert!(status.success(), "git {args:?}");
}

/// kinject in `dir` with `args`, the secret in its environment (`CI_SECRET_TOKEN`), `stdin`
/// piped in.
fn run(dir: &Path, args: &[&str], stdin: &str) -> Output {
    run_with(dir, args, stdin, &[])
}

/// `run`, with the variables `vars` set (git's, as a hook is given them).
fn run_with(dir: &Path, args: &[&str], stdin: &str, vars: &[(&str, &str)]) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_kinject"))
        .args(args)
        .envs(vars.iter().copied())
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("CI_SECRET_TOKEN", SECRET)
        .env_remove("KINJECT_REPORT_FILE")
        .env_remove("KINJECT_NO_DISCOVERY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kinject");
    let mut pipe = child.stdin.take().expect("stdin");
    let stdin = stdin.to_owned();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(stdin.as_bytes());
    });
    let out = child.wait_with_output().expect("wait");
    let _ = writer.join();
    out
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The run printed no secret, on either stream.
fn no_secret(out: &Output, what: &str) {
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !all.contains(SECRET),
        "{what}: the secret was printed:\n{all}"
    );
}

/// A configuration found beside the manifests (no `-c`) that is a symlink out of the
/// repository is not read: not `/proc/self/environ` (the job's environment), not another
/// directory's file. The run fails, naming the link; the secret is printed nowhere. A link
/// inside the repository is followed.
#[test]
fn a_found_configuration_leading_out_of_the_repository_is_not_read() {
    for target in ["/proc/self/environ", "../../outside/config.json"] {
        for name in [".kinject.yaml", "kinject.yaml"] {
            let w = World::new();
            w.link(&format!("repo/k8s/{name}"), target);
            let what = format!("k8s/{name} -> {target}");
            // A file named, and standard input (the nearest configuration of the current
            // directory).
            for (dir, args) in [
                (w.repo(), vec!["inject", "--check", "k8s/app.yaml"]),
                (w.repo().join("k8s"), vec!["inject"]),
            ] {
                let out = run(&dir, &args, DEPLOYMENT);
                no_secret(&out, &what);
                assert_eq!(
                    out.status.code(),
                    Some(2),
                    "{what} {args:?}: {}",
                    stderr(&out)
                );
                assert!(out.stdout.is_empty(), "{what} {args:?}");
                let err = stderr(&out);
                assert!(
                    err.contains(name) && err.contains("outside"),
                    "{what} {args:?}: {err}"
                );
            }
        }
    }
    // Inside the repository: followed.
    let w = World::new();
    w.write("repo/platform/sidecars.yaml", CONFIG);
    w.link("repo/k8s/.kinject.yaml", "../platform/sidecars.yaml");
    let out = run(&w.repo(), &["inject", "k8s/app.yaml"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("example.com/s:1"));
}

/// A found configuration that is not a regular file (a FIFO would hang the run, a directory
/// is no configuration) is refused by name, not skipped for one further up.
#[test]
fn a_found_configuration_that_is_not_a_file_is_refused() {
    let w = World::new();
    std::fs::create_dir_all(w.path("repo/k8s/.kinject.yaml")).expect("mkdir");
    let out = run(&w.repo(), &["inject", "--check", "k8s/app.yaml"], "");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("k8s/.kinject.yaml"),
        "{}",
        stderr(&out)
    );
}

/// A tumblr-format configuration's `inherits:` (a path) stays in the repository: climbing out
/// of it (`../../../outside/token`, `../` forty times then `proc/self/environ`) is refused
/// unread, for a configuration found and one given with `-c` alike. Inside, it is followed.
#[test]
fn inherits_stays_in_the_repository() {
    let deep = format!("{}proc/self/environ", "../".repeat(40));
    for inherits in ["../../outside/token", "../../outside/broken.yaml", &deep] {
        let w = World::new();
        let tumblr =
            format!("name: x\ninherits: \"{inherits}\"\ncontainers:\n- name: x\n  image: x\n");
        w.write("repo/k8s/.kinject.yaml", &tumblr);
        w.write("repo/k8s/sidecar.yaml", &tumblr);
        for args in [
            vec!["inject", "--check", "k8s/app.yaml"],
            vec!["inject", "-c", "k8s/sidecar.yaml", "k8s/app.yaml"],
        ] {
            let out = run(&w.repo(), &args, "");
            no_secret(&out, inherits);
            assert_eq!(out.status.code(), Some(2), "{inherits} {args:?}");
            let err = stderr(&out);
            assert!(err.contains("outside"), "{inherits} {args:?}: {err}");
        }
    }
    let w = World::new();
    w.write(
        "repo/k8s/base.yaml",
        "name: base\ncontainers:\n- name: b\n  image: b\n",
    );
    w.write(
        "repo/k8s/.kinject.yaml",
        "name: x\ninherits: base.yaml\ncontainers:\n- name: x\n  image: x\n",
    );
    let out = run(&w.repo(), &["inject", "--check", "k8s/app.yaml"], "");
    assert_ne!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// What kinject shows of a configuration file it cannot read as one: no line of a file that
/// is not a configuration (a JSON credential file, a token, a binary file). The location and
/// the message still say what is wrong.
#[test]
fn no_excerpt_of_a_file_that_is_not_a_configuration() {
    let w = World::new();
    std::fs::copy(w.path("outside/config.json"), w.path("repo/creds.json")).expect("copy");
    std::fs::copy(w.path("outside/token"), w.path("repo/token")).expect("copy");
    w.write("repo/env", &format!("A=1\0CI_SECRET_TOKEN={SECRET}\0"));
    for config in ["creds.json", "token", "env"] {
        let out = run(&w.repo(), &["inject", "-c", config, "k8s/app.yaml"], "");
        no_secret(&out, config);
        assert_eq!(out.status.code(), Some(2), "{config}");
        assert!(stderr(&out).contains(config), "{config}: {}", stderr(&out));
    }
}

/// A configuration directory given with `-c` is read as a walk reads a directory: a file in
/// it that is a symlink out of it is refused unread (a ConfigMap's mount links its files
/// inside it, to `..data/`; those are read).
#[test]
fn a_configuration_directory_reads_no_link_out_of_it() {
    let w = World::new();
    w.write("repo/sidecars/a.yaml", CONFIG);
    w.link("repo/sidecars/b.yaml", "../../outside/broken.yaml");
    let out = run(&w.repo(), &["inject", "-c", "sidecars", "k8s/app.yaml"], "");
    no_secret(&out, "-c sidecars/");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("b.yaml"), "{}", stderr(&out));
    // A ConfigMap's mount, as the kubelet writes it.
    let w = World::new();
    w.write("repo/mount/..2026_11_28_00_00_00.1/config.yaml", CONFIG);
    w.link("repo/mount/..data", "..2026_11_28_00_00_00.1");
    w.link("repo/mount/config.yaml", "..data/config.yaml");
    let out = run(&w.repo(), &["inject", "-c", "mount", "k8s/app.yaml"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// CI pins the configuration: with `--no-discovery` (or `KINJECT_NO_DISCOVERY=1`) no
/// configuration is looked for beside the manifests, so a planted `.kinject.yaml` changes
/// nothing; without `-c` the run is refused, saying so.
#[test]
fn discovery_can_be_turned_off() {
    let w = World::new();
    w.write(
        "repo/k8s/.kinject.yaml",
        "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars: []\nrules: []\n",
    );
    let out = run(&w.repo(), &["inject", "--no-discovery", "k8s/app.yaml"], "");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--no-discovery"), "{}", stderr(&out));
    let out = run(
        &w.repo(),
        &[
            "inject",
            "--no-discovery",
            "-c",
            ".kinject.yaml",
            "k8s/app.yaml",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("example.com/s:1"));
    let out = Command::new(env!("CARGO_BIN_EXE_kinject"))
        .args(["inject", "--check", "k8s/app.yaml"])
        .current_dir(w.repo())
        .env("KINJECT_NO_DISCOVERY", "1")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // uninject looks for one too, and without one removes only on `--trust-status`: with
    // `--no-discovery` it does not read the one planted (here a link out of the repository,
    // refused when looked for).
    w.link("repo/k8s/.kinject.yaml", "/proc/self/environ");
    let out = run(&w.repo(), &["uninject", "k8s/app.yaml"], "");
    no_secret(&out, "uninject");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = run(
        &w.repo(),
        &["uninject", "--no-discovery", "k8s/app.yaml"],
        "",
    );
    no_secret(&out, "uninject --no-discovery");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Widening (a configuration among the files of an `--in-place` run) takes its scope from
/// the path as found, not where a symlink leads: a `.kinject.yaml` linked to another
/// checkout's does not make kinject rewrite that checkout's manifests.
#[test]
fn widening_stays_in_the_repository_of_the_path_given() {
    let w = World::new();
    git(&w.path("other"), &["init", "-q"]);
    w.write("other/.kinject.yaml", CONFIG);
    w.write("other/k8s/a.yaml", DEPLOYMENT);
    w.write("other/k8s/b.yaml", DEPLOYMENT);
    git(&w.path("other"), &["add", "-A"]);
    w.link("repo/k8s/.kinject.yaml", "../../other/.kinject.yaml");
    git(&w.repo(), &["add", "-A"]);
    let out = run(
        &w.repo(),
        &["inject", "-i", "--", "k8s/.kinject.yaml", "k8s/app.yaml"],
        "",
    );
    assert_eq!(w.read("other/k8s/a.yaml"), DEPLOYMENT, "{}", stderr(&out));
    assert_eq!(w.read("other/k8s/b.yaml"), DEPLOYMENT, "{}", stderr(&out));
}

/// Widening with configurations below one another, as pre-commit names them: each tracked
/// manifest is rewritten with its nearest configuration, only when that one is among the
/// files, and once (one listing per repository serves them all); a repository inside another
/// (a vendored checkout, not a tracked part of the outer) is listed on its own.
#[test]
fn widening_gives_each_manifest_its_nearest_configuration_among_the_files() {
    let w = World::new();
    w.write("repo/a/.kinject.yaml", &config_with("outer"));
    w.write("repo/a/b/.kinject.yaml", &config_with("inner"));
    w.write("repo/a/c/.kinject.yaml", &config_with("unnamed"));
    for file in ["a/x.yaml", "a/b/x.yaml", "a/b/deeper/x.yaml", "a/c/x.yaml"] {
        w.write(&format!("repo/{file}"), DEPLOYMENT);
    }
    git(&w.path("repo/a/vendored"), &["init", "-q"]);
    w.write("repo/a/vendored/.kinject.yaml", &config_with("vendored"));
    w.write("repo/a/vendored/x.yaml", DEPLOYMENT);
    git(&w.path("repo/a/vendored"), &["add", "-A"]);
    // The outer repository tracks its own files, not the vendored checkout's.
    git(
        &w.repo(),
        &["add", "--", "a/.kinject.yaml", "a/b", "a/c", "a/x.yaml"],
    );
    let args = [
        "inject",
        "-i",
        "--",
        "a/.kinject.yaml",
        "a/b/.kinject.yaml",
        "a/vendored/.kinject.yaml",
    ];
    let out = run(&w.repo(), &args, "");
    let err = stderr(&out);
    // 1: files were rewritten (as pre-commit wants it told).
    assert_eq!(out.status.code(), Some(1), "{err}");
    for (file, sidecar) in [
        ("a/x.yaml", Some("outer")),
        ("a/b/x.yaml", Some("inner")),
        ("a/b/deeper/x.yaml", Some("inner")),
        ("a/c/x.yaml", None),
        ("a/vendored/x.yaml", Some("vendored")),
    ] {
        let text = w.read(&format!("repo/{file}"));
        match sidecar {
            Some(sidecar) => {
                assert!(
                    text.contains(&format!("- name: {sidecar}\n")),
                    "{file}: {text}\n{err}"
                );
                assert_eq!(text.matches("example.com/").count(), 2, "{file}: {text}");
            }
            None => assert_eq!(text, DEPLOYMENT, "{file}: {err}"),
        }
    }
    for said in [
        "a/.kinject.yaml is among the files: also checking the 1 other manifest it applies to (git ls-files a/)",
        "a/b/.kinject.yaml is among the files: also checking the 2 other manifests it applies to (git ls-files a/b/)",
        "a/vendored/.kinject.yaml is among the files: also checking the 1 other manifest it applies to (git ls-files a/vendored/)",
    ] {
        assert!(err.contains(said), "{said}\n{err}");
    }
}

/// Configurations below one another named together widen as each named alone does: a
/// configuration in a hidden folder (`.deploy/prod/`, hidden from the outer one's folder, not
/// from its own), below a folder whose name is not UTF-8, or named through a symlinked folder;
/// and the manifests come one configuration at a time, in the order named.
#[test]
fn widening_below_another_named_configuration_is_as_when_named_alone() {
    use std::os::unix::ffi::OsStrExt;
    // The folder, the configuration as named, and the manifest as its listing names it.
    for (inner, named_inner, file) in [
        (
            ".deploy/prod",
            ".deploy/prod/.kinject.yaml",
            ".deploy/prod/x.yaml",
        ),
        ("a/l-target", "a/l/.kinject.yaml", "a/l/x.yaml"),
        ("a/b", "a/b/.kinject.yaml", "a/b/x.yaml"),
    ] {
        let w = World::new();
        w.write("repo/a/.kinject.yaml", CONFIG);
        w.write(&format!("repo/{inner}/.kinject.yaml"), CONFIG);
        w.write(&format!("repo/{inner}/x.yaml"), DEPLOYMENT);
        w.write("repo/a/x.yaml", DEPLOYMENT);
        if named_inner.starts_with("a/l/") {
            w.link("repo/a/l", "l-target");
        }
        git(&w.repo(), &["add", "-A"]);
        for names in [
            ["a/.kinject.yaml", named_inner, ".kinject.yaml"],
            [named_inner, ".kinject.yaml", "a/.kinject.yaml"],
        ] {
            let mut args = vec!["inject", "--check", "--"];
            args.extend(names);
            let out = run(&w.repo(), &args, "");
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(1), "{names:?}: {err}");
            let listed = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(
                listed.contains(file),
                "{names:?}: {file} not checked:\n{listed}\n{err}"
            );
            // In the order the configurations are named.
            let at = |f: &str| listed.find(f).unwrap_or_else(|| panic!("{f}: {listed}"));
            let inner_first = names[0] == named_inner;
            assert_eq!(
                at(file) < at("a/x.yaml"),
                inner_first,
                "{names:?}: {listed}"
            );
        }
    }
    // A folder named so that it is not UTF-8, between the two.
    let w = World::new();
    w.write("repo/a/.kinject.yaml", CONFIG);
    let inner = w.repo().join(std::ffi::OsStr::from_bytes(b"a/\xff"));
    std::fs::create_dir_all(&inner).expect("mkdir");
    std::fs::write(inner.join(".kinject.yaml"), CONFIG).expect("write");
    std::fs::write(inner.join("x.yaml"), DEPLOYMENT).expect("write");
    git(&w.repo(), &["add", "-A"]);
    let out = Command::new(env!("CARGO_BIN_EXE_kinject"))
        .args(["inject", "--check", "--", "a/.kinject.yaml"])
        .arg(std::ffi::OsStr::from_bytes(b"a/\xff/.kinject.yaml"))
        .current_dir(w.repo())
        .stdin(Stdio::null())
        .output()
        .expect("run");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains("/x.yaml"), "{listed}\n{err}");
}

/// A committed symlink to a manifest in another folder of the repository (`a/0.yaml ->
/// b/x.yaml`) does not get that manifest its own folder's configuration when it is rewritten
/// or checked: the file is `a/b/x.yaml`, whose nearest configuration is `a/b/`'s, whichever
/// name comes first (the walk of `a/`, the names pre-commit gives, the link named alone). A
/// run that prints uses the configuration of where a file is named (a shared manifest linked
/// into each team's folder), as it prints the same content copied there.
#[test]
fn a_link_to_a_manifest_uses_the_configuration_of_where_it_is() {
    let runs: [&[&str]; 5] = [
        &["inject", "-i", "a/"],
        &["inject", "-i", "--", "a/0.yaml", "a/b/x.yaml"],
        &["inject", "-i", "--", "a/0.yaml"],
        &["inject", "-i", "--", "a/.kinject.yaml", "a/b/.kinject.yaml"],
        &["inject", "--check", "--", "a/b/.kinject.yaml", "a/0.yaml"],
    ];
    for args in runs {
        let w = World::new();
        w.write("repo/a/.kinject.yaml", &config_with("team-a"));
        w.write("repo/a/b/.kinject.yaml", &config_with("team-b"));
        w.write("repo/a/b/x.yaml", DEPLOYMENT);
        w.link("repo/a/0.yaml", "b/x.yaml");
        git(&w.repo(), &["add", "-A"]);
        let out = run(&w.repo(), args, "");
        let err = stderr(&out);
        if args.contains(&"--check") {
            // The manifest is not as team b's configuration wants it: the check fails.
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            continue;
        }
        let text = w.read("repo/a/b/x.yaml");
        assert!(
            text.contains("- name: team-b\n") && !text.contains("team-a"),
            "{args:?}:\n{text}\n{err}"
        );
    }
    let w = World::new();
    w.write("repo/a/.kinject.yaml", &config_with("team-a"));
    w.write("repo/a/b/.kinject.yaml", &config_with("team-b"));
    w.write("repo/a/b/x.yaml", DEPLOYMENT);
    w.link("repo/a/0.yaml", "b/x.yaml");
    let out = run(&w.repo(), &["inject", "a/0.yaml"], "");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains("- name: team-a\n"), "{printed}");
}

/// A shared manifest linked into a team's folder (`teams/a/deploy.yaml ->
/// ../../base/deploy.yaml`) is checked with the configuration of where it really is; when there
/// is none, the refusal says it is a link and where it leads. Printing uses the team's.
#[test]
fn a_link_without_a_configuration_where_it_leads_is_said_to_be_one() {
    let w = World::new();
    std::fs::remove_file(w.path("repo/.kinject.yaml")).expect("rm");
    w.write("repo/teams/a/.kinject.yaml", &config_with("team-a"));
    w.write("repo/base/deploy.yaml", DEPLOYMENT);
    w.link("repo/teams/a/deploy.yaml", "../../base/deploy.yaml");
    git(&w.repo(), &["add", "-A"]);
    let out = run(&w.repo(), &["inject", "--check", "teams/a/deploy.yaml"], "");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("teams/a/deploy.yaml: no configuration")
            && err.contains("it is a link to base/deploy.yaml"),
        "{err}"
    );
    let out = run(&w.repo(), &["inject", "teams/a/deploy.yaml"], "");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains("- name: team-a\n"), "{printed}");
}

/// The repository and folder a rewritten manifest's configuration comes from are where the file
/// really is, however its name reaches it: `..` after a committed folder link (`a/l/../x.yaml`
/// is `a/b/x.yaml` to the kernel), a name through a link to a checkout's sub-folder, and a
/// submodule's committed link back into the repository holding it (met by the walk of `.`).
#[test]
fn a_manifest_rewritten_uses_the_configuration_of_the_repository_it_is_in() {
    // `..` after a committed link, and a link from outside to a sub-folder of the checkout.
    for (cwd, args) in [
        ("repo", vec!["inject", "-i", "--", "a/l/../x.yaml"]),
        ("", vec!["inject", "-i", "--", "ws/alink/0.yaml"]),
    ] {
        let w = World::new();
        w.write("repo/a/.kinject.yaml", &config_with("team-a"));
        w.write("repo/a/b/.kinject.yaml", &config_with("team-b"));
        w.write("repo/a/b/x.yaml", DEPLOYMENT);
        w.write("repo/a/b/c/.keep", "");
        w.link("repo/a/l", "b/c");
        w.link("repo/a/0.yaml", "b/x.yaml");
        w.link("ws/alink", "../repo/a");
        git(&w.repo(), &["add", "-A"]);
        let out = run(&w.path(cwd), &args, "");
        let text = w.read("repo/a/b/x.yaml");
        assert!(
            text.contains("- name: team-b\n") && !text.contains("team-a"),
            "{args:?}:\n{text}\n{}",
            stderr(&out)
        );
    }
    // A submodule whose committed link leads back into the repository holding it. Its
    // manifest was injected with the submodule's configuration: `--check .` must fail.
    let w = World::new();
    std::fs::remove_file(w.path("repo/k8s/app.yaml")).expect("rm");
    let sub = w.path("subsrc");
    git(&sub, &["init", "-q"]);
    w.write("subsrc/.kinject.yaml", &config_with("submodule"));
    w.link("subsrc/0.yaml", "../z/x.yaml");
    git(&sub, &["add", "-A"]);
    git(&sub, &["commit", "-q", "-m", "s"]);
    w.write("repo/z/.kinject.yaml", &config_with("team-z"));
    w.write("repo/z/x.yaml", DEPLOYMENT);
    let add = [
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        "../subsrc",
        "m",
    ];
    git(&w.repo(), &add);
    git(&w.repo(), &["add", "-A"]);
    let injected = run(
        &w.repo(),
        &["inject", "-i", "-c", "m/.kinject.yaml", "--", "z/x.yaml"],
        "",
    );
    assert!(
        w.read("repo/z/x.yaml").contains("- name: submodule\n"),
        "{}",
        stderr(&injected)
    );
    let check = run(&w.repo(), &["inject", "--check", "."], "");
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    w.write("repo/z/x.yaml", DEPLOYMENT);
    let out = run(&w.repo(), &["inject", "-i", "."], "");
    let text = w.read("repo/z/x.yaml");
    assert!(
        text.contains("- name: team-z\n") && !text.contains("submodule"),
        "{text}\n{}",
        stderr(&out)
    );
}

/// When git cannot list what a configuration among the files applies to (it refuses the
/// repository as another user's, or is pointed elsewhere), the run fails saying why: checking
/// only the files named would pass a changed configuration whose manifests do not follow.
#[test]
fn widening_that_git_cannot_list_fails_the_run() {
    let w = World::new();
    git(&w.repo(), &["add", "-A"]);
    let nowhere = w.path("nowhere").display().to_string();
    let check = ["inject", "--check", "--", ".kinject.yaml"];
    let out = run_with(&w.repo(), &check, "", &[("GIT_DIR", &nowhere)]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cannot read the manifests .kinject.yaml applies to: git ls-files failed"),
        "{err}"
    );
    assert!(!err.contains("not in a git repository"), "{err}");
}

/// Widening adds only what the configurations among the files govern, judged where a file
/// really is: not a link to a manifest of a configuration not among them, nor one into a
/// repository nested in the checkout, nor a link to a hidden file, or to a chart's template
/// (which a link named alone does not get rewritten either).
#[test]
fn widening_adds_only_what_its_configurations_govern() {
    let w = World::new();
    std::fs::remove_file(w.path("repo/k8s/app.yaml")).expect("rm");
    w.write("repo/a/.kinject.yaml", &config_with("team-a"));
    w.write("repo/a/b/.kinject.yaml", &config_with("team-b"));
    w.write("repo/a/b/x.yaml", DEPLOYMENT);
    w.link("repo/a/0.yaml", "b/x.yaml");
    git(&w.path("repo/nested"), &["init", "-q"]);
    w.write("repo/nested/.kinject.yaml", &config_with("nested"));
    w.write("repo/nested/x.yaml", DEPLOYMENT);
    w.link("repo/1.yaml", "nested/x.yaml");
    w.write("repo/h/.g/h.yaml", DEPLOYMENT);
    w.write("repo/h/.kinject.yaml", &config_with("team-h"));
    w.link("repo/.l/1.yaml", "../h/.g/h.yaml");
    let template = DEPLOYMENT.replace("example.com/app:1", "\"nginx:{{ $tag }}\"");
    w.write(
        "repo/c/chart/Chart.yaml",
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    );
    w.write("repo/c/chart/templates/e.yaml", &template);
    w.link("repo/docs/3.yaml", "../c/chart/templates/e.yaml");
    git(
        &w.repo(),
        &[
            "add",
            "--",
            ".kinject.yaml",
            "a",
            "1.yaml",
            "h",
            ".l",
            "c",
            "docs",
        ],
    );
    let named = ["a/.kinject.yaml", ".kinject.yaml", "h/.kinject.yaml"];
    let mut check = vec!["inject", "--check", "--"];
    check.extend(named);
    let out = run(&w.repo(), &check, "");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    for said in [
        "a/.kinject.yaml is among the files: also checking no other manifest",
        ".kinject.yaml is among the files: also checking no other manifest",
        "h/.kinject.yaml is among the files: also checking no other manifest",
    ] {
        assert!(err.contains(said), "{said}\n{err}");
    }
    let mut rewrite = vec!["inject", "-i", "--"];
    rewrite.extend(named);
    run(&w.repo(), &rewrite, "");
    run(&w.repo(), &["inject", "-i", "--", "docs/3.yaml"], "");
    for (file, text) in [
        ("repo/a/b/x.yaml", DEPLOYMENT),
        ("repo/nested/x.yaml", DEPLOYMENT),
        ("repo/h/.g/h.yaml", DEPLOYMENT),
        ("repo/c/chart/templates/e.yaml", template.as_str()),
    ] {
        assert_eq!(w.read(file), text, "{file}");
    }
}

/// Widening checks what a walk of the configuration's folder checks: a visible link to a hidden
/// file of that folder, manifests beside a `Chart.yaml` a pull request plants, and in a chart's
/// `templates/` those with no directive (only what the reader refuses as a template is left
/// out); with `GIT_LITERAL_PATHSPECS` set; and, from a hook of a linked worktree (git gives it
/// `GIT_DIR` and no `GIT_WORK_TREE`), the manifests of a sub-folder's configuration.
#[test]
fn widening_checks_what_a_walk_checks() {
    let w = World::new();
    std::fs::remove_file(w.path("repo/k8s/app.yaml")).expect("rm");
    w.write("repo/b/.kinject.yaml", &config_with("team-b"));
    w.write("repo/b/.g/h.yaml", DEPLOYMENT);
    w.link("repo/b/l/3.yaml", "../.g/h.yaml");
    w.write("repo/c/.kinject.yaml", &config_with("team-c"));
    w.write("repo/c/x.yaml", DEPLOYMENT);
    w.write(
        "repo/c/Chart.yaml",
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    );
    w.write("repo/d/.kinject.yaml", &config_with("team-d"));
    w.write(
        "repo/d/Chart.yaml",
        "apiVersion: v2\nname: d\nversion: 0.1.0\n",
    );
    w.write("repo/d/templates/plain.yaml", DEPLOYMENT);
    let template = DEPLOYMENT.replace("example.com/app:1", "{{ .Values.image }}");
    w.write("repo/d/templates/t.yaml", &template);
    git(&w.repo(), &["add", "-A"]);
    git(&w.repo(), &["commit", "-q", "-m", "c"]);
    for (named, file) in [
        ("b/.kinject.yaml", "b/l/3.yaml"),
        ("c/.kinject.yaml", "c/x.yaml"),
    ] {
        let walk = run(
            &w.repo(),
            &["inject", "--check", named.trim_end_matches(".kinject.yaml")],
            "",
        );
        assert_eq!(walk.status.code(), Some(1), "{named}: {}", stderr(&walk));
        let out = run(&w.repo(), &["inject", "--check", "--", named], "");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{named}: {err}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(file),
            "{named}: {err}"
        );
    }
    let out = run(
        &w.repo(),
        &["inject", "--check", "--", "d/.kinject.yaml"],
        "",
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.contains("d/templates/plain.yaml") && !listed.contains("t.yaml"),
        "{listed}\n{err}"
    );
    let check = ["inject", "--check", "--", "c/.kinject.yaml"];
    let out = run_with(&w.repo(), &check, "", &[("GIT_LITERAL_PATHSPECS", "1")]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // A linked worktree, as its pre-commit hook runs.
    git(&w.repo(), &["worktree", "add", "-q", "../wt"]);
    let git_dir = Command::new("git")
        .args(["rev-parse", "--absolute-git-dir"])
        .current_dir(w.path("wt"))
        .output()
        .expect("git");
    let git_dir = String::from_utf8(git_dir.stdout).expect("utf-8");
    let check = ["inject", "--check", "--", "c/.kinject.yaml"];
    let out = run_with(&w.path("wt"), &check, "", &[("GIT_DIR", git_dir.trim())]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    // x.yaml, and Chart.yaml, which a walk reads too (no object: skipped).
    assert!(
        err.contains("also checking the 2 other manifests it applies to"),
        "{err}"
    );
}

/// Widening reads no tracked symlink that leads out of its scope (the walk of the directory
/// refuses the same link): its lines are not printed in a diff, nor in a diagnostic's
/// excerpt; it is named as a link not followed.
#[test]
fn widening_follows_no_tracked_link_out_of_the_repository() {
    for target in ["../../outside/static-pod.yaml", "../../outside/broken.yaml"] {
        let w = World::new();
        w.link("repo/k8s/ext.yaml", target);
        git(&w.repo(), &["add", "-A"]);
        let out = run(&w.repo(), &["inject", "--diff", "--", ".kinject.yaml"], "");
        no_secret(&out, target);
        let err = stderr(&out);
        assert!(
            err.contains("ext.yaml") && err.contains("outside"),
            "{target}: {err}"
        );
        // The manifest inside is still checked.
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("k8s/app.yaml"),
            "{target}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// `--output-file` is not written through a symlink that leads out of the tree it is named
/// in (a committed `rendered/all.yaml` linked to a shell rc file), and is never the
/// configuration.
#[test]
fn the_output_file_is_not_written_through_a_link_out_of_the_tree() {
    let w = World::new();
    w.write("outside/bashrc", "# rc\n");
    w.link("repo/rendered/all.yaml", "../../outside/bashrc");
    let before = w.outside();
    let out = run(
        &w.repo(),
        &["inject", "k8s/", "--output-file", "rendered/all.yaml"],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("outside"), "{}", stderr(&out));
    assert_eq!(w.outside(), before);
    // A link that leads nowhere, out of the tree or in it, is refused saying so (it was "File
    // exists"), and nothing is made where it leads.
    for (nowhere, said) in [
        ("../../outside/new.yaml", "outside/new.yaml, outside"),
        ("later.yaml", "which does not exist"),
    ] {
        w.link("repo/rendered/all.yaml", nowhere);
        let out = run(
            &w.repo(),
            &["inject", "k8s/", "--output-file", "rendered/all.yaml"],
            "",
        );
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(said), "{}", stderr(&out));
        assert_eq!(w.outside(), before);
        assert!(!w.repo().join("rendered/later.yaml").exists());
    }
    // Inside the tree, a link is written through.
    w.write("repo/rendered/real.yaml", "");
    w.link("repo/rendered/all.yaml", "real.yaml");
    let out = run(
        &w.repo(),
        &["inject", "k8s/", "--output-file", "rendered/all.yaml"],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        w.read("repo/rendered/real.yaml")
            .contains("example.com/s:1")
    );
    // The configuration is not an output.
    let out = run(
        &w.repo(),
        &[
            "inject",
            "-c",
            ".kinject.yaml",
            "k8s/",
            "--output-file",
            ".kinject.yaml",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(w.read("repo/.kinject.yaml"), CONFIG);
}

/// `--report-file` follows `--output-file`'s rules: not an input (the manifest was truncated
/// to 0 bytes, exit 0), not a manifest inside an input directory, not the configuration, not
/// written through a link out of the tree; and it is written atomically (a new file renamed
/// over the old, nothing half-written, no temporary file left).
#[test]
fn the_report_file_is_never_an_input_nor_written_out_of_the_tree() {
    let w = World::new();
    for args in [
        vec!["inject", "k8s/app.yaml", "--report-file", "k8s/app.yaml"],
        vec!["inject", "-i", "k8s/", "--report-file", "k8s/app.yaml"],
        vec!["inject", "k8s/", "--report-file", "k8s/report.json"],
        vec![
            "inject",
            "-c",
            ".kinject.yaml",
            "k8s/",
            "--report-file",
            ".kinject.yaml",
        ],
    ] {
        let out = run(&w.repo(), &args, "");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(w.read("repo/k8s/app.yaml"), DEPLOYMENT, "{args:?}");
        assert_eq!(w.read("repo/.kinject.yaml"), CONFIG, "{args:?}");
        assert!(!w.path("repo/k8s/report.json").exists(), "{args:?}");
    }
    w.write("outside/bashrc", "# rc\n");
    w.link("repo/report.json", "../outside/bashrc");
    let before = w.outside();
    let out = run(
        &w.repo(),
        &["inject", "k8s/", "--report-file", "report.json"],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(w.outside(), before);
    // Written: by a rename, leaving no temporary file.
    std::fs::remove_file(w.path("repo/report.json")).expect("rm");
    w.write("repo/report.json", "old\n");
    let inode =
        |p: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).expect("meta"));
    let old = inode(&w.path("repo/report.json"));
    let out = run(
        &w.repo(),
        &[
            "inject",
            "k8s/",
            "--report",
            "json",
            "--report-file",
            "report.json",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_ne!(inode(&w.path("repo/report.json")), old);
    assert!(w.read("repo/report.json").contains("\"summary\""));
    let left: Vec<String> = std::fs::read_dir(w.repo())
        .expect("read_dir")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("kinject-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// `--emit-kustomize` reads a base's resources only in or below the base's directory, as
/// kustomize's load restrictor does ("is not in or below"): a PR's kustomization listing
/// `../../outside/creds.yaml` gets it refused unread.
#[test]
fn emit_kustomize_reads_no_resource_outside_its_base() {
    let emit = |w: &World| {
        run(
            &w.repo(),
            &[
                "inject",
                "-c",
                ".kinject.yaml",
                "--emit-kustomize",
                "overlay",
                "base",
            ],
            "",
        )
    };
    for resource in ["../../outside/broken.yaml", "../../outside/static-pod.yaml"] {
        let w = World::new();
        w.write(
            "repo/base/kustomization.yaml",
            &format!("resources:\n- app.yaml\n- {resource}\n"),
        );
        w.write("repo/base/app.yaml", DEPLOYMENT);
        let out = emit(&w);
        no_secret(&out, resource);
        assert_eq!(out.status.code(), Some(2), "{resource}: {}", stderr(&out));
        assert!(stderr(&out).contains("not in or below"), "{}", stderr(&out));
        // A link inside the base that leads out is refused too.
        let w = World::new();
        w.write(
            "repo/base/kustomization.yaml",
            "resources:\n- app.yaml\n- ext.yaml\n",
        );
        w.write("repo/base/app.yaml", DEPLOYMENT);
        w.link("repo/base/ext.yaml", resource);
        let out = emit(&w);
        no_secret(&out, resource);
        assert_eq!(out.status.code(), Some(2), "{resource}: {}", stderr(&out));
    }
}

/// The repository's `.git` directory is not part of its tree, though it lies inside it: it
/// holds what CI put there, not what a pull request committed (actions/checkout's token in
/// `.git/config`, a credential store's file). A committed symlink into it is refused as one
/// out of the tree is: as a configuration found, as what one `inherits:`, as a manifest of a
/// walk, and as `--output-file` or `--report-file` (a committed `rendered/all.yaml` linked to
/// `.git/config` replaced the checkout's git configuration).
#[test]
fn nothing_is_read_or_written_in_the_git_directory() {
    let secret = |w: &World| {
        w.write(
            "repo/.git/credentials",
            &format!("password: {SECRET}\nkey: [unclosed\n"),
        );
    };
    let tumblr = "name: x\ninherits: ../.git/credentials\ncontainers:\n- name: x\n  image: x\n";
    for (what, plant, args) in [
        (
            "a configuration found",
            "link k8s/.kinject.yaml",
            vec!["inject", "--check", "k8s/app.yaml"],
        ),
        (
            "what it inherits",
            "inherits",
            vec!["inject", "--check", "k8s/app.yaml"],
        ),
        (
            "a manifest of a walk",
            "link k8s/x.yaml",
            vec!["inject", "--check", "."],
        ),
    ] {
        let w = World::new();
        secret(&w);
        match plant {
            "inherits" => w.write("repo/k8s/.kinject.yaml", tumblr),
            link => w.link(
                &format!("repo/{}", link.trim_start_matches("link ")),
                "../.git/credentials",
            ),
        }
        let out = run(&w.repo(), &args, "");
        no_secret(&out, what);
        assert_eq!(out.status.code(), Some(2), "{what}: {}", stderr(&out));
        assert!(stderr(&out).contains(".git"), "{what}: {}", stderr(&out));
    }
    for flag in ["--output-file", "--report-file"] {
        let w = World::new();
        let config = std::fs::read(w.path("repo/.git/config")).expect("git config");
        w.link("repo/rendered/all.yaml", "../.git/config");
        let out = run(
            &w.repo(),
            &["inject", "k8s/", flag, "rendered/all.yaml"],
            "",
        );
        assert_eq!(out.status.code(), Some(2), "{flag}: {}", stderr(&out));
        assert_eq!(
            std::fs::read(w.path("repo/.git/config")).expect("git config"),
            config,
            "{flag}"
        );
    }
}

/// Outside a git repository (a tarball, an artifact, `GIT_STRATEGY: none`), a configuration
/// found beside the manifests is looked for up to the current directory, and what it
/// `inherits:` stays there too: a planted `.kinject.yaml` inheriting
/// `../../outside/broken.yaml` printed its lines. A configuration named with `-c` is trusted
/// and inherits where it says.
#[test]
fn inherits_outside_a_repository_stays_in_the_tree_it_was_found_in() {
    for inherits in [
        "../../outside/broken.yaml",
        "../../outside/config.json",
        "/../../../../../../../proc/self/environ",
    ] {
        let w = World::new();
        std::fs::remove_dir_all(w.path("repo/.git")).expect("rm .git");
        std::fs::remove_file(w.path("repo/.kinject.yaml")).expect("rm config");
        w.write(
            "repo/k8s/.kinject.yaml",
            &format!("name: x\ninherits: \"{inherits}\"\ncontainers:\n- name: x\n  image: x\n"),
        );
        let out = run(&w.repo(), &["inject", "--check", "k8s/app.yaml"], "");
        no_secret(&out, inherits);
        assert_eq!(out.status.code(), Some(2), "{inherits}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("outside"),
            "{inherits}: {}",
            stderr(&out)
        );
    }
    // A KRM function's `functionConfig` comes from a kustomization, which a pull request can
    // commit: its `inherits:` stays below the current directory too.
    let w = World::new();
    std::fs::remove_dir_all(w.path("repo/.git")).expect("rm .git");
    let list = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n  name: x\n  inherits: ../outside/broken.yaml\n  containers:\n  - name: x\n    image: x\nitems: []\n";
    let out = run(&w.repo(), &["krm"], list);
    no_secret(&out, "krm functionConfig");
    assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("outside"), "{}", stderr(&out));
    let w = World::new();
    std::fs::remove_dir_all(w.path("repo/.git")).expect("rm .git");
    w.write(
        "outside/base.yaml",
        "name: base\ncontainers:\n- name: b\n  image: b\n",
    );
    w.write(
        "outside/tumblr/sidecar.yaml",
        "name: x\ninherits: ../base.yaml\ncontainers:\n- name: x\n  image: x\n",
    );
    let out = run(
        &w.repo(),
        &[
            "inject",
            "-c",
            "../outside/tumblr/sidecar.yaml",
            "k8s/app.yaml",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// `--in-place`, `--check` and `--diff` keep to the tree a name is in, for the names they are
/// given too: those come from `git ls-files '*.yaml' | xargs kinject inject -i --` (the
/// README's) or pre-commit, so a committed symlink among them is a pull request's. A file
/// linked out of the tree is not read (its lines were printed by `--diff` and by a syntax
/// error's excerpt), and a directory linked out (`k8s/evil.yaml -> ../../outside/manifests`)
/// is not walked (its manifests were rewritten). Printing to stdout still reads a name where
/// it leads (`bazel-bin/…`, Nix's `result`): the command line names it.
#[test]
fn edits_read_no_named_link_out_of_the_tree() {
    let w = World::new();
    w.write("outside/manifests/victim.yaml", DEPLOYMENT);
    w.write(
        "outside/manifests/broken.yaml",
        &format!("a: {SECRET}\nb: [x\n"),
    );
    w.link("repo/k8s/b.yaml", "../../outside/broken.yaml");
    w.link("repo/k8s/p.yaml", "../../outside/static-pod.yaml");
    w.link("repo/k8s/evil.yaml", "../../outside/manifests");
    let before = w.outside();
    let names = ["k8s/app.yaml", "k8s/b.yaml", "k8s/evil.yaml", "k8s/p.yaml"];
    for mode in ["-i", "--check", "--diff"] {
        let mut args = vec!["inject", mode, "--"];
        args.extend(names);
        let out = run(&w.repo(), &args, "");
        no_secret(&out, mode);
        assert_eq!(out.status.code(), Some(2), "{mode}: {}", stderr(&out));
        assert_eq!(w.outside(), before, "{mode}");
        let err = stderr(&out);
        for name in &names[1..] {
            assert!(err.contains(name), "{mode} {name}: {err}");
        }
    }
    let out = run(&w.repo(), &["inject", "k8s/p.yaml"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("example.com/s:1"));
}

/// A name is judged against the tree it is written in, not the folder a symlink inside it
/// leads to: named from outside the current directory (`../repo/platform/…`), from `/` (the
/// image's working directory), or from a directory above a git checkout, a committed
/// `platform -> ../outside/manifests` in the middle of the name leads nowhere, in a git work
/// tree or not (from above a checkout that is no git work tree, the current directory is the
/// tree: nothing tells the checkout). The same checkout named through a symlinked `$PWD` is the current directory
/// and is rewritten.
#[test]
fn a_name_is_judged_by_the_tree_it_is_written_in() {
    let w = World::new();
    w.write("outside/manifests/victim.yaml", DEPLOYMENT);
    w.link("repo/platform", "../outside/manifests");
    w.link("plain/platform", "../outside/manifests");
    w.write("ci/.keep", "");
    let config = w.path("repo/.kinject.yaml").display().to_string();
    let before = w.outside();
    for checkout in ["repo", "plain"] {
        let named = w.path(&format!("{checkout}/platform/victim.yaml"));
        for (cwd, name) in [
            (w.path("ci"), format!("../{checkout}/platform/victim.yaml")),
            (PathBuf::from("/"), named.display().to_string()),
            (w.root.clone(), format!("{checkout}/platform/victim.yaml")),
        ]
        .into_iter()
        .filter(|(cwd, _)| checkout == "repo" || cwd != &w.root)
        {
            for mode in ["-i", "--check", "--diff"] {
                let out = run(&cwd, &["inject", "-c", &config, mode, "--", &name], "");
                let err = stderr(&out);
                assert_eq!(out.status.code(), Some(2), "{mode} {name}: {err}");
                assert!(
                    err.contains("outside") && err.contains("not read"),
                    "{mode} {name}: {err}"
                );
                assert_eq!(w.outside(), before, "{mode} {name}");
            }
        }
    }
    w.link("builds/proj", "../repo");
    let typed = w.path("builds/proj/k8s/app.yaml").display().to_string();
    let out = run(&w.path("builds/proj"), &["inject", "-i", "--", &typed], "");
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "{}",
        stderr(&out)
    );
    assert!(w.read("repo/k8s/app.yaml").contains("example.com/s:1"));
}

/// A git `$HOME` (dotfiles) holding the user's `src -> ../data`, under which a checkout
/// commits `platform -> ../../home/.ssh`: a name through `src` leaves `$HOME`'s work tree, so
/// nothing reaches `.ssh` by it, whatever the checkout's link brings back; and the checkout's
/// own files, named from the shell's `$PWD` (the CI form, `"$PWD/k8s/app.yaml"`), are read
/// from the checkout.
#[test]
fn a_link_out_of_an_outer_work_tree_is_not_a_way_back_into_it() {
    let w = World::new();
    git(&w.path("home"), &["init", "-q"]);
    w.write("home/.ssh/id.yaml", DEPLOYMENT);
    w.write("data/proj/k8s/app.yaml", DEPLOYMENT);
    w.write("data/proj/.kinject.yaml", CONFIG);
    git(&w.path("data/proj"), &["init", "-q"]);
    w.link("home/src", "../data");
    w.link("data/proj/platform", "../../home/.ssh");
    let ssh = w.read("home/.ssh/id.yaml");
    let logical = w.path("home/src/proj");
    let run_in = |args: &[&str]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kinject"));
        child
            .args(args)
            .current_dir(w.path("data/proj"))
            .env("PWD", &logical)
            .env("NO_COLOR", "1")
            .env_remove("KINJECT_REPORT_FILE")
            .stdin(Stdio::null());
        child.output().expect("run kinject")
    };
    let through = logical.join("platform/id.yaml").display().to_string();
    for mode in ["-i", "--check", "--diff"] {
        let out = run_in(&["inject", mode, "--", &through]);
        assert_eq!(out.status.code(), Some(2), "{mode}: {}", stderr(&out));
        assert!(stderr(&out).contains("outside"), "{mode}: {}", stderr(&out));
    }
    // The same link from a directory that is not the checkout: `$HOME`'s tree is left.
    let mut elsewhere = Command::new(env!("CARGO_BIN_EXE_kinject"));
    let out = elsewhere
        .args(["inject", "--check", "--", &through])
        .current_dir(w.path("home"))
        .output()
        .expect("run kinject");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(w.read("home/.ssh/id.yaml"), ssh);
    // The checkout's own file, named from `$PWD`: rewritten.
    let own = logical.join("k8s/app.yaml").display().to_string();
    let out = run_in(&["inject", "-i", "--", &own]);
    assert!(out.status.code() == Some(1), "{}", stderr(&out));
    assert!(w.read("data/proj/k8s/app.yaml").contains("example.com/s:1"));
}

/// A committed chain of links to what is no path (`zz -> /dev/stderr`, a pipe when CI runs
/// kinject), or a committed link to a FIFO, is not read by `--check` or `--diff`: reading it
/// waited on kinject's own stderr, or showed the caller's piped stdin as the file's lines.
#[test]
fn a_link_to_a_pipe_is_not_read() {
    let w = World::new();
    w.link("repo/k8s/zz.yaml", "/dev/stderr");
    w.link("repo/k8s/err.yaml", "zz.yaml");
    w.link("repo/fd", "/proc/self/fd");
    w.link("repo/k8s/in.yaml", "../fd/0");
    let made = Command::new("mkfifo")
        .arg(w.path("repo/pipe"))
        .status()
        .expect("mkfifo");
    assert!(made.success());
    w.link("repo/k8s/p.yaml", "../pipe");
    for name in ["k8s/err.yaml", "k8s/in.yaml", "k8s/p.yaml"] {
        for mode in ["--check", "--diff"] {
            let mut child = Command::new(env!("CARGO_BIN_EXE_kinject"))
                .args(["inject", mode, "--", name])
                .current_dir(w.repo())
                .env("NO_COLOR", "1")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn");
            let start = std::time::Instant::now();
            while child.try_wait().expect("wait").is_none() {
                if start.elapsed() > std::time::Duration::from_secs(20) {
                    let _ = child.kill();
                    panic!("{mode} {name}: still running after 20 s");
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            let out = child.wait_with_output().expect("output");
            assert_eq!(
                out.status.code(),
                Some(2),
                "{mode} {name}: {}",
                stderr(&out)
            );
            assert!(
                stderr(&out).contains(name),
                "{mode} {name}: {}",
                stderr(&out)
            );
        }
    }
}
