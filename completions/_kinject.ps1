
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'kinject' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'kinject'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'kinject' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('inject', 'inject', [CompletionResultType]::ParameterValue, 'Inject sidecars into manifests (stdin, files or directories) and write the result')
            [CompletionResult]::new('uninject', 'uninject', [CompletionResultType]::ParameterValue, 'Remove everything kinject injected (as its status annotation records it)')
            [CompletionResult]::new('explain', 'explain', [CompletionResultType]::ParameterValue, 'Say, for every object, which rules match, which do not and why, and what would be injected')
            [CompletionResult]::new('krm', 'krm', [CompletionResultType]::ParameterValue, 'Run as a KRM function: a ResourceList on stdin (its functionConfig is the configuration), the ResourceList with injected items and results on stdout. Also what `kinject` with no subcommand does when stdin is not a terminal')
            [CompletionResult]::new('admission', 'admission', [CompletionResultType]::ParameterValue, 'Answer an `admission.k8s.io/v1` AdmissionReview on stdin with the response a mutating webhook returns: `allowed`, and the base64 JSONPatch when the object changes')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Serve AdmissionReviews over HTTPS as the cluster''s mutating webhook: the answer of `kinject admission` for each request, the configuration and certificates reloaded when their files change (docs/serve.md)')
            [CompletionResult]::new('test', 'test', [CompletionResultType]::ParameterValue, 'Run test cases of a configuration: folders holding an input, an expectation and optionally the command line (docs/test.md). Each case''s output is compared byte for byte with its expectation, and an inject case''s output checked to inject again to itself, to agree with `-o patch`, and to uninject to the input')
            [CompletionResult]::new('schema', 'schema', [CompletionResultType]::ParameterValue, 'Print the JSON Schema of the configuration file (for editors and CI validation)')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print kinject''s version, the commit it was built from and its date (as `--version`)')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kinject;inject' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'A manifest file or directory, as kubectl takes it (same as a PATH argument)')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'A manifest file or directory, as kubectl takes it (same as a PATH argument)')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Only objects whose own labels (`metadata.labels`) this kubectl label selector selects (`app=web`, `app!=web`, `tier in (a,b)`, `tier notin (a)`, `key`, `!key`, `ver>1`, `ver<3`, joined by commas), read and applied as Kubernetes does (a selector it refuses is refused); the others pass through unchanged, reported as `not_selected`')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Only objects whose own labels (`metadata.labels`) this kubectl label selector selects (`app=web`, `app!=web`, `tier in (a,b)`, `tier notin (a)`, `key`, `!key`, `ver>1`, `ver<3`, joined by commas), read and applied as Kubernetes does (a selector it refuses is refused); the others pass through unchanged, reported as `not_selected`')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace of objects that do not name one (for rules that match namespaces)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace of objects that do not name one (for rules that match namespaces)')
            [CompletionResult]::new('--namespace-labels', '--namespace-labels', [CompletionResultType]::ParameterName, 'A label of a namespace, for rules'' `namespaceSelector` (repeatable; `Namespace` objects in the input count too)')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Configuration file, or directory of them (repeatable; later files add sidecars and rules, and override values and defaults). Also reads OpenKruise SidecarSets and the salesforce, tumblr and Expedia injectors'' files. Default: for each file, the nearest `.kinject.yaml` or `kinject.yaml` in its directory or above (up to the repository''s root; outside a repository, up to this directory); for standard input, this directory''s or above')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file, or directory of them (repeatable; later files add sidecars and rules, and override values and defaults). Also reads OpenKruise SidecarSets and the salesforce, tumblr and Expedia injectors'' files. Default: for each file, the nearest `.kinject.yaml` or `kinject.yaml` in its directory or above (up to the repository''s root; outside a repository, up to this directory); for standard input, this directory''s or above')
            [CompletionResult]::new('--set', '--set', [CompletionResultType]::ParameterName, 'Override a template value with a string: `--set image.tag=1.10` (`values.image.tag`; the leading `values.` may be written). A key no template reads is an error')
            [CompletionResult]::new('--set-json', '--set-json', [CompletionResultType]::ParameterName, 'Override a template value with a JSON value: `--set-json replicas=3`, `--set-json ''ports=[80,443]''` (applied before `--set`)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format on stdout')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format on stdout')
            [CompletionResult]::new('--output-file', '--output-file', [CompletionResultType]::ParameterName, 'Write the output to FILE instead of stdout: atomically (a temporary file beside it, renamed over it), and only when the run succeeds (when it fails, FILE is neither created nor changed). Not an input, nor a manifest inside an input directory')
            [CompletionResult]::new('--report', '--report', [CompletionResultType]::ParameterName, 'Report format: `text`, for people (the objects acted on, warnings, errors and a summary line), or `json`, JSON Lines for machines (every object, diagnostic, error and warning, each with a `code`, then a summary; nothing else on its stream)')
            [CompletionResult]::new('--report-file', '--report-file', [CompletionResultType]::ParameterName, 'Write the report to FILE instead of stderr (stderr then shows diagnostics, errors and warnings, as with -q). As kustomize''s plugin, whose stderr kustomize shows only when it fails, set KINJECT_REPORT_FILE to see the report of a build that succeeds')
            [CompletionResult]::new('--emit-kustomize', '--emit-kustomize', [CompletionResultType]::ParameterName, 'Write a kustomize overlay to DIR whose patches apply the injection to the given bases (directories with a kustomization.yaml), instead of printing the injected manifests')
            [CompletionResult]::new('-R', '-R ', [CompletionResultType]::ParameterName, 'Accepted for kubectl compatibility: directories are always walked recursively')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'Accepted for kubectl compatibility: directories are always walked recursively')
            [CompletionResult]::new('--no-discovery', '--no-discovery', [CompletionResultType]::ParameterName, 'Never look for a `.kinject.yaml` or `kinject.yaml` beside the manifests: without -c the run is refused. For CI, where a configuration a pull request adds would otherwise configure every file below it (docs/security.md)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No report on stderr (errors are still shown)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No report on stderr (errors are still shown)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report every object, those skipped and unchanged too (by default only the objects acted on, opted out or in error are listed; the summary counts the others)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report every object, those skipped and unchanged too (by default only the objects acted on, opted out or in error are listed; the summary counts the others)')
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'Rewrite the files in place (atomically; files that would not change are not touched). Exits 1 when a file changed, as pre-commit expects from a fixer')
            [CompletionResult]::new('--in-place', '--in-place', [CompletionResultType]::ParameterName, 'Rewrite the files in place (atomically; files that would not change are not touched). Exits 1 when a file changed, as pre-commit expects from a fixer')
            [CompletionResult]::new('--check', '--check', [CompletionResultType]::ParameterName, 'Write nothing; print the paths of the files that would change and exit 1 if any would (refused with --in-place, which writes)')
            [CompletionResult]::new('--diff', '--diff', [CompletionResultType]::ParameterName, 'Print a unified diff of what would change (coloured on a terminal); exit 1 if anything would change. With --in-place, the diff of what was changed')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kinject;uninject' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'A manifest file or directory, as kubectl takes it (same as a PATH argument)')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'A manifest file or directory, as kubectl takes it (same as a PATH argument)')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Only objects whose own labels (`metadata.labels`) this kubectl label selector selects (`app=web`, `app!=web`, `tier in (a,b)`, `tier notin (a)`, `key`, `!key`, `ver>1`, `ver<3`, joined by commas), read and applied as Kubernetes does (a selector it refuses is refused); the others pass through unchanged, reported as `not_selected`')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Only objects whose own labels (`metadata.labels`) this kubectl label selector selects (`app=web`, `app!=web`, `tier in (a,b)`, `tier notin (a)`, `key`, `!key`, `ver>1`, `ver<3`, joined by commas), read and applied as Kubernetes does (a selector it refuses is refused); the others pass through unchanged, reported as `not_selected`')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Configuration file, or directory of them (repeatable): what its sidecars add is what uninject may remove. Default: the nearest `.kinject.yaml` or `kinject.yaml`, as for `inject`; none found, every record needs `--trust-status`')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file, or directory of them (repeatable): what its sidecars add is what uninject may remove. Default: the nearest `.kinject.yaml` or `kinject.yaml`, as for `inject`; none found, every record needs `--trust-status`')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Accepted, with a warning that it does nothing here, and not in --help: uninject consults no rules (it removes what the status annotation records), but flags are never removed (docs/stability.md)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Accepted, with a warning that it does nothing here, and not in --help: uninject consults no rules (it removes what the status annotation records), but flags are never removed (docs/stability.md)')
            [CompletionResult]::new('--namespace-labels', '--namespace-labels', [CompletionResultType]::ParameterName, 'Accepted and ignored, as `-n` is')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format on stdout')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format on stdout')
            [CompletionResult]::new('--output-file', '--output-file', [CompletionResultType]::ParameterName, 'Write the output to FILE instead of stdout: atomically (a temporary file beside it, renamed over it), and only when the run succeeds (when it fails, FILE is neither created nor changed). Not an input, nor a manifest inside an input directory')
            [CompletionResult]::new('--report', '--report', [CompletionResultType]::ParameterName, 'Report format: `text`, for people (the objects acted on, warnings, errors and a summary line), or `json`, JSON Lines for machines (every object, diagnostic, error and warning, each with a `code`, then a summary; nothing else on its stream)')
            [CompletionResult]::new('--report-file', '--report-file', [CompletionResultType]::ParameterName, 'Write the report to FILE instead of stderr (stderr then shows diagnostics, errors and warnings, as with -q). As kustomize''s plugin, whose stderr kustomize shows only when it fails, set KINJECT_REPORT_FILE to see the report of a build that succeeds')
            [CompletionResult]::new('-R', '-R ', [CompletionResultType]::ParameterName, 'Accepted for kubectl compatibility: directories are always walked recursively')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'Accepted for kubectl compatibility: directories are always walked recursively')
            [CompletionResult]::new('--no-discovery', '--no-discovery', [CompletionResultType]::ParameterName, 'Never look for a `.kinject.yaml` or `kinject.yaml` beside the manifests: without -c the run is refused. For CI, where a configuration a pull request adds would otherwise configure every file below it (docs/security.md)')
            [CompletionResult]::new('--trust-status', '--trust-status', [CompletionResultType]::ParameterName, 'Remove what the status annotation says was added for sidecars no configuration given defines, on its word: kinject then checks only that its records are consistent, not that kinject added what they name (a manifest''s annotation could name the pod''s own containers)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No report on stderr (errors are still shown)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No report on stderr (errors are still shown)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Report every object, those skipped and unchanged too (by default only the objects acted on, opted out or in error are listed; the summary counts the others)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Report every object, those skipped and unchanged too (by default only the objects acted on, opted out or in error are listed; the summary counts the others)')
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'Rewrite the files in place (atomically; files that would not change are not touched). Exits 1 when a file changed, as pre-commit expects from a fixer')
            [CompletionResult]::new('--in-place', '--in-place', [CompletionResultType]::ParameterName, 'Rewrite the files in place (atomically; files that would not change are not touched). Exits 1 when a file changed, as pre-commit expects from a fixer')
            [CompletionResult]::new('--check', '--check', [CompletionResultType]::ParameterName, 'Write nothing; print the paths of the files that would change and exit 1 if any would (refused with --in-place, which writes)')
            [CompletionResult]::new('--diff', '--diff', [CompletionResultType]::ParameterName, 'Print a unified diff of what would change (coloured on a terminal); exit 1 if anything would change. With --in-place, the diff of what was changed')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kinject;explain' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'A manifest file or directory, as kubectl takes it (same as a PATH argument)')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'A manifest file or directory, as kubectl takes it (same as a PATH argument)')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Only objects whose own labels (`metadata.labels`) this kubectl label selector selects (`app=web`, `app!=web`, `tier in (a,b)`, `tier notin (a)`, `key`, `!key`, `ver>1`, `ver<3`, joined by commas), read and applied as Kubernetes does (a selector it refuses is refused); the others pass through unchanged, reported as `not_selected`')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Only objects whose own labels (`metadata.labels`) this kubectl label selector selects (`app=web`, `app!=web`, `tier in (a,b)`, `tier notin (a)`, `key`, `!key`, `ver>1`, `ver<3`, joined by commas), read and applied as Kubernetes does (a selector it refuses is refused); the others pass through unchanged, reported as `not_selected`')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace of objects that do not name one (for rules that match namespaces)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace of objects that do not name one (for rules that match namespaces)')
            [CompletionResult]::new('--namespace-labels', '--namespace-labels', [CompletionResultType]::ParameterName, 'A label of a namespace, for rules'' `namespaceSelector` (repeatable; `Namespace` objects in the input count too)')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Configuration file, or directory of them (repeatable; later files add sidecars and rules, and override values and defaults). Also reads OpenKruise SidecarSets and the salesforce, tumblr and Expedia injectors'' files. Default: for each file, the nearest `.kinject.yaml` or `kinject.yaml` in its directory or above (up to the repository''s root; outside a repository, up to this directory); for standard input, this directory''s or above')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file, or directory of them (repeatable; later files add sidecars and rules, and override values and defaults). Also reads OpenKruise SidecarSets and the salesforce, tumblr and Expedia injectors'' files. Default: for each file, the nearest `.kinject.yaml` or `kinject.yaml` in its directory or above (up to the repository''s root; outside a repository, up to this directory); for standard input, this directory''s or above')
            [CompletionResult]::new('--set', '--set', [CompletionResultType]::ParameterName, 'Override a template value with a string: `--set image.tag=1.10` (`values.image.tag`; the leading `values.` may be written). A key no template reads is an error')
            [CompletionResult]::new('--set-json', '--set-json', [CompletionResultType]::ParameterName, 'Override a template value with a JSON value: `--set-json replicas=3`, `--set-json ''ports=[80,443]''` (applied before `--set`)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Explanation format on stdout (`--report`, as `inject` names its report''s; `-o` and `--output` say the same)')
            [CompletionResult]::new('--report', '--report', [CompletionResultType]::ParameterName, 'Explanation format on stdout (`--report`, as `inject` names its report''s; `-o` and `--output` say the same)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Explanation format on stdout (`--report`, as `inject` names its report''s; `-o` and `--output` say the same)')
            [CompletionResult]::new('--output-file', '--output-file', [CompletionResultType]::ParameterName, 'Write the explanation to FILE instead of stdout (atomically; see `inject --help`)')
            [CompletionResult]::new('-R', '-R ', [CompletionResultType]::ParameterName, 'Accepted for kubectl compatibility: directories are always walked recursively')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'Accepted for kubectl compatibility: directories are always walked recursively')
            [CompletionResult]::new('--no-discovery', '--no-discovery', [CompletionResultType]::ParameterName, 'Never look for a `.kinject.yaml` or `kinject.yaml` beside the manifests: without -c the run is refused. For CI, where a configuration a pull request adds would otherwise configure every file below it (docs/security.md)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kinject;krm' {
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Configuration file to use instead of the ResourceList''s functionConfig (repeatable)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file to use instead of the ResourceList''s functionConfig (repeatable)')
            [CompletionResult]::new('--set', '--set', [CompletionResultType]::ParameterName, 'Override a template value with a string: `--set image.tag=1.10` (`values.image.tag`; the leading `values.` may be written). A key no template reads is an error')
            [CompletionResult]::new('--set-json', '--set-json', [CompletionResultType]::ParameterName, 'Override a template value with a JSON value: `--set-json replicas=3`, `--set-json ''ports=[80,443]''` (applied before `--set`)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace of objects that do not name one (for rules that match namespaces)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace of objects that do not name one (for rules that match namespaces)')
            [CompletionResult]::new('--namespace-labels', '--namespace-labels', [CompletionResultType]::ParameterName, 'A label of a namespace, for rules'' `namespaceSelector` (repeatable; `Namespace` objects in the input count too)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kinject;admission' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'The AdmissionReview request file, as kubectl takes it (same as PATH)')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'The AdmissionReview request file, as kubectl takes it (same as PATH)')
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Configuration file, or directory of them (repeatable; later files add sidecars and rules, and override values and defaults). Also reads OpenKruise SidecarSets and the salesforce, tumblr and Expedia injectors'' files. Default: for each file, the nearest `.kinject.yaml` or `kinject.yaml` in its directory or above (up to the repository''s root; outside a repository, up to this directory); for standard input, this directory''s or above')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file, or directory of them (repeatable; later files add sidecars and rules, and override values and defaults). Also reads OpenKruise SidecarSets and the salesforce, tumblr and Expedia injectors'' files. Default: for each file, the nearest `.kinject.yaml` or `kinject.yaml` in its directory or above (up to the repository''s root; outside a repository, up to this directory); for standard input, this directory''s or above')
            [CompletionResult]::new('--set', '--set', [CompletionResultType]::ParameterName, 'Override a template value with a string: `--set image.tag=1.10` (`values.image.tag`; the leading `values.` may be written). A key no template reads is an error')
            [CompletionResult]::new('--set-json', '--set-json', [CompletionResultType]::ParameterName, 'Override a template value with a JSON value: `--set-json replicas=3`, `--set-json ''ports=[80,443]''` (applied before `--set`)')
            [CompletionResult]::new('--namespace-labels', '--namespace-labels', [CompletionResultType]::ParameterName, 'A label of a namespace, for rules'' `namespaceSelector` (repeatable)')
            [CompletionResult]::new('--no-discovery', '--no-discovery', [CompletionResultType]::ParameterName, 'Never look for a `.kinject.yaml` or `kinject.yaml` beside the manifests: without -c the run is refused. For CI, where a configuration a pull request adds would otherwise configure every file below it (docs/security.md)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kinject;serve' {
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Configuration file, or directory of them (repeatable; later files add sidecars and rules, and override values and defaults). Also reads OpenKruise SidecarSets and the salesforce, tumblr and Expedia injectors'' files. Default: for each file, the nearest `.kinject.yaml` or `kinject.yaml` in its directory or above (up to the repository''s root; outside a repository, up to this directory); for standard input, this directory''s or above')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file, or directory of them (repeatable; later files add sidecars and rules, and override values and defaults). Also reads OpenKruise SidecarSets and the salesforce, tumblr and Expedia injectors'' files. Default: for each file, the nearest `.kinject.yaml` or `kinject.yaml` in its directory or above (up to the repository''s root; outside a repository, up to this directory); for standard input, this directory''s or above')
            [CompletionResult]::new('--set', '--set', [CompletionResultType]::ParameterName, 'Override a template value with a string: `--set image.tag=1.10` (`values.image.tag`; the leading `values.` may be written). A key no template reads is an error')
            [CompletionResult]::new('--set-json', '--set-json', [CompletionResultType]::ParameterName, 'Override a template value with a JSON value: `--set-json replicas=3`, `--set-json ''ports=[80,443]''` (applied before `--set`)')
            [CompletionResult]::new('--listen', '--listen', [CompletionResultType]::ParameterName, 'The address to serve the webhook on (HTTPS)')
            [CompletionResult]::new('--tls-cert-file', '--tls-cert-file', [CompletionResultType]::ParameterName, 'The server''s certificate chain (PEM), re-read when the file changes')
            [CompletionResult]::new('--tls-private-key-file', '--tls-private-key-file', [CompletionResultType]::ParameterName, 'The server''s private key (PEM), re-read when the file changes')
            [CompletionResult]::new('--client-ca-file', '--client-ca-file', [CompletionResultType]::ParameterName, 'Accept only clients with a certificate signed by a CA of this file (PEM): the API server''s client certificate. Probes then go to `--probe-listen`')
            [CompletionResult]::new('--probe-listen', '--probe-listen', [CompletionResultType]::ParameterName, 'Also serve `/healthz`, `/readyz` and `/metrics` on this address, in plain HTTP (for the kubelet''s probes and Prometheus, which have no client certificate)')
            [CompletionResult]::new('--path', '--path', [CompletionResultType]::ParameterName, 'The path the API server posts AdmissionReviews to')
            [CompletionResult]::new('--on-error', '--on-error', [CompletionResultType]::ParameterName, 'What to answer for an object kinject cannot inject correctly (a conflict, an unknown requested sidecar): `deny` it with the located message (as `kinject admission` and `inject` do), or `allow` it unchanged with the message in the response''s `warnings`')
            [CompletionResult]::new('--max-request-bytes', '--max-request-bytes', [CompletionResultType]::ParameterName, 'Larger request bodies are refused with 413')
            [CompletionResult]::new('--max-request-values', '--max-request-values', [CompletionResultType]::ParameterName, 'A review whose JSON holds more values than this (objects, arrays, strings, numbers, booleans, nulls, keys included) is refused, saying where: each costs the server up to 400 bytes of memory while it is reviewed')
            [CompletionResult]::new('--max-containers', '--max-containers', [CompletionResultType]::ParameterName, 'A pod with more containers than this (`containers`, `initContainers` and `ephemeralContainers` together) is refused, saying where, as a pod kinject cannot inject (`--on-error`): each container costs the server edits and patch operations')
            [CompletionResult]::new('--max-in-flight-bytes', '--max-in-flight-bytes', [CompletionResultType]::ParameterName, 'The bytes of request bodies being read and of answers not yet written, all requests together: a request beyond it gets 503 (this bounds the server''s memory, with `--max-connections` and the review limits; docs/serve.md says how much)')
            [CompletionResult]::new('--max-connections', '--max-connections', [CompletionResultType]::ParameterName, 'At most this many connections open at once: beyond, a new one ends the connection that has done nothing for the longest (idle ones first), so that connections sending nothing cannot keep others out')
            [CompletionResult]::new('--header-timeout', '--header-timeout', [CompletionResultType]::ParameterName, 'A connection is closed when it has had no request in progress for this many seconds: from its start (the TLS handshake included) to its first request''s headers, and between requests, over HTTP/1.1 and HTTP/2 alike')
            [CompletionResult]::new('--request-timeout', '--request-timeout', [CompletionResultType]::ParameterName, 'A request must be read and answered within this many seconds (keep it under the webhook''s `timeoutSeconds`), or it gets 408 (body too slow) or 504 (no answer in time), for which the API server applies the webhook''s `failurePolicy`')
            [CompletionResult]::new('--write-timeout', '--write-timeout', [CompletionResultType]::ParameterName, 'An answer must be written within this many seconds of being ready (the client reading it), or the connection is closed and the answer dropped')
            [CompletionResult]::new('--shutdown-delay', '--shutdown-delay', [CompletionResultType]::ParameterName, 'On SIGTERM, keep accepting connections this many seconds while `/readyz` says the server is stopping, so that the Service stops sending it requests before it stops listening (the endpoints'' update takes a moment to reach every API server)')
            [CompletionResult]::new('--shutdown-timeout', '--shutdown-timeout', [CompletionResultType]::ParameterName, 'Then, in-flight requests are given this many seconds to complete')
            [CompletionResult]::new('--reload-interval', '--reload-interval', [CompletionResultType]::ParameterName, 'How often the configuration and certificate files are checked for changes. A change is loaded once the files have held still for an interval (not caught half-written)')
            [CompletionResult]::new('--image', '--image', [CompletionResultType]::ParameterName, 'With `--print-manifests` (and needed by it): the image the cluster pulls, the one a release would push (`ghcr.io/kinject/kinject:<version>`) or one built and pushed as docs/container-image.md says')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'With `--print-manifests`: the namespace the server runs in')
            [CompletionResult]::new('--replicas', '--replicas', [CompletionResultType]::ParameterName, 'With `--print-manifests`: the server''s replicas')
            [CompletionResult]::new('--failure-policy', '--failure-policy', [CompletionResultType]::ParameterName, 'With `--print-manifests`: the webhook''s `failurePolicy` (`Fail`: a pod is not created while no server answers; `Ignore`: it is created without its sidecars)')
            [CompletionResult]::new('--timeout-seconds', '--timeout-seconds', [CompletionResultType]::ParameterName, 'With `--print-manifests`: the webhook''s `timeoutSeconds` (1 to 30)')
            [CompletionResult]::new('--no-discovery', '--no-discovery', [CompletionResultType]::ParameterName, 'Never look for a `.kinject.yaml` or `kinject.yaml` beside the manifests: without -c the run is refused. For CI, where a configuration a pull request adds would otherwise configure every file below it (docs/security.md)')
            [CompletionResult]::new('--insecure-plain-http', '--insecure-plain-http', [CompletionResultType]::ParameterName, 'Serve plain HTTP, without TLS, for local testing only: the API server calls webhooks over HTTPS alone')
            [CompletionResult]::new('--print-manifests', '--print-manifests', [CompletionResultType]::ParameterName, 'Print what to apply to run this server in a cluster, made from this configuration: Namespace, ServiceAccount, ConfigMap, Deployment, PodDisruptionBudget, Service, MutatingWebhookConfiguration and cert-manager''s Issuer and Certificate. Serves nothing')
            [CompletionResult]::new('--without-cert-manager', '--without-cert-manager', [CompletionResultType]::ParameterName, 'With `--print-manifests`: no cert-manager objects; the certificate''s Secret and the webhook''s `caBundle` are yours to make (docs/serve.md says how)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kinject;test' {
            [CompletionResult]::new('-c', '-c', [CompletionResultType]::ParameterName, 'Configuration file, or directory of them (repeatable), for the cases that name none in their `args` and hold no `config.yaml` (else the nearest `.kinject.yaml` or `kinject.yaml` of the case, as `inject` finds it)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Configuration file, or directory of them (repeatable), for the cases that name none in their `args` and hold no `config.yaml` (else the nearest `.kinject.yaml` or `kinject.yaml` of the case, as `inject` finds it)')
            [CompletionResult]::new('--run', '--run', [CompletionResultType]::ParameterName, 'Only the cases whose name (their path from PATH) contains NAME, or matches it as a glob when it holds `*`, `?` or `[` (repeatable: any of them)')
            [CompletionResult]::new('--report', '--report', [CompletionResultType]::ParameterName, '`text`, for people (a line per failing case with its diff, then a summary), or `json`, JSON Lines (a line per case, then a summary; docs/report.schema.json)')
            [CompletionResult]::new('--junit', '--junit', [CompletionResultType]::ParameterName, 'Also write the results as JUnit XML to FILE (atomically), for CI systems that show test results')
            [CompletionResult]::new('--update', '--update', [CompletionResultType]::ParameterName, 'Write each case''s expectations from what kinject writes now (and `input.sha256`, the hash of its input), instead of comparing; the invariants are still checked. A case whose input changed since its expectation was written is refused, unless --force')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'With --update: write the expectations of cases whose input changed too')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'A line for every case, the passing ones too')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'A line for every case, the passing ones too')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kinject;schema' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kinject;version' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, '`text` (as `--version`) or `json` (`{"kinject": {"version": …, "build": …}}`)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, '`text` (as `--version`) or `json` (`{"kinject": {"version": …, "build": …}}`)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kinject;completions' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kinject;help' {
            [CompletionResult]::new('inject', 'inject', [CompletionResultType]::ParameterValue, 'Inject sidecars into manifests (stdin, files or directories) and write the result')
            [CompletionResult]::new('uninject', 'uninject', [CompletionResultType]::ParameterValue, 'Remove everything kinject injected (as its status annotation records it)')
            [CompletionResult]::new('explain', 'explain', [CompletionResultType]::ParameterValue, 'Say, for every object, which rules match, which do not and why, and what would be injected')
            [CompletionResult]::new('krm', 'krm', [CompletionResultType]::ParameterValue, 'Run as a KRM function: a ResourceList on stdin (its functionConfig is the configuration), the ResourceList with injected items and results on stdout. Also what `kinject` with no subcommand does when stdin is not a terminal')
            [CompletionResult]::new('admission', 'admission', [CompletionResultType]::ParameterValue, 'Answer an `admission.k8s.io/v1` AdmissionReview on stdin with the response a mutating webhook returns: `allowed`, and the base64 JSONPatch when the object changes')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Serve AdmissionReviews over HTTPS as the cluster''s mutating webhook: the answer of `kinject admission` for each request, the configuration and certificates reloaded when their files change (docs/serve.md)')
            [CompletionResult]::new('test', 'test', [CompletionResultType]::ParameterValue, 'Run test cases of a configuration: folders holding an input, an expectation and optionally the command line (docs/test.md). Each case''s output is compared byte for byte with its expectation, and an inject case''s output checked to inject again to itself, to agree with `-o patch`, and to uninject to the input')
            [CompletionResult]::new('schema', 'schema', [CompletionResultType]::ParameterValue, 'Print the JSON Schema of the configuration file (for editors and CI validation)')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print kinject''s version, the commit it was built from and its date (as `--version`)')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kinject;help;inject' {
            break
        }
        'kinject;help;uninject' {
            break
        }
        'kinject;help;explain' {
            break
        }
        'kinject;help;krm' {
            break
        }
        'kinject;help;admission' {
            break
        }
        'kinject;help;serve' {
            break
        }
        'kinject;help;test' {
            break
        }
        'kinject;help;schema' {
            break
        }
        'kinject;help;version' {
            break
        }
        'kinject;help;completions' {
            break
        }
        'kinject;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
