#compdef kapi

autoload -U is-at-least

_kapi() {
    typeset -A opt_args
    typeset -a _arguments_options
    local ret=1

    if is-at-least 5.2; then
        _arguments_options=(-s -S -C)
    else
        _arguments_options=(-s -C)
    fi

    local context curcontext="$curcontext" state line
    _arguments "${_arguments_options[@]}" : \
'-v+[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--v=[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--logging-format=[Log lines as text (for a person) or JSON (one object per line, as kube-apiserver'\''s --logging-format=json)]:FORMAT:(text json)' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
":: :_kapi_commands" \
"*::: :->kapi" \
&& ret=0
    case $state in
    (kapi)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:kapi-command-$line[1]:"
        case $line[1] in
            (serve)
_arguments "${_arguments_options[@]}" : \
'--secure-port=[Port to serve HTTPS on; 0 picks a free port and prints it]:PORT:_default' \
'--bind-address=[Address to listen on]:IP:_default' \
'--advertise-address=[Address advertised to clients and in the \`kubernetes\` Service (default\: the bind address, or 127.0.0.1 when that is unspecified)]:IP:_default' \
'--data-dir=[Where kapi keeps its store, certificates and kubeconfig]:DIR:_files' \
'--cert-dir=[Where generated certificates live (default\: <data-dir>/pki)]:DIR:_files' \
'--tls-cert-file=[Serving certificate to use instead of a generated one (needs --tls-private-key-file)]:FILE:_files' \
'--tls-private-key-file=[Key of --tls-cert-file]:FILE:_files' \
'--client-ca-file=[Extra CA bundle whose client certificates are accepted (the generated CA is always trusted)]:FILE:_files' \
'*--etcd-servers=[etcd endpoints, comma separated; empty means the embedded store]:URLS:_default' \
'--etcd-prefix=[Key prefix for everything kapi stores]:PREFIX:_default' \
'--storage-media-type=[How built-in objects are written to storage\: application/json, or application/vnd.kubernetes.protobuf as kube-apiserver writes them. Both are always read]:TYPE:_default' \
'--etcd-cafile=[CA bundle to verify etcd'\''s serving certificate]:FILE:_files' \
'--etcd-certfile=[Client certificate for etcd]:FILE:_files' \
'--etcd-keyfile=[Client key for etcd]:FILE:_files' \
'*--etcd-servers-overrides=[Resources in etcd clusters of their own, comma separated\: group/resource#servers, servers semicolon separated (e.g. /events#http\://127.0.0.1\:2381)]:OVERRIDES:_default' \
'--etcd-compaction-interval=[How often old revisions are compacted (Go duration; 0 disables)]:DURATION:_default' \
'--service-cluster-ip-range=[CIDR from which Service cluster IPs are allocated]:CIDR:_default' \
'--service-node-port-range=[Port range reserved for NodePort Services]:RANGE:_default' \
'--anonymous-auth=[Let unauthenticated requests through as system\:anonymous (authorization still limits them)]::BOOL:(true false)' \
'--token-auth-file=[Static bearer tokens, CSV lines\: token,user,uid,"group1,group2"]:FILE:_files' \
'*--enable-admission-plugins=[Admission plugins to enable besides the default ones, comma separated]:PLUGINS:_default' \
'*--disable-admission-plugins=[Default admission plugins to disable, comma separated]:PLUGINS:_default' \
'--allow-privileged=[Let containers run privileged (securityContext.privileged)]::BOOL:(true false)' \
'*--authorization-mode=[Authorization modes, in order, comma separated\: AlwaysAllow, AlwaysDeny, RBAC]:MODES:_default' \
'--max-requests-inflight=[With API Priority and Fairness\: the server'\''s seats are this plus --max-mutating-requests-inflight. Without\: the most non-mutating requests served at once; more get 429]:N:_default' \
'--max-mutating-requests-inflight=[Most mutating requests served at once without API Priority and Fairness; with it, part of the server'\''s seats]:N:_default' \
'--enable-priority-and-fairness=[API Priority and Fairness (flowcontrol.apiserver.k8s.io)\: classify, queue fairly and shed with 429. Off\: max-in-flight limits, with system\:masters exempt]:BOOL:(true false)' \
'--http2-max-streams-per-connection=[Streams a client may open at once on one HTTP/2 connection; 0 means 100, the default of kube-apiserver (and of Go'\''s clients). kapi'\''s default is higher, for tools that multiplex many watches]:N:_default' \
'--min-request-timeout=[Seconds a watch lasts at least when the client names no timeoutSeconds (it ends between once and twice this, at random)]:SECONDS:_default' \
'--request-timeout=[Deadline for non-long-running requests (Go duration)]:DURATION:_default' \
'--shutdown-delay-duration=[After SIGTERM, keep serving this long with /readyz failing before draining, so load balancers stop sending (Go duration)]:DURATION:_default' \
'--kubeconfig-out=[Where to write the admin kubeconfig (default\: <data-dir>/admin.kubeconfig)]:FILE:_files' \
'--admission-control-config-file=[AdmissionConfiguration (apiserver.config.k8s.io/v1) holding the plugins'\'' own configuration (EventRateLimit'\''s, for one)]:FILE:_files' \
'--audit-policy-file=[audit.k8s.io/v1 Policy deciding what is audited (needs --audit-log-path or --audit-webhook-config-file)]:FILE:_files' \
'--audit-log-path=[Where audit events go, as JSON lines ("-" for stdout)]:FILE:_files' \
'--audit-webhook-config-file=[Kubeconfig of a webhook that receives audit events as EventLists]:FILE:_files' \
'--audit-webhook-mode=[How audit events reach the webhook\: batch (blocking modes are not implemented)]:MODE:_default' \
'--audit-webhook-batch-max-size=[Events per webhook batch]:N:_default' \
'--audit-webhook-batch-max-wait=[Longest a webhook batch waits for more events (Go duration)]:DURATION:_default' \
'--audit-webhook-initial-backoff=[Wait before the first retry of a failed webhook batch (Go duration)]:DURATION:_default' \
'--audit-webhook-version=[API version of the webhook'\''s EventLists\: audit.k8s.io/v1]:VERSION:_default' \
'*--controllers=[Built-in controllers to run\: \`*\` for all, \`name\` to add, \`-name\` to remove (kube-controller-manager'\''s flag)]:NAMES:_default' \
'--service-account-issuer=[Issuer (\`iss\`) of ServiceAccount tokens]:URL:_default' \
'*--service-account-key-file=[PEM files with public keys (or certificates, or private keys) that verify ServiceAccount tokens; repeatable (default\: the signing key'\''s)]:FILE:_files' \
'--service-account-signing-key-file=[PEM private key (RSA or ECDSA P-256) that signs ServiceAccount tokens (default\: <cert-dir>/sa.key, generated)]:FILE:_files' \
'*--api-audiences=[Audiences the API accepts in tokens, comma separated (default\: the issuer)]:AUDIENCES:_default' \
'--profiling=[Serve /debug/flags/v, where an administrator changes the log verbosity of the running server (PUT the level), as kube-apiserver does with profiling on]::BOOL:(true false)' \
'--encryption-provider-config=[EncryptionConfiguration (apiserver.config.k8s.io/v1)\: which resources are encrypted at rest, with which providers (aescbc, aesgcm, secretbox, identity) and keys]:FILE:_files' \
'*--runtime-config=[Built-in APIs to switch on or off, as kube-apiserver'\''s flag\: api/all=false, apps/v1=false, batch/v1/cronjobs=false, v1=true (repeatable, comma separated)]:KEY=VALUE:_default' \
'--authentication-token-webhook-config-file=[kubeconfig of a token webhook\: bearer tokens no other authenticator knows are sent there as TokenReviews]:FILE:_files' \
'--authentication-token-webhook-version=[The authentication.k8s.io version of the TokenReviews sent to the webhook\: v1 or v1beta1]:VERSION:_default' \
'--authentication-token-webhook-cache-ttl=[How long the webhook'\''s answers are kept (Go duration)]:DURATION:_default' \
'--authorization-webhook-config-file=[kubeconfig of an authorization webhook (with --authorization-mode ...,Webhook)\: requests are sent there as SubjectAccessReviews]:FILE:_files' \
'--authorization-webhook-version=[The authorization.k8s.io version of the SubjectAccessReviews sent to the webhook\: v1 or v1beta1]:VERSION:_default' \
'--authorization-webhook-cache-authorized-ttl=[How long the webhook'\''s allowing answers are kept (Go duration)]:DURATION:_default' \
'--authorization-webhook-cache-unauthorized-ttl=[How long the webhook'\''s other answers are kept (Go duration)]:DURATION:_default' \
'--tls-min-version=[Lowest TLS version served\: VersionTLS12 (default) or VersionTLS13]:VERSION:_default' \
'*--tls-cipher-suites=[TLS 1.2 cipher suites allowed, by Go'\''s names, comma separated (TLS 1.3'\''s are not configurable)]:SUITES:_default' \
'--requestheader-client-ca-file=[CA of authenticating front proxies, which name their user in request headers (default\: kapi'\''s own front-proxy CA, X-Remote-* headers)]:FILE:_files' \
'*--requestheader-allowed-names=[Common names a front proxy'\''s certificate may have, comma separated; empty allows any]:NAMES:_default' \
'*--requestheader-username-headers=[Request headers naming the user (X-Remote-User is suggested)]:HEADERS:_default' \
'*--requestheader-uid-headers=[Request headers naming the user'\''s UID (X-Remote-Uid is suggested)]:HEADERS:_default' \
'*--requestheader-group-headers=[Request headers naming the user'\''s groups (X-Remote-Group is suggested)]:HEADERS:_default' \
'*--requestheader-extra-headers-prefix=[Request header prefixes of the user'\''s extra values (X-Remote-Extra- is suggested)]:PREFIXES:_default' \
'--proxy-client-cert-file=[Client certificate the aggregator presents to aggregated API servers (default\: kapi'\''s front-proxy-client)]:FILE:_files' \
'*--tls-sni-cert-key=[More serving pairs chosen by SNI\: \`cert,key\[\:name,...\]\` (names default to the certificate'\''s); repeatable]:CERT,KEY[:NAMES]:_default' \
'--watch-cache=[Serve lists and watches from a watch cache (false\: every read goes to storage)]:BOOL:(true false)' \
'--default-watch-cache-size=[Watch cache size of resources no --watch-cache-sizes entry names; 0 reads them from storage]:N:_default' \
'*--watch-cache-sizes=[Per resource, \`resource\[.group\]#size\`, comma separated; only 0 (no cache) differs from the default]:SIZES:_default' \
'*--feature-gates=[Feature gates, \`Name=bool\` comma separated (kube-apiserver v1.34'\''s; see \`kapi kube-apiserver --help\`)]:GATES:_default' \
'--proxy-client-key-file=[Key of --proxy-client-cert-file]:FILE:_files' \
'-v+[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--v=[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--logging-format=[Log lines as text (for a person) or JSON (one object per line, as kube-apiserver'\''s --logging-format=json)]:FORMAT:(text json)' \
'--enable-bootstrap-token-auth[Accept bootstrap tokens (Secrets \`kube-system/bootstrap-token-<id>\`) as bearer tokens]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(routes)
_arguments "${_arguments_options[@]}" : \
'--kubeconfig=[The kubeconfig file (default\: every file of \$KUBECONFIG, merged as kubectl merges them; else ./.kapi/admin.kubeconfig; else ~/.kube/config)]:FILE:_files' \
'--context=[The kubeconfig context to use (default\: its current-context)]:NAME:_default' \
'--server-url=[The URL of the kapi to ask, overriding the kubeconfig'\''s server (credentials still come from the kubeconfig)]:URL:_default' \
'--server=[Only routes of this server of the chain]:NAME:(aggregator kube-apiserver apiextensions-apiserver)' \
'--group=[Only routes of resources of this API group ("core" for the legacy group)]:GROUP:_default' \
'--resource=[Only routes of this resource (plural, singular, short name or kind; \`deployments.apps\` and \`pods/status\` work too)]:RESOURCE:_default' \
'*--match=[Which server and route would serve this request, or how it falls through to a 404; PATH may carry a query (\`?watch=true\`)]:METHOD:_default:METHOD:_default' \
'-o+[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"More columns\: API version, scope and subresource"
json\:""
yaml\:""))' \
'--output=[Output format]:OUTPUT:((table\:"Aligned columns"
wide\:"More columns\: API version, scope and subresource"
json\:""
yaml\:""))' \
'-v+[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--v=[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--logging-format=[Log lines as text (for a person) or JSON (one object per line, as kube-apiserver'\''s --logging-format=json)]:FORMAT:(text json)' \
'(--kubeconfig --context --server-url)--offline[Build the built-in catalog offline even when \$KUBECONFIG is set]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(trace-request)
_arguments "${_arguments_options[@]}" : \
'-f+[The manifest (YAML or JSON)\: without METHOD PATH, the object to send as --verb; with them, the request body. "-" reads standard input]:FILE:_files' \
'--filename=[The manifest (YAML or JSON)\: without METHOD PATH, the object to send as --verb; with them, the request body. "-" reads standard input]:FILE:_files' \
'(-f --filename)-p+[With METHOD PATH\: a patch to send as the body (see --type)]:PATCH:_default' \
'(-f --filename)--patch=[With METHOD PATH\: a patch to send as the body (see --type)]:PATCH:_default' \
'--type=[The patch type of --patch]:PATCH_TYPE:(json merge strategic apply)' \
'--verb=[Without METHOD PATH\: what to do with the manifest]:VERB:(create update apply get delete)' \
'--kubeconfig=[The kubeconfig file (default\: every file of \$KUBECONFIG, merged as kubectl merges them; else ./.kapi/admin.kubeconfig; else ~/.kube/config)]:FILE:_files' \
'--context=[The kubeconfig context to use (default\: its current-context)]:NAME:_default' \
'-o+[Output format]:OUTPUT:((text\:"One line per stage, with what defaulting and admission changed"
json\:"The stages as the server recorded them, and the response"))' \
'--output=[Output format]:OUTPUT:((text\:"One line per stage, with what defaulting and admission changed"
json\:"The stages as the server recorded them, and the response"))' \
'-v+[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--v=[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--logging-format=[Log lines as text (for a person) or JSON (one object per line, as kube-apiserver'\''s --logging-format=json)]:FORMAT:(text json)' \
'--commit[Really store the change; without it writes are sent with dryRun=All and run every stage but the write itself]' \
'--force-conflicts[With --verb apply\: take over fields other managers own]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'::method -- With PATH\: the HTTP method of a request given by hand:_default' \
'::path -- The path (and query) of a request given by hand, e.g. /api/v1/namespaces/default/pods:_default' \
&& ret=0
;;
(scaffold)
_arguments "${_arguments_options[@]}" : \
'-v+[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--v=[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--logging-format=[Log lines as text (for a person) or JSON (one object per line, as kube-apiserver'\''s --logging-format=json)]:FORMAT:(text json)' \
'-h[Print help]' \
'--help[Print help]' \
":: :_kapi__subcmd__scaffold_commands" \
"*::: :->scaffold" \
&& ret=0

    case $state in
    (scaffold)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:kapi-scaffold-command-$line[1]:"
        case $line[1] in
            (crd)
_arguments "${_arguments_options[@]}" : \
'--group=[The API group, a domain such as example.com]:GROUP:_default' \
'--kind=[The kind, in CamelCase (Widget)]:KIND:_default' \
'--plural=[The plural resource name (default\: the lowercased kind, pluralised)]:PLURAL:_default' \
'--version=[The version to serve and store]:VERSION:_default' \
'--scope=[Namespaced or Cluster, as the CRD'\''s \`spec.scope\`]:SCOPE:(Namespaced Cluster)' \
'-v+[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--v=[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--logging-format=[Log lines as text (for a person) or JSON (one object per line, as kube-apiserver'\''s --logging-format=json)]:FORMAT:(text json)' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_kapi__subcmd__scaffold__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:kapi-scaffold-help-command-$line[1]:"
        case $line[1] in
            (crd)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(etcd)
_arguments "${_arguments_options[@]}" : \
'-v+[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--v=[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--logging-format=[Log lines as text (for a person) or JSON (one object per line, as kube-apiserver'\''s --logging-format=json)]:FORMAT:(text json)' \
'-h[Print help]' \
'--help[Print help]' \
":: :_kapi__subcmd__etcd_commands" \
"*::: :->etcd" \
&& ret=0

    case $state in
    (etcd)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:kapi-etcd-command-$line[1]:"
        case $line[1] in
            (dump)
_arguments "${_arguments_options[@]}" : \
'(--etcd-servers)--data-dir=[The data dir of a kapi using the embedded store (reads DIR/store/kapi.redb)]:DIR:_files' \
'*--etcd-servers=[Read etcd at these endpoints (comma separated) instead of the embedded store]:URLS:_default' \
'--etcd-cafile=[CA bundle to verify etcd'\''s serving certificate]:FILE:_files' \
'--etcd-certfile=[Client certificate for etcd]:FILE:_files' \
'--etcd-keyfile=[Client key for etcd]:FILE:_files' \
'--etcd-prefix=[The key prefix kapi stores under, as given to \`kapi serve\`]:PREFIX:_default' \
'--resource=[Only this resource (plural, singular, short name or kind; \`deployments.apps\` works too)]:RESOURCE:_default' \
'--group=[Only resources of this API group ("core" for the legacy group); with --resource, names a custom resource]:GROUP:_default' \
'-n+[Only objects in this namespace]:NAMESPACE:_default' \
'--namespace=[Only objects in this namespace]:NAMESPACE:_default' \
'--name=[Only objects with this name]:NAME:_default' \
'--prefix=[Only keys starting with this (e.g. /registry/configmaps/default/)]:KEY:_default' \
'--revision=[Read at this revision instead of the latest]:N:_default' \
'--encryption-provider-config=[The EncryptionConfiguration kapi (or kube-apiserver) was given\: values encrypted at rest are decrypted with its keys. Without it they are shown as their provider and key]:FILE:_files' \
'-o+[Output format (default yaml; one key per line with --keys-only)]:FORMAT:((yaml\:""
json\:""
table\:"Aligned columns\: key, resource, namespace, name, revisions, version, size"))' \
'--output=[Output format (default yaml; one key per line with --keys-only)]:FORMAT:((yaml\:""
json\:""
table\:"Aligned columns\: key, resource, namespace, name, revisions, version, size"))' \
'-v+[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--v=[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--logging-format=[Log lines as text (for a person) or JSON (one object per line, as kube-apiserver'\''s --logging-format=json)]:FORMAT:(text json)' \
'--keys-only[Leave values out (yaml, json), or print one key per line (default output)]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_kapi__subcmd__etcd__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:kapi-etcd-help-command-$line[1]:"
        case $line[1] in
            (dump)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(apiservice)
_arguments "${_arguments_options[@]}" : \
'-v+[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--v=[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--logging-format=[Log lines as text (for a person) or JSON (one object per line, as kube-apiserver'\''s --logging-format=json)]:FORMAT:(text json)' \
'-h[Print help]' \
'--help[Print help]' \
":: :_kapi__subcmd__apiservice_commands" \
"*::: :->apiservice" \
&& ret=0

    case $state in
    (apiservice)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:kapi-apiservice-command-$line[1]:"
        case $line[1] in
            (register)
_arguments "${_arguments_options[@]}" : \
'--group=[The API group the server serves]:GROUP:_default' \
'--version=[The version of the group the server serves]:VERSION:_default' \
'(--service)--url=[Where the server listens (https\://HOST\:PORT); kapi creates the Service]:URL:_default' \
'--service=[An existing Service in front of the server]:NAMESPACE/NAME:_default' \
'--service-port=[The port of --service]:PORT:_default' \
'(--insecure-skip-tls-verify)--ca-file=[PEM CA bundle verifying the server'\''s serving certificate (spec.caBundle)]:FILE:_files' \
'--group-priority-minimum=[spec.groupPriorityMinimum (upstream recommends 18000 for *.k8s.io, 2000s for PaaSes)]:N:_default' \
'--version-priority=[spec.versionPriority]:N:_default' \
'--timeout=[How long to wait for the APIService to become Available (0\: do not wait)]:DURATION:_default' \
'-o+[Print the objects (--dry-run) or the registered APIService in this format]:OUTPUT:(yaml json)' \
'--output=[Print the objects (--dry-run) or the registered APIService in this format]:OUTPUT:(yaml json)' \
'--kubeconfig=[The kubeconfig file (default\: every file of \$KUBECONFIG, merged as kubectl merges them; else ./.kapi/admin.kubeconfig; else ~/.kube/config)]:FILE:_files' \
'--context=[The kubeconfig context to use (default\: its current-context)]:NAME:_default' \
'-v+[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--v=[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--logging-format=[Log lines as text (for a person) or JSON (one object per line, as kube-apiserver'\''s --logging-format=json)]:FORMAT:(text json)' \
'--insecure-skip-tls-verify[Do not verify the server'\''s certificate (strongly discouraged)]' \
'--dry-run[Print the objects instead of creating them]' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
'-o+[Print the APIServices in this format instead of a table]:OUTPUT:(yaml json)' \
'--output=[Print the APIServices in this format instead of a table]:OUTPUT:(yaml json)' \
'--kubeconfig=[The kubeconfig file (default\: every file of \$KUBECONFIG, merged as kubectl merges them; else ./.kapi/admin.kubeconfig; else ~/.kube/config)]:FILE:_files' \
'--context=[The kubeconfig context to use (default\: its current-context)]:NAME:_default' \
'-v+[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--v=[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--logging-format=[Log lines as text (for a person) or JSON (one object per line, as kube-apiserver'\''s --logging-format=json)]:FORMAT:(text json)' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(unregister)
_arguments "${_arguments_options[@]}" : \
'--kubeconfig=[The kubeconfig file (default\: every file of \$KUBECONFIG, merged as kubectl merges them; else ./.kapi/admin.kubeconfig; else ~/.kube/config)]:FILE:_files' \
'--context=[The kubeconfig context to use (default\: its current-context)]:NAME:_default' \
'-v+[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--v=[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--logging-format=[Log lines as text (for a person) or JSON (one object per line, as kube-apiserver'\''s --logging-format=json)]:FORMAT:(text json)' \
'-h[Print help]' \
'--help[Print help]' \
':name -- The APIService (<version>.<group>):_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_kapi__subcmd__apiservice__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:kapi-apiservice-help-command-$line[1]:"
        case $line[1] in
            (register)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(unregister)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(sample-apiserver)
_arguments "${_arguments_options[@]}" : \
'--bind-address=[The address to listen on]:IP:_default' \
'--secure-port=[The HTTPS port (0 picks a free one; the one taken is printed)]:PORT:_default' \
'--tls-cert-file=[Serving certificate (PEM); without it a CA and a certificate are made in --cert-dir]:FILE:_files' \
'--tls-private-key-file=[Key of --tls-cert-file (PEM)]:FILE:_files' \
'--cert-dir=[Where the self-made CA (wardle-ca.crt, the caBundle to register with) and serving certificate are kept and reused]:DIR:_files' \
'*--tls-san=[More DNS names for the self-made serving certificate (kapi verifies <service>.<namespace>.svc; wardle-example-com.kube-system.svc and api.wardle.svc are always included)]:NAME:_default' \
'--requestheader-client-ca-file=[The CA that signs the front proxy'\''s client certificate (kapi'\''s <data-dir>/pki/front-proxy-ca.crt)\: only its holder may name users]:FILE:_files' \
'*--requestheader-allowed-names=[Common names the front proxy may present (empty\: any the CA signed)]:NAMES:_default' \
'-v+[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--v=[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--logging-format=[Log lines as text (for a person) or JSON (one object per line, as kube-apiserver'\''s --logging-format=json)]:FORMAT:(text json)' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(completions)
_arguments "${_arguments_options[@]}" : \
'-v+[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--v=[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--logging-format=[Log lines as text (for a person) or JSON (one object per line, as kube-apiserver'\''s --logging-format=json)]:FORMAT:(text json)' \
'-h[Print help]' \
'--help[Print help]' \
':shell -- The shell to generate completions for:(bash elvish fish powershell zsh)' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_kapi__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:kapi-help-command-$line[1]:"
        case $line[1] in
            (serve)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(routes)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(trace-request)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(scaffold)
_arguments "${_arguments_options[@]}" : \
":: :_kapi__subcmd__help__subcmd__scaffold_commands" \
"*::: :->scaffold" \
&& ret=0

    case $state in
    (scaffold)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:kapi-help-scaffold-command-$line[1]:"
        case $line[1] in
            (crd)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(etcd)
_arguments "${_arguments_options[@]}" : \
":: :_kapi__subcmd__help__subcmd__etcd_commands" \
"*::: :->etcd" \
&& ret=0

    case $state in
    (etcd)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:kapi-help-etcd-command-$line[1]:"
        case $line[1] in
            (dump)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(apiservice)
_arguments "${_arguments_options[@]}" : \
":: :_kapi__subcmd__help__subcmd__apiservice_commands" \
"*::: :->apiservice" \
&& ret=0

    case $state in
    (apiservice)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:kapi-help-apiservice-command-$line[1]:"
        case $line[1] in
            (register)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(unregister)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(sample-apiserver)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(completions)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
}

(( $+functions[_kapi_commands] )) ||
_kapi_commands() {
    local commands; commands=(
'serve:Start the API server chain over HTTPS and write an admin kubeconfig' \
'routes:List the routes of every server in the chain, or find the one a request reaches' \
'trace-request:Follow one request through the server stage by stage\: authentication, authorization, decode, defaulting, admission, validation, storage' \
'scaffold:Manifests to start from\: \`kapi scaffold crd\`' \
'etcd:Look at what kapi stored\: \`kapi etcd dump\`' \
'apiservice:Register aggregated API servers with a running kapi\: \`register\`, \`list\`, \`unregister\`' \
'sample-apiserver:Run a sample aggregated API server (wardle.example.com\: Flunders and Fischers)' \
'completions:Print shell completions for bash, zsh, fish, powershell or elvish' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'kapi commands' commands "$@"
}
(( $+functions[_kapi__subcmd__apiservice_commands] )) ||
_kapi__subcmd__apiservice_commands() {
    local commands; commands=(
'register:Register an aggregated API server and wait until its APIService is Available' \
'list:List APIServices\: NAME, SERVICE, AVAILABLE, REASON, AGE' \
'unregister:Delete an APIService and the Service and Endpoints \`register\` created for it' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'kapi apiservice commands' commands "$@"
}
(( $+functions[_kapi__subcmd__apiservice__subcmd__help_commands] )) ||
_kapi__subcmd__apiservice__subcmd__help_commands() {
    local commands; commands=(
'register:Register an aggregated API server and wait until its APIService is Available' \
'list:List APIServices\: NAME, SERVICE, AVAILABLE, REASON, AGE' \
'unregister:Delete an APIService and the Service and Endpoints \`register\` created for it' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'kapi apiservice help commands' commands "$@"
}
(( $+functions[_kapi__subcmd__apiservice__subcmd__help__subcmd__help_commands] )) ||
_kapi__subcmd__apiservice__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'kapi apiservice help help commands' commands "$@"
}
(( $+functions[_kapi__subcmd__apiservice__subcmd__help__subcmd__list_commands] )) ||
_kapi__subcmd__apiservice__subcmd__help__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'kapi apiservice help list commands' commands "$@"
}
(( $+functions[_kapi__subcmd__apiservice__subcmd__help__subcmd__register_commands] )) ||
_kapi__subcmd__apiservice__subcmd__help__subcmd__register_commands() {
    local commands; commands=()
    _describe -t commands 'kapi apiservice help register commands' commands "$@"
}
(( $+functions[_kapi__subcmd__apiservice__subcmd__help__subcmd__unregister_commands] )) ||
_kapi__subcmd__apiservice__subcmd__help__subcmd__unregister_commands() {
    local commands; commands=()
    _describe -t commands 'kapi apiservice help unregister commands' commands "$@"
}
(( $+functions[_kapi__subcmd__apiservice__subcmd__list_commands] )) ||
_kapi__subcmd__apiservice__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'kapi apiservice list commands' commands "$@"
}
(( $+functions[_kapi__subcmd__apiservice__subcmd__register_commands] )) ||
_kapi__subcmd__apiservice__subcmd__register_commands() {
    local commands; commands=()
    _describe -t commands 'kapi apiservice register commands' commands "$@"
}
(( $+functions[_kapi__subcmd__apiservice__subcmd__unregister_commands] )) ||
_kapi__subcmd__apiservice__subcmd__unregister_commands() {
    local commands; commands=()
    _describe -t commands 'kapi apiservice unregister commands' commands "$@"
}
(( $+functions[_kapi__subcmd__completions_commands] )) ||
_kapi__subcmd__completions_commands() {
    local commands; commands=()
    _describe -t commands 'kapi completions commands' commands "$@"
}
(( $+functions[_kapi__subcmd__etcd_commands] )) ||
_kapi__subcmd__etcd_commands() {
    local commands; commands=(
'dump:Print the keys under a prefix with their revisions and decoded values' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'kapi etcd commands' commands "$@"
}
(( $+functions[_kapi__subcmd__etcd__subcmd__dump_commands] )) ||
_kapi__subcmd__etcd__subcmd__dump_commands() {
    local commands; commands=()
    _describe -t commands 'kapi etcd dump commands' commands "$@"
}
(( $+functions[_kapi__subcmd__etcd__subcmd__help_commands] )) ||
_kapi__subcmd__etcd__subcmd__help_commands() {
    local commands; commands=(
'dump:Print the keys under a prefix with their revisions and decoded values' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'kapi etcd help commands' commands "$@"
}
(( $+functions[_kapi__subcmd__etcd__subcmd__help__subcmd__dump_commands] )) ||
_kapi__subcmd__etcd__subcmd__help__subcmd__dump_commands() {
    local commands; commands=()
    _describe -t commands 'kapi etcd help dump commands' commands "$@"
}
(( $+functions[_kapi__subcmd__etcd__subcmd__help__subcmd__help_commands] )) ||
_kapi__subcmd__etcd__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'kapi etcd help help commands' commands "$@"
}
(( $+functions[_kapi__subcmd__help_commands] )) ||
_kapi__subcmd__help_commands() {
    local commands; commands=(
'serve:Start the API server chain over HTTPS and write an admin kubeconfig' \
'routes:List the routes of every server in the chain, or find the one a request reaches' \
'trace-request:Follow one request through the server stage by stage\: authentication, authorization, decode, defaulting, admission, validation, storage' \
'scaffold:Manifests to start from\: \`kapi scaffold crd\`' \
'etcd:Look at what kapi stored\: \`kapi etcd dump\`' \
'apiservice:Register aggregated API servers with a running kapi\: \`register\`, \`list\`, \`unregister\`' \
'sample-apiserver:Run a sample aggregated API server (wardle.example.com\: Flunders and Fischers)' \
'completions:Print shell completions for bash, zsh, fish, powershell or elvish' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'kapi help commands' commands "$@"
}
(( $+functions[_kapi__subcmd__help__subcmd__apiservice_commands] )) ||
_kapi__subcmd__help__subcmd__apiservice_commands() {
    local commands; commands=(
'register:Register an aggregated API server and wait until its APIService is Available' \
'list:List APIServices\: NAME, SERVICE, AVAILABLE, REASON, AGE' \
'unregister:Delete an APIService and the Service and Endpoints \`register\` created for it' \
    )
    _describe -t commands 'kapi help apiservice commands' commands "$@"
}
(( $+functions[_kapi__subcmd__help__subcmd__apiservice__subcmd__list_commands] )) ||
_kapi__subcmd__help__subcmd__apiservice__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'kapi help apiservice list commands' commands "$@"
}
(( $+functions[_kapi__subcmd__help__subcmd__apiservice__subcmd__register_commands] )) ||
_kapi__subcmd__help__subcmd__apiservice__subcmd__register_commands() {
    local commands; commands=()
    _describe -t commands 'kapi help apiservice register commands' commands "$@"
}
(( $+functions[_kapi__subcmd__help__subcmd__apiservice__subcmd__unregister_commands] )) ||
_kapi__subcmd__help__subcmd__apiservice__subcmd__unregister_commands() {
    local commands; commands=()
    _describe -t commands 'kapi help apiservice unregister commands' commands "$@"
}
(( $+functions[_kapi__subcmd__help__subcmd__completions_commands] )) ||
_kapi__subcmd__help__subcmd__completions_commands() {
    local commands; commands=()
    _describe -t commands 'kapi help completions commands' commands "$@"
}
(( $+functions[_kapi__subcmd__help__subcmd__etcd_commands] )) ||
_kapi__subcmd__help__subcmd__etcd_commands() {
    local commands; commands=(
'dump:Print the keys under a prefix with their revisions and decoded values' \
    )
    _describe -t commands 'kapi help etcd commands' commands "$@"
}
(( $+functions[_kapi__subcmd__help__subcmd__etcd__subcmd__dump_commands] )) ||
_kapi__subcmd__help__subcmd__etcd__subcmd__dump_commands() {
    local commands; commands=()
    _describe -t commands 'kapi help etcd dump commands' commands "$@"
}
(( $+functions[_kapi__subcmd__help__subcmd__help_commands] )) ||
_kapi__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'kapi help help commands' commands "$@"
}
(( $+functions[_kapi__subcmd__help__subcmd__routes_commands] )) ||
_kapi__subcmd__help__subcmd__routes_commands() {
    local commands; commands=()
    _describe -t commands 'kapi help routes commands' commands "$@"
}
(( $+functions[_kapi__subcmd__help__subcmd__sample-apiserver_commands] )) ||
_kapi__subcmd__help__subcmd__sample-apiserver_commands() {
    local commands; commands=()
    _describe -t commands 'kapi help sample-apiserver commands' commands "$@"
}
(( $+functions[_kapi__subcmd__help__subcmd__scaffold_commands] )) ||
_kapi__subcmd__help__subcmd__scaffold_commands() {
    local commands; commands=(
'crd:A CustomResourceDefinition with a schema, status subresource, printer columns and a CEL validation rule' \
    )
    _describe -t commands 'kapi help scaffold commands' commands "$@"
}
(( $+functions[_kapi__subcmd__help__subcmd__scaffold__subcmd__crd_commands] )) ||
_kapi__subcmd__help__subcmd__scaffold__subcmd__crd_commands() {
    local commands; commands=()
    _describe -t commands 'kapi help scaffold crd commands' commands "$@"
}
(( $+functions[_kapi__subcmd__help__subcmd__serve_commands] )) ||
_kapi__subcmd__help__subcmd__serve_commands() {
    local commands; commands=()
    _describe -t commands 'kapi help serve commands' commands "$@"
}
(( $+functions[_kapi__subcmd__help__subcmd__trace-request_commands] )) ||
_kapi__subcmd__help__subcmd__trace-request_commands() {
    local commands; commands=()
    _describe -t commands 'kapi help trace-request commands' commands "$@"
}
(( $+functions[_kapi__subcmd__routes_commands] )) ||
_kapi__subcmd__routes_commands() {
    local commands; commands=()
    _describe -t commands 'kapi routes commands' commands "$@"
}
(( $+functions[_kapi__subcmd__sample-apiserver_commands] )) ||
_kapi__subcmd__sample-apiserver_commands() {
    local commands; commands=()
    _describe -t commands 'kapi sample-apiserver commands' commands "$@"
}
(( $+functions[_kapi__subcmd__scaffold_commands] )) ||
_kapi__subcmd__scaffold_commands() {
    local commands; commands=(
'crd:A CustomResourceDefinition with a schema, status subresource, printer columns and a CEL validation rule' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'kapi scaffold commands' commands "$@"
}
(( $+functions[_kapi__subcmd__scaffold__subcmd__crd_commands] )) ||
_kapi__subcmd__scaffold__subcmd__crd_commands() {
    local commands; commands=()
    _describe -t commands 'kapi scaffold crd commands' commands "$@"
}
(( $+functions[_kapi__subcmd__scaffold__subcmd__help_commands] )) ||
_kapi__subcmd__scaffold__subcmd__help_commands() {
    local commands; commands=(
'crd:A CustomResourceDefinition with a schema, status subresource, printer columns and a CEL validation rule' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'kapi scaffold help commands' commands "$@"
}
(( $+functions[_kapi__subcmd__scaffold__subcmd__help__subcmd__crd_commands] )) ||
_kapi__subcmd__scaffold__subcmd__help__subcmd__crd_commands() {
    local commands; commands=()
    _describe -t commands 'kapi scaffold help crd commands' commands "$@"
}
(( $+functions[_kapi__subcmd__scaffold__subcmd__help__subcmd__help_commands] )) ||
_kapi__subcmd__scaffold__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'kapi scaffold help help commands' commands "$@"
}
(( $+functions[_kapi__subcmd__serve_commands] )) ||
_kapi__subcmd__serve_commands() {
    local commands; commands=()
    _describe -t commands 'kapi serve commands' commands "$@"
}
(( $+functions[_kapi__subcmd__trace-request_commands] )) ||
_kapi__subcmd__trace-request_commands() {
    local commands; commands=()
    _describe -t commands 'kapi trace-request commands' commands "$@"
}

if [ "$funcstack[1]" = "_kapi" ]; then
    _kapi "$@"
else
    compdef _kapi kapi
fi
