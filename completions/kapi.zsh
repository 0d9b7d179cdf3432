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
'--etcd-cafile=[CA bundle to verify etcd'\''s serving certificate]:FILE:_files' \
'--etcd-certfile=[Client certificate for etcd]:FILE:_files' \
'--etcd-keyfile=[Client key for etcd]:FILE:_files' \
'--etcd-compaction-interval=[How often old revisions are compacted (Go duration; 0 disables)]:DURATION:_default' \
'--service-cluster-ip-range=[CIDR from which Service cluster IPs are allocated]:CIDR:_default' \
'--service-node-port-range=[Port range reserved for NodePort Services]:RANGE:_default' \
'--anonymous-auth=[Let unauthenticated requests through as system\:anonymous (authorization still limits them)]::BOOL:(true false)' \
'--token-auth-file=[Static bearer tokens, CSV lines\: token,user,uid,"group1,group2"]:FILE:_files' \
'--max-requests-inflight=[Most non-mutating requests served at once; more get 429]:N:_default' \
'--max-mutating-requests-inflight=[Most mutating requests served at once; more get 429]:N:_default' \
'--request-timeout=[Deadline for non-long-running requests (Go duration)]:DURATION:_default' \
'--kubeconfig-out=[Where to write the admin kubeconfig (default\: <data-dir>/admin.kubeconfig)]:FILE:_files' \
'-v+[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--v=[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'-h[Print help]' \
'--help[Print help]' \
&& ret=0
;;
(completions)
_arguments "${_arguments_options[@]}" : \
'-v+[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
'--v=[Log verbosity, as kube-apiserver'\''s -v\: 0 info, 2 debug, 4 trace]:LEVEL:_default' \
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
'completions:Print shell completions for bash, zsh, fish, powershell or elvish' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'kapi commands' commands "$@"
}
(( $+functions[_kapi__subcmd__completions_commands] )) ||
_kapi__subcmd__completions_commands() {
    local commands; commands=()
    _describe -t commands 'kapi completions commands' commands "$@"
}
(( $+functions[_kapi__subcmd__help_commands] )) ||
_kapi__subcmd__help_commands() {
    local commands; commands=(
'serve:Start the API server chain over HTTPS and write an admin kubeconfig' \
'completions:Print shell completions for bash, zsh, fish, powershell or elvish' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'kapi help commands' commands "$@"
}
(( $+functions[_kapi__subcmd__help__subcmd__completions_commands] )) ||
_kapi__subcmd__help__subcmd__completions_commands() {
    local commands; commands=()
    _describe -t commands 'kapi help completions commands' commands "$@"
}
(( $+functions[_kapi__subcmd__help__subcmd__help_commands] )) ||
_kapi__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'kapi help help commands' commands "$@"
}
(( $+functions[_kapi__subcmd__help__subcmd__serve_commands] )) ||
_kapi__subcmd__help__subcmd__serve_commands() {
    local commands; commands=()
    _describe -t commands 'kapi help serve commands' commands "$@"
}
(( $+functions[_kapi__subcmd__serve_commands] )) ||
_kapi__subcmd__serve_commands() {
    local commands; commands=()
    _describe -t commands 'kapi serve commands' commands "$@"
}

if [ "$funcstack[1]" = "_kapi" ]; then
    _kapi "$@"
else
    compdef _kapi kapi
fi
