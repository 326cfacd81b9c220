//! What the terminal can show: colour (not with `NO_COLOR`, nor on `TERM=dumb`) and Unicode
//! (not where the locale says text is not UTF-8).

/// Whether a terminal that is `is_terminal` is shown colour: not with `NO_COLOR`, nor on a
/// terminal that says it has none (`TERM=dumb`).
pub(crate) fn colour(is_terminal: bool) -> bool {
    is_terminal && std::env::var_os("NO_COLOR").is_none() && !dumb_terminal()
}

/// Whether diagnostics may draw with Unicode (boxes, `×`): not on a `TERM=dumb` terminal, nor
/// when the locale says its text is not UTF-8 (`LC_ALL=C`; no locale set at all draws them).
pub(crate) fn unicode() -> bool {
    let locale = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|l| !l.is_empty()));
    let utf8 = locale.is_none_or(|l| {
        let l = l.to_ascii_lowercase();
        l.contains("utf-8") || l.contains("utf8")
    });
    utf8 && !dumb_terminal()
}

fn dumb_terminal() -> bool {
    std::env::var_os("TERM").is_some_and(|t| t == "dumb")
}
