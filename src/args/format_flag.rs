//! `-o`'s values (`Format`), parsed as clap parses a value enum, with one more tip: a value
//! that looks like a file name (`-o out.yaml`, istioctl's `kube-inject -o`) is answered with
//! `--output-file`.

use clap::ValueEnum;
use clap::builder::{EnumValueParser, PossibleValue, TypedValueParser};
use clap::error::{ContextKind, ContextValue, Error, ErrorKind};

use crate::render::output::Format;

/// `-o`'s values as clap shows them (`--help`, completions, man pages), with their help.
impl ValueEnum for Format {
    fn value_variants<'a>() -> &'a [Self] {
        &[Format::Yaml, Format::Json, Format::Patch, Format::JsonList]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            Format::Yaml => PossibleValue::new("yaml").help(
                "The manifests, edited in place: comments, order, quoting and indentation kept",
            ),
            Format::Json => {
                PossibleValue::new("json").help("One JSON document per input document")
            }
            Format::Patch => PossibleValue::new("patch")
                .help("Per object: identity, source, and RFC 6902 operations"),
            Format::JsonList => PossibleValue::new("json-list").help(
                "One JSON value: a kubectl `List` of every input document, in order (as `kubectl get -o json` prints \
                    several objects)",
            ),
        })
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct FormatParser;

impl TypedValueParser for FormatParser {
    type Value = Format;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Format, Error> {
        let error = match EnumValueParser::<Format>::new().parse_ref(cmd, arg, value) {
            Ok(format) => return Ok(format),
            Err(e) => e,
        };
        let text = value.to_string_lossy();
        if !looks_like_a_file(&text) {
            return Err(error);
        }
        // The same error without clap's "a similar value exists" (`out.yaml` is not a typo
        // of `yaml`), with the tip that says where files go.
        let mut tipped = Error::new(ErrorKind::InvalidValue).with_cmd(cmd);
        for kind in [
            ContextKind::InvalidArg,
            ContextKind::InvalidValue,
            ContextKind::ValidValue,
            ContextKind::Usage,
        ] {
            if let Some(v) = error.get(kind) {
                tipped.insert(kind, v.clone());
            }
        }
        let values: Vec<String> = Format::value_variants()
            .iter()
            .filter_map(|f| Some(f.to_possible_value()?.get_name().to_owned()))
            .collect();
        tipped.insert(
            ContextKind::Suggested,
            ContextValue::StyledStrs(vec![
                format!(
                    "-o is the output's format ({}); to write the output to a file, use --output-file {text}",
                    values.join(", ")
                )
                .into(),
            ]),
        );
        Err(tipped)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            Format::value_variants()
                .iter()
                .filter_map(ValueEnum::to_possible_value),
        ))
    }
}

/// Whether `value` looks like a file name rather than a format: it has a `.` or a `/`.
fn looks_like_a_file(value: &str) -> bool {
    value.contains(['.', '/'])
}
