

hD
apps/v1

Deploymentweb""
Resource"
cpu
Utilization 2