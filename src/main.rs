//! The `kinject` binary: everything lives in the library; this only runs the command line.

fn main() -> std::process::ExitCode {
    kinject::cli::main()
}
