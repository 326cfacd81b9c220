//! A case's files: `input.yaml` (or `input.json`, or an `input/` folder), `args` (the command
//! line after `kinject`, words split at whitespace), exactly one expectation, and the optional
//! `report.txt`, `stdin.yaml`, `expect-error` and `no-uninject`; and the case folders under a
//! directory.

use std::path::{Path, PathBuf};

use super::command;

/// The names an input may have, in the order they are looked for.
pub(crate) const INPUTS: [&str; 3] = ["input.yaml", "input.json", "input"];

/// The names of the expectations: stdout of a successful run, or stderr of a failing one.
pub(crate) const EXPECTATIONS: [&str; 5] = [
    "expected.yaml",
    "expected.json",
    "expected.patch.json",
    "expected.txt",
    "expected.stderr",
];

/// The subcommands a case of `kinject test` may run: those that read manifests and write
/// only to stdout and stderr (never `serve`, which listens, nor `test`, which runs cases).
const USER_SUBCOMMANDS: [&str; 5] = ["inject", "uninject", "explain", "krm", "admission"];

/// The largest case file read (an input, an expectation): a case folder may come from a
/// pull request.
const MAX_FILE_BYTES: u64 = 64 << 20;

/// How a case's files are read: by the project's golden runner (any subcommand, its own
/// files trusted) or by `kinject test` (case folders may come from a pull request).
#[derive(Debug, Clone, Default)]
pub struct Rules {
    /// Only the subcommands a user's case may run, every path inside the case folder, no
    /// flag that writes a file, no file larger than 64 MiB.
    pub untrusted: bool,
    /// The configurations of the command line (`kinject test -c`): a case whose `args`
    /// name none, and that holds no `config.yaml`, is run with them.
    pub configs: Vec<PathBuf>,
    /// A case without an expectation gets one (written by the caller), named for what its
    /// command writes.
    pub new_expectation: bool,
}

/// A case folder's files, read.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The folder, as it was found.
    pub dir: PathBuf,
    /// The command line after `kinject`, the configurations it runs with included.
    pub args: Vec<String>,
    /// The configurations it runs with, as named in `args` (none: found from the folder).
    pub configs: Vec<String>,
    /// The other files `args` names that the run reads (its inputs, `-f`).
    pub reads: Vec<String>,
    /// `-o`'s value, when given.
    pub output: Option<String>,
    /// The input's name in the folder, when there is one.
    pub input: Option<&'static str>,
    /// The expectation (it may not exist yet with `Rules::new_expectation`).
    pub expected: PathBuf,
    /// `report.txt`: the expected stderr of a successful run.
    pub report: Option<PathBuf>,
    /// `stdin.yaml`: the run's standard input.
    pub stdin: Option<PathBuf>,
    /// The exit code expected: 0, or what `expect-error` holds (2 when it holds no number,
    /// or when there is no `expect-error` but `expected.stderr`).
    pub exit_code: i32,
    /// `no-uninject`: why uninject of the output does not give the input back.
    pub no_uninject: bool,
}

impl Layout {
    /// The case in `dir`; `Err` says why it cannot run (no expectation, two of them, an
    /// `args` the rules refuse, a file that cannot be read).
    pub fn read(dir: &Path, rules: &Rules) -> Result<Layout, String> {
        let input = INPUTS.into_iter().find(|f| dir.join(f).exists());
        let args_file = dir.join("args");
        let mut args: Vec<String> = if args_file.exists() {
            let text = String::from_utf8(read_case_file(dir, &args_file, rules)?)
                .map_err(|_| "args: not UTF-8".to_owned())?;
            text.split_whitespace().map(str::to_owned).collect()
        } else {
            let input = input.ok_or("no input.yaml, input.json or input/, and no args")?;
            vec!["inject".to_owned(), input.to_owned()]
        };
        if args.is_empty() {
            return Err("args: empty (it holds the command line after `kinject`)".to_owned());
        }
        let command = command::read(&args);
        if rules.untrusted {
            refused_args(dir, &args, &command)?;
        }
        // The configurations: those `args` names, else the folder's `config.yaml`, else
        // `kinject test -c`'s; else the run finds one from the folder, as `inject` does.
        let mut configs = command.configs.clone();
        if configs.is_empty() && command.takes_configs {
            let own = std::fs::symlink_metadata(dir.join("config.yaml")).is_ok();
            if own && rules.untrusted {
                inside(&case_tree(dir)?, dir, "config.yaml")?;
                no_special_file(dir, "config.yaml")?;
            }
            configs = if own {
                vec!["config.yaml".to_owned()]
            } else {
                let relative = |c: &PathBuf| relative(c, dir).display().to_string();
                rules.configs.iter().map(relative).collect()
            };
            let given = configs.iter().flat_map(|c| ["-c".to_owned(), c.clone()]);
            args.splice(1..1, given);
        }
        let expect_error = dir.join("expect-error");
        let exit_code = if expect_error.exists() {
            let text = read_case_file(dir, &expect_error, rules)?;
            String::from_utf8_lossy(&text)
                .split_whitespace()
                .next()
                .and_then(|w| w.parse().ok())
                .filter(|c| (1..=2).contains(c))
                .unwrap_or(2)
        } else {
            0
        };
        let expected = expectation(dir, &args, &command, exit_code, rules)?;
        // A failing run's stderr is expected: it fails with 2 unless `expect-error` says 1.
        let exit_code = if exit_code == 0 && expected.ends_with("expected.stderr") {
            2
        } else {
            exit_code
        };
        let optional = |name: &str| Some(dir.join(name)).filter(|p| p.exists());
        Ok(Layout {
            dir: dir.to_owned(),
            input,
            expected,
            report: optional("report.txt"),
            stdin: optional("stdin.yaml"),
            exit_code,
            no_uninject: dir.join("no-uninject").exists(),
            args,
            configs,
            reads: command.reads,
            output: command.output,
        })
    }

    /// Whether the run must fail, its stderr the expectation (`expected.stderr`).
    pub fn wants_error(&self) -> bool {
        self.expected
            .file_name()
            .is_some_and(|n| n == "expected.stderr")
    }

    /// Whether this is an `inject` whose YAML output the invariants hold for (with no `-o`:
    /// the checks give their own).
    pub fn is_yaml_inject(&self) -> bool {
        self.args.first().is_some_and(|a| a == "inject")
            && self.output.is_none()
            && self.expected.extension().is_some_and(|e| e == "yaml")
    }
}

/// The one expectation of the case in `dir`, or the name of the one to write.
fn expectation(
    dir: &Path,
    args: &[String],
    command: &command::Read,
    exit_code: i32,
    rules: &Rules,
) -> Result<PathBuf, String> {
    let found: Vec<PathBuf> = EXPECTATIONS
        .iter()
        .map(|f| dir.join(f))
        .filter(|p| std::fs::symlink_metadata(p).is_ok())
        .collect();
    match found.len() {
        1 => Ok(found.into_iter().next().expect("one")),
        0 if rules.new_expectation => Ok(dir.join(new_expectation(args, command, exit_code))),
        0 => Err(format!(
            "no expectation: add one of {}",
            EXPECTATIONS.join(", ")
        )),
        _ => Err(format!(
            "{} expectations: a case has exactly one of {}",
            found.len(),
            EXPECTATIONS.join(", ")
        )),
    }
}

/// The expectation a case's command writes: stderr for a failing run (but `explain`, which
/// explains what it could read, and `test`, which reports failing cases), else its stdout's
/// format.
fn new_expectation(args: &[String], command: &command::Read, exit_code: i32) -> &'static str {
    let reports = ["explain", "schema", "completions", "test"].contains(&args[0].as_str());
    let output = command.output.as_deref().unwrap_or_default();
    if exit_code != 0 && !reports {
        "expected.stderr"
    } else if output == "patch" {
        "expected.patch.json"
    } else if output.starts_with("json") {
        "expected.json"
    } else if reports {
        "expected.txt"
    } else {
        "expected.yaml"
    }
}

/// Why `args` (read: `command`) may not run as a user's case: a subcommand other than those
/// that only read, a flag that writes a file, a path that leads out of the case folder. A
/// command line clap refuses runs nothing, and is the case's to expect.
fn refused_args(dir: &Path, args: &[String], command: &command::Read) -> Result<(), String> {
    let first = args[0].as_str();
    if !USER_SUBCOMMANDS.contains(&first) {
        return Err(format!(
            "args: `{}` is not a subcommand a case may run ({})",
            crate::diagnostic::printable(first),
            USER_SUBCOMMANDS.join(", ")
        ));
    }
    if let Some(flag) = command.writes.first() {
        return Err(format!(
            "args: `{flag}` writes files; a case's output is its stdout and stderr"
        ));
    }
    if let Some(flag) = command.other_paths.first() {
        return Err(format!("args: `{flag}` names a file a case may not"));
    }
    let tree = case_tree(dir)?;
    for path in command.configs.iter().chain(&command.reads) {
        if path != "-" {
            inside(&tree, dir, path).map_err(|why| format!("args: {why}"))?;
            no_special_file(dir, path).map_err(|why| format!("args: {why}"))?;
        }
    }
    // The folder itself as an input (`inject .`) reads the case's own expectation too: each
    // update would feed the last one back in.
    for path in command.reads.iter().filter(|p| p.as_str() != "-") {
        if crate::tree::resolved(&dir.join(path)) == tree.root() {
            return Err(format!(
                "args: `{}` names the case folder, which holds the case's expectation: name its \
                    input (input.yaml, input/) instead",
                crate::diagnostic::printable(path)
            ));
        }
    }
    Ok(())
}

/// `Err` when `path`, named in the case folder `dir`, is there but is neither a file nor a
/// folder: a FIFO would hold the run open for ever, a device would feed it without end (git
/// cannot hold either, but a case folder need not come from git).
fn no_special_file(dir: &Path, path: &str) -> Result<(), String> {
    match std::fs::metadata(dir.join(path)) {
        Ok(m) if !m.is_file() && !m.is_dir() => Err(format!(
            "{} is not a regular file",
            crate::diagnostic::printable(path)
        )),
        _ => Ok(()),
    }
}

/// The tree of the case folder `dir`: nothing a case names leads out of it.
fn case_tree(dir: &Path) -> Result<crate::tree::Tree, String> {
    crate::tree::Tree::new(dir).map_err(|e| format!("{}: {e}", dir.display()))
}

/// `Err` when `path`, named in the case folder `dir` (whose tree is `tree`), leads out of it
/// (absolute, a `..`, a symlink).
fn inside(tree: &crate::tree::Tree, dir: &Path, path: &str) -> Result<(), String> {
    let shown = crate::diagnostic::printable(path);
    if Path::new(path).is_absolute() {
        return Err(format!(
            "{shown} is an absolute path: a case names files inside its folder"
        ));
    }
    tree.check(&dir.join(path)).map(|_| ()).map_err(|outside| {
        let how = if outside.link {
            "through a symlink"
        } else {
            "through `..`"
        };
        format!("{shown} leads out of the case folder ({how})")
    })
}

/// The bytes of a case's own file `path` (in `dir`); with untrusted rules, refused when it
/// leads out of the folder, is not a regular file, or is larger than 64 MiB.
pub(crate) fn read_case_file(dir: &Path, path: &Path, rules: &Rules) -> Result<Vec<u8>, String> {
    let name = path.strip_prefix(dir).unwrap_or(path).display().to_string();
    if rules.untrusted && case_tree(dir)?.check(path).is_err() {
        return Err(format!("{name} leads out of the case folder"));
    }
    read_regular(dir, path, rules)
}

/// The bytes of the file `path` (in `dir`) known to be inside the folder (a walk that follows
/// no symlink found it); with untrusted rules, refused when it is not a regular file or is
/// larger than 64 MiB.
pub(crate) fn read_regular(dir: &Path, path: &Path, rules: &Rules) -> Result<Vec<u8>, String> {
    let name = path.strip_prefix(dir).unwrap_or(path).display().to_string();
    if rules.untrusted {
        let meta = std::fs::metadata(path).map_err(|e| unreadable(path, &name, &e))?;
        if !meta.is_file() {
            return Err(format!("{name}: not a regular file"));
        }
        if meta.len() > MAX_FILE_BYTES {
            return Err(format!(
                "{name}: {} bytes, larger than a case file may be ({MAX_FILE_BYTES})",
                meta.len()
            ));
        }
    }
    std::fs::read(path).map_err(|e| unreadable(path, &name, &e))
}

/// Why the file `path` (shown as `name`) could not be read: a symlink that leads nowhere is
/// said so, not as a file that is not there.
fn unreadable(path: &Path, name: &str, e: &std::io::Error) -> String {
    match std::fs::read_link(path) {
        Ok(to) if e.kind() == std::io::ErrorKind::NotFound => format!(
            "{name}: a symlink to {}, which does not exist",
            crate::diagnostic::printable_name(&to.display().to_string())
        ),
        _ => format!("{name}: {e}"),
    }
}

/// Whether `dir` is a case folder: it holds `input.yaml`, `input.json`, `args` or an
/// expectation, or (`new`: for `--update`, which writes new cases' expectations) an `input/`
/// folder; an `input/` folder alone is no case otherwise (a repository's own `input/`). One
/// that lacks the rest is a case that cannot run, and says why: a folder whose expectation a
/// pull request deleted must not quietly stop being a case.
pub fn is_case(dir: &Path, new: bool) -> bool {
    let has = |f: &str| holds(dir, f);
    says_what_it_runs(dir) || has("input.yaml") || has("input.json") || (new && has("input"))
}

/// Whether `dir` holds an input and `args` or an expectation: a whole case, which inside
/// another case folder is one too many (a case's other folders are its data).
fn is_whole_case(dir: &Path) -> bool {
    let has = |f: &str| holds(dir, f);
    INPUTS.iter().any(|f| has(f)) && says_what_it_runs(dir)
}

/// Whether `dir` holds an entry `name`, whatever it is (a dangling symlink too).
fn holds(dir: &Path, name: &str) -> bool {
    std::fs::symlink_metadata(dir.join(name)).is_ok()
}

/// Whether `dir` holds `args` or an expectation.
fn says_what_it_runs(dir: &Path) -> bool {
    let has = |f: &str| holds(dir, f);
    has("args") || EXPECTATIONS.iter().any(|f| has(f))
}

/// The case folders at or under a directory, and the folders that cannot run, each with why:
/// one that cannot be read, or a case folder holding other cases (its folders are its own:
/// a case added above the others would hide them). Neither stops any other case.
#[derive(Debug, Clone, Default)]
pub struct Found {
    pub cases: Vec<PathBuf>,
    pub errors: Vec<(PathBuf, String)>,
}

/// The case folders at or under `root`, sorted: every folder is looked in but hidden ones
/// (`.git`) and symlinks to folders. `Err` when `root` is not a directory.
pub fn find(root: &Path, new: bool) -> Result<Found, String> {
    let mut found = Found::default();
    if !root.is_dir() {
        return Err(format!("{}: not a directory", root.display()));
    }
    let mut nested = Vec::new();
    walk(root, None, new, &mut found, &mut nested);
    // The first inner case of each outer one, by path.
    nested.sort();
    nested.dedup_by(|later, first| later.0 == first.0);
    for (outer, inner) in nested {
        if let Some(at) = found.cases.iter().position(|c| *c == outer) {
            found.cases.remove(at);
            let inner = inner
                .strip_prefix(&outer)
                .unwrap_or(&inner)
                .display()
                .to_string();
            let why = format!(
                "this case folder holds another case, {}: a case's folders are its own; move one \
                    of them",
                crate::diagnostic::printable_name(&inner)
            );
            found.errors.push((outer, why));
        }
    }
    found.cases.sort();
    Ok(found)
}

/// The case folders at or under `dir` (inside the case folder `case`, if any), added to
/// `found`; each case found inside another, as (outer, inner), to `nested`.
fn walk<'a>(
    dir: &'a Path,
    case: Option<&'a Path>,
    new: bool,
    found: &mut Found,
    nested: &mut Vec<(PathBuf, PathBuf)>,
) {
    let mut case = case;
    let is = match case {
        None => is_case(dir, new),
        Some(_) => is_whole_case(dir),
    };
    if is {
        if let Some(outer) = case {
            nested.push((outer.to_owned(), dir.to_owned()));
        }
        found.cases.push(dir.to_owned());
        case = Some(dir);
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            let why = format!("this folder cannot be read, nor the cases it may hold: {e}");
            return found.errors.push((dir.to_owned(), why));
        }
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                let why = format!("this folder cannot be read, nor the cases it may hold: {e}");
                return found.errors.push((dir.to_owned(), why));
            }
        };
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        // A case's `input/` is its input, not a place for cases.
        let input = case == Some(dir) && entry.file_name() == "input";
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir()) && !input;
        if is_dir && !hidden {
            walk(&entry.path(), case, new, found, nested);
        }
    }
}

/// `path` as named from the folder `dir` (`../../sidecars.yaml`), both where the file system
/// puts them (`path`'s folder resolved, its name kept): what a case's run shows of it does not
/// depend on where the cases are. (The absolute path when either cannot be resolved.)
fn relative(path: &Path, dir: &Path) -> PathBuf {
    // Both where the file system resolves them: the run resolves `..` from where its folder
    // is, not from a symlink that led to it (`tests -> elsewhere/tests` would otherwise
    // make `../../sidecars.yaml` name a file of `elsewhere`).
    // The file keeps its own name (a symlinked configuration's `inherits:` is read from
    // where the link is, as `inject -c` reads it); its folder is resolved.
    let folder = |p: &Path| -> Option<PathBuf> {
        let parent = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        Some(std::fs::canonicalize(parent).ok()?.join(p.file_name()?))
    };
    let (Some(path), Ok(dir)) = (folder(path), std::fs::canonicalize(dir)) else {
        return std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    };
    let common = path
        .components()
        .zip(dir.components())
        .take_while(|(a, b)| a == b)
        .count();
    let mut out: PathBuf = dir.components().skip(common).map(|_| "..").collect();
    out.extend(path.components().skip(common));
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `args` (words) checked as a user's case in a folder holding `input.yaml` and a
    /// symlink `out.yaml` to a file outside it.
    fn refused(words: &str) -> Option<String> {
        let top = tempfile::tempdir().expect("tempdir");
        let dir = top.path().join("case");
        std::fs::create_dir(&dir).expect("mkdir");
        std::fs::write(dir.join("input.yaml"), "kind: List\n").expect("write");
        std::fs::write(top.path().join("secret.yaml"), "x: 1\n").expect("write");
        std::os::unix::fs::symlink("../secret.yaml", dir.join("out.yaml")).expect("link");
        let fifo = std::process::Command::new("mkfifo")
            .arg(dir.join("fifo.yaml"))
            .status()
            .expect("mkfifo");
        assert!(fifo.success());
        let args: Vec<String> = words.split_whitespace().map(str::to_owned).collect();
        refused_args(&dir, &args, &command::read(&args)).err()
    }

    #[test]
    fn read_only_subcommands_with_paths_inside_the_folder_run() {
        for ok in [
            "inject input.yaml",
            "inject -n prod --set version=2.2 --namespace-labels prod=team=a input.yaml",
            "inject input.yaml -n shop -o patch",
            "inject -c config.yaml -f input.yaml",
            "inject --config=config.yaml -",
            "inject -vcconfig.yaml input.yaml",
            "uninject --trust-status input.yaml",
            "explain --report json input.yaml",
            "krm -c config.yaml",
            "admission -f review.json",
            "inject -l app=web,tier!=../x input.yaml",
            "inject --set path=/etc/x input.yaml",
            "inject -n/abs input.yaml",
            "inject -- input.yaml",
        ] {
            assert_eq!(refused(ok), None, "{ok}");
        }
    }

    #[test]
    fn other_subcommands_writing_flags_and_paths_out_of_the_folder_are_refused() {
        for (bad, why) in [
            (
                "serve --insecure-plain-http",
                "not a subcommand a case may run",
            ),
            ("test .", "not a subcommand a case may run"),
            ("completions bash", "not a subcommand a case may run"),
            ("inject -i input.yaml", "writes files"),
            ("inject -qi input.yaml", "writes files"),
            ("inject --in-place input.yaml", "writes files"),
            ("inject --output-file=o.yaml input.yaml", "writes files"),
            ("inject --report-file r input.yaml", "writes files"),
            ("inject --emit-kustomize o base", "writes files"),
            (
                "inject -c ../config.yaml input.yaml",
                "leads out of the case folder",
            ),
            (
                "inject --config=../../x input.yaml",
                "leads out of the case folder",
            ),
            ("inject -c/etc/passwd input.yaml", "an absolute path"),
            ("inject -f=../x.yaml", "leads out of the case folder"),
            (
                "inject -vc=../x.yaml input.yaml",
                "leads out of the case folder",
            ),
            ("inject /etc/passwd", "an absolute path"),
            ("inject out.yaml", "through a symlink"),
            ("inject -f out.yaml", "through a symlink"),
            (
                "inject -n prod -- ../x.yaml",
                "leads out of the case folder",
            ),
            (
                "explain -o text sub/../../x",
                "leads out of the case folder",
            ),
            ("inject .", "names the case folder"),
            ("inject fifo.yaml", "not a regular file"),
            ("inject -c fifo.yaml input.yaml", "not a regular file"),
            ("inject -n prod ./", "names the case folder"),
            ("uninject input.yaml/..", "names the case folder"),
        ] {
            let got = refused(bad).unwrap_or_else(|| panic!("{bad}: not refused"));
            assert!(got.contains(why), "{bad}: {got}");
        }
    }

    #[test]
    fn a_command_line_configuration_is_named_from_the_case_folder() {
        let top = tempfile::tempdir().expect("tempdir");
        let p = top.path().join("p");
        std::fs::create_dir_all(p.join("tests/web")).expect("mkdir");
        std::fs::write(p.join("sidecars.yaml"), "").expect("write");
        std::fs::write(p.join("tests/web/c.yaml"), "").expect("write");
        assert_eq!(
            relative(&p.join("sidecars.yaml"), &p.join("tests/web")),
            PathBuf::from("../../sidecars.yaml")
        );
        assert_eq!(
            relative(&p.join("tests/web/c.yaml"), &p.join("tests/web")),
            PathBuf::from("c.yaml")
        );
        // Reached through a symlink (`q/tests -> ../p/tests`): named from where the folder
        // is, so that the run, in that folder, finds the same file.
        std::fs::create_dir(top.path().join("q")).expect("mkdir");
        std::os::unix::fs::symlink("../p/tests", top.path().join("q/tests")).expect("link");
        let via = top.path().join("q/tests/web");
        let named = relative(&p.join("sidecars.yaml"), &via);
        assert_eq!(
            std::fs::canonicalize(via.join(&named)).expect("found"),
            std::fs::canonicalize(p.join("sidecars.yaml")).expect("canonical")
        );
        // A configuration that is a symlink keeps its name: its `inherits:` is read beside
        // the link, as `inject -c` reads it.
        std::fs::create_dir(p.join("vendor")).expect("mkdir");
        std::fs::write(p.join("vendor/prod.yaml"), "").expect("write");
        std::os::unix::fs::symlink("vendor/prod.yaml", p.join("prod.yaml")).expect("link");
        assert_eq!(
            relative(&p.join("prod.yaml"), &p.join("tests/web")),
            PathBuf::from("../../prod.yaml")
        );
    }
}
