ã
:
team-aZ0
"pod-security.kubernetes.io/enforce
restricted