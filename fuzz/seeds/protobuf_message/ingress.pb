

ingH"nginx+
example.com


/Prefix"	
svcP
example.comtls