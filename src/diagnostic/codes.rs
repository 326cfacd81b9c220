//! Every diagnostic code kinject gives, in one list. Codes are stable (docs/stability.md):
//! scripts match on them in `--report json`, KRM results and admission answers. docs/output.md
//! lists every one (`tests/stable.rs` checks it), and no code is written anywhere else in
//! `src/` (checked there too).

macro_rules! codes {
    ($($(#[$doc:meta])* $name:ident = $code:literal;)*) => {
        $($(#[$doc])* pub const $name: &str = $code;)*
        /// Every code, in the order of this list.
        pub const ALL: &[&str] = &[$($name),*];
    };
}

codes! {
    // Inputs (manifests).
    /// A document that is not YAML (or JSON) as Kubernetes reads it.
    INPUT_SYNTAX = "kinject::input::syntax";
    /// An input that cannot be read.
    INPUT_IO = "kinject::input::io";
    /// An input that is not text kinject reads (UTF-8, UTF-16 with a BOM).
    INPUT_ENCODING = "kinject::input::encoding";
    /// A key written twice where kinject would change the document.
    INPUT_DUPLICATE_KEY = "kinject::input::duplicate_key";
    /// An input file with no configuration (no `-c`, and no `.kinject.yaml` beside it or above).
    INPUT_NO_CONFIGURATION = "kinject::input::no_configuration";
    /// An input that is a Helm (Go) template, not a manifest.
    INPUT_TEMPLATE = "kinject::input::template";
    /// Standard input that holds no object (empty, blank, comments only): what came before
    /// kinject in the pipe most likely failed.
    INPUT_NO_OBJECTS = "kinject::input::no_objects";

    // Configuration.
    CONFIG_SYNTAX = "kinject::config::syntax";
    CONFIG_IO = "kinject::config::io";
    CONFIG_ENCODING = "kinject::config::encoding";
    /// No sidecar and no rule in the configuration given.
    CONFIG_EMPTY = "kinject::config::empty";
    /// A `--set` that cannot be applied.
    CONFIG_SET = "kinject::config::set";
    /// A configuration that fails a check of the whole (KRM's functionConfig).
    CONFIG_INVALID = "kinject::config::invalid";
    CONFIG_UNKNOWN_FIELD = "kinject::config::unknown_field";
    CONFIG_WRONG_TYPE = "kinject::config::wrong_type";
    CONFIG_MISSING_FIELD = "kinject::config::missing_field";
    CONFIG_INVALID_VALUE = "kinject::config::invalid_value";
    CONFIG_UNKNOWN_SIDECAR = "kinject::config::unknown_sidecar";
    CONFIG_UNKNOWN_KIND = "kinject::config::unknown_kind";
    CONFIG_DUPLICATE_SIDECAR = "kinject::config::duplicate_sidecar";
    /// Two sidecars one object can get defining one volume or image pull secret differently,
    /// or injecting containers of one name.
    CONFIG_SIDECAR_CLASH = "kinject::config::sidecar_clash";
    CONFIG_TEMPLATE_SYNTAX = "kinject::config::template_syntax";
    CONFIG_TEMPLATE_AND_FIELDS = "kinject::config::template_and_fields";
    /// A template that fails for every object (an unknown filter, an undefined `values.x`),
    /// found by rendering it for a typical object when the configuration loads.
    CONFIG_TEMPLATE = "kinject::config::template";
    CONFIG_INVALID_MATCH = "kinject::config::invalid_match";
    CONFIG_UNSUPPORTED_FORMAT = "kinject::config::unsupported_format";
    /// A field of another injector's format kinject cannot reproduce.
    CONFIG_UNSUPPORTED_FIELD = "kinject::config::unsupported_field";
    /// A tumblr `inherits` that cannot be followed.
    CONFIG_INHERITS = "kinject::config::inherits";
    CONFIG_MISSING_MUTATION_CONFIG = "kinject::config::missing_mutation_config";
    CONFIG_MISSING_SIDECAR_CONFIG = "kinject::config::missing_sidecar_config";
    /// A warning: an entry of another injector's file kinject does not read.
    CONFIG_UNKNOWN_ENTRY = "kinject::config::unknown_entry";
    /// A warning: a file among the configurations that is not one.
    CONFIG_NOT_A_SIDECAR_CONFIG = "kinject::config::not_a_sidecar_config";
    /// A warning: a feature of another injector's format that lets a manifest change a
    /// sidecar, not read unless the configuration's `formats` turns it on.
    CONFIG_OFF_BY_DEFAULT = "kinject::config::off_by_default";

    // Injection into one object.
    INJECT_INVALID_OBJECT = "kinject::inject::invalid_object";
    INJECT_CONFLICT = "kinject::inject::conflict";
    INJECT_UNKNOWN_SIDECAR = "kinject::inject::unknown_sidecar";
    INJECT_INVALID_SIDECAR = "kinject::inject::invalid_sidecar";
    INJECT_NO_COMMAND = "kinject::inject::no_command";
    INJECT_SERVICE_ACCOUNT_CONFLICT = "kinject::inject::service_account_conflict";
    INJECT_TRANSFER_ENV = "kinject::inject::transfer_env";
    /// A `resourcesPolicy` that cannot be worked out for the object (no target container, a
    /// quantity that is none, a negative result), as OpenKruise refuses such a pod.
    INJECT_RESOURCES_POLICY = "kinject::inject::resources_policy";
    /// A status annotation that cannot be read.
    INJECT_STATUS = "kinject::inject::status";
    /// A status record claiming more than its sidecar would add.
    INJECT_UNTRUSTED_STATUS = "kinject::inject::untrusted_status";
    /// A status record of a sidecar no configuration given defines (`uninject`).
    INJECT_UNVERIFIED_STATUS = "kinject::inject::unverified_status";
    INJECT_INTERNAL = "kinject::inject::internal";

    // Templates.
    TEMPLATE_RENDER = "kinject::template::render";
    TEMPLATE_INVALID_YAML = "kinject::template::invalid_yaml";

    // KRM functions.
    KRM_NO_FUNCTION_CONFIG = "kinject::krm::no_function_config";
    KRM_NOT_A_RESOURCE_LIST = "kinject::krm::not_a_resource_list";

    // The server (`kinject serve`).
    /// A rule the server cannot decide from an AdmissionReview (namespace labels, the name of
    /// a pod a controller creates), refused when it starts.
    SERVE_UNDECIDABLE = "kinject::serve::undecidable";
    /// A reloaded configuration whose rules need another webhook configuration (selectors,
    /// resources): refused, the configuration before it keeps serving.
    SERVE_WEBHOOK_CHANGED = "kinject::serve::webhook_changed";
    /// A review `kinject serve` will not compute: its body holds more JSON values than
    /// `--max-request-values`, or its pod more containers than `--max-containers`.
    SERVE_TOO_LARGE = "kinject::serve::too_large";

    /// A check of kinject's own result failed: nothing is written.
    INTERNAL = "kinject::internal";

    /// `kinject test` ran no case: none found, a `-c` that does not exist, a PATH that is no
    /// folder or leads out of its tree.
    TEST_NOT_RUN = "kinject::test::not_run";

    // The run (the report's codes for what is neither an object nor a diagnostic).
    /// A command line that asks for what cannot be done (`--in-place` of standard input).
    USAGE = "kinject::usage";
    /// A file that cannot be written in place, or output that cannot be written.
    OUTPUT_WRITE = "kinject::output::write";
    /// A warning: a run with no error injected nothing, and found nothing injected before.
    NOTHING_INJECTED = "kinject::nothing_injected";
    /// An error with no code of its own.
    ERROR = "kinject::error";
    /// A warning with no code of its own.
    WARNING = "kinject::warning";
}
