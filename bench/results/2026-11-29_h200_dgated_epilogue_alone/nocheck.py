# Patch bench/train_mlp.cpp in place: time a kernel whose bits are wrong (the variants that leave work out).
p = 'bench/train_mlp.cpp'
s = open(p).read()
a = 'if (b.max_ulps > kWrongUlps)'
assert s.count(a) == 1
open(p, 'w').write(s.replace(a, 'if (false && b.max_ulps > kWrongUlps)'))
