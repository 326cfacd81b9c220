//! Splits the embedded configuration schemas (`src/config/*.validation.json`) into their top
//! level and their definitions, one string each, so that kinject parses only the definitions
//! a configuration refers to (`config::schema`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

fn main() {
    let dir = Path::new("src/config");
    let mut out = String::new();
    let mut definitions: BTreeMap<String, String> = BTreeMap::new();
    for (name, file) in [
        ("CONFIG_TOP", "config.validation.json"),
        ("BODY_TOP", "body.validation.json"),
    ] {
        let path = dir.join(file);
        println!("cargo::rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path).expect("read an embedded schema");
        let mut top: serde_json::Map<String, Value> =
            serde_json::from_str(&text).expect("an embedded schema is a JSON object");
        if let Some(Value::Object(defs)) = top.remove("$defs") {
            for (def, schema) in defs {
                let schema = schema.to_string();
                // One set of definitions serves both schemas: a name means one thing.
                if let Some(other) = definitions.insert(def.clone(), schema.clone()) {
                    assert_eq!(other, schema, "`{def}` differs between the schemas");
                }
            }
        }
        let top = Value::Object(top).to_string();
        writeln!(out, "pub(super) const {name}: &str = {top:?};").expect("write");
    }
    writeln!(
        out,
        "/// By name, sorted.\npub(super) const DEFINITIONS: [(&str, &str); {}] = [",
        definitions.len()
    )
    .expect("write");
    for (def, schema) in &definitions {
        writeln!(out, "    ({def:?}, {schema:?}),").expect("write");
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("schemas.rs");
    std::fs::write(dest, out).expect("write schemas.rs");
}
