//! Sidecars that cannot be injected together: two that one object can get (a rule injects
//! both, or an object may request both) defining one volume or image pull secret each its own
//! way, or injecting containers of one name. Found when the configuration loads, once, with
//! both definitions; the engine's check of each object stays for what templates decide.

use std::collections::HashMap;

use serde_json::Value;

use super::loaded::{Config, Origin, SidecarDef, SidecarPlace};
use crate::diagnostic::Located;
use crate::diagnostic::codes;
use crate::model::schema::is_template;

/// What kind of pod item a sidecar defines by name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Volume,
    ImagePullSecret,
    /// A container or an init container: their names are unique together in a pod.
    Container,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Volume => "volume",
            Kind::ImagePullSecret => "image pull secret",
            Kind::Container => "container",
        }
    }
}

/// The pod fields whose items a sidecar adds by name, and their kind.
const FIELDS: [(&str, Kind); 4] = [
    ("volumes", Kind::Volume),
    ("imagePullSecrets", Kind::ImagePullSecret),
    ("initContainers", Kind::Container),
    ("containers", Kind::Container),
];

/// One named item a sidecar defines, the same for every object (no template in it).
struct Item<'c> {
    sidecar: &'c SidecarDef,
    kind: Kind,
    name: &'c str,
    value: &'c Value,
    /// Its `name` field's path in the sidecar.
    path: Vec<String>,
}

/// Why two sidecars can be injected into one object.
enum Together<'c> {
    /// One sidecar, with itself.
    Itself,
    /// A rule injects both.
    Rule(&'c str),
    /// An object may request both (`kinject.dev/inject`), as the configuration allows.
    Request,
}

/// Every clash between sidecars one object can get: each later definition against the first
/// earlier one it clashes with, so one conflict is one error.
pub(super) fn check(config: &Config, places: &HashMap<String, SidecarPlace>) -> Vec<Located> {
    let items: Vec<Item<'_>> = config
        .sidecars
        .iter()
        .filter(|s| !config.templates.has_whole(&s.spec.name))
        .flat_map(items_of)
        .collect();
    let mut errors = Vec::new();
    for (j, later) in items.iter().enumerate() {
        let found = items[..j].iter().find_map(|earlier| {
            let clash =
                earlier.kind == later.kind && earlier.name == later.name && differ(earlier, later);
            clash
                .then(|| together(config, places, earlier.sidecar, later.sidecar))
                .flatten()
                .map(|why| (earlier, why))
        });
        if let Some((earlier, why)) = found {
            errors.push(clash(places, earlier, later, &why));
        }
    }
    errors
}

/// The named items of a sidecar that no template decides (a templated one may differ per
/// object: the engine checks it there).
fn items_of(s: &SidecarDef) -> Vec<Item<'_>> {
    let templated = |v: &Value| !s.spec.literal && has_template(v);
    let mut out = Vec::new();
    for (field, kind) in FIELDS {
        let Some(list) = s.definition.get(field).and_then(Value::as_array) else {
            continue;
        };
        for (i, value) in list.iter().enumerate() {
            let Some(name) = value.get("name").and_then(Value::as_str) else {
                continue;
            };
            // A container clashes by its name alone; a volume by all of it.
            let decided = if kind == Kind::Container {
                !templated(&value["name"])
            } else {
                !templated(value)
            };
            if decided {
                out.push(Item {
                    sidecar: s,
                    kind,
                    name,
                    value,
                    path: vec![field.to_owned(), i.to_string(), "name".to_owned()],
                });
            }
        }
    }
    out
}

fn has_template(v: &Value) -> bool {
    match v {
        Value::String(s) => is_template(s),
        Value::Array(items) => items.iter().any(has_template),
        Value::Object(m) => m.values().any(has_template),
        _ => false,
    }
}

/// Whether the engine refuses the two in every pod that gets both, as it compares them: two
/// containers of one name always; volumes and pull secrets when their definitions differ (a
/// volume of a sidecar that keeps the pod's own is settled by the pods that define it).
fn differ(a: &Item<'_>, b: &Item<'_>) -> bool {
    match a.kind {
        Kind::Container => true,
        Kind::Volume if a.sidecar.spec.keep_pod_volumes || b.sidecar.spec.keep_pod_volumes => false,
        _ => a.value != b.value,
    }
}

/// Why sidecars `a` and `b` can be in one object, if they can: itself; a rule that injects
/// both; or a request, when requests are allowed and both are written in native
/// configurations (another injector's sidecars are chosen by its own rules, one at a time).
fn together<'c>(
    config: &'c Config,
    places: &HashMap<String, SidecarPlace>,
    a: &SidecarDef,
    b: &SidecarDef,
) -> Option<Together<'c>> {
    let native = |s: &SidecarDef| places.get(&s.spec.name).is_some_and(|p| p.native);
    if a.index == b.index {
        return native(a).then_some(Together::Itself);
    }
    let both = |inject: &[String]| inject.contains(&a.spec.name) && inject.contains(&b.spec.name);
    if let Some(rule) = config.rules.iter().find(|r| both(&r.spec.inject)) {
        return Some(Together::Rule(&rule.spec.name));
    }
    (config.defaults.allow_requests && native(a) && native(b)).then_some(Together::Request)
}

/// Where an item is written.
fn origin(places: &HashMap<String, SidecarPlace>, item: &Item<'_>) -> Origin {
    places
        .get(&item.sidecar.spec.name)
        .map_or_else(|| item.sidecar.origin.clone(), |p| p.origin(&item.path))
}

/// The error for `later`, which clashes with `earlier`: at the later definition, naming the
/// earlier one's place, both shown.
fn clash(
    places: &HashMap<String, SidecarPlace>,
    earlier: &Item<'_>,
    later: &Item<'_>,
    why: &Together<'_>,
) -> Located {
    let first = origin(places, earlier);
    let at = position(&first);
    let (a, b) = (&earlier.sidecar.spec.name, &later.sidecar.spec.name);
    let (word, n) = (later.kind.word(), later.name);
    let what = match (later.kind, why) {
        (Kind::Container, Together::Itself) => {
            format!("sidecar `{b}` injects two containers named `{n}` (the first at {at})")
        }
        (Kind::Container, _) => {
            format!("container `{n}` is injected by both sidecar `{a}` (at {at}) and sidecar `{b}`")
        }
        (_, Together::Itself) => {
            format!("sidecar `{b}` defines {word} `{n}` twice, differently (first at {at})")
        }
        _ => format!(
            "{word} `{n}` is defined differently by sidecar `{a}` (at {at}) and sidecar `{b}`"
        ),
    };
    let reason = match why {
        Together::Itself => String::new(),
        Together::Rule(rule) => format!(", which rule `{rule}` injects together"),
        Together::Request => format!(
            ", which an object may request together (`{}: \"{a},{b}\"`)",
            crate::select::INJECT_ANNOTATION
        ),
    };
    let note = first
        .error(
            codes::CONFIG_SIDECAR_CLASH,
            format!("sidecar `{a}` defines {word} `{n}` first"),
        )
        .label(format!("sidecar `{a}`'s {word} `{n}`"));
    origin(places, later)
        .error(codes::CONFIG_SIDECAR_CLASH, format!("{what}{reason}"))
        .label(format!("sidecar `{b}`'s {word} `{n}`"))
        .help(help(
            earlier,
            later,
            why,
            (&at, &position(&origin(places, later))),
        ))
        .related(note)
}

/// `file:line:column` of an origin.
fn position(o: &Origin) -> String {
    let (file, line, column) = o.position();
    format!("{file}:{line}:{column}")
}

/// Both definitions, one line each, with their places, and how to settle them.
fn help(
    earlier: &Item<'_>,
    later: &Item<'_>,
    why: &Together<'_>,
    (at, later_at): (&str, &str),
) -> String {
    let (a, b) = (&earlier.sidecar.spec.name, &later.sidecar.spec.name);
    let word = later.kind.word();
    let fix = if later.kind == Kind::Container {
        "rename one of the containers: a pod's container and init container names are unique together (the API server \
         refuses the pod)".to_owned()
    } else if matches!(why, Together::Itself) {
        format!("keep one of the two definitions, or rename one {word} (and what refers to it)")
    } else {
        format!(
            "make the two definitions identical, or rename one {word} (and what refers to it); when the sidecars \
             are meant to share one {word}, define it once, in one of them"
        )
    };
    let requests = if matches!(why, Together::Request) {
        "; or, when no object should get both, refuse requests with `defaults.allowRequests: false`"
    } else {
        ""
    };
    format!(
        "`{a}` ({at}): {}\n`{b}` ({later_at}): {}\n{fix}{requests}",
        short(earlier.value),
        short(later.value)
    )
}

/// A definition on one line, cut short when long.
fn short(value: &Value) -> String {
    const MAX: usize = 120;
    let text = value.to_string();
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::config::load_texts;

    fn codes(text: &str) -> Vec<&'static str> {
        match load_texts(&[("c.yaml".to_owned(), Arc::from(text))], &[]) {
            Ok(_) => Vec::new(),
            Err(errors) => errors.iter().map(|e| e.code).collect(),
        }
    }

    const TWO: &str = "apiVersion: kinject.dev/v1alpha1\nkind: InjectionConfig\nsidecars:\n- name: a\n  KEEP_A\
                       \n  containers: [{name: a, image: a}]\n  volumes: [{name: v, emptyDir: {}}]\n- name: b\
                       \n  containers: [{name: b, image: b}]\n  volumes: [{name: v, configMap: {name: b}}]\nrules:\
                       \n- name: r\n  inject: [a, b]\n";

    #[test]
    fn a_volume_defined_differently_is_refused() {
        assert_eq!(
            codes(&TWO.replace("KEEP_A", "native: false")),
            ["kinject::config::sidecar_clash"]
        );
    }

    /// A sidecar that keeps the pod's own volume of that name: a pod that defines it settles
    /// the clash, so only the objects that do not are refused, each by the engine.
    #[test]
    fn keep_pod_volumes_leaves_it_to_each_object() {
        assert!(codes(&TWO.replace("KEEP_A", "keepPodVolumes: true")).is_empty());
    }

    /// Two SidecarSets that define one volume differently, never in one rule: Kruise chooses
    /// them by their selectors, and a pod both select is refused by the engine.
    #[test]
    fn other_formats_sidecars_are_not_paired_by_requests() {
        let set = |name: &str, volume: &str| {
            format!(
                "apiVersion: apps.kruise.io/v1alpha1\nkind: SidecarSet\nmetadata: {{name: {name}}}\nspec:\
                 \n  selector: {{matchLabels: {{app: {name}}}}}\n  containers:\n  - name: {name}\n    image: x\
                 \n    volumeMounts: [{{name: v, mountPath: /v}}]\n  volumes: [{{name: v, {volume}}}]\n"
            )
        };
        let text = format!(
            "{}---\n{}",
            set("one", "emptyDir: {}"),
            set("two", "hostPath: {path: /v}")
        );
        assert!(codes(&text).is_empty(), "{:?}", codes(&text));
    }
}
