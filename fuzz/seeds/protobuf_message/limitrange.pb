×

lr7
5
	Container"
cpu
200m*
cpu
100m

cpu
1