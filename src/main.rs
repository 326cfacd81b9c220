//! The `kinject` binary: everything lives in the library; this only runs the command line.

/// kinject allocates many small values per document; mimalloc serves them several times
/// faster than the system allocator (docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // Documents are read, injected and freed on the worker threads, recursively, down to the
    // deepest nesting kinject accepts (`yaml::MAX_DEPTH`): they get the main thread's stack
    // size, not the 2 MiB threads get by default. Only what is used is ever touched.
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(16 << 20)
        .build_global();
    kinject::cli::main()
}
