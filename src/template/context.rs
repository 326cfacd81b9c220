//! The template context of one object (`pod`, `workload`, `name`, `namespace`, `labels`,
//! `annotations`, `values`), read in place. What comes from the object is a view into its
//! JSON, shared with whoever holds it: a mapping or list becomes a template value when a
//! template reads it, and once. Copying the object into template values for every render
//! made five copies of a pod's metadata, read or not (a review of a pod of 74,000 annotations
//! peaked at 114 MB, most of it template values no template read).
//!
//! A view behaves as the map or sequence minijinja makes of the same JSON (`preserve_order`):
//! the same entries in the same order, the same kinds, lengths, comparisons and printing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use minijinja::value::{Enumerator, Object, ObjectExt, ObjectRepr, ValueKind};
use serde_json::{Map, Value};

/// A JSON value templates read, and where: in a value its holder shares (`Shared`: the
/// value, and the JSON pointer of the part inside it), or borrowed, and then copied once when
/// the context is made.
#[derive(Clone, Copy)]
pub(crate) enum Source<'a> {
    Borrowed(&'a Value),
    Shared(&'a Arc<Value>, &'a str),
}

/// The template context for one object: `pod` is its pod template as templates read it,
/// `workload` the object (of which its `apiVersion`, `kind` and `metadata` are read).
/// `values` are the configuration's (trusted: printed as they are in whole templates);
/// everything read from the object is untrusted.
pub(crate) fn context_of(
    pod: Source<'_>,
    workload: Source<'_>,
    namespace: &str,
    values: &Map<String, Value>,
) -> minijinja::Value {
    let pod_node = Node::of(pod, None);
    let workload = match (pod, workload) {
        // A pod is its own workload: one copy, or one view of what is shared, serves both.
        (Source::Borrowed(p), Source::Borrowed(w)) if std::ptr::eq(p, w) => pod_node.clone(),
        (Source::Shared(p, _), Source::Shared(w, pointer)) if Arc::ptr_eq(p, w) => {
            Node::within(&pod_node.json, pointer)
        }
        _ => Node::of(workload, Some(&["apiVersion", "kind", "metadata"])),
    };
    let pod = pod_node;
    let meta = workload.child("metadata");
    let own_meta = pod.child("metadata");
    let merged = |field: &str| {
        minijinja::Value::from_object(Merged {
            workload: meta
                .as_ref()
                .and_then(|m| m.child(field))
                .filter(Node::is_map),
            pod: own_meta
                .as_ref()
                .and_then(|m| m.child(field))
                .filter(Node::is_map),
            len: OnceLock::new(),
            pairs: OnceLock::new(),
        })
    };
    let none = || minijinja::Value::from(());
    let part = |node: Option<Node>| node.map_or_else(none, |n| n.value());
    let name = meta
        .as_ref()
        .and_then(|m| m.child("name"))
        .map_or_else(|| minijinja::Value::from(""), |n| n.value());
    let workload = minijinja::Value::from_pairs([
        ("apiVersion", part(workload.child("apiVersion"))),
        ("kind", part(workload.child("kind"))),
        ("metadata", part(meta.clone())),
    ]);
    minijinja::Value::from_pairs([
        ("pod", pod.value()),
        ("workload", workload),
        ("namespace", minijinja::Value::from(namespace)),
        ("name", name),
        ("labels", merged("labels")),
        ("annotations", merged("annotations")),
        ("values", trusted_map(values)),
    ])
}

/// Configuration values: strings marked safe so whole templates print them as written.
fn trusted(value: &Value) -> minijinja::Value {
    match value {
        Value::String(s) => minijinja::Value::from_safe_string(s.clone()),
        Value::Array(items) => {
            minijinja::Value::from(items.iter().map(trusted).collect::<Vec<_>>())
        }
        Value::Object(map) => trusted_map(map),
        other => super::filters::ser(other),
    }
}

fn trusted_map(map: &Map<String, Value>) -> minijinja::Value {
    minijinja::Value::from_pairs(map.iter().map(|(k, v)| (k.clone(), trusted(v))))
}

/// A JSON value shared by the views into it, and the template values made of its parts so
/// far, by the address of the JSON each was made of: a part is made once however often
/// templates read it (a loop that reads a 3 MB annotation copies it once, as the copied
/// context did), and a mapping or list read again while its view is held is the same object
/// (`is sameas`), as in the copied context. Views are kept weakly: each holds its `Json`.
struct Json {
    root: Arc<Value>,
    strings: Mutex<HashMap<usize, minijinja::Value>>,
    views: Mutex<HashMap<usize, Weak<View>>>,
}

impl std::fmt::Debug for Json {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Json")
    }
}

/// Strings longer than this are copied to the heap when made a template value (minijinja
/// keeps shorter ones inline): those are made once and kept.
const INLINE: usize = 22;

impl Json {
    fn new(root: Arc<Value>) -> Arc<Json> {
        Arc::new(Json {
            root,
            strings: Mutex::default(),
            views: Mutex::default(),
        })
    }

    /// The template value made of `json` (a part of `root`, at the path `path` gives): a
    /// mapping or list as a view, anything else as minijinja makes it.
    fn value(self: &Arc<Self>, json: &Value, path: impl FnOnce() -> Path) -> minijinja::Value {
        match json {
            Value::Object(_) | Value::Array(_) => {
                let mut views = self.views.lock().unwrap_or_else(PoisonError::into_inner);
                let slot = views.entry(address(json)).or_default();
                let view = slot.upgrade().unwrap_or_else(|| {
                    let view = Arc::new(View(Node {
                        json: self.clone(),
                        path: path(),
                    }));
                    *slot = Arc::downgrade(&view);
                    view
                });
                minijinja::Value::from_dyn_object(view)
            }
            Value::String(s) if s.len() > INLINE => {
                self.string(json, || minijinja::Value::from(s.as_str()))
            }
            scalar => super::filters::ser(scalar),
        }
    }

    /// A mapping's key (of `root`) as a template value. A key and a value are distinct
    /// places in the JSON: their addresses never meet in `strings`.
    fn key(&self, key: &String) -> minijinja::Value {
        if key.len() > INLINE {
            self.string(key, || minijinja::Value::from(key.as_str()))
        } else {
            minijinja::Value::from(key.as_str())
        }
    }

    /// The string made of the JSON at `place` (in `root`), made by `make` the first time.
    fn string<T>(&self, place: &T, make: impl FnOnce() -> minijinja::Value) -> minijinja::Value {
        let mut strings = self.strings.lock().unwrap_or_else(PoisonError::into_inner);
        strings.entry(address(place)).or_insert_with(make).clone()
    }
}

/// Where `place` is, as a number (a key of what a `Json` has made).
fn address<T>(place: &T) -> usize {
    std::ptr::from_ref(place) as usize
}

/// How to reach a part of a `Json` from its root.
type Path = Arc<[Step]>;

/// One step from a mapping or list to a part of it.
#[derive(Debug, Clone)]
enum Step {
    Key(Arc<str>),
    Index(usize),
}

/// A part of a `Json`, and the way to it.
#[derive(Debug, Clone)]
struct Node {
    json: Arc<Json>,
    path: Path,
}

impl Node {
    /// The part `source` names; borrowed JSON is copied (of a workload, only `fields`).
    fn of(source: Source<'_>, fields: Option<&[&str]>) -> Node {
        match source {
            Source::Shared(root, pointer) => Node::within(&Json::new(root.clone()), pointer),
            Source::Borrowed(value) => {
                let copy = match (fields, value) {
                    (Some(fields), Value::Object(map)) => Value::Object(
                        fields
                            .iter()
                            .filter_map(|f| Some(((*f).to_owned(), map.get(*f)?.clone())))
                            .collect(),
                    ),
                    _ => value.clone(),
                };
                Node {
                    json: Json::new(Arc::new(copy)),
                    path: Path::from([]),
                }
            }
        }
    }

    /// The part of `json` at JSON pointer `pointer`.
    fn within(json: &Arc<Json>, pointer: &str) -> Node {
        let mut path = Vec::new();
        let mut at: &Value = &json.root;
        for token in crate::json::tokens(pointer) {
            let step = match (at, token.parse::<usize>()) {
                (Value::Array(_), Ok(i)) => Step::Index(i),
                _ => Step::Key(Arc::from(token)),
            };
            at = resolve(at, std::slice::from_ref(&step));
            path.push(step);
        }
        Node {
            json: json.clone(),
            path: Path::from(path),
        }
    }

    fn get(&self) -> &Value {
        resolve(&self.json.root, &self.path)
    }

    fn is_map(&self) -> bool {
        self.get().is_object()
    }

    /// The path of this node's part at `step`.
    fn to(&self, step: Step) -> Path {
        self.path.iter().cloned().chain([step]).collect()
    }

    /// Member `key` of this mapping, if it has one.
    fn child(&self, key: &str) -> Option<Node> {
        self.get().as_object()?.get(key)?;
        Some(Node {
            json: self.json.clone(),
            path: self.to(Step::Key(Arc::from(key))),
        })
    }

    /// This part as a template value.
    fn value(&self) -> minijinja::Value {
        self.json.value(self.get(), || self.path.clone())
    }

    /// `value`, this mapping's member `key`, as a template value.
    fn member(&self, key: &str, value: &Value) -> minijinja::Value {
        self.json
            .value(value, || self.to(Step::Key(Arc::from(key))))
    }
}

/// The part of `root` at `path` (null when there is none: never for the path of a node, the
/// JSON being read only).
fn resolve<'a>(root: &'a Value, path: &[Step]) -> &'a Value {
    static NULL: Value = Value::Null;
    path.iter()
        .try_fold(root, |at, step| match step {
            Step::Key(key) => at.get(&**key),
            Step::Index(i) => at.get(*i),
        })
        .unwrap_or(&NULL)
}

/// A mapping or list of the object, as a template map or sequence.
#[derive(Debug)]
struct View(Node);

impl Object for View {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        if self.0.get().is_array() {
            ObjectRepr::Seq
        } else {
            ObjectRepr::Map
        }
    }

    fn get_value(self: &Arc<Self>, key: &minijinja::Value) -> Option<minijinja::Value> {
        let node = &self.0;
        match node.get() {
            Value::Array(items) => {
                let i = key.as_usize()?;
                let item = items.get(i)?;
                Some(node.json.value(item, || node.to(Step::Index(i))))
            }
            Value::Object(map) => {
                let (key, value) = map.get_key_value(string_key(key)?)?;
                Some(node.member(key, value))
            }
            _ => None,
        }
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        if let Value::Array(items) = self.0.get() {
            return Enumerator::Seq(items.len());
        }
        self.mapped_rev_key_value_enumerator(|this| {
            let node = &this.0;
            Box::new(
                node.get()
                    .as_object()
                    .into_iter()
                    .flat_map(|m| m.iter())
                    .map(|(k, v)| (node.json.key(k), node.member(k, v))),
            )
        })
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(match self.0.get() {
            Value::Array(items) => items.len(),
            Value::Object(map) => map.len(),
            _ => 0,
        })
    }
}

/// A key a mapping of the JSON can hold: a string (a template map made of the JSON finds
/// nothing under a number, or under bytes that read as the same text).
fn string_key(key: &minijinja::Value) -> Option<&str> {
    (key.kind() == ValueKind::String)
        .then(|| key.as_str())
        .flatten()
}

/// The workload's labels or annotations merged with the pod template's own (the pod's win),
/// in the order of a mapping made of the workload's then the pod's: the workload's keys
/// first, then those only the pod has. A label or annotation written without a value (`key:`,
/// `!!null`) is the empty string Kubernetes stores for it, not a none a template would print
/// as `none` or a typed field take for "unset".
#[derive(Debug)]
struct Merged {
    workload: Option<Node>,
    pod: Option<Node>,
    /// How many keys the two hold, counted when first asked.
    len: OnceLock<usize>,
    /// Every entry, made when first enumerated: enumerating again costs what enumerating a
    /// made map costs.
    pairs: OnceLock<Vec<(minijinja::Value, minijinja::Value)>>,
}

impl Merged {
    fn workload_map(&self) -> Option<&Map<String, Value>> {
        self.workload.as_ref()?.get().as_object()
    }

    fn pod_map(&self) -> Option<&Map<String, Value>> {
        self.pod.as_ref()?.get().as_object()
    }

    /// The keys only the pod holds.
    fn added(&self) -> impl Iterator<Item = &String> {
        let workload = self.workload_map();
        self.pod_map()
            .into_iter()
            .flat_map(|m| m.keys())
            .filter(move |k| !workload.is_some_and(|w| w.contains_key(*k)))
    }

    /// The value of `key`, as stored: the pod's own, else the workload's.
    fn stored(&self, key: &str) -> Option<minijinja::Value> {
        [&self.pod, &self.workload]
            .into_iter()
            .flatten()
            .find_map(|side| {
                let value = side.get().as_object()?.get(key)?;
                Some(match value {
                    Value::Null => minijinja::Value::from(""),
                    value => side.member(key, value),
                })
            })
    }

    fn pairs(&self) -> &[(minijinja::Value, minijinja::Value)] {
        self.pairs.get_or_init(|| {
            let inherited = self.workload.iter().flat_map(|side| {
                side.get()
                    .as_object()
                    .into_iter()
                    .flat_map(|m| m.keys())
                    .map(move |k| (side, k))
            });
            let added = self
                .pod
                .iter()
                .flat_map(|side| self.added().map(move |k| (side, k)));
            inherited
                .chain(added)
                .map(|(side, k)| (side.json.key(k), self.stored(k).unwrap_or_default()))
                .collect()
        })
    }
}

impl Object for Merged {
    fn get_value(self: &Arc<Self>, key: &minijinja::Value) -> Option<minijinja::Value> {
        self.stored(string_key(key)?)
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        self.mapped_rev_key_value_enumerator(|this| Box::new(this.pairs().iter().cloned()))
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(
            *self
                .len
                .get_or_init(|| self.workload_map().map_or(0, Map::len) + self.added().count()),
        )
    }
}

/// The template context for one object, read from `pod` (its pod template) and `workload`
/// (the object), copied once (`context_of` reads them in place when their holder shares them).
pub(crate) fn context(
    pod: &Value,
    workload: &Value,
    namespace: &str,
    values: &Map<String, Value>,
) -> minijinja::Value {
    context_of(
        Source::Borrowed(pod),
        Source::Borrowed(workload),
        namespace,
        values,
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::template::filters::ser;
    use crate::template::{Dialect, Templates, context};

    /// The context as it was made before views: every part copied into template values. The
    /// views must render as it does.
    fn copied(
        pod: &Value,
        workload: &Value,
        namespace: &str,
        values: &Map<String, Value>,
    ) -> minijinja::Value {
        let metadata = pod
            .get("metadata")
            .cloned()
            .unwrap_or(Value::Object(Map::new()));
        let workload_meta = workload.get("metadata");
        let as_stored = |v: &Value| match v {
            Value::Null => Value::String(String::new()),
            v => v.clone(),
        };
        let merged = |field: &str| {
            let mut out: Map<String, Value> = workload_meta
                .and_then(|m| m.get(field))
                .and_then(Value::as_object)
                .map(|m| m.iter().map(|(k, v)| (k.clone(), as_stored(v))).collect())
                .unwrap_or_default();
            if let Some(own) = metadata.get(field).and_then(Value::as_object) {
                for (k, v) in own {
                    out.insert(k.clone(), as_stored(v));
                }
            }
            Value::Object(out)
        };
        let name = workload_meta
            .and_then(|m| m.get("name"))
            .cloned()
            .unwrap_or(Value::String(String::new()));
        let workload_view = json!({
            "apiVersion": workload.get("apiVersion"),
            "kind": workload.get("kind"),
            "metadata": workload_meta,
        });
        minijinja::Value::from_pairs([
            ("pod", ser(pod)),
            ("workload", ser(&workload_view)),
            ("namespace", minijinja::Value::from(namespace)),
            ("name", ser(&name)),
            ("labels", ser(merged("labels"))),
            ("annotations", ser(merged("annotations"))),
            ("values", trusted(&Value::Object(values.clone()))),
        ])
    }

    const LONG: &str = "a value longer than twenty-two bytes, kept once made";

    fn deployment() -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop",
                "labels": {"app": "web", "tier": null, "team": "a"},
                "annotations": {"w": "1", "both": "workload's", "nothing": null,
                    "a key that is longer than twenty-two bytes": LONG}},
            "spec": {"replicas": 3, "template": {
                "metadata": {"labels": {"tier": "web", "own": "x", "app": "pod's"},
                    "annotations": {"both": "pod's", "p": null, "n": 7, "f": 1.5, "neg": -2,
                        "b": true, "m": {"x": [1, "two", null]}, "long": LONG}},
                "spec": {"serviceAccountName": "billing", "containers": [
                    {"name": "app", "image": "nginx", "args": ["-v", LONG]},
                    {"name": "log", "image": "busybox", "ports": [{"containerPort": 80}]}]}}}
        })
    }

    /// What each expression and statement renders to (or the error it gives), and the fuel
    /// it takes.
    const EXPRESSIONS: &[&str] = &[
        "{{ pod }}",
        "{{ pod|tojson }}",
        "{{ workload|tojson }}",
        "{{ workload }}",
        "{{ labels }}|{{ annotations }}|{{ name }}|{{ namespace }}|{{ values }}",
        "{{ labels|tojson }}{{ annotations|tojson }}",
        "{{ annotations|items|list }}",
        "{{ annotations|length }} {{ labels|length }} {{ pod.spec.containers|length }}",
        "{{ annotations|reverse|list }} {{ pod.spec.containers|reverse|list }}",
        "{{ annotations|dictsort }} {{ pod.metadata.annotations|dictsort }}",
        "{{ annotations|first }} {{ pod.spec.containers|last }} {{ annotations|list|last }}",
        "{{ annotations is mapping }} {{ pod.spec.containers is sequence }} {{ pod is mapping }}",
        "{{ 'both' in annotations }} {{ 'x' in annotations }} {{ 1 in annotations }} {{ 'app' in \
         pod.spec.containers[0] }}",
        "{{ pod.spec.containers[0] in pod.spec.containers }} {{ {'name': 'log'} in pod.spec.containers }}",
        "{{ annotations.both }} {{ annotations.p }} {{ annotations.nothing }} {{ labels.tier }}",
        "{{ annotations['a key that is longer than twenty-two bytes'] }}",
        "{{ pod.spec.containers[-1].name }} {{ pod.spec.containers[1:] }} {{ pod.spec.containers[5] is undefined }}",
        "{{ pod.metadata == workload.metadata }} {{ pod.spec == pod.spec }} {{ annotations == annotations }}",
        "{{ pod.metadata.labels == {'tier': 'web', 'own': 'x', 'app': \"pod's\"} }}",
        "{{ pod.spec.containers < pod.spec.containers }} {{ [pod.metadata, pod.metadata]|unique|list|length }}",
        "{{ pod.spec.containers|map(attribute='name')|join(',') }}",
        "{{ pod.spec.containers|selectattr('ports')|list }}",
        "{{ annotations.keys()|list }} {{ annotations.values()|list }} {{ annotations.items()|list }}",
        "{{ annotations.get('both') }} {{ annotations.get('none', 'd') }} {{ pod.metadata.annotations.get('p') }}",
        "{% for k, v in annotations|items %}{{ loop.index }}{{ k }}={{ v }};{% endfor %}",
        "{% for c in pod.spec.containers %}{% for a in c.args|default([]) %}{{ a }}{% endfor %}{% endfor %}",
        "{% for k in pod.metadata.annotations %}{{ k }}{% endfor %}",
        "{{ pod.metadata.annotations.m.x }} {{ pod.metadata.annotations.m.x[1]|upper }}",
        "{{ pod.metadata.annotations.n + 1 }} {{ pod.metadata.annotations.f * 2 }} {{ pod.metadata.annotations.neg }}",
        "{{ debug(pod.spec.containers) }} {{ debug(annotations) }}",
        "{{ annotations|string|length }} {{ pod|pprint }}",
        "{{ pod.nope.x }}",
        "{{ pod.spec.containers.x.y }}",
        "{{ annotations.nope.x }}",
        "{{ pod.spec.containers['0'] }}",
        "{{ pod.spec is sameas pod.spec }} {{ annotations is sameas annotations }} {{ pod.metadata.annotations.long is \
         sameas pod.metadata.annotations.long }}",
        "{{ workload.metadata is sameas workload.metadata }} {{ labels.tier is sameas labels.tier }}",
        "{{ annotation('both') }}|{{ annotation('p') }}|{{ annotation('nope', 'd') }}|{{ service_account() }}",
        "{{ pod.metadata.annotations|go_range }} {{ pod.spec.containers|go_range }}",
        "{{ annotations.m|tojson }} {{ annotations.m|typed_json('m') }}",
        "{% if annotations %}a{% endif %}{% if pod.spec.volumes is defined %}v{% endif %}{% if labels %}l{% endif %}",
        "{% for i in range(3000) %}{% for k, v in annotations|items %}{{ v|string|length }}{% endfor %}{% endfor %}",
        "{% for i in range(100000) %}{% for k in pod.metadata.annotations %}{% endfor %}{% endfor %}",
    ];

    fn renders(ctx: &minijinja::Value) -> Vec<String> {
        // Translated templates' environment: native templates' and `go_range` (which walks
        // a view too).
        let mut t = Templates::new();
        t.env = super::super::env::translated_environment();
        t.env.add_function("fuel", |state: &minijinja::State| {
            state.fuel_levels().map_or(0, |(used, _)| used)
        });
        EXPRESSIONS
            .iter()
            .map(|e| {
                let text = format!("{e}|{{{{ fuel() }}}}");
                match t.env.render_str(&text, ctx) {
                    Ok(out) => out,
                    Err(err) => format!("error: {}", super::super::env::describe(&err)),
                }
            })
            .collect()
    }

    #[test]
    fn views_render_as_copies_do() {
        let object = deployment();
        let pod = &object["spec"]["template"];
        let values = json!({"v": "1", "l": [1, "x"]});
        let values = values.as_object().unwrap();
        let expected = renders(&copied(pod, &object, "shop", values));
        let shared = Arc::new(object.clone());
        for (how, ctx) in [
            (
                "borrowed",
                context_of(
                    Source::Borrowed(pod),
                    Source::Borrowed(&object),
                    "shop",
                    values,
                ),
            ),
            (
                "shared",
                context_of(
                    Source::Shared(&shared, "/spec/template"),
                    Source::Shared(&shared, ""),
                    "shop",
                    values,
                ),
            ),
        ] {
            for (e, (want, got)) in EXPRESSIONS.iter().zip(expected.iter().zip(renders(&ctx))) {
                assert_eq!(want, &got, "{how}: {e}");
            }
        }
        // A pod is its own workload.
        let own = &object["spec"]["template"];
        let expected = renders(&copied(own, own, "", values));
        let shared = Arc::new(own.clone());
        for ctx in [
            context_of(Source::Borrowed(own), Source::Borrowed(own), "", values),
            context_of(
                Source::Shared(&shared, ""),
                Source::Shared(&shared, ""),
                "",
                values,
            ),
        ] {
            assert_eq!(expected, renders(&ctx));
        }
    }

    #[test]
    fn views_print_as_copies_do_in_whole_templates() {
        let object = deployment();
        let pod = &object["spec"]["template"];
        let mut t = Templates::new();
        let text = "containers:\n- name: c\n  image: i\n  args: {{ pod.spec.containers[0].args }}\n  env:\
                    \n{% for k, v in annotations|items %}  - {name: '{{ k }}', value: '{{ v }}'}\
                    \n{% endfor %}  command: [{{ pod.metadata.annotations.m }}, '{{ labels }}']\n";
        t.add_sidecar("w", &json!({}), Some(text), Dialect::Native)
            .unwrap();
        let values = Map::new();
        let want = t.render_whole("w", &copied(pod, &object, "", &values));
        let got = t.render_whole(
            "w",
            &context_of(
                Source::Borrowed(pod),
                Source::Borrowed(&object),
                "",
                &values,
            ),
        );
        assert_eq!(
            format!("{:?}", want.map(|r| r.map_err(|e| e.message))),
            format!("{:?}", got.map(|r| r.map_err(|e| e.message)))
        );
    }

    /// A context and what it made are freed with it (views hold their JSON, which holds
    /// them only weakly).
    #[test]
    fn a_context_frees_what_it_made() {
        let object = Arc::new(deployment());
        let ctx = context_of(
            Source::Shared(&object, "/spec/template"),
            Source::Shared(&object, ""),
            "",
            &Map::new(),
        );
        let t = Templates::new();
        let out = t
            .env
            .render_str(
                "{{ pod.spec.containers|tojson }}{{ annotations|items|list }}",
                &ctx,
            )
            .unwrap();
        assert!(out.contains("nginx"), "{out}");
        assert!(Arc::strong_count(&object) > 1);
        drop(ctx);
        assert_eq!(Arc::strong_count(&object), 1, "a view outlived its context");
    }

    #[test]
    fn a_part_is_made_once_however_often_it_is_read() {
        let object = deployment();
        let ctx = context(&object["spec"]["template"], &object, "", &Map::new());
        let read = |expr: &str| {
            let t = Templates::new();
            t.env.render_str(expr, &ctx).unwrap()
        };
        assert_eq!(
            read("{{ pod.metadata.annotations.long is sameas pod.metadata.annotations.long }}"),
            "True"
        );
        assert_eq!(read("{{ pod.spec is sameas pod.spec }}"), "True");
    }
}
