;

qT

pods
10

requests.cpu
2

limits.memory
4Gi

count/configmaps
5