//! What a label key and a label value may be, as Kubernetes checks them in a selector
//! (k8s.io/apimachinery: `content.IsLabelKey` in pkg/api/validate/content/kube.go, formerly
//! `validation.IsQualifiedName`, and `validation.IsValidLabelValue`): each function returns
//! apimachinery's messages for what is wrong, none when nothing is.

/// A key's name part and a value: at most this many bytes.
const NAME_MAX: usize = 63;

/// A key's prefix (a DNS subdomain): at most this many bytes.
const SUBDOMAIN_MAX: usize = 253;

const NAME_RULE: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an \
    alphanumeric character";

/// What is wrong with `key` as a label key: `[prefix/]name`, the prefix a lowercase DNS
/// subdomain, the name at most 63 bytes of `[A-Za-z0-9][-A-Za-z0-9_.]*` ending alphanumeric.
pub(super) fn label_key_errors(key: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let parts: Vec<&str> = key.split('/').collect();
    let name = match parts[..] {
        [name] => name,
        [prefix, name] => {
            if prefix.is_empty() {
                errors.push("prefix part must be non-empty".to_owned());
            } else {
                errors.extend(
                    subdomain_errors(prefix)
                        .into_iter()
                        .map(|e| format!("prefix part {e}")),
                );
            }
            name
        }
        _ => {
            return vec![format!(
                "a valid label key {NAME_RULE}, with an optional DNS subdomain prefix and '/' (e.g. \
                    'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_owned());
    } else if name.len() > NAME_MAX {
        errors.push(format!("name part must be no more than {NAME_MAX} bytes"));
    }
    if !is_name(name) {
        errors.push(format!("name part {NAME_RULE}"));
    }
    errors
}

/// What is wrong with `value` as a label value: empty, or at most 63 bytes of
/// `[A-Za-z0-9][-A-Za-z0-9_.]*` ending alphanumeric.
pub(super) fn label_value_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > NAME_MAX {
        errors.push(format!("must be no more than {NAME_MAX} bytes"));
    }
    if !value.is_empty() && !is_name(value) {
        errors.push("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and \
            must start and end with an alphanumeric character".to_owned());
    }
    errors
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, whatever its length.
fn is_name(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// What is wrong with `s` as a lowercase RFC 1123 subdomain: at most 253 bytes of labels
/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?` joined by dots.
fn subdomain_errors(s: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if s.len() > SUBDOMAIN_MAX {
        errors.push(format!("must be no more than {SUBDOMAIN_MAX} bytes"));
    }
    let label = |l: &str| {
        let b = l.as_bytes();
        let edge = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        b.first().is_some_and(edge)
            && b.last().is_some_and(edge)
            && b.iter().all(|c| edge(c) || *c == b'-')
    };
    if !s.split('.').all(label) {
        errors.push("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', \
            and must start and end with an alphanumeric character".to_owned());
    }
    errors
}
