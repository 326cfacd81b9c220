//! A case's command line read as the kinject it runs reads it: by clap, on the grammar of
//! `crate::args`, so that every spelling of a flag (`-c X`, `-cX`, `-c=X`, `-vcX`, `--config
//! X`, `--config=X`) counts as what it is, for what a case may run and which configuration
//! it names.

use std::ffi::OsString;

use clap::CommandFactory;

/// The arguments (clap's ids) that name the configurations.
const CONFIGS: &str = "configs";

/// The arguments that name files the run reads as manifests or a review.
const READS: [&str; 4] = ["paths", "filenames", "path", "filename"];

/// The arguments that write a file.
const WRITES: [&str; 4] = ["in_place", "output_file", "report_file", "emit_kustomize"];

/// A case's command line, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Read {
    /// The subcommand (`inject`); None when clap refuses the command line, which the run then
    /// refuses too, before reading or writing anything.
    pub subcommand: Option<String>,
    /// Whether the subcommand takes `-c`.
    pub takes_configs: bool,
    /// The configurations named, in order.
    pub configs: Vec<String>,
    /// The files named that it reads (its inputs, `-f`), in order.
    pub reads: Vec<String>,
    /// The flags given that write a file, as the long flag (`--in-place`).
    pub writes: Vec<String>,
    /// The flags given that name another path (none of the subcommands a case runs has one
    /// today): refused, as what nothing has said a case may name.
    pub other_paths: Vec<String>,
    /// Whether `-o`/`--output` is given.
    pub output: Option<String>,
}

/// `args` (after `kinject`) as clap reads them.
pub(crate) fn read(args: &[String]) -> Read {
    let mut command = crate::args::Cli::command();
    command.build();
    let argv = std::iter::once(OsString::from("kinject")).chain(args.iter().map(OsString::from));
    let Ok(matches) = command.clone().try_get_matches_from(argv) else {
        return Read::default();
    };
    let Some((name, matches)) = matches.subcommand() else {
        return Read::default();
    };
    let Some(sub) = command.find_subcommand(name) else {
        return Read::default();
    };
    let mut read = Read {
        subcommand: Some(name.to_owned()),
        takes_configs: sub.get_arguments().any(|a| a.get_id() == CONFIGS),
        ..Read::default()
    };
    for arg in sub.get_arguments() {
        let id = arg.get_id().as_str();
        if matches.value_source(id) != Some(clap::parser::ValueSource::CommandLine) {
            continue;
        }
        let values = || -> Vec<String> {
            matches
                .get_raw(id)
                .into_iter()
                .flatten()
                .map(|v| v.to_string_lossy().into_owned())
                .collect()
        };
        let flag = || {
            arg.get_long()
                .map_or_else(|| id.to_owned(), |l| format!("--{l}"))
        };
        if WRITES.contains(&id) {
            read.writes.push(flag());
        } else if id == CONFIGS {
            read.configs.extend(values());
        } else if READS.contains(&id) {
            read.reads.extend(values());
        } else if id == "output" {
            read.output = values().into_iter().next();
        } else if is_path(arg) {
            read.other_paths.push(flag());
        }
    }
    read
}

/// Whether the argument's values are paths (clap says so of every `PathBuf` argument).
fn is_path(arg: &clap::Arg) -> bool {
    use clap::ValueHint::{AnyPath, DirPath, ExecutablePath, FilePath};
    matches!(
        arg.get_value_hint(),
        AnyPath | FilePath | DirPath | ExecutablePath
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(words: &str) -> Read {
        let args: Vec<String> = words.split_whitespace().map(str::to_owned).collect();
        read(&args)
    }

    #[test]
    fn every_spelling_of_a_configuration_is_one() {
        for words in [
            "inject -c x.yaml in.yaml",
            "inject -cx.yaml in.yaml",
            "inject -c=x.yaml in.yaml",
            "inject -vcx.yaml in.yaml",
            "inject -vc x.yaml in.yaml",
            "inject --config x.yaml in.yaml",
            "inject --config=x.yaml in.yaml",
            "inject in.yaml -c x.yaml",
        ] {
            let read = of(words);
            assert_eq!(read.configs, ["x.yaml"], "{words}");
            assert_eq!(read.reads, ["in.yaml"], "{words}");
        }
        assert_eq!(
            of("uninject --config=a.yaml -cb.yaml -").configs,
            ["a.yaml", "b.yaml"]
        );
        assert!(of("inject in.yaml").configs.is_empty());
        assert!(of("inject in.yaml").takes_configs);
    }

    #[test]
    fn what_a_run_writes_and_reads_is_seen_however_spelled() {
        for (words, writes) in [
            ("inject -i in.yaml", "--in-place"),
            ("inject -qi in.yaml", "--in-place"),
            ("inject --in-place in.yaml", "--in-place"),
            ("inject --output-file=o.yaml in.yaml", "--output-file"),
            ("explain --output-file o.txt in.yaml", "--output-file"),
            ("inject --report-file r in.yaml", "--report-file"),
            ("inject --emit-kustomize o base", "--emit-kustomize"),
        ] {
            assert_eq!(of(words).writes, [writes], "{words}");
        }
        // `-ni` is the namespace `i`, `-fi` the file `i`.
        assert!(of("inject -ni in.yaml").writes.is_empty());
        assert_eq!(of("inject -fi").reads, ["i"]);
        assert_eq!(of("inject -- -i").reads, ["-i"]);
        assert_eq!(of("admission -f review.json").reads, ["review.json"]);
        assert_eq!(
            of("inject -opatch in.yaml").output.as_deref(),
            Some("patch")
        );
        // What clap refuses runs nothing: no subcommand, nothing named.
        assert_eq!(
            of("inject --injectConfigFile c.yaml in.yaml"),
            Read::default()
        );
        assert_eq!(of("inject -c"), Read::default());
    }

    /// The arguments of the subcommands a case may run whose values are paths are those this
    /// file sorts: a new one is refused (`other_paths`) until it is sorted here.
    #[test]
    fn every_path_argument_of_a_case_subcommand_is_sorted() {
        let mut command = crate::args::Cli::command();
        command.build();
        let mut paths = std::collections::BTreeSet::new();
        for name in ["inject", "uninject", "explain", "krm", "admission"] {
            let sub = command.find_subcommand(name).expect(name);
            for arg in sub.get_arguments().filter(|a| is_path(a)) {
                paths.insert(arg.get_id().as_str().to_owned());
            }
        }
        // `--in-place` writes the files it reads: a flag, no path of its own.
        let sorted: std::collections::BTreeSet<String> = READS
            .iter()
            .chain(&WRITES)
            .chain(&[CONFIGS])
            .filter(|id| **id != "in_place")
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(paths, sorted);
    }
}
