
use builtin;
use str;

set edit:completion:arg-completer[kinject] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'kinject'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'kinject'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand inject 'Inject sidecars into manifests (stdin, files or directories) and write the result'
            cand uninject 'Remove everything kinject injected (as its status annotation records it)'
            cand explain 'Say, for every object, which rules match, which do not and why, and what would be injected'
            cand krm 'Run as a KRM function: a ResourceList on stdin (its functionConfig is the configuration), the ResourceList with injected items and results on stdout. Also what `kinject` with no subcommand does when stdin is not a terminal'
            cand admission 'Answer an `admission.k8s.io/v1` AdmissionReview on stdin with the response a mutating webhook returns: `allowed`, and the base64 JSONPatch when the object changes'
            cand serve 'Serve AdmissionReviews over HTTPS as the cluster''s mutating webhook: the answer of `kinject admission` for each request, the configuration and certificates reloaded when their files change (docs/serve.md)'
            cand test 'Run test cases of a configuration: folders holding an input, an expectation and optionally the command line (docs/test.md). Each case''s output is compared byte for byte with its expectation, and an inject case''s output checked to inject again to itself, to agree with `-o patch`, and to uninject to the input'
            cand schema 'Print the JSON Schema of the configuration file (for editors and CI validation)'
            cand version 'Print kinject''s version, the commit it was built from and its date (as `--version`)'
            cand completions 'Print a shell completion script'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kinject;inject'= {
            cand -f 'A manifest file or directory, as kubectl takes it (same as a PATH argument)'
            cand --filename 'A manifest file or directory, as kubectl takes it (same as a PATH argument)'
            cand -l 'Only objects whose own labels (`metadata.labels`) this kubectl label selector selects (`app=web`, `app!=web`, `tier in (a,b)`, `tier notin (a)`, `key`, `!key`, `ver>1`, `ver<3`, joined by commas), read and applied as Kubernetes does (a selector it refuses is refused); the others pass through unchanged, reported as `not_selected`'
            cand --selector 'Only objects whose own labels (`metadata.labels`) this kubectl label selector selects (`app=web`, `app!=web`, `tier in (a,b)`, `tier notin (a)`, `key`, `!key`, `ver>1`, `ver<3`, joined by commas), read and applied as Kubernetes does (a selector it refuses is refused); the others pass through unchanged, reported as `not_selected`'
            cand -n 'Namespace of objects that do not name one (for rules that match namespaces)'
            cand --namespace 'Namespace of objects that do not name one (for rules that match namespaces)'
            cand --namespace-labels 'A label of a namespace, for rules'' `namespaceSelector` (repeatable; `Namespace` objects in the input count too)'
            cand -c 'Configuration file, or directory of them (repeatable; later files add sidecars and rules, and override values and defaults). Also reads OpenKruise SidecarSets and the salesforce, tumblr and Expedia injectors'' files. Default: for each file, the nearest `.kinject.yaml` or `kinject.yaml` in its directory or above (up to the repository''s root; outside a repository, up to this directory); for standard input, this directory''s or above'
            cand --config 'Configuration file, or directory of them (repeatable; later files add sidecars and rules, and override values and defaults). Also reads OpenKruise SidecarSets and the salesforce, tumblr and Expedia injectors'' files. Default: for each file, the nearest `.kinject.yaml` or `kinject.yaml` in its directory or above (up to the repository''s root; outside a repository, up to this directory); for standard input, this directory''s or above'
            cand --set 'Override a template value with a string: `--set image.tag=1.10` (`values.image.tag`; the leading `values.` may be written). A key no template reads is an error'
            cand --set-json 'Override a template value with a JSON value: `--set-json replicas=3`, `--set-json ''ports=[80,443]''` (applied before `--set`)'
            cand -o 'Output format on stdout'
            cand --output 'Output format on stdout'
            cand --output-file 'Write the output to FILE instead of stdout: atomically (a temporary file beside it, renamed over it), and only when the run succeeds (when it fails, FILE is neither created nor changed). Not an input, nor a manifest inside an input directory'
            cand --report 'Report format: `text`, for people (the objects acted on, warnings, errors and a summary line), or `json`, JSON Lines for machines (every object, diagnostic, error and warning, each with a `code`, then a summary; nothing else on its stream)'
            cand --report-file 'Write the report to FILE instead of stderr (stderr then shows diagnostics, errors and warnings, as with -q). As kustomize''s plugin, whose stderr kustomize shows only when it fails, set KINJECT_REPORT_FILE to see the report of a build that succeeds'
            cand --emit-kustomize 'Write a kustomize overlay to DIR whose patches apply the injection to the given bases (directories with a kustomization.yaml), instead of printing the injected manifests'
            cand -R 'Accepted for kubectl compatibility: directories are always walked recursively'
            cand --recursive 'Accepted for kubectl compatibility: directories are always walked recursively'
            cand --no-discovery 'Never look for a `.kinject.yaml` or `kinject.yaml` beside the manifests: without -c the run is refused. For CI, where a configuration a pull request adds would otherwise configure every file below it (docs/security.md)'
            cand -q 'No report on stderr (errors are still shown)'
            cand --quiet 'No report on stderr (errors are still shown)'
            cand -v 'Report every object, those skipped and unchanged too (by default only the objects acted on, opted out or in error are listed; the summary counts the others)'
            cand --verbose 'Report every object, those skipped and unchanged too (by default only the objects acted on, opted out or in error are listed; the summary counts the others)'
            cand -i 'Rewrite the files in place (atomically; files that would not change are not touched). Exits 1 when a file changed, as pre-commit expects from a fixer'
            cand --in-place 'Rewrite the files in place (atomically; files that would not change are not touched). Exits 1 when a file changed, as pre-commit expects from a fixer'
            cand --check 'Write nothing; print the paths of the files that would change and exit 1 if any would (refused with --in-place, which writes)'
            cand --diff 'Print a unified diff of what would change (coloured on a terminal); exit 1 if anything would change. With --in-place, the diff of what was changed'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kinject;uninject'= {
            cand -f 'A manifest file or directory, as kubectl takes it (same as a PATH argument)'
            cand --filename 'A manifest file or directory, as kubectl takes it (same as a PATH argument)'
            cand -l 'Only objects whose own labels (`metadata.labels`) this kubectl label selector selects (`app=web`, `app!=web`, `tier in (a,b)`, `tier notin (a)`, `key`, `!key`, `ver>1`, `ver<3`, joined by commas), read and applied as Kubernetes does (a selector it refuses is refused); the others pass through unchanged, reported as `not_selected`'
            cand --selector 'Only objects whose own labels (`metadata.labels`) this kubectl label selector selects (`app=web`, `app!=web`, `tier in (a,b)`, `tier notin (a)`, `key`, `!key`, `ver>1`, `ver<3`, joined by commas), read and applied as Kubernetes does (a selector it refuses is refused); the others pass through unchanged, reported as `not_selected`'
            cand -c 'Configuration file, or directory of them (repeatable): what its sidecars add is what uninject may remove. Default: the nearest `.kinject.yaml` or `kinject.yaml`, as for `inject`; none found, every record needs `--trust-status`'
            cand --config 'Configuration file, or directory of them (repeatable): what its sidecars add is what uninject may remove. Default: the nearest `.kinject.yaml` or `kinject.yaml`, as for `inject`; none found, every record needs `--trust-status`'
            cand -n 'Accepted, with a warning that it does nothing here, and not in --help: uninject consults no rules (it removes what the status annotation records), but flags are never removed (docs/stability.md)'
            cand --namespace 'Accepted, with a warning that it does nothing here, and not in --help: uninject consults no rules (it removes what the status annotation records), but flags are never removed (docs/stability.md)'
            cand --namespace-labels 'Accepted and ignored, as `-n` is'
            cand -o 'Output format on stdout'
            cand --output 'Output format on stdout'
            cand --output-file 'Write the output to FILE instead of stdout: atomically (a temporary file beside it, renamed over it), and only when the run succeeds (when it fails, FILE is neither created nor changed). Not an input, nor a manifest inside an input directory'
            cand --report 'Report format: `text`, for people (the objects acted on, warnings, errors and a summary line), or `json`, JSON Lines for machines (every object, diagnostic, error and warning, each with a `code`, then a summary; nothing else on its stream)'
            cand --report-file 'Write the report to FILE instead of stderr (stderr then shows diagnostics, errors and warnings, as with -q). As kustomize''s plugin, whose stderr kustomize shows only when it fails, set KINJECT_REPORT_FILE to see the report of a build that succeeds'
            cand -R 'Accepted for kubectl compatibility: directories are always walked recursively'
            cand --recursive 'Accepted for kubectl compatibility: directories are always walked recursively'
            cand --no-discovery 'Never look for a `.kinject.yaml` or `kinject.yaml` beside the manifests: without -c the run is refused. For CI, where a configuration a pull request adds would otherwise configure every file below it (docs/security.md)'
            cand --trust-status 'Remove what the status annotation says was added for sidecars no configuration given defines, on its word: kinject then checks only that its records are consistent, not that kinject added what they name (a manifest''s annotation could name the pod''s own containers)'
            cand -q 'No report on stderr (errors are still shown)'
            cand --quiet 'No report on stderr (errors are still shown)'
            cand -v 'Report every object, those skipped and unchanged too (by default only the objects acted on, opted out or in error are listed; the summary counts the others)'
            cand --verbose 'Report every object, those skipped and unchanged too (by default only the objects acted on, opted out or in error are listed; the summary counts the others)'
            cand -i 'Rewrite the files in place (atomically; files that would not change are not touched). Exits 1 when a file changed, as pre-commit expects from a fixer'
            cand --in-place 'Rewrite the files in place (atomically; files that would not change are not touched). Exits 1 when a file changed, as pre-commit expects from a fixer'
            cand --check 'Write nothing; print the paths of the files that would change and exit 1 if any would (refused with --in-place, which writes)'
            cand --diff 'Print a unified diff of what would change (coloured on a terminal); exit 1 if anything would change. With --in-place, the diff of what was changed'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kinject;explain'= {
            cand -f 'A manifest file or directory, as kubectl takes it (same as a PATH argument)'
            cand --filename 'A manifest file or directory, as kubectl takes it (same as a PATH argument)'
            cand -l 'Only objects whose own labels (`metadata.labels`) this kubectl label selector selects (`app=web`, `app!=web`, `tier in (a,b)`, `tier notin (a)`, `key`, `!key`, `ver>1`, `ver<3`, joined by commas), read and applied as Kubernetes does (a selector it refuses is refused); the others pass through unchanged, reported as `not_selected`'
            cand --selector 'Only objects whose own labels (`metadata.labels`) this kubectl label selector selects (`app=web`, `app!=web`, `tier in (a,b)`, `tier notin (a)`, `key`, `!key`, `ver>1`, `ver<3`, joined by commas), read and applied as Kubernetes does (a selector it refuses is refused); the others pass through unchanged, reported as `not_selected`'
            cand -n 'Namespace of objects that do not name one (for rules that match namespaces)'
            cand --namespace 'Namespace of objects that do not name one (for rules that match namespaces)'
            cand --namespace-labels 'A label of a namespace, for rules'' `namespaceSelector` (repeatable; `Namespace` objects in the input count too)'
            cand -c 'Configuration file, or directory of them (repeatable; later files add sidecars and rules, and override values and defaults). Also reads OpenKruise SidecarSets and the salesforce, tumblr and Expedia injectors'' files. Default: for each file, the nearest `.kinject.yaml` or `kinject.yaml` in its directory or above (up to the repository''s root; outside a repository, up to this directory); for standard input, this directory''s or above'
            cand --config 'Configuration file, or directory of them (repeatable; later files add sidecars and rules, and override values and defaults). Also reads OpenKruise SidecarSets and the salesforce, tumblr and Expedia injectors'' files. Default: for each file, the nearest `.kinject.yaml` or `kinject.yaml` in its directory or above (up to the repository''s root; outside a repository, up to this directory); for standard input, this directory''s or above'
            cand --set 'Override a template value with a string: `--set image.tag=1.10` (`values.image.tag`; the leading `values.` may be written). A key no template reads is an error'
            cand --set-json 'Override a template value with a JSON value: `--set-json replicas=3`, `--set-json ''ports=[80,443]''` (applied before `--set`)'
            cand -o 'Explanation format on stdout (`--report`, as `inject` names its report''s; `-o` and `--output` say the same)'
            cand --report 'Explanation format on stdout (`--report`, as `inject` names its report''s; `-o` and `--output` say the same)'
            cand --output 'Explanation format on stdout (`--report`, as `inject` names its report''s; `-o` and `--output` say the same)'
            cand --output-file 'Write the explanation to FILE instead of stdout (atomically; see `inject --help`)'
            cand -R 'Accepted for kubectl compatibility: directories are always walked recursively'
            cand --recursive 'Accepted for kubectl compatibility: directories are always walked recursively'
            cand --no-discovery 'Never look for a `.kinject.yaml` or `kinject.yaml` beside the manifests: without -c the run is refused. For CI, where a configuration a pull request adds would otherwise configure every file below it (docs/security.md)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kinject;krm'= {
            cand -c 'Configuration file to use instead of the ResourceList''s functionConfig (repeatable)'
            cand --config 'Configuration file to use instead of the ResourceList''s functionConfig (repeatable)'
            cand --set 'Override a template value with a string: `--set image.tag=1.10` (`values.image.tag`; the leading `values.` may be written). A key no template reads is an error'
            cand --set-json 'Override a template value with a JSON value: `--set-json replicas=3`, `--set-json ''ports=[80,443]''` (applied before `--set`)'
            cand -n 'Namespace of objects that do not name one (for rules that match namespaces)'
            cand --namespace 'Namespace of objects that do not name one (for rules that match namespaces)'
            cand --namespace-labels 'A label of a namespace, for rules'' `namespaceSelector` (repeatable; `Namespace` objects in the input count too)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kinject;admission'= {
            cand -f 'The AdmissionReview request file, as kubectl takes it (same as PATH)'
            cand --filename 'The AdmissionReview request file, as kubectl takes it (same as PATH)'
            cand -c 'Configuration file, or directory of them (repeatable; later files add sidecars and rules, and override values and defaults). Also reads OpenKruise SidecarSets and the salesforce, tumblr and Expedia injectors'' files. Default: for each file, the nearest `.kinject.yaml` or `kinject.yaml` in its directory or above (up to the repository''s root; outside a repository, up to this directory); for standard input, this directory''s or above'
            cand --config 'Configuration file, or directory of them (repeatable; later files add sidecars and rules, and override values and defaults). Also reads OpenKruise SidecarSets and the salesforce, tumblr and Expedia injectors'' files. Default: for each file, the nearest `.kinject.yaml` or `kinject.yaml` in its directory or above (up to the repository''s root; outside a repository, up to this directory); for standard input, this directory''s or above'
            cand --set 'Override a template value with a string: `--set image.tag=1.10` (`values.image.tag`; the leading `values.` may be written). A key no template reads is an error'
            cand --set-json 'Override a template value with a JSON value: `--set-json replicas=3`, `--set-json ''ports=[80,443]''` (applied before `--set`)'
            cand --namespace-labels 'A label of a namespace, for rules'' `namespaceSelector` (repeatable)'
            cand --no-discovery 'Never look for a `.kinject.yaml` or `kinject.yaml` beside the manifests: without -c the run is refused. For CI, where a configuration a pull request adds would otherwise configure every file below it (docs/security.md)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kinject;serve'= {
            cand -c 'Configuration file, or directory of them (repeatable; later files add sidecars and rules, and override values and defaults). Also reads OpenKruise SidecarSets and the salesforce, tumblr and Expedia injectors'' files. Default: for each file, the nearest `.kinject.yaml` or `kinject.yaml` in its directory or above (up to the repository''s root; outside a repository, up to this directory); for standard input, this directory''s or above'
            cand --config 'Configuration file, or directory of them (repeatable; later files add sidecars and rules, and override values and defaults). Also reads OpenKruise SidecarSets and the salesforce, tumblr and Expedia injectors'' files. Default: for each file, the nearest `.kinject.yaml` or `kinject.yaml` in its directory or above (up to the repository''s root; outside a repository, up to this directory); for standard input, this directory''s or above'
            cand --set 'Override a template value with a string: `--set image.tag=1.10` (`values.image.tag`; the leading `values.` may be written). A key no template reads is an error'
            cand --set-json 'Override a template value with a JSON value: `--set-json replicas=3`, `--set-json ''ports=[80,443]''` (applied before `--set`)'
            cand --listen 'The address to serve the webhook on (HTTPS)'
            cand --tls-cert-file 'The server''s certificate chain (PEM), re-read when the file changes'
            cand --tls-private-key-file 'The server''s private key (PEM), re-read when the file changes'
            cand --client-ca-file 'Accept only clients with a certificate signed by a CA of this file (PEM): the API server''s client certificate. Probes then go to `--probe-listen`'
            cand --probe-listen 'Also serve `/healthz`, `/readyz` and `/metrics` on this address, in plain HTTP (for the kubelet''s probes and Prometheus, which have no client certificate)'
            cand --path 'The path the API server posts AdmissionReviews to'
            cand --on-error 'What to answer for an object kinject cannot inject correctly (a conflict, an unknown requested sidecar): `deny` it with the located message (as `kinject admission` and `inject` do), or `allow` it unchanged with the message in the response''s `warnings`'
            cand --max-request-bytes 'Larger request bodies are refused with 413'
            cand --max-request-values 'A review whose JSON holds more values than this (objects, arrays, strings, numbers, booleans, nulls, keys included) is refused, saying where: each costs the server up to 400 bytes of memory while it is reviewed'
            cand --max-containers 'A pod with more containers than this (`containers`, `initContainers` and `ephemeralContainers` together) is refused, saying where, as a pod kinject cannot inject (`--on-error`): each container costs the server edits and patch operations'
            cand --max-in-flight-bytes 'The bytes of request bodies being read and of answers not yet written, all requests together: a request beyond it gets 503 (this bounds the server''s memory, with `--max-connections` and the review limits; docs/serve.md says how much)'
            cand --max-connections 'At most this many connections open at once: beyond, a new one ends the connection that has done nothing for the longest (idle ones first), so that connections sending nothing cannot keep others out'
            cand --header-timeout 'A connection is closed when it has had no request in progress for this many seconds: from its start (the TLS handshake included) to its first request''s headers, and between requests, over HTTP/1.1 and HTTP/2 alike'
            cand --request-timeout 'A request must be read and answered within this many seconds (keep it under the webhook''s `timeoutSeconds`), or it gets 408 (body too slow) or 504 (no answer in time), for which the API server applies the webhook''s `failurePolicy`'
            cand --write-timeout 'An answer must be written within this many seconds of being ready (the client reading it), or the connection is closed and the answer dropped'
            cand --shutdown-delay 'On SIGTERM, keep accepting connections this many seconds while `/readyz` says the server is stopping, so that the Service stops sending it requests before it stops listening (the endpoints'' update takes a moment to reach every API server)'
            cand --shutdown-timeout 'Then, in-flight requests are given this many seconds to complete'
            cand --reload-interval 'How often the configuration and certificate files are checked for changes. A change is loaded once the files have held still for an interval (not caught half-written)'
            cand --image 'With `--print-manifests` (and needed by it): the image the cluster pulls, the one a release would push (`ghcr.io/kinject/kinject:<version>`) or one built and pushed as docs/container-image.md says'
            cand --namespace 'With `--print-manifests`: the namespace the server runs in'
            cand --replicas 'With `--print-manifests`: the server''s replicas'
            cand --failure-policy 'With `--print-manifests`: the webhook''s `failurePolicy` (`Fail`: a pod is not created while no server answers; `Ignore`: it is created without its sidecars)'
            cand --timeout-seconds 'With `--print-manifests`: the webhook''s `timeoutSeconds` (1 to 30)'
            cand --no-discovery 'Never look for a `.kinject.yaml` or `kinject.yaml` beside the manifests: without -c the run is refused. For CI, where a configuration a pull request adds would otherwise configure every file below it (docs/security.md)'
            cand --insecure-plain-http 'Serve plain HTTP, without TLS, for local testing only: the API server calls webhooks over HTTPS alone'
            cand --print-manifests 'Print what to apply to run this server in a cluster, made from this configuration: Namespace, ServiceAccount, ConfigMap, Deployment, PodDisruptionBudget, Service, MutatingWebhookConfiguration and cert-manager''s Issuer and Certificate. Serves nothing'
            cand --without-cert-manager 'With `--print-manifests`: no cert-manager objects; the certificate''s Secret and the webhook''s `caBundle` are yours to make (docs/serve.md says how)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kinject;test'= {
            cand -c 'Configuration file, or directory of them (repeatable), for the cases that name none in their `args` and hold no `config.yaml` (else the nearest `.kinject.yaml` or `kinject.yaml` of the case, as `inject` finds it)'
            cand --config 'Configuration file, or directory of them (repeatable), for the cases that name none in their `args` and hold no `config.yaml` (else the nearest `.kinject.yaml` or `kinject.yaml` of the case, as `inject` finds it)'
            cand --run 'Only the cases whose name (their path from PATH) contains NAME, or matches it as a glob when it holds `*`, `?` or `[` (repeatable: any of them)'
            cand --report '`text`, for people (a line per failing case with its diff, then a summary), or `json`, JSON Lines (a line per case, then a summary; docs/report.schema.json)'
            cand --junit 'Also write the results as JUnit XML to FILE (atomically), for CI systems that show test results'
            cand --update 'Write each case''s expectations from what kinject writes now (and `input.sha256`, the hash of its input), instead of comparing; the invariants are still checked. A case whose input changed since its expectation was written is refused, unless --force'
            cand --force 'With --update: write the expectations of cases whose input changed too'
            cand -v 'A line for every case, the passing ones too'
            cand --verbose 'A line for every case, the passing ones too'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kinject;schema'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kinject;version'= {
            cand -o '`text` (as `--version`) or `json` (`{"kinject": {"version": …, "build": …}}`)'
            cand --output '`text` (as `--version`) or `json` (`{"kinject": {"version": …, "build": …}}`)'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kinject;completions'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kinject;help'= {
            cand inject 'Inject sidecars into manifests (stdin, files or directories) and write the result'
            cand uninject 'Remove everything kinject injected (as its status annotation records it)'
            cand explain 'Say, for every object, which rules match, which do not and why, and what would be injected'
            cand krm 'Run as a KRM function: a ResourceList on stdin (its functionConfig is the configuration), the ResourceList with injected items and results on stdout. Also what `kinject` with no subcommand does when stdin is not a terminal'
            cand admission 'Answer an `admission.k8s.io/v1` AdmissionReview on stdin with the response a mutating webhook returns: `allowed`, and the base64 JSONPatch when the object changes'
            cand serve 'Serve AdmissionReviews over HTTPS as the cluster''s mutating webhook: the answer of `kinject admission` for each request, the configuration and certificates reloaded when their files change (docs/serve.md)'
            cand test 'Run test cases of a configuration: folders holding an input, an expectation and optionally the command line (docs/test.md). Each case''s output is compared byte for byte with its expectation, and an inject case''s output checked to inject again to itself, to agree with `-o patch`, and to uninject to the input'
            cand schema 'Print the JSON Schema of the configuration file (for editors and CI validation)'
            cand version 'Print kinject''s version, the commit it was built from and its date (as `--version`)'
            cand completions 'Print a shell completion script'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kinject;help;inject'= {
        }
        &'kinject;help;uninject'= {
        }
        &'kinject;help;explain'= {
        }
        &'kinject;help;krm'= {
        }
        &'kinject;help;admission'= {
        }
        &'kinject;help;serve'= {
        }
        &'kinject;help;test'= {
        }
        &'kinject;help;schema'= {
        }
        &'kinject;help;version'= {
        }
        &'kinject;help;completions'= {
        }
        &'kinject;help;help'= {
        }
    ]
    $completions[$command]
}
