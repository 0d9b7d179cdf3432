è
"
n1Z
kubernetes.io/hostnamen1#
10.244.0.0/24*
kv
NoSchedule,


cpu
4

memory
8Gi

pods
110