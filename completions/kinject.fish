# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kinject_global_optspecs
    string join \n h/help V/version
end

function __fish_kinject_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_kinject_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_kinject_using_subcommand
    set -l cmd (__fish_kinject_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c kinject -n "__fish_kinject_needs_command" -s h -l help -d 'Print help'
complete -c kinject -n "__fish_kinject_needs_command" -s V -l version -d 'Print version'
complete -c kinject -n "__fish_kinject_needs_command" -f -a "inject" -d 'Inject sidecars into manifests (stdin, files or directories) and write the result'
complete -c kinject -n "__fish_kinject_needs_command" -f -a "uninject" -d 'Remove everything kinject injected (as its status annotation records it)'
complete -c kinject -n "__fish_kinject_needs_command" -f -a "explain" -d 'Say, for every object, which rules match, which do not and why, and what would be injected'
complete -c kinject -n "__fish_kinject_needs_command" -f -a "krm" -d 'Run as a KRM function: a ResourceList on stdin (its functionConfig is the configuration), the ResourceList with injected items and results on stdout. Also what `kinject` with no subcommand does when stdin is not a terminal'
complete -c kinject -n "__fish_kinject_needs_command" -f -a "admission" -d 'Answer an `admission.k8s.io/v1` AdmissionReview on stdin with the response a mutating webhook returns: `allowed`, and the base64 JSONPatch when the object changes'
complete -c kinject -n "__fish_kinject_needs_command" -f -a "serve" -d 'Serve AdmissionReviews over HTTPS as the cluster\'s mutating webhook: the answer of `kinject admission` for each request, the configuration and certificates reloaded when their files change (docs/serve.md)'
complete -c kinject -n "__fish_kinject_needs_command" -f -a "test" -d 'Run test cases of a configuration: folders holding an input, an expectation and optionally the command line (docs/test.md). Each case\'s output is compared byte for byte with its expectation, and an inject case\'s output checked to inject again to itself, to agree with `-o patch`, and to uninject to the input'
complete -c kinject -n "__fish_kinject_needs_command" -f -a "schema" -d 'Print the JSON Schema of the configuration file (for editors and CI validation)'
complete -c kinject -n "__fish_kinject_needs_command" -f -a "version" -d 'Print kinject\'s version, the commit it was built from and its date (as `--version`)'
complete -c kinject -n "__fish_kinject_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c kinject -n "__fish_kinject_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kinject -n "__fish_kinject_using_subcommand inject" -s f -l filename -d 'A manifest file or directory, as kubectl takes it (same as a PATH argument)' -r -F
complete -c kinject -n "__fish_kinject_using_subcommand inject" -s l -l selector -d 'Only objects whose own labels (`metadata.labels`) this kubectl label selector selects (`app=web`, `app!=web`, `tier in (a,b)`, `tier notin (a)`, `key`, `!key`, `ver>1`, `ver<3`, joined by commas), read and applied as Kubernetes does (a selector it refuses is refused); the others pass through unchanged, reported as `not_selected`' -r
complete -c kinject -n "__fish_kinject_using_subcommand inject" -s n -l namespace -d 'Namespace of objects that do not name one (for rules that match namespaces)' -r
complete -c kinject -n "__fish_kinject_using_subcommand inject" -l namespace-labels -d 'A label of a namespace, for rules\' `namespaceSelector` (repeatable; `Namespace` objects in the input count too)' -r
complete -c kinject -n "__fish_kinject_using_subcommand inject" -s c -l config -d 'Configuration file, or directory of them (repeatable; later files add sidecars and rules, and override values and defaults). Also reads OpenKruise SidecarSets and the salesforce, tumblr and Expedia injectors\' files. Default: for each file, the nearest `.kinject.yaml` or `kinject.yaml` in its directory or above (up to the repository\'s root; outside a repository, up to this directory); for standard input, this directory\'s or above' -r -F
complete -c kinject -n "__fish_kinject_using_subcommand inject" -l set -d 'Override a template value with a string: `--set image.tag=1.10` (`values.image.tag`; the leading `values.` may be written). A key no template reads is an error' -r
complete -c kinject -n "__fish_kinject_using_subcommand inject" -l set-json -d 'Override a template value with a JSON value: `--set-json replicas=3`, `--set-json \'ports=[80,443]\'` (applied before `--set`)' -r
complete -c kinject -n "__fish_kinject_using_subcommand inject" -s o -l output -d 'Output format on stdout' -r -f -a "yaml\t'The manifests, edited in place: comments, order, quoting and indentation kept'
json\t'One JSON document per input document'
patch\t'Per object: identity, source, and RFC 6902 operations'
json-list\t'One JSON value: a kubectl `List` of every input document, in order (as `kubectl get -o json` prints several objects)'"
complete -c kinject -n "__fish_kinject_using_subcommand inject" -l output-file -d 'Write the output to FILE instead of stdout: atomically (a temporary file beside it, renamed over it), and only when the run succeeds (when it fails, FILE is neither created nor changed). Not an input, nor a manifest inside an input directory' -r -F
complete -c kinject -n "__fish_kinject_using_subcommand inject" -l report -d 'Report format: `text`, for people (the objects acted on, warnings, errors and a summary line), or `json`, JSON Lines for machines (every object, diagnostic, error and warning, each with a `code`, then a summary; nothing else on its stream)' -r -f -a "text\t''
json\t''"
complete -c kinject -n "__fish_kinject_using_subcommand inject" -l report-file -d 'Write the report to FILE instead of stderr (stderr then shows diagnostics, errors and warnings, as with -q). As kustomize\'s plugin, whose stderr kustomize shows only when it fails, set KINJECT_REPORT_FILE to see the report of a build that succeeds' -r -F
complete -c kinject -n "__fish_kinject_using_subcommand inject" -l emit-kustomize -d 'Write a kustomize overlay to DIR whose patches apply the injection to the given bases (directories with a kustomization.yaml), instead of printing the injected manifests' -r -F
complete -c kinject -n "__fish_kinject_using_subcommand inject" -s R -l recursive -d 'Accepted for kubectl compatibility: directories are always walked recursively'
complete -c kinject -n "__fish_kinject_using_subcommand inject" -l no-discovery -d 'Never look for a `.kinject.yaml` or `kinject.yaml` beside the manifests: without -c the run is refused. For CI, where a configuration a pull request adds would otherwise configure every file below it (docs/security.md)'
complete -c kinject -n "__fish_kinject_using_subcommand inject" -s q -l quiet -d 'No report on stderr (errors are still shown)'
complete -c kinject -n "__fish_kinject_using_subcommand inject" -s v -l verbose -d 'Report every object, those skipped and unchanged too (by default only the objects acted on, opted out or in error are listed; the summary counts the others)'
complete -c kinject -n "__fish_kinject_using_subcommand inject" -s i -l in-place -d 'Rewrite the files in place (atomically; files that would not change are not touched). Exits 1 when a file changed, as pre-commit expects from a fixer'
complete -c kinject -n "__fish_kinject_using_subcommand inject" -l check -d 'Write nothing; print the paths of the files that would change and exit 1 if any would (refused with --in-place, which writes)'
complete -c kinject -n "__fish_kinject_using_subcommand inject" -l diff -d 'Print a unified diff of what would change (coloured on a terminal); exit 1 if anything would change. With --in-place, the diff of what was changed'
complete -c kinject -n "__fish_kinject_using_subcommand inject" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kinject -n "__fish_kinject_using_subcommand inject" -s V -l version -d 'Print version'
complete -c kinject -n "__fish_kinject_using_subcommand uninject" -s f -l filename -d 'A manifest file or directory, as kubectl takes it (same as a PATH argument)' -r -F
complete -c kinject -n "__fish_kinject_using_subcommand uninject" -s l -l selector -d 'Only objects whose own labels (`metadata.labels`) this kubectl label selector selects (`app=web`, `app!=web`, `tier in (a,b)`, `tier notin (a)`, `key`, `!key`, `ver>1`, `ver<3`, joined by commas), read and applied as Kubernetes does (a selector it refuses is refused); the others pass through unchanged, reported as `not_selected`' -r
complete -c kinject -n "__fish_kinject_using_subcommand uninject" -s c -l config -d 'Configuration file, or directory of them (repeatable): what its sidecars add is what uninject may remove. Default: the nearest `.kinject.yaml` or `kinject.yaml`, as for `inject`; none found, every record needs `--trust-status`' -r -F
complete -c kinject -n "__fish_kinject_using_subcommand uninject" -s n -l namespace -d 'Accepted, with a warning that it does nothing here, and not in --help: uninject consults no rules (it removes what the status annotation records), but flags are never removed (docs/stability.md)' -r
complete -c kinject -n "__fish_kinject_using_subcommand uninject" -l namespace-labels -d 'Accepted and ignored, as `-n` is' -r
complete -c kinject -n "__fish_kinject_using_subcommand uninject" -s o -l output -d 'Output format on stdout' -r -f -a "yaml\t'The manifests, edited in place: comments, order, quoting and indentation kept'
json\t'One JSON document per input document'
patch\t'Per object: identity, source, and RFC 6902 operations'
json-list\t'One JSON value: a kubectl `List` of every input document, in order (as `kubectl get -o json` prints several objects)'"
complete -c kinject -n "__fish_kinject_using_subcommand uninject" -l output-file -d 'Write the output to FILE instead of stdout: atomically (a temporary file beside it, renamed over it), and only when the run succeeds (when it fails, FILE is neither created nor changed). Not an input, nor a manifest inside an input directory' -r -F
complete -c kinject -n "__fish_kinject_using_subcommand uninject" -l report -d 'Report format: `text`, for people (the objects acted on, warnings, errors and a summary line), or `json`, JSON Lines for machines (every object, diagnostic, error and warning, each with a `code`, then a summary; nothing else on its stream)' -r -f -a "text\t''
json\t''"
complete -c kinject -n "__fish_kinject_using_subcommand uninject" -l report-file -d 'Write the report to FILE instead of stderr (stderr then shows diagnostics, errors and warnings, as with -q). As kustomize\'s plugin, whose stderr kustomize shows only when it fails, set KINJECT_REPORT_FILE to see the report of a build that succeeds' -r -F
complete -c kinject -n "__fish_kinject_using_subcommand uninject" -s R -l recursive -d 'Accepted for kubectl compatibility: directories are always walked recursively'
complete -c kinject -n "__fish_kinject_using_subcommand uninject" -l no-discovery -d 'Never look for a `.kinject.yaml` or `kinject.yaml` beside the manifests: without -c the run is refused. For CI, where a configuration a pull request adds would otherwise configure every file below it (docs/security.md)'
complete -c kinject -n "__fish_kinject_using_subcommand uninject" -l trust-status -d 'Remove what the status annotation says was added for sidecars no configuration given defines, on its word: kinject then checks only that its records are consistent, not that kinject added what they name (a manifest\'s annotation could name the pod\'s own containers)'
complete -c kinject -n "__fish_kinject_using_subcommand uninject" -s q -l quiet -d 'No report on stderr (errors are still shown)'
complete -c kinject -n "__fish_kinject_using_subcommand uninject" -s v -l verbose -d 'Report every object, those skipped and unchanged too (by default only the objects acted on, opted out or in error are listed; the summary counts the others)'
complete -c kinject -n "__fish_kinject_using_subcommand uninject" -s i -l in-place -d 'Rewrite the files in place (atomically; files that would not change are not touched). Exits 1 when a file changed, as pre-commit expects from a fixer'
complete -c kinject -n "__fish_kinject_using_subcommand uninject" -l check -d 'Write nothing; print the paths of the files that would change and exit 1 if any would (refused with --in-place, which writes)'
complete -c kinject -n "__fish_kinject_using_subcommand uninject" -l diff -d 'Print a unified diff of what would change (coloured on a terminal); exit 1 if anything would change. With --in-place, the diff of what was changed'
complete -c kinject -n "__fish_kinject_using_subcommand uninject" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kinject -n "__fish_kinject_using_subcommand uninject" -s V -l version -d 'Print version'
complete -c kinject -n "__fish_kinject_using_subcommand explain" -s f -l filename -d 'A manifest file or directory, as kubectl takes it (same as a PATH argument)' -r -F
complete -c kinject -n "__fish_kinject_using_subcommand explain" -s l -l selector -d 'Only objects whose own labels (`metadata.labels`) this kubectl label selector selects (`app=web`, `app!=web`, `tier in (a,b)`, `tier notin (a)`, `key`, `!key`, `ver>1`, `ver<3`, joined by commas), read and applied as Kubernetes does (a selector it refuses is refused); the others pass through unchanged, reported as `not_selected`' -r
complete -c kinject -n "__fish_kinject_using_subcommand explain" -s n -l namespace -d 'Namespace of objects that do not name one (for rules that match namespaces)' -r
complete -c kinject -n "__fish_kinject_using_subcommand explain" -l namespace-labels -d 'A label of a namespace, for rules\' `namespaceSelector` (repeatable; `Namespace` objects in the input count too)' -r
complete -c kinject -n "__fish_kinject_using_subcommand explain" -s c -l config -d 'Configuration file, or directory of them (repeatable; later files add sidecars and rules, and override values and defaults). Also reads OpenKruise SidecarSets and the salesforce, tumblr and Expedia injectors\' files. Default: for each file, the nearest `.kinject.yaml` or `kinject.yaml` in its directory or above (up to the repository\'s root; outside a repository, up to this directory); for standard input, this directory\'s or above' -r -F
complete -c kinject -n "__fish_kinject_using_subcommand explain" -l set -d 'Override a template value with a string: `--set image.tag=1.10` (`values.image.tag`; the leading `values.` may be written). A key no template reads is an error' -r
complete -c kinject -n "__fish_kinject_using_subcommand explain" -l set-json -d 'Override a template value with a JSON value: `--set-json replicas=3`, `--set-json \'ports=[80,443]\'` (applied before `--set`)' -r
complete -c kinject -n "__fish_kinject_using_subcommand explain" -s o -l report -l output -d 'Explanation format on stdout (`--report`, as `inject` names its report\'s; `-o` and `--output` say the same)' -r -f -a "text\t''
json\t''"
complete -c kinject -n "__fish_kinject_using_subcommand explain" -l output-file -d 'Write the explanation to FILE instead of stdout (atomically; see `inject --help`)' -r -F
complete -c kinject -n "__fish_kinject_using_subcommand explain" -s R -l recursive -d 'Accepted for kubectl compatibility: directories are always walked recursively'
complete -c kinject -n "__fish_kinject_using_subcommand explain" -l no-discovery -d 'Never look for a `.kinject.yaml` or `kinject.yaml` beside the manifests: without -c the run is refused. For CI, where a configuration a pull request adds would otherwise configure every file below it (docs/security.md)'
complete -c kinject -n "__fish_kinject_using_subcommand explain" -s h -l help -d 'Print help'
complete -c kinject -n "__fish_kinject_using_subcommand explain" -s V -l version -d 'Print version'
complete -c kinject -n "__fish_kinject_using_subcommand krm" -s c -l config -d 'Configuration file to use instead of the ResourceList\'s functionConfig (repeatable)' -r -F
complete -c kinject -n "__fish_kinject_using_subcommand krm" -l set -d 'Override a template value with a string: `--set image.tag=1.10` (`values.image.tag`; the leading `values.` may be written). A key no template reads is an error' -r
complete -c kinject -n "__fish_kinject_using_subcommand krm" -l set-json -d 'Override a template value with a JSON value: `--set-json replicas=3`, `--set-json \'ports=[80,443]\'` (applied before `--set`)' -r
complete -c kinject -n "__fish_kinject_using_subcommand krm" -s n -l namespace -d 'Namespace of objects that do not name one (for rules that match namespaces)' -r
complete -c kinject -n "__fish_kinject_using_subcommand krm" -l namespace-labels -d 'A label of a namespace, for rules\' `namespaceSelector` (repeatable; `Namespace` objects in the input count too)' -r
complete -c kinject -n "__fish_kinject_using_subcommand krm" -s h -l help -d 'Print help'
complete -c kinject -n "__fish_kinject_using_subcommand krm" -s V -l version -d 'Print version'
complete -c kinject -n "__fish_kinject_using_subcommand admission" -s f -l filename -d 'The AdmissionReview request file, as kubectl takes it (same as PATH)' -r -F
complete -c kinject -n "__fish_kinject_using_subcommand admission" -s c -l config -d 'Configuration file, or directory of them (repeatable; later files add sidecars and rules, and override values and defaults). Also reads OpenKruise SidecarSets and the salesforce, tumblr and Expedia injectors\' files. Default: for each file, the nearest `.kinject.yaml` or `kinject.yaml` in its directory or above (up to the repository\'s root; outside a repository, up to this directory); for standard input, this directory\'s or above' -r -F
complete -c kinject -n "__fish_kinject_using_subcommand admission" -l set -d 'Override a template value with a string: `--set image.tag=1.10` (`values.image.tag`; the leading `values.` may be written). A key no template reads is an error' -r
complete -c kinject -n "__fish_kinject_using_subcommand admission" -l set-json -d 'Override a template value with a JSON value: `--set-json replicas=3`, `--set-json \'ports=[80,443]\'` (applied before `--set`)' -r
complete -c kinject -n "__fish_kinject_using_subcommand admission" -l namespace-labels -d 'A label of a namespace, for rules\' `namespaceSelector` (repeatable)' -r
complete -c kinject -n "__fish_kinject_using_subcommand admission" -l no-discovery -d 'Never look for a `.kinject.yaml` or `kinject.yaml` beside the manifests: without -c the run is refused. For CI, where a configuration a pull request adds would otherwise configure every file below it (docs/security.md)'
complete -c kinject -n "__fish_kinject_using_subcommand admission" -s h -l help -d 'Print help'
complete -c kinject -n "__fish_kinject_using_subcommand admission" -s V -l version -d 'Print version'
complete -c kinject -n "__fish_kinject_using_subcommand serve" -s c -l config -d 'Configuration file, or directory of them (repeatable; later files add sidecars and rules, and override values and defaults). Also reads OpenKruise SidecarSets and the salesforce, tumblr and Expedia injectors\' files. Default: for each file, the nearest `.kinject.yaml` or `kinject.yaml` in its directory or above (up to the repository\'s root; outside a repository, up to this directory); for standard input, this directory\'s or above' -r -F
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l set -d 'Override a template value with a string: `--set image.tag=1.10` (`values.image.tag`; the leading `values.` may be written). A key no template reads is an error' -r
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l set-json -d 'Override a template value with a JSON value: `--set-json replicas=3`, `--set-json \'ports=[80,443]\'` (applied before `--set`)' -r
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l listen -d 'The address to serve the webhook on (HTTPS)' -r
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l tls-cert-file -d 'The server\'s certificate chain (PEM), re-read when the file changes' -r -F
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l tls-private-key-file -d 'The server\'s private key (PEM), re-read when the file changes' -r -F
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l client-ca-file -d 'Accept only clients with a certificate signed by a CA of this file (PEM): the API server\'s client certificate. Probes then go to `--probe-listen`' -r -F
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l probe-listen -d 'Also serve `/healthz`, `/readyz` and `/metrics` on this address, in plain HTTP (for the kubelet\'s probes and Prometheus, which have no client certificate)' -r
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l path -d 'The path the API server posts AdmissionReviews to' -r
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l on-error -d 'What to answer for an object kinject cannot inject correctly (a conflict, an unknown requested sidecar): `deny` it with the located message (as `kinject admission` and `inject` do), or `allow` it unchanged with the message in the response\'s `warnings`' -r -f -a "deny\t''
allow\t''"
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l max-request-bytes -d 'Larger request bodies are refused with 413' -r
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l max-request-values -d 'A review whose JSON holds more values than this (objects, arrays, strings, numbers, booleans, nulls, keys included) is refused, saying where: each costs the server up to 400 bytes of memory while it is reviewed' -r
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l max-containers -d 'A pod with more containers than this (`containers`, `initContainers` and `ephemeralContainers` together) is refused, saying where, as a pod kinject cannot inject (`--on-error`): each container costs the server edits and patch operations' -r
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l max-in-flight-bytes -d 'The bytes of request bodies being read and of answers not yet written, all requests together: a request beyond it gets 503 (this bounds the server\'s memory, with `--max-connections` and the review limits; docs/serve.md says how much)' -r
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l max-connections -d 'At most this many connections open at once: beyond, a new one ends the connection that has done nothing for the longest (idle ones first), so that connections sending nothing cannot keep others out' -r
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l header-timeout -d 'A connection is closed when it has had no request in progress for this many seconds: from its start (the TLS handshake included) to its first request\'s headers, and between requests, over HTTP/1.1 and HTTP/2 alike' -r
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l request-timeout -d 'A request must be read and answered within this many seconds (keep it under the webhook\'s `timeoutSeconds`), or it gets 408 (body too slow) or 504 (no answer in time), for which the API server applies the webhook\'s `failurePolicy`' -r
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l write-timeout -d 'An answer must be written within this many seconds of being ready (the client reading it), or the connection is closed and the answer dropped' -r
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l shutdown-delay -d 'On SIGTERM, keep accepting connections this many seconds while `/readyz` says the server is stopping, so that the Service stops sending it requests before it stops listening (the endpoints\' update takes a moment to reach every API server)' -r
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l shutdown-timeout -d 'Then, in-flight requests are given this many seconds to complete' -r
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l reload-interval -d 'How often the configuration and certificate files are checked for changes. A change is loaded once the files have held still for an interval (not caught half-written)' -r
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l image -d 'With `--print-manifests` (and needed by it): the image the cluster pulls, the one a release would push (`ghcr.io/kinject/kinject:<version>`) or one built and pushed as docs/container-image.md says' -r
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l namespace -d 'With `--print-manifests`: the namespace the server runs in' -r
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l replicas -d 'With `--print-manifests`: the server\'s replicas' -r
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l failure-policy -d 'With `--print-manifests`: the webhook\'s `failurePolicy` (`Fail`: a pod is not created while no server answers; `Ignore`: it is created without its sidecars)' -r -f -a "Fail\t''
Ignore\t''"
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l timeout-seconds -d 'With `--print-manifests`: the webhook\'s `timeoutSeconds` (1 to 30)' -r
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l no-discovery -d 'Never look for a `.kinject.yaml` or `kinject.yaml` beside the manifests: without -c the run is refused. For CI, where a configuration a pull request adds would otherwise configure every file below it (docs/security.md)'
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l insecure-plain-http -d 'Serve plain HTTP, without TLS, for local testing only: the API server calls webhooks over HTTPS alone'
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l print-manifests -d 'Print what to apply to run this server in a cluster, made from this configuration: Namespace, ServiceAccount, ConfigMap, Deployment, PodDisruptionBudget, Service, MutatingWebhookConfiguration and cert-manager\'s Issuer and Certificate. Serves nothing'
complete -c kinject -n "__fish_kinject_using_subcommand serve" -l without-cert-manager -d 'With `--print-manifests`: no cert-manager objects; the certificate\'s Secret and the webhook\'s `caBundle` are yours to make (docs/serve.md says how)'
complete -c kinject -n "__fish_kinject_using_subcommand serve" -s h -l help -d 'Print help'
complete -c kinject -n "__fish_kinject_using_subcommand serve" -s V -l version -d 'Print version'
complete -c kinject -n "__fish_kinject_using_subcommand test" -s c -l config -d 'Configuration file, or directory of them (repeatable), for the cases that name none in their `args` and hold no `config.yaml` (else the nearest `.kinject.yaml` or `kinject.yaml` of the case, as `inject` finds it)' -r -F
complete -c kinject -n "__fish_kinject_using_subcommand test" -l run -d 'Only the cases whose name (their path from PATH) contains NAME, or matches it as a glob when it holds `*`, `?` or `[` (repeatable: any of them)' -r
complete -c kinject -n "__fish_kinject_using_subcommand test" -l report -d '`text`, for people (a line per failing case with its diff, then a summary), or `json`, JSON Lines (a line per case, then a summary; docs/report.schema.json)' -r -f -a "text\t''
json\t''"
complete -c kinject -n "__fish_kinject_using_subcommand test" -l junit -d 'Also write the results as JUnit XML to FILE (atomically), for CI systems that show test results' -r -F
complete -c kinject -n "__fish_kinject_using_subcommand test" -l update -d 'Write each case\'s expectations from what kinject writes now (and `input.sha256`, the hash of its input), instead of comparing; the invariants are still checked. A case whose input changed since its expectation was written is refused, unless --force'
complete -c kinject -n "__fish_kinject_using_subcommand test" -l force -d 'With --update: write the expectations of cases whose input changed too'
complete -c kinject -n "__fish_kinject_using_subcommand test" -s v -l verbose -d 'A line for every case, the passing ones too'
complete -c kinject -n "__fish_kinject_using_subcommand test" -s h -l help -d 'Print help'
complete -c kinject -n "__fish_kinject_using_subcommand test" -s V -l version -d 'Print version'
complete -c kinject -n "__fish_kinject_using_subcommand schema" -s h -l help -d 'Print help'
complete -c kinject -n "__fish_kinject_using_subcommand schema" -s V -l version -d 'Print version'
complete -c kinject -n "__fish_kinject_using_subcommand version" -s o -l output -d '`text` (as `--version`) or `json` (`{"kinject": {"version": …, "build": …}}`)' -r -f -a "text\t''
json\t''"
complete -c kinject -n "__fish_kinject_using_subcommand version" -s h -l help -d 'Print help'
complete -c kinject -n "__fish_kinject_using_subcommand version" -s V -l version -d 'Print version'
complete -c kinject -n "__fish_kinject_using_subcommand completions" -s h -l help -d 'Print help'
complete -c kinject -n "__fish_kinject_using_subcommand completions" -s V -l version -d 'Print version'
complete -c kinject -n "__fish_kinject_using_subcommand help; and not __fish_seen_subcommand_from inject uninject explain krm admission serve test schema version completions help" -f -a "inject" -d 'Inject sidecars into manifests (stdin, files or directories) and write the result'
complete -c kinject -n "__fish_kinject_using_subcommand help; and not __fish_seen_subcommand_from inject uninject explain krm admission serve test schema version completions help" -f -a "uninject" -d 'Remove everything kinject injected (as its status annotation records it)'
complete -c kinject -n "__fish_kinject_using_subcommand help; and not __fish_seen_subcommand_from inject uninject explain krm admission serve test schema version completions help" -f -a "explain" -d 'Say, for every object, which rules match, which do not and why, and what would be injected'
complete -c kinject -n "__fish_kinject_using_subcommand help; and not __fish_seen_subcommand_from inject uninject explain krm admission serve test schema version completions help" -f -a "krm" -d 'Run as a KRM function: a ResourceList on stdin (its functionConfig is the configuration), the ResourceList with injected items and results on stdout. Also what `kinject` with no subcommand does when stdin is not a terminal'
complete -c kinject -n "__fish_kinject_using_subcommand help; and not __fish_seen_subcommand_from inject uninject explain krm admission serve test schema version completions help" -f -a "admission" -d 'Answer an `admission.k8s.io/v1` AdmissionReview on stdin with the response a mutating webhook returns: `allowed`, and the base64 JSONPatch when the object changes'
complete -c kinject -n "__fish_kinject_using_subcommand help; and not __fish_seen_subcommand_from inject uninject explain krm admission serve test schema version completions help" -f -a "serve" -d 'Serve AdmissionReviews over HTTPS as the cluster\'s mutating webhook: the answer of `kinject admission` for each request, the configuration and certificates reloaded when their files change (docs/serve.md)'
complete -c kinject -n "__fish_kinject_using_subcommand help; and not __fish_seen_subcommand_from inject uninject explain krm admission serve test schema version completions help" -f -a "test" -d 'Run test cases of a configuration: folders holding an input, an expectation and optionally the command line (docs/test.md). Each case\'s output is compared byte for byte with its expectation, and an inject case\'s output checked to inject again to itself, to agree with `-o patch`, and to uninject to the input'
complete -c kinject -n "__fish_kinject_using_subcommand help; and not __fish_seen_subcommand_from inject uninject explain krm admission serve test schema version completions help" -f -a "schema" -d 'Print the JSON Schema of the configuration file (for editors and CI validation)'
complete -c kinject -n "__fish_kinject_using_subcommand help; and not __fish_seen_subcommand_from inject uninject explain krm admission serve test schema version completions help" -f -a "version" -d 'Print kinject\'s version, the commit it was built from and its date (as `--version`)'
complete -c kinject -n "__fish_kinject_using_subcommand help; and not __fish_seen_subcommand_from inject uninject explain krm admission serve test schema version completions help" -f -a "completions" -d 'Print a shell completion script'
complete -c kinject -n "__fish_kinject_using_subcommand help; and not __fish_seen_subcommand_from inject uninject explain krm admission serve test schema version completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
