_

pdb
50%


appweb