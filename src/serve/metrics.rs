//! What the server counts, in Prometheus' text format (`GET /metrics`): reviews by result and
//! kind, their latency, sidecars injected by name, refusals by HTTP status, and the reloads
//! of the configuration and the certificates. Every label's values come from a closed set
//! (a review's kind is one the configuration knows, else `other`), and are escaped.

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::inject::ActionKind;
use crate::integrations::admission::ReviewResult;

type Labels = Vec<(&'static str, String)>;

pub(crate) struct Metrics {
    registry: Registry,
    reviews: Family<Labels, Counter>,
    latency: Histogram,
    sidecars: Family<Labels, Counter>,
    refusals: Family<Labels, Counter>,
    reloads: Family<Labels, Counter>,
    /// 1 when the last attempt to load each (`config`, `certificate`) succeeded.
    current: Family<Labels, Gauge>,
    in_flight: Gauge,
    in_flight_bytes: Gauge,
    open_connections: Gauge,
    handshakes_failed: Counter,
}

/// The content type of `Metrics::text`.
pub(crate) const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

impl Metrics {
    pub(crate) fn new() -> Self {
        let mut registry = Registry::with_prefix("kinject");
        let reviews = Family::<Labels, Counter>::default();
        registry.register(
            "admission_reviews",
            "AdmissionReviews answered, by result (injected, unchanged, skipped, kept, ignored, denied, \
                allowed_on_error, malformed, timeout, panic) and the object's kind",
            reviews.clone(),
        );
        // 100 µs to ~3.3 s.
        let latency = Histogram::new(exponential_buckets(0.0001, 2.0, 16));
        registry.register(
            "admission_review_duration_seconds",
            "Time from a review's first byte read to its answer",
            latency.clone(),
        );
        let sidecars = Family::<Labels, Counter>::default();
        registry.register(
            "sidecars_injected",
            "Sidecars injected, by name",
            sidecars.clone(),
        );
        let refusals = Family::<Labels, Counter>::default();
        registry.register(
            "http_refusals",
            "Requests refused before any review, by HTTP status (400 unreadable body, 404, 405, 408 body too slow, \
                413, 415, 503 over --max-in-flight-bytes)",
            refusals.clone(),
        );
        let reloads = Family::<Labels, Counter>::default();
        registry.register(
            "reloads",
            "Reloads of the configuration and the certificate files after a change, by what (config, certificate) and \
                result (success, failure)",
            reloads.clone(),
        );
        let current = Family::<Labels, Gauge>::default();
        registry.register(
            "load_successful",
            "1 when the last load of the configuration (or certificate) files succeeded; 0 while the last good one \
                serves after a failed reload",
            current.clone(),
        );
        let in_flight = Gauge::default();
        registry.register(
            "reviews_in_flight",
            "Reviews being read or answered",
            in_flight.clone(),
        );
        let in_flight_bytes = Gauge::default();
        registry.register(
            "in_flight_bytes",
            "What the budget holds: bytes of request bodies being read, of answers not yet written and of requests in \
                progress, all requests together (at most --max-in-flight-bytes, but for small text answers and the \
                probe port's requests)",
            in_flight_bytes.clone(),
        );
        let open_connections = Gauge::default();
        registry.register(
            "open_connections",
            "Connections open on the webhook's address (--listen; at most --max-connections)",
            open_connections.clone(),
        );
        let handshakes_failed = Counter::default();
        registry.register(
            "tls_handshake_failures",
            "TLS handshakes that failed or did not end within --header-timeout (a client certificate the CA did not \
                sign, none, a plain HTTP client)",
            handshakes_failed.clone(),
        );
        let info = Family::<Labels, Gauge>::default();
        registry.register("build_info", "kinject's version", info.clone());
        info.get_or_create(&vec![("version", label(env!("KINJECT_VERSION")))])
            .set(1);
        Metrics {
            registry,
            reviews,
            latency,
            sidecars,
            refusals,
            reloads,
            current,
            in_flight,
            in_flight_bytes,
            open_connections,
            handshakes_failed,
        }
    }

    /// The gauge the budget of bytes in flight keeps.
    pub(crate) fn in_flight_bytes(&self) -> Gauge {
        self.in_flight_bytes.clone()
    }

    /// The gauge the webhook listener's connections keep.
    pub(crate) fn open_connections(&self) -> Gauge {
        self.open_connections.clone()
    }

    /// A review answered: `kind` is the label of its kind (`kind_label`), `sidecars` those
    /// it injected (names of the configuration's).
    pub(crate) fn review(
        &self,
        result: ReviewResult,
        kind: &str,
        sidecars: &[String],
        seconds: f64,
    ) {
        self.reviews
            .get_or_create(&vec![
                ("result", label(result.code())),
                ("kind", label(kind)),
            ])
            .inc();
        self.latency.observe(seconds);
        if result == ReviewResult::Acted(ActionKind::Injected) {
            for name in sidecars {
                self.sidecars
                    .get_or_create(&vec![("sidecar", label(name))])
                    .inc();
            }
        }
    }

    pub(crate) fn refusal(&self, status: u16) {
        self.refusals
            .get_or_create(&vec![("code", status.to_string())])
            .inc();
    }

    pub(crate) fn handshake_failed(&self) {
        self.handshakes_failed.inc();
    }

    /// A load of `what` (`config`, `certificate`): at start-up (`reload` false) or after a
    /// change.
    pub(crate) fn loaded(&self, what: &'static str, ok: bool, reload: bool) {
        if reload {
            let result = if ok { "success" } else { "failure" };
            self.reloads
                .get_or_create(&vec![
                    ("what", what.to_owned()),
                    ("result", result.to_owned()),
                ])
                .inc();
        }
        self.current
            .get_or_create(&vec![("what", what.to_owned())])
            .set(i64::from(ok));
    }

    /// Counts a review in flight until the guard is dropped.
    pub(crate) fn in_flight(&self) -> InFlight {
        self.in_flight.inc();
        InFlight(self.in_flight.clone())
    }

    pub(crate) fn text(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}

/// The label of a review's kind: its own when it is one of `known` (a built-in workload kind or
/// one the configuration defines), else `other`. A request's kind is the client's to write:
/// labels of its own would make series without end.
pub(crate) fn kind_label<'k>(kind: &'k str, known: &dyn Fn(&str) -> bool) -> &'k str {
    if known(kind) { kind } else { "other" }
}

/// A label value as the text format writes it: `\`, `"` and line breaks escaped, so that no
/// value ends its series or starts another.
fn label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

pub(crate) struct InFlight(Gauge);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_cannot_end_their_series() {
        let metrics = Metrics::new();
        metrics.review(
            ReviewResult::Acted(ActionKind::Injected),
            "X\"} 1\nforged{a=\"\\",
            &["s\"\n".to_owned()],
            0.1,
        );
        let text = metrics.text();
        assert!(text.contains(r#"kind="X\"} 1\nforged{a=\"\\""#), "{text}");
        assert!(text.contains(r#"sidecar="s\"\n""#), "{text}");
        assert!(!text.lines().any(|l| l.starts_with("forged")), "{text}");
        assert_eq!(kind_label("Pod", &|k| k == "Pod"), "Pod");
        assert_eq!(kind_label("Pod2", &|k| k == "Pod"), "other");
    }
}
