# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kapi_global_optspecs
    string join \n v/v= h/help V/version
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
complete -c kapi -n "__fish_kapi_needs_command" -s h -l help -d 'Print help'
complete -c kapi -n "__fish_kapi_needs_command" -s V -l version -d 'Print version'
complete -c kapi -n "__fish_kapi_needs_command" -f -a "serve" -d 'Start the API server chain over HTTPS and write an admin kubeconfig'
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
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l etcd-cafile -d 'CA bundle to verify etcd\'s serving certificate' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l etcd-certfile -d 'Client certificate for etcd' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l etcd-keyfile -d 'Client key for etcd' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l etcd-compaction-interval -d 'How often old revisions are compacted (Go duration; 0 disables)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l service-cluster-ip-range -d 'CIDR from which Service cluster IPs are allocated' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l service-node-port-range -d 'Port range reserved for NodePort Services' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l anonymous-auth -d 'Let unauthenticated requests through as system:anonymous (authorization still limits them)' -r -f -a "true\t''
false\t''"
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l token-auth-file -d 'Static bearer tokens, CSV lines: token,user,uid,"group1,group2"' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l max-requests-inflight -d 'Most non-mutating requests served at once; more get 429' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l max-mutating-requests-inflight -d 'Most mutating requests served at once; more get 429' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l request-timeout -d 'Deadline for non-long-running requests (Go duration)' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -l kubeconfig-out -d 'Where to write the admin kubeconfig (default: <data-dir>/admin.kubeconfig)' -r -F
complete -c kapi -n "__fish_kapi_using_subcommand serve" -s v -l v -d 'Log verbosity, as kube-apiserver\'s -v: 0 info, 2 debug, 4 trace' -r
complete -c kapi -n "__fish_kapi_using_subcommand serve" -s h -l help -d 'Print help'
complete -c kapi -n "__fish_kapi_using_subcommand completions" -s v -l v -d 'Log verbosity, as kube-apiserver\'s -v: 0 info, 2 debug, 4 trace' -r
complete -c kapi -n "__fish_kapi_using_subcommand completions" -s h -l help -d 'Print help'
complete -c kapi -n "__fish_kapi_using_subcommand help; and not __fish_seen_subcommand_from serve completions help" -f -a "serve" -d 'Start the API server chain over HTTPS and write an admin kubeconfig'
complete -c kapi -n "__fish_kapi_using_subcommand help; and not __fish_seen_subcommand_from serve completions help" -f -a "completions" -d 'Print shell completions for bash, zsh, fish, powershell or elvish'
complete -c kapi -n "__fish_kapi_using_subcommand help; and not __fish_seen_subcommand_from serve completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
