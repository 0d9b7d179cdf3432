½

e1
PodpoddefaultStarted"okJNormal@