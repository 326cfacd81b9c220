//! The `kinject` binary: everything lives in the library; this only runs the command line.

/// kinject allocates many small values per document; mimalloc serves them several times
/// faster than the system allocator (docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    kinject::cli::main()
}
