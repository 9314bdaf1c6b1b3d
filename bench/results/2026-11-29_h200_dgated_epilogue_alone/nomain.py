# Patch 06_train_mlp/dgated_gemm.cu in place: the math warpgroups take each stage and hand it back with no wgmma (the
# epilogue alone, on made-up dh).
p = '06_train_mlp/dgated_gemm.cu'
s = open(p).read()
if '    hopper::issue_k_tiles<' in s:
    a = s.index('    hopper::issue_k_tiles<')
    b = s.index('    if (i >= 1) hopper::mbar_wait(', a)
else:
    a = s.index('    for (int kt = 0; kt < k_tiles; ++kt) {  // each stage handed back')
    b = s.index('\n', s.index('    hopper::pin_accumulators(acc);', a)) + 1
s = s[:a] + '''    for (int kt = 0; kt < k_tiles; ++kt) {
      const uint32_t pos = first + kt;
      hopper::mbar_wait(&full[pos % kStages], (pos / kStages) & 1);
      if (thread == 0) hopper::mbar_arrive(&empty[pos % kStages]);
    }
#pragma unroll
    for (int q = 0; q < kBN / 2; ++q) acc[0][q] = float(q + i);
''' + s[b:]
open(p, 'w').write(s)
