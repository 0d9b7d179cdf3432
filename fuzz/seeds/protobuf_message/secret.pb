G

sOpaque
passwordsecret"
useradmin