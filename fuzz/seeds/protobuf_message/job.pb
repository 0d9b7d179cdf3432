P

piF82><Never3
piperlperl-Mbignum=bpi-wleprint bpi(20)