P

np,"NodePortäSingleStack
ª"	https(ÎÌ