//! The bytes in flight: one budget, for the whole server, of what requests' bodies being read
//! and answers not yet written hold (`--max-in-flight-bytes`). A request whose body or answer
//! would take it past the budget gets 503, so that many clients at once, slow ones or ones
//! that never read their answers, cannot take the server past its memory.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use prometheus_client::metrics::gauge::Gauge;

/// The budget: its limit and what is taken of it.
pub(crate) struct Budget {
    limit: usize,
    taken: AtomicUsize,
    /// `kinject_in_flight_bytes`, kept equal to `taken`.
    gauge: Gauge,
}

impl Budget {
    pub(crate) fn new(limit: usize, gauge: Gauge) -> Arc<Budget> {
        Arc::new(Budget {
            limit,
            taken: AtomicUsize::new(0),
            gauge,
        })
    }

    /// Takes `bytes` if they fit under the limit.
    pub(crate) fn try_take(&self, bytes: usize) -> bool {
        let fits = self
            .taken
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |taken| {
                taken
                    .checked_add(bytes)
                    .filter(|total| *total <= self.limit)
            })
            .is_ok();
        if fits {
            self.gauge.inc_by(gauge_value(bytes));
        }
        fits
    }

    /// Takes `bytes` whether they fit or not: the small text answers (a refusal, a probe)
    /// the server sends whatever its load, still counted.
    pub(crate) fn force(&self, bytes: usize) {
        self.taken.fetch_add(bytes, Ordering::SeqCst);
        self.gauge.inc_by(gauge_value(bytes));
    }

    /// Gives back `bytes` taken before.
    pub(crate) fn give_back(&self, bytes: usize) {
        if bytes == 0 {
            return;
        }
        self.taken.fetch_sub(bytes, Ordering::SeqCst);
        self.gauge.dec_by(gauge_value(bytes));
    }

    /// What is taken now.
    #[cfg(test)]
    pub(crate) fn taken(&self) -> usize {
        self.taken.load(Ordering::SeqCst)
    }
}

fn gauge_value(bytes: usize) -> i64 {
    i64::try_from(bytes).unwrap_or(i64::MAX)
}

/// Bytes taken from the budget, given back when this is dropped.
pub(crate) struct Held {
    budget: Arc<Budget>,
    bytes: usize,
}

impl Held {
    /// Nothing held yet.
    pub(crate) fn none(budget: &Arc<Budget>) -> Held {
        Held {
            budget: Arc::clone(budget),
            bytes: 0,
        }
    }

    /// Holds `bytes` more, whether they fit or not (`Budget::force`).
    pub(crate) fn force(&mut self, bytes: usize) {
        self.budget.force(bytes);
        self.bytes += bytes;
    }

    /// Holds `bytes` more, if they fit.
    pub(crate) fn grow(&mut self, bytes: usize) -> bool {
        let fits = self.budget.try_take(bytes);
        if fits {
            self.bytes += bytes;
        }
        fits
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.budget.give_back(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_does_not_fit_is_refused_and_what_is_given_back_fits_again() {
        let budget = Budget::new(100, Gauge::default());
        let mut held = Held::none(&budget);
        assert!(held.grow(60));
        assert!(!budget.try_take(41));
        assert!(budget.try_take(40));
        assert_eq!(budget.taken(), 100);
        budget.force(10);
        assert_eq!(budget.taken(), 110);
        drop(held);
        budget.give_back(50);
        assert_eq!(budget.taken(), 0);
        assert!(budget.try_take(100));
    }
}
