o

rb0
rbac.authorization.k8s.ioClusterRolereader(
Useralicerbac.authorization.k8s.io"
ServiceAccountdefault"default