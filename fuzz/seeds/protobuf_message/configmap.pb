™

cmdefaultZ

appweb
a1
b2