//! Which configuration each input uses: those given with `-c`, or, per file, the nearest
//! `.kinject.yaml` or `kinject.yaml` from the file's directory up (to the repository's root,
//! never above); and, when a configuration in use is itself among the files an `--in-place`,
//! `--check` or `--diff` run was given (pre-commit passes only what is staged), every manifest
//! that configuration applies to.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::diagnostic::printable_name;
use crate::read::{self, InputError, Source};

use super::discover;
use super::inputs::Inputs;
use super::report::{self, eprint};
use super::run::{Loaded, Prepared, Processed, prepare, process_with};
use super::status::ExitStatus;
use crate::args::{ConfigArgs, DiscoveryArgs};
use crate::pipeline::Sink;
use crate::tree::{Nearest, NotFound, Tree, canonical, repository, shown, shown_dir};

/// The configurations of a run, each loaded once, and which input uses which.
pub(crate) struct Configs {
    pub list: Vec<Config>,
    /// The configuration of each input file, by its path as discovered; standard input (and
    /// with `-c`, every input) uses the first.
    of_path: HashMap<PathBuf, usize>,
    /// Inputs that cannot be read or have no configuration, reported with the others.
    pub errors: Vec<InputError>,
}

impl Configs {
    /// One configuration for every input.
    pub(crate) fn one(config: Config) -> Self {
        Configs {
            list: vec![config],
            of_path: HashMap::new(),
            errors: Vec::new(),
        }
    }

    /// Which configuration `source` uses (an index of `list`).
    pub(crate) fn index(&self, source: &Source) -> usize {
        source
            .path
            .as_ref()
            .and_then(|p| self.of_path.get(p))
            .copied()
            .unwrap_or(0)
    }

    /// `run::process_with` over `args`' inputs, each with its own configuration; the inputs
    /// that have none come first among the errors.
    pub(crate) fn process<S: Sink>(
        &mut self,
        args: &Inputs,
        stdin: Option<Result<read::Input, InputError>>,
        early: Option<Loaded>,
        mode: crate::inject::Mode,
        sink: impl Fn() -> S + Sync,
    ) -> Result<Processed<S::Output>, ExitStatus>
    where
        S::Output: Send,
    {
        let unconfigured = std::mem::take(&mut self.errors);
        let list: Vec<&Config> = self.list.iter().collect();
        let index = |s: &Source| self.index(s);
        let (files, mut errors) = process_with(args, stdin, early, (&list, &index), mode, sink)?;
        errors.splice(0..0, unconfigured);
        Ok((files, errors))
    }

    /// `run::prepare` of `args`' inputs, each with its own configuration; the inputs that have
    /// none come first among the errors.
    pub(crate) fn prepare(
        &mut self,
        args: &Inputs,
        stdin: Option<Result<read::Input, InputError>>,
        early: Option<Loaded>,
        mode: crate::inject::Mode,
    ) -> Result<Prepared<'_>, ExitStatus> {
        let unconfigured = std::mem::take(&mut self.errors);
        let list: Vec<&Config> = self.list.iter().collect();
        let index = |s: &Source| self.index(s);
        let mut prepared = prepare(args, stdin, early, (&list, &index), mode)?;
        prepared.errors.splice(0..0, unconfigured);
        Ok(prepared)
    }
}

/// What a run plans its configurations for.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Planned {
    /// `--in-place`, `--check` or `--diff`: a configuration among the files widens the run
    /// (see the header).
    pub edit: bool,
    /// `-q`: the configurations found are not said.
    pub quiet: bool,
    /// `uninject`: a file with no configuration is read with none (its records then need
    /// `--trust-status`), and the configurations are loaded without trying their templates.
    pub uninject: bool,
    /// `uninject --trust-status`: records are taken on their word, so a file with no
    /// configuration is not said.
    pub trusting: bool,
}

/// Which configuration files each input uses, before they are loaded.
pub(crate) struct Plan {
    /// Each distinct set of configuration files, with how many inputs use it.
    groups: Vec<(Vec<PathBuf>, usize)>,
    of_path: HashMap<PathBuf, usize>,
    errors: Vec<InputError>,
    /// Whether the configurations were found rather than given.
    found: bool,
    /// Whether their templates are tried when they load (not for `uninject`).
    tried: bool,
}

/// Decides the configurations of an `inject` run over files (`given` with `-c`, else each
/// file's nearest, unless `discovery` says none is looked for), and the inputs to read: the
/// sources the arguments name (and, see the header, those a configuration among them applies
/// to) go into the returned arguments. `None` when the configuration of standard input
/// cannot be found (said).
pub(crate) fn plan(
    given: &[PathBuf],
    discovery: &DiscoveryArgs,
    input: &Inputs,
    mode: Planned,
) -> Option<(Plan, Inputs)> {
    let Planned {
        edit,
        quiet,
        uninject,
        trusting,
    } = mode;
    let (mut sources, errors) = read::discover(&input.paths, input.intent);
    let cwd = std::env::current_dir().ok()?;
    let mut nearest = Nearest::default();
    let checked = if given.is_empty() {
        discover::allowed(discovery)
    } else {
        discover::files(given, discovery, input.reads_stdin()).map(|_| ())
    };
    if let Err(e) = checked {
        eprint(&format!("error: {e}\n"));
        return None;
    }
    let mut errors = errors;
    if edit {
        errors.extend(widen(&mut sources, given, &cwd, &mut nearest, quiet));
    }
    let mut plan = Plan {
        groups: Vec::new(),
        of_path: HashMap::new(),
        errors,
        found: given.is_empty(),
        tried: !uninject,
    };
    let mut kept = Vec::with_capacity(sources.len());
    // The index of each group in `plan.groups`, by its configuration files: a pull request can
    // commit a `.kinject.yaml` in every folder, and a search of the groups for each file cost
    // files × configurations × path length.
    let mut group_of: HashMap<Vec<PathBuf>, usize> = HashMap::new();
    for source in sources {
        let files = match (&source.path, given.is_empty()) {
            (Some(path), true) => match found_for(&mut nearest, &cwd.join(path), &cwd, edit) {
                Ok(found) => vec![found],
                // `uninject` without one removes only on `--trust-status`.
                Err(NotFound::Looked(_)) if uninject => Vec::new(),
                Err(NotFound::Looked(looked)) => {
                    let linked = linked_elsewhere(&mut nearest, &cwd.join(path), &cwd, edit);
                    plan.errors.push(InputError::NoConfiguration {
                        name: source.name.clone(),
                        looked: looked + &linked,
                    });
                    continue;
                }
                Err(NotFound::Refused(why)) => {
                    plan.errors.push(InputError::ConfigurationRefused {
                        name: source.name.clone(),
                        why,
                    });
                    continue;
                }
            },
            (None, true) if uninject => match discover::nearest_here() {
                Ok(found) => found.into_iter().collect(),
                Err(e) => {
                    eprint(&format!("error: {e}\n"));
                    return None;
                }
            },
            (None, true) => match discover::files(given, discovery, true) {
                Ok(found) => found,
                Err(e) => {
                    eprint(&format!("error: {e}\n"));
                    return None;
                }
            },
            (_, false) => given.to_vec(),
        };
        let index = *group_of.entry(files).or_insert_with_key(|files| {
            plan.groups.push((files.clone(), 0));
            plan.groups.len() - 1
        });
        plan.groups[index].1 += 1;
        if let Some(path) = &source.path {
            plan.of_path.insert(path.clone(), index);
        }
        kept.push(source);
    }
    if plan.groups.is_empty() && !given.is_empty() {
        // Nothing to read: the configuration still loads, so that its mistakes are said.
        plan.groups.push((given.to_vec(), 0));
    }
    if plan.found && !quiet {
        for (files, count) in &plan.groups {
            if !(files.is_empty() && trusting) {
                say_used(files, *count, &cwd);
            }
        }
    }
    let args = Inputs {
        sources: Some(kept),
        ..input.clone()
    };
    Some((plan, args))
}

impl Plan {
    /// Loads each configuration once. `None` when one cannot be loaded (said).
    pub(crate) fn load(self, sets: &[crate::config::Set]) -> Option<Configs> {
        let mut list = Vec::with_capacity(self.groups.len());
        for (files, _) in &self.groups {
            let config = match (files.is_empty(), self.tried) {
                (true, _) => Config::empty(),
                (false, true) => load(files, sets)?,
                (false, false) => load_untried(files)?,
            };
            list.push(config);
        }
        if list.is_empty() {
            // No input has a configuration: each is an error of its own.
            list.push(Config::empty());
        }
        Some(Configs {
            list,
            of_path: self.of_path,
            errors: self.errors,
        })
    }
}

/// Loads the one configuration of a run not planned per file (`config`), or reports why it cannot be loaded and returns
/// `None`. `stdin_read`: whether standard input holds the run's manifests (or request), which
/// a configuration read from it would take.
pub(crate) fn load_one(config: &ConfigArgs, stdin_read: bool) -> Option<crate::config::Config> {
    let paths = match discover::paths(config, stdin_read) {
        Ok(p) => p,
        Err(e) => {
            eprint(&format!("error: {e}\n"));
            return None;
        }
    };
    load(&paths, &config.overrides())
}

/// Loads one configuration, saying its warnings, or its errors and `None`.
pub(crate) fn load(files: &[PathBuf], sets: &[crate::config::Set]) -> Option<Config> {
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    match crate::config::load(&paths, sets) {
        Ok(mut c) => {
            report::diagnostics(std::mem::take(&mut c.warnings));
            Some(c)
        }
        Err(errors) => {
            report::diagnostics(errors);
            None
        }
    }
}

/// Loads one configuration for `uninject` (its templates not tried), saying its warnings,
/// or its errors and `None`.
fn load_untried(files: &[PathBuf]) -> Option<Config> {
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    match crate::config::load_untried(&paths) {
        Ok(mut c) => {
            report::diagnostics(std::mem::take(&mut c.warnings));
            Some(c)
        }
        Err(errors) => {
            report::diagnostics(errors);
            None
        }
    }
}

/// `using team-a/.kinject.yaml for 3 files`, for a configuration found, not given (`no
/// configuration found for 2 files` for those `uninject` reads with none).
fn say_used(files: &[PathBuf], count: usize, cwd: &Path) {
    let plural = if count == 1 { "" } else { "s" };
    if files.is_empty() {
        eprint(&format!(
            "no {} found for {count} file{plural}: what they record is removed only with -c or --trust-status\n",
            crate::tree::CONFIG_NAMES_SAID
        ));
        return;
    }
    let names: Vec<String> = files.iter().map(|f| shown(f, cwd)).collect();
    eprint(&format!(
        "using {} for {count} file{plural}\n",
        names.join(", ")
    ));
}

/// The nearest configuration of the manifest at `path`: for a run that rewrites or checks
/// files, that of where the file really is in its repository (`Nearest::of_manifest`: a
/// committed link must not give another folder's manifest its own folder's configuration, nor
/// pass its check so); for one that prints, that of where it is named (a link to a shared
/// manifest printed with each folder's configuration).
fn found_for(
    nearest: &mut Nearest,
    path: &Path,
    cwd: &Path,
    edit: bool,
) -> Result<PathBuf, NotFound> {
    if edit {
        nearest.of_manifest(path, cwd)
    } else {
        nearest.of(path, cwd)
    }
}

/// What a message adds when a rewritten or checked manifest's configuration was looked for
/// where the file really is, not where it is named (`found_for`): `; it is a link to
/// base/deploy.yaml, and a file rewritten uses the configuration of where it really is`.
/// Empty otherwise.
fn linked_elsewhere(nearest: &mut Nearest, path: &Path, cwd: &Path, edit: bool) -> String {
    let real = nearest.real_name(path, cwd);
    if !edit || real == crate::tree::normalize(path) {
        return String::new();
    }
    format!(
        "; it is a link to {}, and a file rewritten uses the configuration of where it really is",
        shown(&real, cwd)
    )
}

/// A configuration in use among the files, and the directory it applies to.
struct Scope {
    /// The configuration's name, as given.
    name: String,
    dir: PathBuf,
    /// A found configuration applies to the files it is the nearest one of; one given with
    /// `-c` (`None`), to every file of its repository.
    owner: Option<PathBuf>,
    /// The scope whose `git ls-files` lists its files: itself, or the outermost scope of a found
    /// configuration it is below in the same repository.
    listed_by: usize,
    /// The manifests it added, in its listing's order; `None` when it is not in a git
    /// repository.
    added: Option<Vec<Source>>,
    /// The tracked files it applies to that lead out of it.
    refused: Vec<InputError>,
}

/// When a configuration in use is among `sources`, adds the manifests it applies to (see
/// the header), saying so in one line. The scope is taken from the configuration's path as
/// found, not from where a symlink leads (a `.kinject.yaml` linked to another checkout's
/// made kinject rewrite that checkout's manifests), and a tracked file that leads out of the
/// scope is not read (the walk of the directory refuses it too): it is returned as an error.
///
/// Each file is listed and looked at once: found configurations below one another in a
/// repository are listed by the outermost one's `git ls-files` (a pull request can commit a
/// `.kinject.yaml` in every folder, and a listing per configuration cost depth² files).
fn widen(
    sources: &mut Vec<Source>,
    given: &[PathBuf],
    cwd: &Path,
    nearest: &mut Nearest,
    quiet: bool,
) -> Vec<InputError> {
    let mut scopes = scopes_in_use(sources, given, cwd, nearest);
    list_found_below_one_another_once(&mut scopes, nearest);
    let known: HashSet<PathBuf> = sources
        .iter()
        .filter_map(|s| canonical(s.path.as_ref()?).ok())
        .collect();
    list(&mut scopes, known, cwd, nearest);
    // One configuration at a time, in the order they were named, as each one's own listing
    // gives them.
    let mut errors = Vec::new();
    for scope in scopes {
        let unlisted = !scope.refused.is_empty() && scope.added.is_none();
        errors.extend(scope.refused);
        if unlisted {
            continue;
        }
        let Some(added) = scope.added else {
            eprint(&format!(
                "note: {} is among the files, but not in a git repository: only the files named are checked\n",
                scope.name
            ));
            continue;
        };
        let count = added.len();
        sources.extend(added);
        if quiet {
            continue;
        }
        let others = match count {
            0 => "no other manifest".to_owned(),
            1 => "the 1 other manifest".to_owned(),
            n => format!("the {n} other manifests"),
        };
        eprint(&format!(
            "{} is among the files: also checking {others} it applies to (git ls-files {})\n",
            scope.name,
            shown_dir(&scope.dir, cwd)
        ));
    }
    errors
}

/// The configurations in use among `sources`, each scope once, in the order they come: those
/// given with `-c` (`given`) for their repository, else those found that are their own nearest
/// configuration, for the files they are the nearest configuration of.
fn scopes_in_use(
    sources: &[Source],
    given: &[PathBuf],
    cwd: &Path,
    nearest: &mut Nearest,
) -> Vec<Scope> {
    let given: Vec<PathBuf> = given.iter().filter_map(|p| canonical(p).ok()).collect();
    let mut scopes: Vec<Scope> = Vec::new();
    let mut dirs: HashSet<PathBuf> = HashSet::new();
    for source in sources.iter() {
        let Some(path) = &source.path else { continue };
        let found = crate::tree::normalize(&cwd.join(path));
        let in_use = if given.is_empty() {
            // A default configuration is its own nearest one.
            nearest.of(&found, cwd).ok().as_deref() == Some(found.as_path())
        } else {
            canonical(path).is_ok_and(|real| given.iter().any(|g| real.starts_with(g)))
        };
        let Some(dir) = found.parent().map(Path::to_owned) else {
            continue;
        };
        // With `-c`, the configuration applies to the repository it is in; a found one, to
        // the files it is the nearest configuration of.
        let (dir, owner) = if given.is_empty() {
            (dir, Some(found.clone()))
        } else {
            match nearest.repository_of(&dir) {
                Some(root) => (root, None),
                None => (dir, None),
            }
        };
        if in_use && dirs.insert(dir.clone()) {
            let listed_by = scopes.len();
            scopes.push(Scope {
                name: source.name.clone(),
                dir,
                owner,
                listed_by,
                added: None,
                refused: Vec::new(),
            });
        }
    }
    scopes
}

/// Lists the tracked manifests of each scope that lists (`listed_by`), and adds to each scope
/// those it applies to, unless `known` already (by their real path), or refuses them where
/// they lead out of it.
fn list(scopes: &mut [Scope], mut known: HashSet<PathBuf>, cwd: &Path, nearest: &mut Nearest) {
    // Each found configuration in use, by its name as found and by where it really is in its
    // repository: a file's nearest configuration is looked for from where the file really is
    // (`Nearest::of_manifest`), so one named through a symlinked folder is met by its real
    // name.
    let mut owners: HashMap<PathBuf, usize> = HashMap::new();
    for (i, scope) in scopes.iter().enumerate() {
        if let Some(owner) = &scope.owner {
            owners.insert(owner.clone(), i);
            owners.entry(nearest.real_name(owner, cwd)).or_insert(i);
        }
    }
    let mut trees: HashMap<usize, Option<Tree>> = HashMap::new();
    for lister in 0..scopes.len() {
        if scopes[lister].listed_by != lister {
            continue;
        }
        let tracked = match tracked_manifests(&scopes[lister].dir) {
            Ok(Some(tracked)) => tracked,
            Ok(None) => continue,
            // Not "only the files named": a check would pass without its manifests.
            Err(why) => {
                for scope in scopes.iter_mut().filter(|s| s.listed_by == lister) {
                    scope.refused.push(InputError::Io {
                        name: format!("the manifests {} applies to", scope.name),
                        error: std::io::Error::other(why.clone()),
                    });
                }
                continue;
            }
        };
        for (i, scope) in scopes.iter_mut().enumerate() {
            if scope.listed_by == lister {
                let tree = Tree::shown_as(&scope.dir, shown_dir(&scope.dir, cwd));
                // Not in a repository either, for what is said of it.
                scope.added = tree.is_ok().then(Vec::new);
                trees.insert(i, tree.ok());
            }
        }
        for file in tracked {
            // The scope the file is in: the lister's with `-c`, else that of its nearest
            // configuration from where the file really is (the one it is checked with), if that
            // one is in use.
            let in_use = |found: Result<PathBuf, NotFound>| {
                let found = found.ok()?;
                owners
                    .get(&found)
                    .copied()
                    .filter(|&i| scopes[i].listed_by == lister)
            };
            let owner = match scopes[lister].owner {
                None => Some(lister),
                Some(_) => in_use(nearest.of_manifest(&file, cwd)),
            };
            let rel = file.strip_prefix(cwd).map_or(file.clone(), Path::to_owned);
            let Some(owner) = owner else {
                // A link listed where a configuration in use applies, leading out of its scope,
                // is refused by name; one into another configuration's folder is that one's.
                if let Some(listed) = in_use(nearest.of(&file, cwd))
                    && let Some(Some(tree)) = trees.get(&listed)
                    && let Err(outside) = tree.check(&file)
                {
                    scopes[listed]
                        .refused
                        .push(not_followed(&rel, cwd, &outside));
                }
                continue;
            };
            let scope = &scopes[owner];
            // Hidden by its name, as a walk finds it: of the configuration's folder, or, for a
            // link listed elsewhere, of the folder listed.
            let walked = if file.starts_with(&scope.dir) {
                &scope.dir
            } else {
                &scopes[lister].dir
            };
            if hidden_below(&file, walked) {
                continue;
            }
            let Some(Some(tree)) = trees.get(&owner) else {
                continue;
            };
            if let Err(outside) = tree.check(&file) {
                scopes[owner]
                    .refused
                    .push(not_followed(&rel, cwd, &outside));
                continue;
            }
            // A chart's template (by its name or where it really is: a link to one is one)
            // that the reader would refuse is not a manifest until rendered; a plain file in
            // `templates/` is one, as a walk reads it. Read only once known to be in the tree.
            if read::chart_template(&file) && read::is_template_file(&file) {
                continue;
            }
            if known.insert(canonical(&file).unwrap_or_else(|_| file.clone())) {
                let mut source = Source::file(&rel);
                // Not rewritten through a symlink that leads out of the scope.
                source.within = Some(tree.root().to_owned());
                if let Some(added) = &mut scopes[owner].added {
                    added.push(source);
                }
            }
        }
    }
}

/// A tracked file `rel` that leads out of its configuration's scope: named, not read.
fn not_followed(rel: &Path, cwd: &Path, outside: &crate::tree::Outside) -> InputError {
    InputError::Io {
        name: shown(rel, cwd),
        error: std::io::Error::other(format!("{outside}, not followed")),
    }
}

/// Sets `listed_by` of each found configuration's scope below another's in the same
/// repository to the outermost of them. Sorted by path, the directories below one come right
/// after it, so one pass with a stack of the open ones finds them. One named through a
/// symlinked folder is listed on its own: the outer listing names its files by where they
/// really are, and their nearest configuration by that path, not the name given.
fn list_found_below_one_another_once(scopes: &mut [Scope], nearest: &mut Nearest) {
    let mut order: Vec<usize> = (0..scopes.len())
        .filter(|&i| scopes[i].owner.is_some())
        .collect();
    order.sort_by(|&a, &b| scopes[a].dir.cmp(&scopes[b].dir));
    let mut open: Vec<(usize, Option<PathBuf>)> = Vec::new();
    for i in order {
        while open
            .last()
            .is_some_and(|&(o, _)| !scopes[i].dir.starts_with(&scopes[o].dir))
        {
            open.pop();
        }
        let repository = nearest.repository_of(&scopes[i].dir);
        match open.last() {
            Some((o, r))
                if repository.is_some()
                    && *r == repository
                    && no_link_between(&scopes[*o].dir, &scopes[i].dir) =>
            {
                scopes[i].listed_by = scopes[*o].listed_by;
            }
            _ => {}
        }
        open.push((i, repository));
    }
}

/// Whether the folder `inner`, below `outer`, is reached from it with no symlink: its real path
/// is `outer`'s and the rest as written.
fn no_link_between(outer: &Path, inner: &Path) -> bool {
    let (Ok(outer_real), Ok(inner_real), Ok(rest)) = (
        canonical(outer),
        canonical(inner),
        inner.strip_prefix(outer),
    ) else {
        return false;
    };
    inner_real == outer_real.join(rest)
}

/// Whether `file`, below `dir`, is hidden from a walk of `dir`: a name below it begins with `.`.
fn hidden_below(file: &Path, dir: &Path) -> bool {
    file.strip_prefix(dir).is_ok_and(|rel| {
        rel.components()
            .any(|c| c.as_os_str().as_encoded_bytes().starts_with(b"."))
    })
}

/// The git-tracked `.yaml`, `.yml` and `.json` files under `dir` (absolute), whatever bytes
/// their names are; `Ok(None)` outside a git repository, `Err` (why) when git cannot list them
/// in one (git missing, a repository git refuses as another user's).
///
/// git runs at the repository's root, `dir` (where it really is) its pathspec: a hook of a
/// linked worktree is given `GIT_DIR` and no `GIT_WORK_TREE`, and git then takes the folder it
/// runs in as the work tree's top (from a sub-folder, every name came out under it twice and
/// was dropped). The files are named below `dir` as it is spelled. A `dir` that really is
/// outside its repository's root is listed from itself.
fn tracked_manifests(dir: &Path) -> Result<Option<Vec<PathBuf>>, String> {
    let Some(root) = repository(dir) else {
        return Ok(None);
    };
    let (at, below) = match (canonical(root), canonical(dir)) {
        (Ok(root_real), Ok(dir_real)) if dir_real.starts_with(&root_real) => (
            root,
            dir_real
                .strip_prefix(&root_real)
                .unwrap_or(Path::new(""))
                .to_owned(),
        ),
        _ => (dir, PathBuf::new()),
    };
    let mut pathspec = std::ffi::OsString::from(":(literal)");
    pathspec.push(if below.as_os_str().is_empty() {
        Path::new(".")
    } else {
        &below
    });
    let out = std::process::Command::new("git")
        .args(["ls-files", "-z", "--"])
        .arg(&pathspec)
        .current_dir(at)
        // They would make git read `:(literal)` as part of a name, or refuse it: it listed
        // nothing, and a check passed.
        .env_remove("GIT_LITERAL_PATHSPECS")
        .env_remove("GIT_GLOB_PATHSPECS")
        .env_remove("GIT_NOGLOB_PATHSPECS")
        .env_remove("GIT_ICASE_PATHSPECS")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("git ls-files cannot run: {e}"))?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        let said: Vec<&str> = said
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .take(4)
            .collect();
        return Err(format!(
            "git ls-files failed ({}): {}",
            out.status,
            printable_name(&said.join(" "))
        ));
    }
    let files = out
        .stdout
        .split(|b| *b == 0)
        .filter(|name| !name.is_empty())
        .filter_map(git_name)
        .filter_map(|name| Some(dir.join(name.strip_prefix(&below).ok()?)))
        .filter(|p| crate::tree::is_manifest(p) && p.is_file())
        .collect();
    Ok(Some(files))
}

/// A name `git ls-files -z` gives: any bytes on Unix, as the file system takes them; UTF-8
/// elsewhere.
fn git_name(name: &[u8]) -> Option<&Path> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Some(Path::new(std::ffi::OsStr::from_bytes(name)))
    }
    #[cfg(not(unix))]
    {
        std::str::from_utf8(name).ok().map(Path::new)
    }
}
