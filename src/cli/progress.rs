//! A progress line for a long run: on a terminal, once a run has taken two seconds, stderr
//! shows what it has got through (`kinject: 48,211 documents, 210.4 of 512.0 MB`), rewritten
//! in place and cleared before anything else is written there. Never in a pipe, nor with `-q`
//! or a JSON report on stderr.

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::pipeline::DONE;

/// How long a run goes before it shows progress.
const AFTER: Duration = Duration::from_secs(2);

/// How often the line is rewritten.
const EVERY: Duration = Duration::from_millis(250);

/// Whether the line may still be written, and how long the one on screen is (0: none).
struct Line {
    on: bool,
    shown: usize,
}

static LINE: Mutex<Line> = Mutex::new(Line {
    on: false,
    shown: 0,
});

fn line() -> std::sync::MutexGuard<'static, Line> {
    LINE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Starts showing progress, when stderr is a terminal that a person reads (`allowed`: not
/// `-q`, no JSON report there), for inputs of `total` bytes when known.
pub(crate) fn start(allowed: bool, total: Option<u64>) {
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    if !(allowed && terminal) {
        return;
    }
    let from = [
        DONE[0].load(Ordering::Relaxed),
        DONE[1].load(Ordering::Relaxed),
    ];
    line().on = true;
    let _ = std::thread::Builder::new()
        .name("progress".to_owned())
        .spawn(move || {
            std::thread::sleep(AFTER);
            loop {
                let mut l = line();
                if !l.on {
                    return;
                }
                let documents = DONE[0].load(Ordering::Relaxed) - from[0];
                let bytes = DONE[1].load(Ordering::Relaxed) - from[1];
                let text = said(documents, bytes, total);
                let pad = l.shown.saturating_sub(text.chars().count());
                let _ = write!(std::io::stderr(), "\r{text}{}", " ".repeat(pad));
                l.shown = text.chars().count();
                drop(l);
                std::thread::sleep(EVERY);
            }
        });
}

/// Clears the progress line, if one is shown, and stops it: whatever is written on stderr
/// next starts a line of its own.
pub(crate) fn clear() {
    let mut l = line();
    l.on = false;
    if l.shown > 0 {
        let _ = write!(std::io::stderr(), "\r{}\r", " ".repeat(l.shown));
        l.shown = 0;
    }
}

/// `kinject: 48,211 documents, 210.4 of 512.0 MB`.
fn said(documents: u64, bytes: u64, total: Option<u64>) -> String {
    let mb = |b: u64| b as f64 / 1e6;
    let of = total.map_or_else(String::new, |t| format!(" of {:.1}", mb(t)));
    format!("kinject: {documents} documents, {:.1}{of} MB", mb(bytes))
}
