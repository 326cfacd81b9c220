//! Standard input a window at a time: whole documents, about `size` bytes each, so that a
//! stream is processed with memory bounded by its largest document, not by its length.
//! Windows are cut where the document splitter would cut the whole stream, and each knows
//! its first line and first document, so everything said about it is said as of the stream.

use std::io::Read;

use super::error::InputError;
use super::files::until_binary;
use super::input::{Input, Source, from_bytes_unparsed, from_window};
use super::split;

/// Bytes read at a time.
const BLOCK: usize = 256 * 1024;

pub(crate) struct Windows<R> {
    reader: R,
    size: usize,
    /// Read and not yet handed out.
    buf: Vec<u8>,
    eof: bool,
    /// Nothing more to hand out (the stream ended, or could not be read).
    done: bool,
    started: bool,
    /// Where the next window starts in the stream.
    first_line: usize,
    first_doc: usize,
    /// How far `buf` has been searched for a line that may start a document.
    searched: usize,
    may_cut: bool,
    /// The rest of a document too large for `buf` to keep growing: read in blocks, joined
    /// into one exact buffer once it ends. A buffer grown by doubling leaves its old
    /// allocations behind, which the allocator keeps for a while: about the document's size
    /// again.
    spill: Vec<Vec<u8>>,
}

impl<R: Read> Windows<R> {
    pub(crate) fn new(reader: R, size: usize) -> Self {
        Windows {
            reader,
            size,
            buf: Vec::new(),
            eof: false,
            done: false,
            started: false,
            first_line: 0,
            first_doc: 0,
            searched: 0,
            may_cut: false,
            spill: Vec::new(),
        }
    }

    /// Whether every window has been handed out.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// The next window of the stream as an input named `<stdin>`; `None` after the last.
    pub(crate) fn next_window(&mut self) -> Option<Result<Input, InputError>> {
        if self.done {
            return None;
        }
        loop {
            if self.eof {
                self.done = true;
                if self.started && self.buf.is_empty() {
                    return None;
                }
                let bytes = std::mem::take(&mut self.buf);
                return Some(self.window(bytes));
            }
            if self.buf.len() >= self.size
                && self.may_cut
                && let Some(cut) = self.cut()
            {
                let rest = self.buf.split_off(cut);
                let bytes = std::mem::replace(&mut self.buf, rest);
                // What is left may hold more windows (a large read, or the documents after
                // one that was cut alone).
                self.may_cut = may_start_document(&self.buf);
                self.searched = self.buf.len();
                return Some(self.window(bytes));
            }
            if let Err(e) = self.fill() {
                self.done = true;
                return Some(Err(unreadable(e)));
            }
        }
    }

    /// Everything from `first` (the first window) to the end of the stream, as one input.
    pub(crate) fn whole(mut self, first: Input) -> Result<Input, InputError> {
        if self.done {
            return Ok(first);
        }
        let mut bytes = std::sync::Arc::try_unwrap(first.text)
            .unwrap_or_else(|shared| String::clone(&shared))
            .into_bytes();
        self.join();
        bytes.append(&mut self.buf);
        if !self.eof {
            until_binary(&mut self.reader, &mut bytes).map_err(unreadable)?;
        }
        self.done = true;
        from_bytes_unparsed(Source::stdin(), bytes)
    }

    fn window(&mut self, bytes: Vec<u8>) -> Result<Input, InputError> {
        self.started = true;
        let lines = memchr::memchr_iter(b'\n', &bytes).count();
        let input = from_window(bytes, self.first_line, self.first_doc);
        match &input {
            Ok(i) => {
                self.first_line += lines;
                self.first_doc += i.documents.len();
            }
            // Nothing after text that cannot be read is read.
            Err(_) => self.done = true,
        }
        input
    }

    /// Reads a block; notes whether the new bytes hold a line that may start a document.
    fn fill(&mut self) -> std::io::Result<()> {
        if !self.may_cut && self.buf.len() >= self.size * 4 {
            return self.spill();
        }
        let len = self.buf.len();
        if len == 0 && !self.started {
            self.buf.reserve(BLOCK);
        }
        self.buf.resize(len + BLOCK, 0);
        let n = loop {
            match self.reader.read(&mut self.buf[len..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.buf.truncate(len);
                    return Err(e);
                }
            }
        };
        self.buf.truncate(len + n);
        if n == 0 {
            self.eof = true;
            return Ok(());
        }
        // UTF-16 is decoded whole.
        if !self.started
            && (self.buf.starts_with(&[0xFF, 0xFE]) || self.buf.starts_with(&[0xFE, 0xFF]))
        {
            self.reader.read_to_end(&mut self.buf)?;
            self.eof = true;
            return Ok(());
        }
        // A NUL makes the stream a binary file, refused at its first NUL: nothing after it is
        // read (an endless stream, `< /dev/zero`, would be read until memory ran out).
        if memchr::memchr(0, &self.buf[len..]).is_some() {
            self.eof = true;
        }
        // A document starts after a line break, at `---` or after `...`: searched only in
        // what is new, so a long document is not searched again and again.
        let from = self.searched.saturating_sub(3);
        self.may_cut |= may_start_document(&self.buf[from..]);
        self.searched = self.buf.len();
        Ok(())
    }

    /// Reads a whole block of a large document into `spill`; joins it to `buf` when the
    /// document ends.
    fn spill(&mut self) -> std::io::Result<()> {
        let mut block = vec![0; BLOCK];
        let mut n = 0;
        while n < BLOCK {
            match self.reader.read(&mut block[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        block.truncate(n);
        // A line that starts a document may begin in the bytes before the block.
        let before = self.spill.last().unwrap_or(&self.buf);
        let mut seam = before[before.len().saturating_sub(3)..].to_vec();
        seam.extend_from_slice(&block[..n.min(3)]);
        self.may_cut = may_start_document(&seam) || may_start_document(&block);
        // As in `fill`: nothing after a NUL is read.
        self.eof = n == 0 || memchr::memchr(0, &block).is_some();
        self.spill.push(block);
        if self.may_cut || self.eof {
            self.join();
        }
        Ok(())
    }

    /// `buf` and `spill` as one buffer, of their exact size.
    fn join(&mut self) {
        if self.spill.is_empty() {
            return;
        }
        let total = self.buf.len() + self.spill.iter().map(Vec::len).sum::<usize>();
        let mut joined = Vec::with_capacity(total);
        joined.append(&mut self.buf);
        for block in self.spill.drain(..) {
            joined.extend_from_slice(&block);
        }
        self.buf = joined;
        self.searched = self.buf.len();
    }

    /// Where the window ends: after the complete documents (all but the last seen) that fit
    /// in `size`, or after the first alone when it does not. A document larger than a window
    /// is one alone, so that the output made of the documents around it (when they change)
    /// never holds a copy of it.
    fn cut(&self) -> Option<usize> {
        let complete = memchr::memrchr(b'\n', &self.buf)? + 1;
        let text = std::str::from_utf8(&self.buf[..complete]).ok()?;
        let bom = if self.started { 0 } else { bom_len(text) };
        let ranges = split::documents(&text[bom..]);
        let (last, whole) = ranges.split_last()?;
        if whole.is_empty() {
            return None;
        }
        let cut = match whole.iter().position(|r| r.end + bom > self.size) {
            Some(0) => whole.get(1).unwrap_or(last).start,
            Some(i) => whole[i].start,
            None => last.start,
        };
        Some(cut + bom)
    }
}

/// Whether `bytes` hold a line that may start a document (`---`, or after `...`).
fn may_start_document(bytes: &[u8]) -> bool {
    memchr::memmem::find(bytes, b"\n---").is_some()
        || memchr::memmem::find(bytes, b"\n...").is_some()
}

fn unreadable(error: std::io::Error) -> InputError {
    InputError::Io {
        name: Source::stdin().name,
        error,
    }
}

fn bom_len(text: &str) -> usize {
    if text.starts_with('\u{FEFF}') { 3 } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads at most `n` bytes at a time, like a pipe.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.len().min(self.1).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn windows(text: &str, size: usize, block: usize) -> Vec<super::super::Input> {
        let mut w = Windows::new(Trickle(text.as_bytes(), block), size);
        std::iter::from_fn(|| w.next_window())
            .map(Result::unwrap)
            .collect()
    }

    #[test]
    fn windows_are_the_stream_cut_between_documents() {
        let text = "\u{FEFF}# head\na: 1\n---\nb: 2\n...\n%YAML 1.2\n---\nc: 3\n---\n\n---\nd: |\n  ---x\n  4\n";
        let whole = super::super::from_bytes_unparsed(Source::stdin(), text.into()).unwrap();
        for size in [1, 5, 20, 1000] {
            for block in [1, 3, 7, 1 << 20] {
                let ws = windows(text, size, block);
                let joined: String = ws.iter().map(|w| w.text.as_str()).collect();
                assert_eq!(joined, text, "{size} {block}");
                // The same documents, with their index and first line in the stream.
                let mut docs = Vec::new();
                for w in &ws {
                    for d in &w.documents {
                        let (line, _) = w.line_col(d.range.start);
                        docs.push((d.index, w.doc_text(d).to_owned(), line));
                    }
                }
                let expected: Vec<_> = whole
                    .documents
                    .iter()
                    .map(|d| {
                        (
                            d.index,
                            whole.doc_text(d).to_owned(),
                            whole.line_col(d.range.start).0,
                        )
                    })
                    .collect();
                assert_eq!(docs, expected, "{size} {block}");
                if size == 1 && block == 1 {
                    assert!(ws.len() > 3);
                }
            }
        }
    }

    #[test]
    fn a_document_larger_than_a_window_is_one_alone() {
        let small = "a: 1\n---\n".repeat(30);
        let large = format!("big: |\n{}---\n", "  line\n".repeat(100));
        let text = format!("{small}{large}{small}c: 2\n");
        for block in [7, 64, 1 << 20] {
            let ws = windows(&text, 100, block);
            let with_it: Vec<usize> = ws
                .iter()
                .filter(|w| w.text.contains("big"))
                .map(|w| w.documents.len())
                .collect();
            assert_eq!(with_it, [1], "{block}");
            let joined: String = ws.iter().map(|w| w.text.as_str()).collect();
            assert_eq!(joined, text);
        }
    }

    #[test]
    fn a_document_read_in_blocks_is_whole_wherever_the_next_one_starts() {
        // Larger than a few blocks: read into `spill`, which starts after the first 4096
        // bytes read (the first window is cut there), so its third seam is at 790,528: the
        // padding moves the next document's `\n---` across it (pads 0 and 1 split it).
        for pad in 0..8 {
            let lines = "  line\n".repeat(112_930);
            let large = format!("---\nbig: |\n{lines}{}\n", "x".repeat(pad));
            assert_eq!(5 + large.len() - 1, 790_526 + pad);
            // The next document is larger than a block too.
            let next = format!("---\nb: |\n{}", "  line\n".repeat(40_000));
            let text = format!("a: 1\n{large}{next}---\nc: 3\n");
            for block in [4096, 65536] {
                let ws = windows(&text, 1000, block);
                let joined: String = ws.iter().map(|w| w.text.as_str()).collect();
                assert!(joined == text, "{pad} {block}");
                let with_it: Vec<usize> = ws
                    .iter()
                    .filter(|w| w.text.contains("big"))
                    .map(|w| w.documents.len())
                    .collect();
                assert_eq!(with_it, [1], "{pad} {block}");
            }
        }
    }

    #[test]
    fn bad_bytes_are_located_in_the_stream() {
        let text = b"a: 1\n---\nb: 2\n---\nc: \xff\n";
        let mut w = Windows::new(Trickle(text, 2), 4);
        let mut errors = Vec::new();
        while let Some(r) = w.next_window() {
            if let Err(e) = r {
                errors.push(e.to_string());
            }
        }
        assert_eq!(errors, ["<stdin>:5:4: not UTF-8 text (byte 0xff)"]);
    }

    #[test]
    fn an_endless_binary_stream_is_refused_at_its_first_nul() {
        let text = "a: 1\n---\nb: 2\n";
        for size in [4, 1 << 20] {
            let endless = text.as_bytes().chain(std::io::repeat(0));
            let mut w = Windows::new(endless, size);
            let mut errors = Vec::new();
            while let Some(r) = w.next_window() {
                if let Err(e) = r {
                    errors.push(e.to_string());
                }
            }
            assert_eq!(
                errors,
                ["<stdin>:4:1: a NUL byte, not allowed in YAML (is this a binary file?)"]
            );
        }
        // Read whole after a first window.
        let mut w = Windows::new(text.as_bytes().chain(std::io::repeat(0)), 4);
        let first = w.next_window().unwrap().unwrap();
        assert_eq!(
            w.whole(first).unwrap_err().to_string(),
            "<stdin>:4:1: a NUL byte, not allowed in YAML (is this a binary file?)"
        );
    }

    #[test]
    fn empty_stream_is_one_empty_window() {
        let ws = windows("", 10, 10);
        assert_eq!(ws.len(), 1);
        assert_eq!(ws[0].text.as_str(), "");
    }
}
