//! Helpers shared by the integration tests.

use serde_json::Value;

/// The Kubernetes objects of a YAML stream as kinject reads them (List items included).
#[allow(dead_code)]
pub fn objects(text: &str) -> Vec<Value> {
    let input = kinject::read::from_bytes(kinject::read::Source::stdin(), text.as_bytes())
        .expect("readable");
    input
        .documents
        .iter()
        .filter_map(|d| d.parsed.as_ref().ok())
        .flat_map(|p| {
            kinject::read::objects(&p.value)
                .into_iter()
                .map(|(_, v)| v.clone())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The value of every document of a YAML stream (a List stays one value).
#[allow(dead_code)]
pub fn objects_of_documents(text: &str) -> Vec<Value> {
    let input = kinject::read::from_bytes(kinject::read::Source::stdin(), text.as_bytes())
        .expect("readable");
    input
        .documents
        .iter()
        .filter_map(|d| d.parsed.as_ref().ok())
        .filter(|p| p.root.is_some())
        .map(|p| p.value.clone())
        .collect()
}
