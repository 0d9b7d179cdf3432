


podZ

appweb\S
cbusyboxsh-csleep 12	ê?
httpB!

cpu
500m

memory
64Mi:
A1Never