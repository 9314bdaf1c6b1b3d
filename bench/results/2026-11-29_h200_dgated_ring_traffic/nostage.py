# Patch 06_train_mlp/dgated_gemm.cu in place: the math warpgroups do not stage dh (with noepi: the main loop without
# its tile's tail).
p = '06_train_mlp/dgated_gemm.cu'
s = open(p).read()
a = s.index('#pragma unroll\n    for (int j = 0; j < kPairs / 2; j += 2) {')
b = s.index('    hopper::named_barrier_sync(1 + c, kWarpgroup);', a)
s = s[:a] + s[b:]
open(p, 'w').write(s)
