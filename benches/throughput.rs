//! kinject's speed, measured: `cargo bench --bench throughput` (add `-- --quick` for the two
//! small sizes only, `-- --sizes 100,1000` to choose; `KINJECT_BENCH_BIN=path` measures
//! another build of kinject).
//!
//! Generates manifest streams of 100, 1k, 10k and 100k documents (Deployments, StatefulSets,
//! DaemonSets and CronJobs, with Services, ConfigMaps and large CRDs passing through), and
//! prints per size: wall time, MB/s and peak memory of `kinject inject` (every workload gets a
//! sidecar), of a pass-through run (a configuration that matches nothing), a parse-only
//! baseline with granit-parser (the general YAML parser kinject falls back to) and with
//! kinject's own reader, and `kubectl kustomize` with the equivalent JSON patch where it
//! finishes in under a minute; then each output (`-o yaml`, `json`, `json-list`, `patch`)
//! from a file and on standard input, its time and its peak memory against the input's size.
//! Times are the best of several runs: each command runs at least a few times and, when it is
//! quick, again until a second has passed (as hyperfine samples a command), so a moment of
//! noise on the machine does not stand for its speed; kustomize runs again until five seconds
//! have passed, three times at most. docs/performance.md records a run and how to read it.

#[path = "../tests/common/mod.rs"]
mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SIDECAR: &str = r#"apiVersion: kinject.dev/v1alpha1
kind: InjectionConfig
sidecars:
- name: log-shipper
  containers:
  - name: log-shipper
    image: registry.example.com/shipper:2.1
    args: ["--from=/var/log/app"]
rules:
- name: everything
  inject: [log-shipper]
  jobs: inject
defaults:
  skipHostNetwork: false
  skipNamespaces: []
"#;

const NOTHING: &str = r#"apiVersion: kinject.dev/v1alpha1
kind: InjectionConfig
sidecars:
- name: unused
  containers:
  - name: unused
    image: example.com/unused:1
rules:
- name: none
  match:
    names: ["no-object-is-called-this"]
  inject: [unused]
"#;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).is_some_and(|a| a == "--peak-of") {
        peak_of(&args[2..]);
    }
    let sizes: Vec<usize> = if args.iter().any(|a| a == "--quick") {
        vec![100, 1_000]
    } else if let Some(i) = args.iter().position(|a| a == "--sizes") {
        args.get(i + 1)
            .map(|s| s.split(',').filter_map(|n| n.parse().ok()).collect())
            .unwrap_or_default()
    } else {
        vec![100, 1_000, 10_000, 100_000]
    };
    // The binary measured: another build (`KINJECT_BENCH_BIN`, for an A/B in one session),
    // else the one cargo built.
    let kinject = std::env::var_os("KINJECT_BENCH_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_kinject")),
        PathBuf::from,
    );
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("throughput");
    std::fs::create_dir_all(&dir).expect("bench directory");
    std::fs::write(dir.join("sidecar.yaml"), SIDECAR).expect("write config");
    std::fs::write(dir.join("nothing.yaml"), NOTHING).expect("write config");
    let kubectl = which("kubectl");

    println!("kinject throughput ({} cores)", cores());
    println!(
        "{:>7} {:>8} | {:>16} {:>9} | {:>16} | {:>20} | {:>9} {:>9} | {:>18} | {:>18}",
        "docs",
        "MB",
        "inject s (MB/s)",
        "peak MB",
        "pass s (MB/s)",
        "parse-only s (MB/s)",
        "inj/pass",
        "inj/parse",
        "kustomize JSON6902",
        "kustomize SMP"
    );
    let mut inject_times = Vec::new();
    let mut spread = Vec::new();
    // Per kind of patch: whether the next size would take kustomize over a minute.
    let mut kustomize_gave_up = [false, false];
    for &n in &sizes {
        let input = dir.join(format!("stream-{n}.yaml"));
        let text = generate(n);
        std::fs::write(&input, &text).expect("write input");
        let mb = text.len() as f64 / 1e6;
        // At 100k a run takes a second or more: five of them, the growth from 10k is
        // measured from as many; the in-process parse is slower still, and steadier.
        let runs = 5;
        let parse_runs = if n >= 100_000 { 2 } else { 5 };
        let sampled = sample(runs, || {
            run_inject(&kinject, &dir.join("sidecar.yaml"), &input)
        });
        let pass = sample(runs, || {
            run_inject(&kinject, &dir.join("nothing.yaml"), &input)
        })
        .best;
        let inject = &sampled.best;
        let granit = best_time(parse_runs, || parse_granit(&text));
        let own = best_time(parse_runs, || parse_own(&text));
        let parse = granit.min(own);
        let kustomize = [Patches::Json, Patches::StrategicMerge].map(|patches| {
            let gave_up = &mut kustomize_gave_up[patches as usize];
            let k = kubectl.as_ref().filter(|_| !*gave_up)?;
            let r = kustomize(k, &dir, &input, n, patches);
            if r.is_none_or(|t| t > Duration::from_secs(20)) {
                // The next size (10× the documents, and kustomize grows faster than
                // linearly) would not finish in a minute.
                *gave_up = true;
            }
            r
        });
        inject_times.push((n, inject.time));
        spread.push((n, sampled.runs, sampled.median, kustomize[1]));
        let mbps = |d: Duration| mb / d.as_secs_f64();
        let mut line = format!(
            "{n:>7} {mb:>8.1} | {:>7.3} ({:>6.1}) {:>9.1} | {:>7.3} ({:>6.1}) | {:>7.3} ({:>5.1}/{:>5.1}) | {:>9.2} {:>9.2} |",
            inject.time.as_secs_f64(),
            mbps(inject.time),
            inject.peak_kb as f64 / 1024.0,
            pass.time.as_secs_f64(),
            mbps(pass.time),
            parse.as_secs_f64(),
            mbps(granit),
            mbps(own),
            inject.time.as_secs_f64() / pass.time.as_secs_f64(),
            inject.time.as_secs_f64() / parse.as_secs_f64(),
        );
        for t in kustomize {
            match t {
                Some(t) => {
                    let _ = write!(
                        line,
                        " {:>7.2} ({:>6.0}×) |",
                        t.as_secs_f64(),
                        t.as_secs_f64() / inject.time.as_secs_f64()
                    );
                }
                None => line.push_str(if kubectl.is_some() {
                    "      over a minute |"
                } else {
                    "   kubectl missing |"
                }),
            }
        }
        println!("{line}");
        if n == 1_000
            && let Some(k) = &kubectl
        {
            println!(
                "        same objects as kubectl kustomize at 1k: {} with JSON 6902 patches, {} with strategic-merge patches",
                same_as_kustomize(k, &kinject, &dir, &input, Patches::Json),
                same_as_kustomize(k, &kinject, &dir, &input, Patches::StrategicMerge)
            );
        }
    }
    // How far the typical run is from the best one.
    for (n, runs, median, smp) in spread {
        let mut line = format!(
            "{n} documents: kinject inject's median of {runs} runs {:.1} ms",
            median.as_secs_f64() * 1e3
        );
        if let Some(t) = smp {
            let _ = write!(
                line,
                " ({:.0}× kustomize SMP's best)",
                t.as_secs_f64() / median.as_secs_f64()
            );
        }
        println!("{line}");
    }
    // Only documents no rule can touch: CustomResourceDefinitions and ConfigMaps.
    let input = dir.join("untouched.yaml");
    let text = (0..400)
        .map(|i| if i % 2 == 0 { crd(i) } else { configmap(i) })
        .collect::<Vec<_>>()
        .join("---\n");
    std::fs::write(&input, &text).expect("write input");
    let pass = sample(10, || {
        run_inject(&kinject, &dir.join("sidecar.yaml"), &input)
    })
    .best;
    println!(
        "pass-through of 200 CRDs and 200 ConfigMaps ({:.1} MB): {:.3} s ({:.0} MB/s), peak {:.0} MB",
        text.len() as f64 / 1e6,
        pass.time.as_secs_f64(),
        text.len() as f64 / 1e6 / pass.time.as_secs_f64(),
        pass.peak_kb as f64 / 1024.0
    );
    // Only workloads, every one patched: the stream kustomize is slowest on.
    if let Some(k) = &kubectl {
        let input = dir.join("workloads-1000.yaml");
        let text = (0..1_000)
            .map(|i| deployment(i, "Deployment"))
            .collect::<Vec<_>>()
            .join("---\n");
        std::fs::write(&input, &text).expect("write input");
        let inject = sample(5, || {
            run_inject(&kinject, &dir.join("sidecar.yaml"), &input)
        })
        .best;
        for (patches, name) in [
            (Patches::Json, "JSON 6902"),
            (Patches::StrategicMerge, "strategic-merge"),
        ] {
            if let Some(t) = kustomize(k, &dir, &input, 1_001, patches) {
                println!(
                    "1000 Deployments ({:.1} MB): kinject {:.3} s, kubectl kustomize with {name} patches {:.2} s ({:.0}×)",
                    text.len() as f64 / 1e6,
                    inject.time.as_secs_f64(),
                    t.as_secs_f64(),
                    t.as_secs_f64() / inject.time.as_secs_f64()
                );
            }
        }
    }
    for w in inject_times.windows(2) {
        let (a, ta) = w[0];
        let (b, tb) = w[1];
        println!(
            "growth {a} → {b} documents: time ×{:.2} for ×{}",
            tb.as_secs_f64() / ta.as_secs_f64(),
            b / a
        );
    }
    // Every output, from a file and on standard input: each is made as the documents are
    // processed and held back until the run has succeeded, so memory stays near the input's
    // size (a file) or a window's (standard input) whatever the format.
    let sidecar = dir.join("sidecar.yaml");
    for &n in &sizes {
        let input = dir.join(format!("stream-{n}.yaml"));
        let bytes = std::fs::metadata(&input).map_or(0, |m| m.len()) as f64;
        for format in ["yaml", "json", "json-list", "patch"] {
            let file = sample(3, || run_output(&kinject, &sidecar, &input, format, false)).best;
            let piped = best(2, || run_output(&kinject, &sidecar, &input, format, true));
            // Peak in MB (MiB, as elsewhere here), and as a multiple of the input's size.
            let peak = |r: &Run| (r.peak_kb as f64 / 1024.0, r.peak_kb as f64 * 1024.0 / bytes);
            let ((file_mb, file_x), (piped_mb, piped_x)) = (peak(&file), peak(&piped));
            println!(
                "{n} documents ({:.1} MB), -o {format:<9}: a file {:.3} s, peak {file_mb:.0} MB ({file_x:.1}×); standard input {:.3} s, peak {piped_mb:.0} MB ({piped_x:.1}×)",
                bytes / 1e6,
                file.time.as_secs_f64(),
                piped.time.as_secs_f64(),
            );
        }
    }
    // Standard input, a window of documents at a time: memory bounded by the largest
    // document, not by the stream.
    if let Some(&n) = sizes.last() {
        let input = dir.join(format!("stream-{n}.yaml"));
        let size = std::fs::metadata(&input).map_or(0, |m| m.len()) as f64 / 1e6;
        let file = best(2, || {
            run_inject(&kinject, &dir.join("sidecar.yaml"), &input)
        });
        let piped = best(2, || {
            run_inject_piped(&kinject, &dir.join("sidecar.yaml"), &input)
        });
        println!(
            "{n} documents ({size:.1} MB) on standard input: {:.3} s, peak {:.0} MB (as a file: {:.3} s, peak {:.0} MB)",
            piped.time.as_secs_f64(),
            piped.peak_kb as f64 / 1024.0,
            file.time.as_secs_f64(),
            file.peak_kb as f64 / 1024.0
        );
    }
    for (keys, n) in [(100_000, 1_000), (600_000, 1_000), (600_000, 10_000)] {
        let input = dir.join(format!("big-{keys}-{n}.yaml"));
        let big = dashboards(keys);
        let text = format!("{}---\n{big}---\n{}", generate(n), generate(n));
        std::fs::write(&input, &text).expect("write input");
        let piped = best(2, || {
            run_inject_piped(&kinject, &dir.join("sidecar.yaml"), &input)
        });
        println!(
            "a {:.1} MB document between two streams of {n} documents ({:.1} MB in all) on standard input: {:.3} s, peak {:.0} MB ({:.1}× the document)",
            big.len() as f64 / 1e6,
            text.len() as f64 / 1e6,
            piped.time.as_secs_f64(),
            piped.peak_kb as f64 / 1024.0,
            piped.peak_kb as f64 * 1024.0 / big.len() as f64
        );
    }
    let version = sample(20, || run(&kinject, &["--version"])).best;
    let one = dir.join("one.yaml");
    std::fs::write(&one, generate(1)).expect("write");
    let single = sample(20, || run_inject(&kinject, &dir.join("sidecar.yaml"), &one)).best;
    println!(
        "start: kinject --version {:.1} ms, a one-document run {:.1} ms",
        version.time.as_secs_f64() * 1e3,
        single.time.as_secs_f64() * 1e3
    );
}

fn p(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

struct Run {
    time: Duration,
    peak_kb: u64,
}

/// The fastest of `n` runs (and its peak memory).
fn best(n: usize, mut f: impl FnMut() -> Run) -> Run {
    (0..n)
        .map(|_| f())
        .min_by_key(|r| r.time)
        .expect("at least one run")
}

/// A quick command's runs: the fastest (and its peak memory), the median, how many.
struct Sampled {
    best: Run,
    median: Duration,
    runs: usize,
}

/// At least `min` runs, and more until a second has passed (at most 200): a run of a few
/// milliseconds is taken dozens of times, spread over the second, as hyperfine takes it.
fn sample(min: usize, mut f: impl FnMut() -> Run) -> Sampled {
    let start = Instant::now();
    let mut runs = Vec::new();
    while runs.len() < min || (start.elapsed() < Duration::from_secs(1) && runs.len() < 200) {
        runs.push(f());
    }
    runs.sort_by_key(|r| r.time);
    let median = runs[runs.len() / 2].time;
    Sampled {
        runs: runs.len(),
        median,
        best: runs.swap_remove(0),
    }
}

fn best_time(n: usize, mut f: impl FnMut()) -> Duration {
    (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .expect("at least one run")
}

/// `kinject inject -q -c config input`, measured.
fn run_inject(kinject: &Path, config: &Path, input: &Path) -> Run {
    run(kinject, &["inject", "-q", "-c", p(config), p(input)])
}

/// Runs `program` with output to /dev/null; its wall time and peak resident memory. The run
/// goes through this benchmark started again as a wrapper (`--peak-of`), whose only child it
/// is, so the children's peak memory is the program's.
fn run(program: &Path, args: &[&str]) -> Run {
    let out = Command::new(std::env::current_exe().expect("the benchmark's own path"))
        .arg("--peak-of")
        .arg(program)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .expect("spawn the wrapper");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut fields = text
        .split_whitespace()
        .map(|f| f.parse::<u64>().unwrap_or(0));
    let (nanos, peak_kb) = (fields.next().unwrap_or(0), fields.next().unwrap_or(0));
    assert!(
        out.status.success(),
        "{} {args:?} failed",
        program.display()
    );
    Run {
        time: Duration::from_nanos(nanos),
        peak_kb,
    }
}

/// `kinject inject -q -o format -c config`, with `input` named, or written into its standard
/// input (a pipe: `piped`).
fn run_output(kinject: &Path, config: &Path, input: &Path, format: &str, piped: bool) -> Run {
    let args = ["inject", "-q", "-o", format, "-c", p(config)];
    if piped {
        run(
            Path::new("--stdin"),
            &[&[p(input), p(kinject)], &args[..]].concat(),
        )
    } else {
        run(kinject, &[&args[..], &[p(input)]].concat())
    }
}

/// `kinject inject -q -c config` with `input` written into its standard input (a pipe).
fn run_inject_piped(kinject: &Path, config: &Path, input: &Path) -> Run {
    run(
        Path::new("--stdin"),
        &[p(input), p(kinject), "inject", "-q", "-c", p(config)],
    )
}

/// The wrapper: runs the command after `--peak-of` (after `--stdin FILE`: with the file's
/// bytes written into a pipe to it), prints its wall time in nanoseconds and its peak
/// resident memory in KiB; fails when it fails.
fn peak_of(command: &[String]) -> ! {
    let (stdin, command) = match command {
        [flag, file, rest @ ..] if flag == "--stdin" => (Some(file), rest),
        _ => (None, command),
    };
    let start = Instant::now();
    let mut child = Command::new(&command[0])
        .args(&command[1..])
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    // Read only now: a child forked while this process held the input would count its
    // pages in its own peak.
    if let (Some(file), Some(mut pipe)) = (stdin, child.stdin.take()) {
        use std::io::Write as _;
        let bytes = std::fs::read(file).expect("read the input");
        pipe.write_all(&bytes).expect("write to the pipe");
    }
    let status = child.wait().expect("wait");
    let elapsed = start.elapsed();
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .expect("getrusage");
    println!("{} {}", elapsed.as_nanos(), usage.max_rss());
    std::process::exit(if status.success() { 0 } else { 1 });
}

/// A ConfigMap holding one large JSON file (Grafana dashboards are shipped so), `lines`
/// lines of it.
fn dashboards(lines: usize) -> String {
    let mut out = String::from(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dashboards\ndata:\n  dashboards.json: |\n",
    );
    for i in 0..lines {
        let _ = writeln!(
            out,
            "    {{\"panel\": {i}, \"title\": \"requests per second, 5m rate\", \"datasource\": \"prometheus\"}},"
        );
    }
    out
}

/// Every document through granit-parser's event stream, building nothing.
fn parse_granit(text: &str) {
    let mut events = 0usize;
    let parser = granit_parser::Parser::new_from_str(text);
    for ev in parser {
        if ev.is_err() {
            break;
        }
        events += 1;
    }
    std::hint::black_box(events);
}

/// Every document through kinject's reader (values and spans built, as `inject` reads them).
fn parse_own(text: &str) {
    let input = kinject::from_bytes(kinject::Source::stdin(), text.as_bytes()).expect("readable");
    std::hint::black_box(input.documents.len());
    std::mem::forget(input);
}

/// Which kustomize patches stand for kinject's sidecar.
#[derive(Clone, Copy)]
enum Patches {
    /// RFC 6902 operations (`KUSTOMIZATION`).
    Json,
    /// Strategic-merge patches, what the issue measured (`kustomization_smp`).
    StrategicMerge,
}

fn kustomize(
    kubectl: &Path,
    dir: &Path,
    input: &Path,
    n: usize,
    patches: Patches,
) -> Option<Duration> {
    let kdir = kustomize_dir(dir, n, patches);
    std::fs::create_dir_all(&kdir).ok()?;
    std::fs::copy(input, kdir.join("resources.yaml")).ok()?;
    let kustomization = match patches {
        Patches::Json => KUSTOMIZATION.to_owned(),
        Patches::StrategicMerge => kustomization_smp(),
    };
    std::fs::write(kdir.join("kustomization.yaml"), kustomization).ok()?;
    // Again until five seconds have passed, three runs at most; the best of them.
    let started = Instant::now();
    let mut best = kustomize_once(kubectl, &kdir)?;
    for _ in 1..3 {
        if started.elapsed() >= Duration::from_secs(5) {
            break;
        }
        best = best.min(kustomize_once(kubectl, &kdir)?);
    }
    Some(best)
}

/// One `kubectl kustomize` of `kdir`: its wall time, or `None` when it failed or took over a
/// minute.
fn kustomize_once(kubectl: &Path, kdir: &Path) -> Option<Duration> {
    let start = Instant::now();
    let mut child = Command::new(kubectl)
        .args(["kustomize", p(kdir)])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    loop {
        if let Some(status) = child.try_wait().ok()? {
            return status.success().then(|| start.elapsed());
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            return None;
        }
        // Each millisecond: the time is the run's, to the millisecond.
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn kustomize_dir(dir: &Path, n: usize, patches: Patches) -> PathBuf {
    match patches {
        Patches::Json => dir.join(format!("kustomize-{n}")),
        Patches::StrategicMerge => dir.join(format!("kustomize-smp-{n}")),
    }
}

/// The same sidecar as `SIDECAR`, as strategic-merge patches, one per workload kind.
fn kustomization_smp() -> String {
    let container = r#"- {name: log-shipper, image: "registry.example.com/shipper:2.1", args: ["--from=/var/log/app"]}"#;
    let mut out = String::from("resources:\n- resources.yaml\npatches:\n");
    for kind in ["Deployment", "StatefulSet", "DaemonSet"] {
        let _ = write!(
            out,
            "- target: {{kind: {kind}}}\n  patch: |-\n    apiVersion: apps/v1\n    kind: {kind}\n    metadata: {{name: any}}\n    spec:\n      template:\n        spec:\n          containers:\n          {container}\n"
        );
    }
    let _ = write!(
        out,
        "- target: {{kind: CronJob}}\n  patch: |-\n    apiVersion: batch/v1\n    kind: CronJob\n    metadata: {{name: any}}\n    spec:\n      jobTemplate:\n        spec:\n          template:\n            spec:\n              containers:\n              {container}\n"
    );
    out
}

/// The same sidecar as `SIDECAR`, as kustomize patches.
const KUSTOMIZATION: &str = r#"resources:
- resources.yaml
patches:
- target:
    kind: (Deployment|StatefulSet|DaemonSet)
  patch: |-
    - op: add
      path: /spec/template/spec/containers/-
      value: {name: log-shipper, image: "registry.example.com/shipper:2.1", args: ["--from=/var/log/app"]}
- target:
    kind: CronJob
  patch: |-
    - op: add
      path: /spec/jobTemplate/spec/template/spec/containers/-
      value: {name: log-shipper, image: "registry.example.com/shipper:2.1", args: ["--from=/var/log/app"]}
"#;

/// Whether kinject and kustomize give the same objects (kinject's status annotation aside).
fn same_as_kustomize(
    kubectl: &Path,
    kinject: &Path,
    dir: &Path,
    input: &Path,
    patches: Patches,
) -> String {
    let ours = Command::new(kinject)
        .args([
            "inject",
            "-q",
            "-o",
            "json",
            "-c",
            p(&dir.join("sidecar.yaml")),
            p(input),
        ])
        .output()
        .expect("kinject");
    let theirs = Command::new(kubectl)
        .args(["kustomize", p(&kustomize_dir(dir, 1000, patches))])
        .output()
        .expect("kubectl");
    let mut ours = objects_json(&ours.stdout);
    for o in &mut ours {
        if let Some(serde_json::Value::Object(a)) = template_annotations(o) {
            a.shift_remove("kinject.dev/status");
            if a.is_empty() {
                remove_empty_annotations(o);
            }
        }
    }
    let mut theirs = common::objects_of_documents(&String::from_utf8_lossy(&theirs.stdout));
    // Strategic merge puts a new container first, kinject (and the JSON patch) last: the
    // containers are compared by name.
    let by_name = matches!(patches, Patches::StrategicMerge);
    if by_name {
        for o in ours.iter_mut().chain(theirs.iter_mut()) {
            sort_containers(o);
        }
    }
    let key = |o: &serde_json::Value| {
        format!(
            "{}/{}/{}",
            o["kind"].as_str().unwrap_or_default(),
            o["metadata"]["namespace"].as_str().unwrap_or_default(),
            o["metadata"]["name"].as_str().unwrap_or_default()
        )
    };
    let mut a: Vec<(String, String)> = ours.iter().map(|o| (key(o), canonical(o))).collect();
    let mut b: Vec<(String, String)> = theirs.iter().map(|o| (key(o), canonical(o))).collect();
    a.sort();
    b.sort();
    if a == b {
        let order = if by_name {
            ", containers in another order"
        } else {
            ""
        };
        format!("yes ({} objects{order})", a.len())
    } else {
        let differ = a.iter().zip(&b).filter(|(x, y)| x != y).count();
        format!("NO: {} vs {} objects, {differ} differ", a.len(), b.len())
    }
}

fn template_annotations(o: &mut serde_json::Value) -> Option<&mut serde_json::Value> {
    let pointer = match o["kind"].as_str() {
        Some("CronJob") => "/spec/jobTemplate/spec/template/metadata/annotations",
        _ => "/spec/template/metadata/annotations",
    };
    o.pointer_mut(pointer)
}

fn remove_empty_annotations(o: &mut serde_json::Value) {
    let pointer = match o["kind"].as_str() {
        Some("CronJob") => "/spec/jobTemplate/spec/template/metadata",
        _ => "/spec/template/metadata",
    };
    if let Some(serde_json::Value::Object(m)) = o.pointer_mut(pointer) {
        m.shift_remove("annotations");
    }
    // A template that had no metadata before kinject wrote its status there.
    let (parent, _) = pointer.rsplit_once('/').unwrap_or_default();
    if let Some(serde_json::Value::Object(m)) = o.pointer_mut(parent)
        && m.get("metadata")
            .is_some_and(|md| md == &serde_json::json!({}))
    {
        m.shift_remove("metadata");
    }
}

/// A value printed with sorted keys, to compare objects whatever their key order.
/// The pod template's containers of a workload in name order.
fn sort_containers(o: &mut serde_json::Value) {
    for pointer in [
        "/spec/template/spec/containers",
        "/spec/jobTemplate/spec/template/spec/containers",
    ] {
        if let Some(serde_json::Value::Array(c)) = o.pointer_mut(pointer) {
            c.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        }
    }
}

fn canonical(v: &serde_json::Value) -> String {
    fn sorted(v: &serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                serde_json::Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&m[k])))
                        .collect(),
                )
            }
            serde_json::Value::Array(a) => serde_json::Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(v).to_string()
}

/// The JSON documents kinject printed (one per input document).
fn objects_json(bytes: &[u8]) -> Vec<serde_json::Value> {
    serde_json::Deserializer::from_slice(bytes)
        .into_iter::<serde_json::Value>()
        .filter_map(Result::ok)
        .collect()
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `n` documents: of every 50, 12 Deployments, 4 StatefulSets, 4 DaemonSets, 4 CronJobs,
/// 12 Services, 13 ConfigMaps and one large CustomResourceDefinition.
fn generate(n: usize) -> String {
    let mut out = String::new();
    for i in 0..n {
        if i > 0 {
            out.push_str("---\n");
        }
        let slot = i % 50;
        let doc = match slot {
            0..=11 => deployment(i, "Deployment"),
            12..=15 => deployment(i, "StatefulSet"),
            16..=19 => deployment(i, "DaemonSet"),
            20..=23 => cronjob(i),
            24..=35 => service(i),
            36..=48 => configmap(i),
            _ => crd(i),
        };
        out.push_str(&doc);
    }
    out
}

fn deployment(i: usize, kind: &str) -> String {
    let ns = i % 13;
    format!(
        r#"# {kind} {i}: the web tier of team {ns}
apiVersion: apps/v1
kind: {kind}
metadata:
  name: app-{i}
  namespace: team-{ns}
  labels:
    app.kubernetes.io/name: app-{i}
    app.kubernetes.io/part-of: shop
spec:
  selector:
    matchLabels:
      app.kubernetes.io/name: app-{i}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: app-{i}
        tier: web
      annotations:
        prometheus.io/scrape: "true"
        prometheus.io/port: "9102"
    spec:
      serviceAccountName: app-{i}
      containers:
      - name: app
        image: registry.example.com/app:1.{i}
        args: ["--port=8080", "--log-level=info"]
        ports:
        - name: http
          containerPort: 8080
        env:
        - name: MODE
          value: production
        - name: POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        resources:
          requests: {{cpu: 100m, memory: 128Mi}}
          limits: {{memory: 256Mi}}
        readinessProbe:
          httpGet: {{path: /healthz, port: http}}
          periodSeconds: 10
        volumeMounts:
        - name: config
          mountPath: /etc/app
          readOnly: true
      volumes:
      - name: config
        configMap:
          name: app-{i}
          defaultMode: 0644
"#
    )
}

fn cronjob(i: usize) -> String {
    format!(
        r#"apiVersion: batch/v1
kind: CronJob
metadata:
  name: report-{i}
  namespace: team-{}
spec:
  schedule: "*/15 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: report
            image: registry.example.com/report:3
            command: ["/bin/report", "--since=15m"]
"#,
        i % 13
    )
}

fn service(i: usize) -> String {
    format!(
        r#"apiVersion: v1
kind: Service
metadata:
  name: app-{i}
  namespace: team-{}
  labels: {{app.kubernetes.io/name: app-{i}}}
spec:
  selector:
    app.kubernetes.io/name: app-{i}
  ports:
  - name: http
    port: 80
    targetPort: http
"#,
        i % 13
    )
}

fn configmap(i: usize) -> String {
    format!(
        r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: app-{i}
  namespace: team-{}
data:
  app.yaml: |
    listen: ":8080"
    workers: {}
    upstreams:
      - http://inventory.team-{}.svc:80
      - http://pricing.team-{}.svc:80
  LOG_FORMAT: json
"#,
        i % 13,
        i % 8 + 1,
        i % 13,
        (i + 1) % 13
    )
}

/// A CustomResourceDefinition of about 40 KB, as controller-gen writes them.
fn crd(i: usize) -> String {
    let mut props = String::new();
    for f in 0..120 {
        let _ = write!(
            props,
            r#"                field{f}:
                  description: |-
                    Field {f} of widget {i}. It configures the behaviour of the widget
                    controller for this resource; see the operator guide for details.
                  type: string
                  maxLength: 253
                  pattern: ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$
"#
        );
    }
    format!(
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets{i}.example.com
  annotations:
    controller-gen.kubebuilder.io/version: v0.16.1
spec:
  group: example.com
  names:
    kind: Widget{i}
    listKind: Widget{i}List
    plural: widgets{i}
    singular: widget{i}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              settings:
                type: object
                properties:
{props}"#
    )
}
