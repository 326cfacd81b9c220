//! The `kinject` binary: everything lives in the library; this only runs the command line.

/// kinject allocates many small values per document; mimalloc serves them several times
/// faster than the system allocator. Its v2 line: a little faster here than v3 and a few
/// megabytes smaller (docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // On a thread with the stack documents are processed with (`pipeline::STACK`), whatever
    // the main thread's is: one file, standard input and KRM input are processed here.
    kinject::on_stack(kinject::main).unwrap_or_else(|e| {
        eprintln!(
            "error: cannot start kinject's thread ({e}): its {} MiB stack does not fit in the memory this process may \
                use",
            kinject::STACK >> 20
        );
        kinject::ExitStatus::Error.into()
    })
}
