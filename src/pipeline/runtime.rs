//! The threads documents are processed on: the workers, started once and sized to the cores
//! and the address space, and the stack every one of them (and the command's own thread) has.

/// The worker threads, started once, before their first use (a run that needs none, such as
/// `--version` or one small file, starts none). Documents are read, injected and freed on
/// them, recursively, down to the deepest nesting kinject accepts (`yaml::MAX_DEPTH`): they
/// get the command's stack size (`STACK`), not the 2 MiB threads get by default. Only what is
/// used is ever touched.
///
/// A process whose memory limit leaves no room for that many stacks (`ulimit -v` on a runner
/// with many cores) gets fewer workers, halved until they start; `None` when not even one
/// does, and the work is then done one piece after another on the calling thread, which has
/// the same stack. A pool of kinject's own, not rayon's global one: a global pool that failed
/// to start cannot be started again, and rayon then panics on its first use.
pub(crate) fn workers() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        let mut threads = cores();
        loop {
            let built = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .stack_size(STACK)
                .build();
            match built {
                Ok(pool) => return Some(pool),
                Err(_) if threads > 1 => threads /= 2,
                Err(_) => return None,
            }
        }
    })
    .as_ref()
}

/// `f` of every item of `items`, in order: on the workers when there are any, else here.
pub(crate) fn map_on_workers<T: Send, R: Send>(
    items: impl rayon::iter::IntoParallelIterator<Item = T> + IntoIterator<Item = T> + Send,
    f: impl Fn(T) -> R + Sync + Send,
) -> Vec<R> {
    use rayon::prelude::*;
    match workers() {
        Some(pool) => pool.install(|| items.into_par_iter().map(f).collect()),
        None => items.into_iter().map(f).collect(),
    }
}

/// How many worker threads `workers` starts: `RAYON_NUM_THREADS` when it is a number above
/// zero (as rayon reads it), otherwise the cores this process may use; no more than fit in
/// its address-space limit (`fitting_workers`). Counted once: finding the cores reads the
/// cgroup files (a few hundred microseconds), which a run with a large input does while the
/// input is read.
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| {
        std::env::var("RAYON_NUM_THREADS")
            .ok()
            .and_then(|n| n.parse().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
            .min(fitting_workers(address_space_limit()))
    })
}

/// The address space a worker takes besides what it processes: its stack, and the 32 MiB
/// segment mimalloc gives each thread that allocates.
const WORKER_SPACE: u64 = STACK as u64 + (32 << 20);

/// How many workers fit in an address-space limit (`ulimit -v`) when they take at most a
/// quarter of it, the rest being for the inputs and what is made of them (at least one).
/// Without the bound, 32 workers under a 2 GiB limit (a 32-core runner with a memory cap)
/// started and then failed to allocate: an abort.
fn fitting_workers(limit: Option<u64>) -> usize {
    limit.map_or(usize::MAX, |limit| {
        usize::try_from(limit / 4 / WORKER_SPACE)
            .unwrap_or(usize::MAX)
            .max(1)
    })
}

/// The address-space limit of this process, if it has one.
fn address_space_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::As).current
}

/// The stack of every thread documents are processed on.
pub const STACK: usize = 16 << 20;

/// `work` on a thread with the workers' stack (the command line runs on one: a run that
/// processes one input needs no workers). An error when that thread cannot start (a memory
/// limit too low for its stack): `work` is not run on a smaller stack, where a deeply nested
/// input could overflow it.
pub fn on_stack<T: Send>(work: impl FnOnce() -> T + Send) -> std::io::Result<T> {
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .stack_size(STACK)
            .spawn_scoped(scope, work)?;
        Ok(handle
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    })
}
