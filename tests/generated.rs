//! Files generated from the code — shell completions, the man pages, the configuration's JSON
//! Schema and its field reference — are checked in, and must match what the code generates
//! today.
//! Regenerate with `KINJECT_BLESS=1 cargo test --test it generated::`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

fn kinject(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kinject"))
        .args(args)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

fn check(path: &str, actual: &str) -> Option<String> {
    let path = root().join(path);
    if std::env::var_os("KINJECT_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, actual).expect("write");
        return None;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    (expected != actual).then(|| {
        format!(
            "{} is out of date: run KINJECT_BLESS=1 cargo test --test it generated::",
            path.display()
        )
    })
}

#[test]
fn completions_are_current() {
    let stale: Vec<String> = [
        ("bash", "completions/kinject.bash"),
        ("zsh", "completions/_kinject"),
        ("fish", "completions/kinject.fish"),
        ("powershell", "completions/_kinject.ps1"),
        ("elvish", "completions/kinject.elv"),
    ]
    .iter()
    .filter_map(|(shell, path)| check(path, &kinject(&["completions", shell])))
    .collect();
    assert!(stale.is_empty(), "{}", stale.join("\n"));
}

/// The man pages: `man/kinject.1` and one per subcommand (`man/kinject-inject.1`, …), made
/// by clap_mangen from the command line's definition, with the package's version (not the
/// commit `--version` adds: the pages change when the command line does).
#[test]
fn man_pages_are_current() {
    use clap::CommandFactory;
    let made = tempfile::tempdir().expect("tempdir");
    let command = kinject::Cli::command().version(env!("CARGO_PKG_VERSION"));
    clap_mangen::generate_to(command, made.path()).expect("man pages");
    let names = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map(|d| {
                d.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    };
    let pages = names(made.path());
    assert!(pages.contains(&"kinject-inject.1".to_owned()), "{pages:?}");
    let mut stale: Vec<String> = pages
        .iter()
        .filter_map(|page| {
            let text = std::fs::read_to_string(made.path().join(page)).expect("page");
            check(&format!("man/{page}"), &text)
        })
        .collect();
    if std::env::var_os("KINJECT_BLESS").is_none() {
        stale.extend(
            names(&root().join("man"))
                .into_iter()
                .filter(|page| !pages.contains(page))
                .map(|page| format!("man/{page} is no longer made: remove it")),
        );
    }
    assert!(stale.is_empty(), "{}", stale.join("\n"));
}

/// `man` reads the page: it renders without a warning, names the subcommands and a flag.
#[test]
fn man_page_renders() {
    let out = Command::new("man")
        .args(["--warnings", "-E", "UTF-8", "-l"])
        .arg(root().join("man/kinject.1"))
        .env("MANWIDTH", "100")
        .env("MAN_KEEP_FORMATTING", "0")
        .output()
        .expect("man is installed (Debian: man-db)");
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for word in ["kinject-inject(1)", "uninject", "Inject sidecar containers"] {
        assert!(text.contains(word), "{word} not in:\n{text}");
    }
}

#[test]
fn schema_is_current() {
    let schema = kinject(&["schema"]);
    let parsed: Value = serde_json::from_str(&schema).expect("schema is JSON");
    assert_eq!(parsed["$defs"]["Sidecar"]["additionalProperties"], false);
    let stale = check("docs/config.schema.json", &schema);
    assert!(stale.is_none(), "{}", stale.unwrap_or_default());
}

/// The field reference of docs/config-reference.md, from the schema's descriptions.
fn reference(schema: &Value) -> String {
    let defs = &schema["$defs"];
    let mut out = String::from(
        "# Configuration reference\n\n\
         Generated from the configuration types (`kinject schema` prints the same as JSON Schema);\n\
         do not edit by hand. The guide is [config.md](config.md).\n",
    );
    // The file, then every type of kinject's own in the schema's order (each one a link can
    // name: `#resourcespolicy`), the enumerations last.
    let own: Vec<(&String, &Value)> = defs
        .as_object()
        .expect("$defs")
        .iter()
        .filter(|(name, _)| !name.starts_with("io.k8s."))
        .collect();
    let mut sections: Vec<(&str, &Value)> = vec![("InjectionConfig (the file)", schema)];
    sections.extend(
        own.iter()
            .filter(|(_, def)| def.get("properties").is_some())
            .map(|(name, def)| (name.as_str(), *def)),
    );
    for (title, def) in sections {
        out.push_str(&format!("\n## {title}\n\n"));
        if let Some(d) = def.get("description").and_then(Value::as_str) {
            out.push_str(&format!("{}\n\n", d.replace('\n', " ")));
        }
        out.push_str("| field | type | required | description |\n|---|---|---|---|\n");
        let required: Vec<&str> = def["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, prop) in def["properties"].as_object().expect("properties") {
            let description = prop
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .replace('\n', " ")
                .replace('|', "\\|");
            out.push_str(&format!(
                "| `{name}` | {} | {} | {description} |\n",
                type_of(prop),
                if required.contains(&name.as_str()) {
                    "yes"
                } else {
                    ""
                }
            ));
        }
    }
    out.push_str("\n## Enumerations\n");
    for (name, def) in own
        .iter()
        .filter(|(_, def)| def.get("properties").is_none())
    {
        let values: Vec<String> = enum_values(def).iter().map(|v| format!("`{v}`")).collect();
        assert!(!values.is_empty(), "{name}: neither fields nor values");
        out.push_str(&format!("\n### {name}\n\n{}\n", values.join(", ")));
    }
    out
}

fn enum_values(def: &Value) -> Vec<String> {
    if let Some(e) = def["enum"].as_array() {
        return e
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
    }
    def["oneOf"]
        .as_array()
        .map(|o| {
            o.iter()
                .filter_map(|v| v["const"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn type_of(prop: &Value) -> String {
    if let Some(r) = prop["$ref"].as_str() {
        return link(r);
    }
    if let Some(any) = prop["anyOf"].as_array() {
        let parts: Vec<String> = any
            .iter()
            .filter(|p| p["type"] != "null")
            .map(type_of)
            .collect();
        return parts.join(" or ");
    }
    match prop["type"].as_str() {
        Some("array") => format!("list of {}", type_of(&prop["items"])),
        Some("object") => match prop.get("additionalProperties") {
            Some(Value::Object(v)) => format!("map of {}", type_of(&Value::Object(v.clone()))),
            _ => "mapping".to_owned(),
        },
        Some(t) => t.to_owned(),
        None => match prop["type"].as_array() {
            Some(ts) => ts
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect::<Vec<_>>()
                .join(" or "),
            None => "any".to_owned(),
        },
    }
}

fn link(reference: &str) -> String {
    let name = reference.rsplit('/').next().unwrap_or(reference);
    match name.strip_prefix("io.k8s.api.core.v1.") {
        Some(k8s) => {
            format!("[{k8s}](https://kubernetes.io/docs/reference/kubernetes-api/) (Kubernetes)")
        }
        None if name.starts_with("io.k8s.") => name.rsplit('.').next().unwrap_or(name).to_owned(),
        None => format!("[{name}](#{})", name.to_lowercase()),
    }
}

#[test]
fn config_reference_is_current() {
    let schema: Value = serde_json::from_str(&kinject(&["schema"])).expect("schema");
    let text = reference(&schema);
    let stale = check("docs/config-reference.md", &text);
    assert!(stale.is_none(), "{}", stale.unwrap_or_default());
    // Every type a field names has its section: each `(#anchor)` is a heading's.
    let anchors: Vec<String> = text
        .lines()
        .filter_map(|l| {
            l.trim_start_matches('#')
                .strip_prefix(' ')
                .filter(|_| l.starts_with('#'))
        })
        .map(|h| h.split(' ').next().unwrap_or(h).to_lowercase())
        .collect();
    for link in text.split("](#").skip(1) {
        let anchor = link.split(')').next().unwrap_or(link);
        assert!(
            anchors.iter().any(|a| a == anchor),
            "#{anchor} names no heading"
        );
    }
}
