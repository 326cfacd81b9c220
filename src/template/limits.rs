//! The bounds on a render: the work it may do, and the size of what it writes.

/// Upper bound on template work per render (minijinja fuel units).
pub(super) const FUEL: u64 = 200_000;
/// Upper bound on one rendered text, and on the values a whole template puts into it.
pub(super) const MAX_OUTPUT: usize = 1 << 20;

/// A buffer that refuses to grow past `MAX_OUTPUT`.
#[derive(Default)]
pub(super) struct Bounded {
    pub(super) text: Vec<u8>,
    pub(super) full: bool,
}

impl std::io::Write for Bounded {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.text.len() + bytes.len() > MAX_OUTPUT {
            self.full = true;
            return Err(std::io::Error::other("rendered text too large"));
        }
        self.text.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
