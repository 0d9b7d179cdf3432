Ê

v1alpha1.wardle.example.com7wardle.example.comv1alpha18è@
api
wardle» 