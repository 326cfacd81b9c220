//! Running a command over its inputs: reading them (while the configuration loads, when they
//! are large), standard input whole or a window at a time, and processing every input.

use crate::diagnostic::Located;
use crate::pipeline::{FileResult, Sink};
use crate::read::{self, InputError};

use super::inputs::Inputs;
use super::report::eprint;
use super::status::ExitStatus;

/// Reads every input the arguments name (stdin at most once: `stdin` when already read).
/// Inputs that cannot be read are reported; the others are still returned.
pub(crate) fn load_inputs(
    args: &Inputs,
    stdin: Option<Result<read::Input, InputError>>,
) -> (Vec<read::Input>, Vec<InputError>) {
    let intent = args.intent;
    let (sources, mut errors) = match &args.sources {
        Some(sources) => (sources.clone(), Vec::new()),
        None => read::discover(&args.paths, intent),
    };
    let mut stdin = stdin;
    let mut stdin_used = false;
    let mut inputs = Vec::new();
    for source in sources {
        if source.path.is_none() {
            if stdin_used {
                continue;
            }
            stdin_used = true;
        }
        let loaded = match (source.path.is_none(), stdin.take()) {
            (true, Some(read)) => read,
            _ => read::load_unparsed(&source, &mut std::io::stdin().lock()),
        };
        match loaded {
            Ok(input) => inputs.push(input),
            Err(e) => errors.push(e),
        }
    }
    (inputs, errors)
}

/// What `load_inputs` gives: the inputs read, and why the others could not be.
pub(crate) type Loaded = (Vec<read::Input>, Vec<InputError>);

/// `work` (loading the configuration) on another thread while the files are read on this
/// one, when an input is large enough to be worth the thread: with a large input reading is a
/// tenth of a run, and the thread that reads is the one already running (a new thread takes a
/// third of a millisecond to start, and to fault in its first memory, before it can read).
/// The files come back read when they were: `None` when standard input is read or no input
/// is large, `work` then done here. (The worker threads start when there is work for them:
/// started here too, on a two-core machine they took the cores from the reading while they
/// waited, and then came back from sleep slower than new ones start; 1000 Deployments, 100
/// runs each: median 24.6 ms started here, 22.3 ms started with the work.)
pub(crate) fn read_while<T: Send>(
    args: &Inputs,
    work: impl FnOnce() -> T + Send,
) -> (T, Option<Loaded>) {
    let paths = &args.paths;
    let large = !paths.iter().any(|p| p.as_os_str() == "-")
        && paths.iter().any(|p| {
            std::fs::metadata(p)
                .is_ok_and(|m| m.is_dir() || m.len() > crate::pipeline::PARALLEL_BYTES as u64)
        });
    if !large {
        return (work(), None);
    }
    let mut work = Some(work);
    let mut done = None;
    let loaded = std::thread::scope(|scope| {
        let other = std::thread::Builder::new()
            // The configuration is read recursively, as documents are.
            .stack_size(crate::pipeline::STACK)
            .spawn_scoped(scope, || {
                done = work.take().map(|w| w());
                // Counted there, off the way: it reads the cgroup files.
                crate::pipeline::cores();
            });
        let loaded = load_inputs(args, None);
        if let Ok(other) = other
            && let Err(panic) = other.join()
        {
            std::panic::resume_unwind(panic);
        }
        loaded
    });
    // The thread could not start: the work is done here.
    let done = match (done, work) {
        (Some(done), _) => done,
        (None, Some(work)) => work(),
        (None, None) => unreachable!("the work is taken only to be done"),
    };
    (done, Some(loaded))
}

/// Once inputs of more than `SMALL_PAGES_ABOVE` bytes are in memory, the process's memory
/// comes in 4 KiB pages. The allocator asks for 2 MiB pages (transparent huge pages): an
/// input's text, one large buffer read once and scanned throughout, fills them and is read
/// with a fifth of the faults' cost, but processing allocates small values in per-thread
/// heaps that fill 2 MiB pages only in part, some 15 MB of pages touched but hardly used. In
/// a small run that is a constant worth its speed (without them after reading, 1k documents
/// took 5 % longer); past a few MB of input it is most of the difference between 2.8 and 3.3
/// times the input's size in memory (10k documents: peak 50 -> 42.7 MB, 2 % slower).
fn small_pages_for(inputs: &[read::Input]) {
    /// As much text as `pipeline::process` takes at a time.
    const SMALL_PAGES_ABOVE: usize = 4 << 20;
    let large = inputs.iter().map(|i| i.text.len()).sum::<usize>() > SMALL_PAGES_ABOVE;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if large {
        let _ = rustix::thread::disable_transparent_huge_pages(true);
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = large;
}

/// Each input's result with what its sink made of it, in the order the inputs were named, and
/// the inputs that could not be loaded.
pub(crate) type Processed<O> = (Vec<(FileResult, O)>, Vec<InputError>);

/// Loads the inputs (or takes those read `early`) and runs injection (in `mode`) over each,
/// into a sink of its own made by `sink`. `Err` is the exit code when the settings are wrong.
pub(crate) fn process_inputs<S: Sink>(
    args: &Inputs,
    stdin: Option<Result<read::Input, InputError>>,
    early: Option<Loaded>,
    config: &crate::config::Config,
    mode: crate::inject::Mode,
    sink: impl Fn() -> S + Sync,
) -> Result<Processed<S::Output>, ExitStatus>
where
    S::Output: Send,
{
    process_with(args, stdin, early, (&[config], &|_| 0), mode, sink)
}

/// The configurations of a run, and which one an input uses (an index of them).
pub(crate) type ConfigOf<'a, 'c> = (
    &'a [&'c crate::config::Config],
    &'a (dyn Fn(&read::Source) -> usize + Sync),
);

/// `process_inputs`, each input with its own configuration (`configs`).
pub(crate) fn process_with<S: Sink>(
    args: &Inputs,
    stdin: Option<Result<read::Input, InputError>>,
    early: Option<Loaded>,
    configs: ConfigOf<'_, '_>,
    mode: crate::inject::Mode,
    sink: impl Fn() -> S + Sync,
) -> Result<Processed<S::Output>, ExitStatus>
where
    S::Output: Send,
{
    let Prepared {
        inputs,
        errors,
        settings,
    } = prepare(args, stdin, early, configs, mode)?;
    // Files side by side on every core; results in the order the files were named. One
    // file is processed here (in parallel inside when it is large).
    let process = |(i, s): (read::Input, usize)| crate::pipeline::process(i, &settings[s], sink());
    let files = if inputs.len() == 1 {
        inputs.into_iter().map(process).collect()
    } else {
        crate::pipeline::map_on_workers(inputs, process)
    };
    Ok((files, errors))
}

/// A run's inputs, read, and the settings they are processed with.
pub(crate) struct Prepared<'c> {
    /// Each input, in the order named, with the index of its settings.
    pub inputs: Vec<(read::Input, usize)>,
    /// Why the others could not be read.
    pub errors: Vec<InputError>,
    /// The settings of each configuration.
    pub settings: Vec<crate::inject::Settings<'c>>,
}

/// Loads the inputs (or takes those read `early`) and makes the settings of each
/// configuration (in `mode`). `Err` is the exit code when the settings are wrong.
pub(crate) fn prepare<'c>(
    args: &Inputs,
    stdin: Option<Result<read::Input, InputError>>,
    early: Option<Loaded>,
    configs: ConfigOf<'_, 'c>,
    mode: crate::inject::Mode,
) -> Result<Prepared<'c>, ExitStatus> {
    let (inputs, errors) = early.unwrap_or_else(|| load_inputs(args, stdin));
    small_pages_for(&inputs);
    let (list, index) = configs;
    let settings = list
        .iter()
        .map(|config| args.settings(config, mode, &inputs))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            eprint(&format!("error: {e}\n"));
            ExitStatus::Error
        })?;
    let inputs = inputs
        .into_iter()
        .map(|i| {
            let s = index(&i.source).min(settings.len() - 1);
            (i, s)
        })
        .collect();
    Ok(Prepared {
        inputs,
        errors,
        settings,
    })
}

/// Standard input a window of documents at a time: the first window is read, the rest
/// comes as it is processed (see `read::Windows`).
pub(crate) struct StdinWindows {
    pub first: Result<read::Input, InputError>,
    /// `None` when standard input was read whole.
    pub rest: Option<read::Windows<std::io::StdinLock<'static>>>,
}

/// How much of standard input is read, processed and let go of at a time.
const WINDOW: usize = 1 << 20;

impl StdinWindows {
    pub(crate) fn open() -> Self {
        let mut rest = read::Windows::new(std::io::stdin().lock(), WINDOW);
        let first = rest
            .next_window()
            .unwrap_or_else(|| read::from_bytes_unparsed(read::Source::stdin(), Vec::new()));
        StdinWindows {
            first,
            rest: Some(rest),
        }
    }

    /// Standard input already read whole.
    pub(crate) fn from_whole(input: read::Input) -> Self {
        StdinWindows {
            first: Ok(input),
            rest: None,
        }
    }

    /// Whether all of standard input is in the first window.
    pub(crate) fn is_whole(&self) -> bool {
        self.rest.as_ref().is_none_or(read::Windows::is_done)
    }

    /// All of standard input as one input.
    pub(crate) fn whole(self) -> Result<read::Input, InputError> {
        match self.rest {
            Some(rest) => rest.whole(self.first?),
            None => self.first,
        }
    }
}

/// Reads all of standard input.
/// Standard input whole (`krm`, `admission`), or up to the block holding its first NUL: such
/// input is refused as binary, and an endless one (`< /dev/zero`) is not read until memory
/// runs out.
pub(crate) fn read_stdin() -> Result<Vec<u8>, std::io::Error> {
    let mut bytes = Vec::new();
    read::until_binary(&mut std::io::stdin().lock(), &mut bytes)?;
    Ok(bytes)
}

/// Moves every located error out of the results.
pub(crate) fn take_errors(files: &mut [FileResult]) -> Vec<Located> {
    files
        .iter_mut()
        .flat_map(|f| std::mem::take(&mut f.errors))
        .collect()
}
