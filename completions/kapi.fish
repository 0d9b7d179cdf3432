# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kapi_global_optspecs
    string join \n v/v= logging-format= h/help V/version
end

function __fish_kapi_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_kapi_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_kapi_using_subcommand
    set -l cmd (__fish_kapi_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c kapi -n "__fish_kapi_needs_command" -s v -l v -d 'Log verbosity, as kube-apiserver\'s -v: 0 info, 2 debug, 4 trace' -r
complete -c kapi -n "__fish_kapi_needs_command" -l logging-format -d 'Log lines as text (for a person) or JSON (one object per line, as kube-apiserver\'s --logging-format=json)' -r -f -a "text\t''
json\t''"
complete -c kapi -n "__fish_kapi_needs_command" -s h -l help -d 'Print help'
complete -c kapi -n "__fish_kapi_needs_command" -s V -l version -d 'Print version'
complete -c kapi -n "__fish_kapi_needs_command" -f -a "serve" -d 'Start the API server chain over HTTPS and write an admin kubeconfig'
complete -c kapi -n "__fish_kapi_needs_command" -f -a "routes" -d 'List the routes of every server in the chain, or find the one a request reaches'
complete -c kapi -n "__fish_kapi_needs_command" -f -a "trace-request" -d 'Follow one request through the server stage by stage: authentication, authorization, decode, defaulting, admission, validation, storage'
complete -c kapi -n "__fish_kapi_needs_command" -f -a "scaffold" -d 'Manifests to start from: `kapi scaffold crd`'
complete -c kapi -n "__fish_kapi_needs_command" -f -a "etcd" -d 'Look at what kapi stored: `kapi etcd dump`'
complete -c kapi -n "__fish_kapi_needs_command" -f -a "apiservice" -d 'Register aggregated API servers with a running kapi: `register`, `list`, `unregister`'
complete -c kapi -n "__fish_kapi_needs_command" -f -a "sample-apiserver" -d 'Run a sample aggregated API server (wardle.example.com: Flunders and Fischers)'
complete -c kapi -n "__fish_kapi_needs_command" -f -a "completions" -d 'Print shell completions for bash, zsh, fish, powershell or elvish'
complete -c kapi -n "__fish_kapi_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l secure-port -d 'Port to serve HTTPS on; 0 picks a free port and prints it' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l bind-address -d 'Address to listen on' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l advertise-address -d 'Address advertised to clients and in the `kubernetes` Service (default: the bind address, or 127.0.0.1 when that is unspecified)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l data-dir -d 'Where kapi keeps its store, certificates and kubeconfig' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l cert-dir -d 'Where generated certificates live (default: <data-dir>/pki)' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l tls-cert-file -d 'Serving certificate to use instead of a generated one (needs --tls-private-key-file)' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l tls-private-key-file -d 'Key of --tls-cert-file' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l client-ca-file -d 'Extra CA bundle whose client certificates are accepted (the generated CA is always trusted)' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l etcd-servers -d 'etcd endpoints, comma separated; empty means the embedded store' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l etcd-prefix -d 'Key prefix for everything kapi stores' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l storage-media-type -d 'How built-in objects are written to storage: application/json, or application/vnd.kubernetes.protobuf as kube-apiserver writes them. Both are always read' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l etcd-cafile -d 'CA bundle to verify etcd\'s serving certificate' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l etcd-certfile -d 'Client certificate for etcd' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l etcd-keyfile -d 'Client key for etcd' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l etcd-servers-overrides -d 'Resources in etcd clusters of their own, comma separated: group/resource#servers, servers semicolon separated (e.g. /events#http://127.0.0.1:2381)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l etcd-compaction-interval -d 'How often old revisions are compacted (Go duration; 0 disables)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l service-cluster-ip-range -d 'CIDR from which Service cluster IPs are allocated' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l service-node-port-range -d 'Port range reserved for NodePort Services' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l anonymous-auth -d 'Let unauthenticated requests through as system:anonymous (authorization still limits them)' -r -f -a "true\t''
false\t''"
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l token-auth-file -d 'Static bearer tokens, CSV lines: token,user,uid,"group1,group2"' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l enable-admission-plugins -d 'Admission plugins to enable besides the default ones, comma separated' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l disable-admission-plugins -d 'Default admission plugins to disable, comma separated' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l allow-privileged -d 'Let containers run privileged (securityContext.privileged)' -r -f -a "true\t''
false\t''"
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l authorization-mode -d 'Authorization modes, in order, comma separated: AlwaysAllow, AlwaysDeny, RBAC' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l max-requests-inflight -d 'With API Priority and Fairness: the server\'s seats are this plus --max-mutating-requests-inflight. Without: the most non-mutating requests served at once; more get 429' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l max-mutating-requests-inflight -d 'Most mutating requests served at once without API Priority and Fairness; with it, part of the server\'s seats' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l enable-priority-and-fairness -d 'API Priority and Fairness (flowcontrol.apiserver.k8s.io): classify, queue fairly and shed with 429. Off: max-in-flight limits, with system:masters exempt' -r -f -a "true\t''
false\t''"
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l http2-max-streams-per-connection -d 'Streams a client may open at once on one HTTP/2 connection; 0 means 100, the default of kube-apiserver (and of Go\'s clients). kapi\'s default is higher, for tools that multiplex many watches' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l min-request-timeout -d 'Seconds a watch lasts at least when the client names no timeoutSeconds (it ends between once and twice this, at random)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l request-timeout -d 'Deadline for non-long-running requests (Go duration)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l shutdown-delay-duration -d 'After SIGTERM, keep serving this long with /readyz failing before draining, so load balancers stop sending (Go duration)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l kubeconfig-out -d 'Where to write the admin kubeconfig (default: <data-dir>/admin.kubeconfig)' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l admission-control-config-file -d 'AdmissionConfiguration (apiserver.config.k8s.io/v1) holding the plugins\' own configuration (EventRateLimit\'s, for one)' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l audit-policy-file -d 'audit.k8s.io/v1 Policy deciding what is audited (needs --audit-log-path or --audit-webhook-config-file)' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l audit-log-path -d 'Where audit events go, as JSON lines ("-" for stdout)' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l audit-webhook-config-file -d 'Kubeconfig of a webhook that receives audit events as EventLists' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l audit-webhook-mode -d 'How audit events reach the webhook: batch (blocking modes are not implemented)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l audit-webhook-batch-max-size -d 'Events per webhook batch' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l audit-webhook-batch-max-wait -d 'Longest a webhook batch waits for more events (Go duration)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l audit-webhook-initial-backoff -d 'Wait before the first retry of a failed webhook batch (Go duration)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l audit-webhook-version -d 'API version of the webhook\'s EventLists: audit.k8s.io/v1' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l controllers -d 'Built-in controllers to run: `*` for all, `name` to add, `-name` to remove (kube-controller-manager\'s flag)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l service-account-issuer -d 'Issuer (`iss`) of ServiceAccount tokens' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l service-account-key-file -d 'PEM files with public keys (or certificates, or private keys) that verify ServiceAccount tokens; repeatable (default: the signing key\'s)' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l service-account-signing-key-file -d 'PEM private key (RSA or ECDSA P-256) that signs ServiceAccount tokens (default: <cert-dir>/sa.key, generated)' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l api-audiences -d 'Audiences the API accepts in tokens, comma separated (default: the issuer)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l profiling -d 'Serve /debug/flags/v, where an administrator changes the log verbosity of the running server (PUT the level), as kube-apiserver does with profiling on' -r -f -a "true\t''
false\t''"
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l encryption-provider-config -d 'EncryptionConfiguration (apiserver.config.k8s.io/v1): which resources are encrypted at rest, with which providers (aescbc, aesgcm, secretbox, identity) and keys' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l runtime-config -d 'Built-in APIs to switch on or off, as kube-apiserver\'s flag: api/all=false, apps/v1=false, batch/v1/cronjobs=false, v1=true (repeatable, comma separated)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l authentication-token-webhook-config-file -d 'kubeconfig of a token webhook: bearer tokens no other authenticator knows are sent there as TokenReviews' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l authentication-token-webhook-version -d 'The authentication.k8s.io version of the TokenReviews sent to the webhook: v1 or v1beta1' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l authentication-token-webhook-cache-ttl -d 'How long the webhook\'s answers are kept (Go duration)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l authorization-webhook-config-file -d 'kubeconfig of an authorization webhook (with --authorization-mode ...,Webhook): requests are sent there as SubjectAccessReviews' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l authorization-webhook-version -d 'The authorization.k8s.io version of the SubjectAccessReviews sent to the webhook: v1 or v1beta1' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l authorization-webhook-cache-authorized-ttl -d 'How long the webhook\'s allowing answers are kept (Go duration)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l authorization-webhook-cache-unauthorized-ttl -d 'How long the webhook\'s other answers are kept (Go duration)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l tls-min-version -d 'Lowest TLS version served: VersionTLS12 (default) or VersionTLS13' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l tls-cipher-suites -d 'TLS 1.2 cipher suites allowed, by Go\'s names, comma separated (TLS 1.3\'s are not configurable)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l requestheader-client-ca-file -d 'CA of authenticating front proxies, which name their user in request headers (default: kapi\'s own front-proxy CA, X-Remote-* headers)' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l requestheader-allowed-names -d 'Common names a front proxy\'s certificate may have, comma separated; empty allows any' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l requestheader-username-headers -d 'Request headers naming the user (X-Remote-User is suggested)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l requestheader-uid-headers -d 'Request headers naming the user\'s UID (X-Remote-Uid is suggested)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l requestheader-group-headers -d 'Request headers naming the user\'s groups (X-Remote-Group is suggested)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l requestheader-extra-headers-prefix -d 'Request header prefixes of the user\'s extra values (X-Remote-Extra- is suggested)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l proxy-client-cert-file -d 'Client certificate the aggregator presents to aggregated API servers (default: kapi\'s front-proxy-client)' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l tls-sni-cert-key -d 'More serving pairs chosen by SNI: `cert,key[:name,...]` (names default to the certificate\'s); repeatable' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l watch-cache -d 'Serve lists and watches from a watch cache (false: every read goes to storage)' -r -f -a "true\t''
false\t''"
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l default-watch-cache-size -d 'Watch cache size of resources no --watch-cache-sizes entry names; 0 reads them from storage' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l watch-cache-sizes -d 'Per resource, `resource[.group]#size`, comma separated; only 0 (no cache) differs from the default' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l feature-gates -d 'Feature gates, `Name=bool` comma separated (kube-apiserver v1.34\'s; see `kapi kube-apiserver --help`)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l proxy-client-key-file -d 'Key of --proxy-client-cert-file' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -s v -l v -d 'Log verbosity, as kube-apiserver\'s -v: 0 info, 2 debug, 4 trace' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l logging-format -d 'Log lines as text (for a person) or JSON (one object per line, as kube-apiserver\'s --logging-format=json)' -r -f -a "text\t''
json\t''"
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l enable-bootstrap-token-auth -d 'Accept bootstrap tokens (Secrets `kube-system/bootstrap-token-<id>`) as bearer tokens'
complete -c kapi -n "__fish_kapi_using_subcommand serve" -s h -l help -d 'Print help'
complete -c kapi -n "__fish_kapi_using_subcommand routes" -l kubeconfig -d 'The kubeconfig file (default: every file of $KUBECONFIG, merged as kubectl merges them; else ./.kapi/admin.kubeconfig; else ~/.kube/config)' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand routes" -l context -d 'The kubeconfig context to use (default: its current-context)' -r
complete -c kapi -n "__fish_kapi_using_subcommand routes" -l server-url -d 'The URL of the kapi to ask, overriding the kubeconfig\'s server (credentials still come from the kubeconfig)' -r
complete -c kapi -n "__fish_kapi_using_subcommand routes" -l server -d 'Only routes of this server of the chain' -r -f -a "aggregator\t''
kube-apiserver\t''
apiextensions-apiserver\t''"
complete -c kapi -n "__fish_kapi_using_subcommand routes" -l group -d 'Only routes of resources of this API group ("core" for the legacy group)' -r
complete -c kapi -n "__fish_kapi_using_subcommand routes" -l resource -d 'Only routes of this resource (plural, singular, short name or kind; `deployments.apps` and `pods/status` work too)' -r
complete -c kapi -n "__fish_kapi_using_subcommand routes" -l match -d 'Which server and route would serve this request, or how it falls through to a 404; PATH may carry a query (`?watch=true`)' -r
complete -c kapi -n "__fish_kapi_using_subcommand routes" -s o -l output -d 'Output format' -r -f -a "table\t'Aligned columns'
wide\t'More columns: API version, scope and subresource'
json\t''
yaml\t''"
complete -c kapi -n "__fish_kapi_using_subcommand routes" -s v -l v -d 'Log verbosity, as kube-apiserver\'s -v: 0 info, 2 debug, 4 trace' -r
complete -c kapi -n "__fish_kapi_using_subcommand routes" -l logging-format -d 'Log lines as text (for a person) or JSON (one object per line, as kube-apiserver\'s --logging-format=json)' -r -f -a "text\t''
json\t''"
complete -c kapi -n "__fish_kapi_using_subcommand routes" -l offline -d 'Build the built-in catalog offline even when $KUBECONFIG is set'
complete -c kapi -n "__fish_kapi_using_subcommand routes" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kapi -n "__fish_kapi_using_subcommand trace-request" -s f -l filename -d 'The manifest (YAML or JSON): without METHOD PATH, the object to send as --verb; with them, the request body. "-" reads standard input' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand trace-request" -s p -l patch -d 'With METHOD PATH: a patch to send as the body (see --type)' -r
complete -c kapi -n "__fish_kapi_using_subcommand trace-request" -l type -d 'The patch type of --patch' -r -f -a "json\t''
merge\t''
strategic\t''
apply\t''"
complete -c kapi -n "__fish_kapi_using_subcommand trace-request" -l verb -d 'Without METHOD PATH: what to do with the manifest' -r -f -a "create\t''
update\t''
apply\t''
get\t''
delete\t''"
complete -c kapi -n "__fish_kapi_using_subcommand trace-request" -l kubeconfig -d 'The kubeconfig file (default: every file of $KUBECONFIG, merged as kubectl merges them; else ./.kapi/admin.kubeconfig; else ~/.kube/config)' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand trace-request" -l context -d 'The kubeconfig context to use (default: its current-context)' -r
complete -c kapi -n "__fish_kapi_using_subcommand trace-request" -s o -l output -d 'Output format' -r -f -a "text\t'One line per stage, with what defaulting and admission changed'
json\t'The stages as the server recorded them, and the response'"
complete -c kapi -n "__fish_kapi_using_subcommand trace-request" -s v -l v -d 'Log verbosity, as kube-apiserver\'s -v: 0 info, 2 debug, 4 trace' -r
complete -c kapi -n "__fish_kapi_using_subcommand trace-request" -l logging-format -d 'Log lines as text (for a person) or JSON (one object per line, as kube-apiserver\'s --logging-format=json)' -r -f -a "text\t''
json\t''"
complete -c kapi -n "__fish_kapi_using_subcommand trace-request" -l commit -d 'Really store the change; without it writes are sent with dryRun=All and run every stage but the write itself'
complete -c kapi -n "__fish_kapi_using_subcommand trace-request" -l force-conflicts -d 'With --verb apply: take over fields other managers own'
complete -c kapi -n "__fish_kapi_using_subcommand trace-request" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kapi -n "__fish_kapi_using_subcommand scaffold; and not __fish_seen_subcommand_from crd help" -s v -l v -d 'Log verbosity, as kube-apiserver\'s -v: 0 info, 2 debug, 4 trace' -r
complete -c kapi -n "__fish_kapi_using_subcommand scaffold; and not __fish_seen_subcommand_from crd help" -l logging-format -d 'Log lines as text (for a person) or JSON (one object per line, as kube-apiserver\'s --logging-format=json)' -r -f -a "text\t''
json\t''"
complete -c kapi -n "__fish_kapi_using_subcommand scaffold; and not __fish_seen_subcommand_from crd help" -s h -l help -d 'Print help'
complete -c kapi -n "__fish_kapi_using_subcommand scaffold; and not __fish_seen_subcommand_from crd help" -f -a "crd" -d 'A CustomResourceDefinition with a schema, status subresource, printer columns and a CEL validation rule'
complete -c kapi -n "__fish_kapi_using_subcommand scaffold; and not __fish_seen_subcommand_from crd help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kapi -n "__fish_kapi_using_subcommand scaffold; and __fish_seen_subcommand_from crd" -l group -d 'The API group, a domain such as example.com' -r
complete -c kapi -n "__fish_kapi_using_subcommand scaffold; and __fish_seen_subcommand_from crd" -l kind -d 'The kind, in CamelCase (Widget)' -r
complete -c kapi -n "__fish_kapi_using_subcommand scaffold; and __fish_seen_subcommand_from crd" -l plural -d 'The plural resource name (default: the lowercased kind, pluralised)' -r
complete -c kapi -n "__fish_kapi_using_subcommand scaffold; and __fish_seen_subcommand_from crd" -l version -d 'The version to serve and store' -r
complete -c kapi -n "__fish_kapi_using_subcommand scaffold; and __fish_seen_subcommand_from crd" -l scope -d 'Namespaced or Cluster, as the CRD\'s `spec.scope`' -r -f -a "Namespaced\t''
Cluster\t''"
complete -c kapi -n "__fish_kapi_using_subcommand scaffold; and __fish_seen_subcommand_from crd" -s v -l v -d 'Log verbosity, as kube-apiserver\'s -v: 0 info, 2 debug, 4 trace' -r
complete -c kapi -n "__fish_kapi_using_subcommand scaffold; and __fish_seen_subcommand_from crd" -l logging-format -d 'Log lines as text (for a person) or JSON (one object per line, as kube-apiserver\'s --logging-format=json)' -r -f -a "text\t''
json\t''"
complete -c kapi -n "__fish_kapi_using_subcommand scaffold; and __fish_seen_subcommand_from crd" -s h -l help -d 'Print help'
complete -c kapi -n "__fish_kapi_using_subcommand scaffold; and __fish_seen_subcommand_from help" -f -a "crd" -d 'A CustomResourceDefinition with a schema, status subresource, printer columns and a CEL validation rule'
complete -c kapi -n "__fish_kapi_using_subcommand scaffold; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and not __fish_seen_subcommand_from dump help" -s v -l v -d 'Log verbosity, as kube-apiserver\'s -v: 0 info, 2 debug, 4 trace' -r
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and not __fish_seen_subcommand_from dump help" -l logging-format -d 'Log lines as text (for a person) or JSON (one object per line, as kube-apiserver\'s --logging-format=json)' -r -f -a "text\t''
json\t''"
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and not __fish_seen_subcommand_from dump help" -s h -l help -d 'Print help'
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and not __fish_seen_subcommand_from dump help" -f -a "dump" -d 'Print the keys under a prefix with their revisions and decoded values'
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and not __fish_seen_subcommand_from dump help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and __fish_seen_subcommand_from dump" -l data-dir -d 'The data dir of a kapi using the embedded store (reads DIR/store/kapi.redb)' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and __fish_seen_subcommand_from dump" -l etcd-servers -d 'Read etcd at these endpoints (comma separated) instead of the embedded store' -r
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and __fish_seen_subcommand_from dump" -l etcd-cafile -d 'CA bundle to verify etcd\'s serving certificate' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and __fish_seen_subcommand_from dump" -l etcd-certfile -d 'Client certificate for etcd' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and __fish_seen_subcommand_from dump" -l etcd-keyfile -d 'Client key for etcd' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and __fish_seen_subcommand_from dump" -l etcd-prefix -d 'The key prefix kapi stores under, as given to `kapi serve`' -r
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and __fish_seen_subcommand_from dump" -l resource -d 'Only this resource (plural, singular, short name or kind; `deployments.apps` works too)' -r
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and __fish_seen_subcommand_from dump" -l group -d 'Only resources of this API group ("core" for the legacy group); with --resource, names a custom resource' -r
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and __fish_seen_subcommand_from dump" -s n -l namespace -d 'Only objects in this namespace' -r
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and __fish_seen_subcommand_from dump" -l name -d 'Only objects with this name' -r
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and __fish_seen_subcommand_from dump" -l prefix -d 'Only keys starting with this (e.g. /registry/configmaps/default/)' -r
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and __fish_seen_subcommand_from dump" -l revision -d 'Read at this revision instead of the latest' -r
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and __fish_seen_subcommand_from dump" -l encryption-provider-config -d 'The EncryptionConfiguration kapi (or kube-apiserver) was given: values encrypted at rest are decrypted with its keys. Without it they are shown as their provider and key' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and __fish_seen_subcommand_from dump" -s o -l output -d 'Output format (default yaml; one key per line with --keys-only)' -r -f -a "yaml\t''
json\t''
table\t'Aligned columns: key, resource, namespace, name, revisions, version, size'"
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and __fish_seen_subcommand_from dump" -s v -l v -d 'Log verbosity, as kube-apiserver\'s -v: 0 info, 2 debug, 4 trace' -r
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and __fish_seen_subcommand_from dump" -l logging-format -d 'Log lines as text (for a person) or JSON (one object per line, as kube-apiserver\'s --logging-format=json)' -r -f -a "text\t''
json\t''"
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and __fish_seen_subcommand_from dump" -l keys-only -d 'Leave values out (yaml, json), or print one key per line (default output)'
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and __fish_seen_subcommand_from dump" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and __fish_seen_subcommand_from help" -f -a "dump" -d 'Print the keys under a prefix with their revisions and decoded values'
complete -c kapi -n "__fish_kapi_using_subcommand etcd; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and not __fish_seen_subcommand_from register list unregister help" -s v -l v -d 'Log verbosity, as kube-apiserver\'s -v: 0 info, 2 debug, 4 trace' -r
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and not __fish_seen_subcommand_from register list unregister help" -l logging-format -d 'Log lines as text (for a person) or JSON (one object per line, as kube-apiserver\'s --logging-format=json)' -r -f -a "text\t''
json\t''"
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and not __fish_seen_subcommand_from register list unregister help" -s h -l help -d 'Print help'
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and not __fish_seen_subcommand_from register list unregister help" -f -a "register" -d 'Register an aggregated API server and wait until its APIService is Available'
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and not __fish_seen_subcommand_from register list unregister help" -f -a "list" -d 'List APIServices: NAME, SERVICE, AVAILABLE, REASON, AGE'
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and not __fish_seen_subcommand_from register list unregister help" -f -a "unregister" -d 'Delete an APIService and the Service and Endpoints `register` created for it'
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and not __fish_seen_subcommand_from register list unregister help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from register" -l group -d 'The API group the server serves' -r
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from register" -l version -d 'The version of the group the server serves' -r
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from register" -l url -d 'Where the server listens (https://HOST:PORT); kapi creates the Service' -r
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from register" -l service -d 'An existing Service in front of the server' -r
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from register" -l service-port -d 'The port of --service' -r
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from register" -l ca-file -d 'PEM CA bundle verifying the server\'s serving certificate (spec.caBundle)' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from register" -l group-priority-minimum -d 'spec.groupPriorityMinimum (upstream recommends 18000 for *.k8s.io, 2000s for PaaSes)' -r
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from register" -l version-priority -d 'spec.versionPriority' -r
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from register" -l timeout -d 'How long to wait for the APIService to become Available (0: do not wait)' -r
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from register" -s o -l output -d 'Print the objects (--dry-run) or the registered APIService in this format' -r -f -a "yaml\t''
json\t''"
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from register" -l kubeconfig -d 'The kubeconfig file (default: every file of $KUBECONFIG, merged as kubectl merges them; else ./.kapi/admin.kubeconfig; else ~/.kube/config)' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from register" -l context -d 'The kubeconfig context to use (default: its current-context)' -r
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from register" -s v -l v -d 'Log verbosity, as kube-apiserver\'s -v: 0 info, 2 debug, 4 trace' -r
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from register" -l logging-format -d 'Log lines as text (for a person) or JSON (one object per line, as kube-apiserver\'s --logging-format=json)' -r -f -a "text\t''
json\t''"
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from register" -l insecure-skip-tls-verify -d 'Do not verify the server\'s certificate (strongly discouraged)'
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from register" -l dry-run -d 'Print the objects instead of creating them'
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from register" -s h -l help -d 'Print help'
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from list" -s o -l output -d 'Print the APIServices in this format instead of a table' -r -f -a "yaml\t''
json\t''"
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from list" -l kubeconfig -d 'The kubeconfig file (default: every file of $KUBECONFIG, merged as kubectl merges them; else ./.kapi/admin.kubeconfig; else ~/.kube/config)' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from list" -l context -d 'The kubeconfig context to use (default: its current-context)' -r
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from list" -s v -l v -d 'Log verbosity, as kube-apiserver\'s -v: 0 info, 2 debug, 4 trace' -r
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from list" -l logging-format -d 'Log lines as text (for a person) or JSON (one object per line, as kube-apiserver\'s --logging-format=json)' -r -f -a "text\t''
json\t''"
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from unregister" -l kubeconfig -d 'The kubeconfig file (default: every file of $KUBECONFIG, merged as kubectl merges them; else ./.kapi/admin.kubeconfig; else ~/.kube/config)' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from unregister" -l context -d 'The kubeconfig context to use (default: its current-context)' -r
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from unregister" -s v -l v -d 'Log verbosity, as kube-apiserver\'s -v: 0 info, 2 debug, 4 trace' -r
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from unregister" -l logging-format -d 'Log lines as text (for a person) or JSON (one object per line, as kube-apiserver\'s --logging-format=json)' -r -f -a "text\t''
json\t''"
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from unregister" -s h -l help -d 'Print help'
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from help" -f -a "register" -d 'Register an aggregated API server and wait until its APIService is Available'
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from help" -f -a "list" -d 'List APIServices: NAME, SERVICE, AVAILABLE, REASON, AGE'
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from help" -f -a "unregister" -d 'Delete an APIService and the Service and Endpoints `register` created for it'
complete -c kapi -n "__fish_kapi_using_subcommand apiservice; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kapi -n "__fish_kapi_using_subcommand sample-apiserver" -l bind-address -d 'The address to listen on' -r
complete -c kapi -n "__fish_kapi_using_subcommand sample-apiserver" -l secure-port -d 'The HTTPS port (0 picks a free one; the one taken is printed)' -r
complete -c kapi -n "__fish_kapi_using_subcommand sample-apiserver" -l tls-cert-file -d 'Serving certificate (PEM); without it a CA and a certificate are made in --cert-dir' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand sample-apiserver" -l tls-private-key-file -d 'Key of --tls-cert-file (PEM)' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand sample-apiserver" -l cert-dir -d 'Where the self-made CA (wardle-ca.crt, the caBundle to register with) and serving certificate are kept and reused' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand sample-apiserver" -l tls-san -d 'More DNS names for the self-made serving certificate (kapi verifies <service>.<namespace>.svc; wardle-example-com.kube-system.svc and api.wardle.svc are always included)' -r
complete -c kapi -n "__fish_kapi_using_subcommand sample-apiserver" -l requestheader-client-ca-file -d 'The CA that signs the front proxy\'s client certificate (kapi\'s <data-dir>/pki/front-proxy-ca.crt): only its holder may name users' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand sample-apiserver" -l requestheader-allowed-names -d 'Common names the front proxy may present (empty: any the CA signed)' -r
complete -c kapi -n "__fish_kapi_using_subcommand sample-apiserver" -s v -l v -d 'Log verbosity, as kube-apiserver\'s -v: 0 info, 2 debug, 4 trace' -r
complete -c kapi -n "__fish_kapi_using_subcommand sample-apiserver" -l logging-format -d 'Log lines as text (for a person) or JSON (one object per line, as kube-apiserver\'s --logging-format=json)' -r -f -a "text\t''
json\t''"
complete -c kapi -n "__fish_kapi_using_subcommand sample-apiserver" -s h -l help -d 'Print help'
complete -c kapi -n "__fish_kapi_using_subcommand completions" -s v -l v -d 'Log verbosity, as kube-apiserver\'s -v: 0 info, 2 debug, 4 trace' -r
complete -c kapi -n "__fish_kapi_using_subcommand completions" -l logging-format -d 'Log lines as text (for a person) or JSON (one object per line, as kube-apiserver\'s --logging-format=json)' -r -f -a "text\t''
json\t''"
complete -c kapi -n "__fish_kapi_using_subcommand completions" -s h -l help -d 'Print help'
complete -c kapi -n "__fish_kapi_using_subcommand help; and not __fish_seen_subcommand_from serve routes trace-request scaffold etcd apiservice sample-apiserver completions help" -f -a "serve" -d 'Start the API server chain over HTTPS and write an admin kubeconfig'
complete -c kapi -n "__fish_kapi_using_subcommand help; and not __fish_seen_subcommand_from serve routes trace-request scaffold etcd apiservice sample-apiserver completions help" -f -a "routes" -d 'List the routes of every server in the chain, or find the one a request reaches'
complete -c kapi -n "__fish_kapi_using_subcommand help; and not __fish_seen_subcommand_from serve routes trace-request scaffold etcd apiservice sample-apiserver completions help" -f -a "trace-request" -d 'Follow one request through the server stage by stage: authentication, authorization, decode, defaulting, admission, validation, storage'
complete -c kapi -n "__fish_kapi_using_subcommand help; and not __fish_seen_subcommand_from serve routes trace-request scaffold etcd apiservice sample-apiserver completions help" -f -a "scaffold" -d 'Manifests to start from: `kapi scaffold crd`'
complete -c kapi -n "__fish_kapi_using_subcommand help; and not __fish_seen_subcommand_from serve routes trace-request scaffold etcd apiservice sample-apiserver completions help" -f -a "etcd" -d 'Look at what kapi stored: `kapi etcd dump`'
complete -c kapi -n "__fish_kapi_using_subcommand help; and not __fish_seen_subcommand_from serve routes trace-request scaffold etcd apiservice sample-apiserver completions help" -f -a "apiservice" -d 'Register aggregated API servers with a running kapi: `register`, `list`, `unregister`'
complete -c kapi -n "__fish_kapi_using_subcommand help; and not __fish_seen_subcommand_from serve routes trace-request scaffold etcd apiservice sample-apiserver completions help" -f -a "sample-apiserver" -d 'Run a sample aggregated API server (wardle.example.com: Flunders and Fischers)'
complete -c kapi -n "__fish_kapi_using_subcommand help; and not __fish_seen_subcommand_from serve routes trace-request scaffold etcd apiservice sample-apiserver completions help" -f -a "completions" -d 'Print shell completions for bash, zsh, fish, powershell or elvish'
complete -c kapi -n "__fish_kapi_using_subcommand help; and not __fish_seen_subcommand_from serve routes trace-request scaffold etcd apiservice sample-apiserver completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kapi -n "__fish_kapi_using_subcommand help; and __fish_seen_subcommand_from scaffold" -f -a "crd" -d 'A CustomResourceDefinition with a schema, status subresource, printer columns and a CEL validation rule'
complete -c kapi -n "__fish_kapi_using_subcommand help; and __fish_seen_subcommand_from etcd" -f -a "dump" -d 'Print the keys under a prefix with their revisions and decoded values'
complete -c kapi -n "__fish_kapi_using_subcommand help; and __fish_seen_subcommand_from apiservice" -f -a "register" -d 'Register an aggregated API server and wait until its APIService is Available'
complete -c kapi -n "__fish_kapi_using_subcommand help; and __fish_seen_subcommand_from apiservice" -f -a "list" -d 'List APIServices: NAME, SERVICE, AVAILABLE, REASON, AGE'
complete -c kapi -n "__fish_kapi_using_subcommand help; and __fish_seen_subcommand_from apiservice" -f -a "unregister" -d 'Delete an APIService and the Service and Endpoints `register` created for it'
