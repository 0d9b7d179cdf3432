,
;
fastb3
+storageclass.kubernetes.io/is-default-classtrueexample.com/fast
typessd