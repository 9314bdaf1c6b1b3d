# Patch 06_train_mlp/dgated_gemm.cu in place: the math warpgroups take each stage and hand it back with no wgmma (the
# epilogue alone, on made-up dh). Works on the tree before and on the clustered one (its release_stage).
# `nomain.py sync`: the warpgroup's threads meet (a named barrier) before its stage is handed back. Without wgmma,
# nothing else keeps one thread from handing a stage back while others of its warpgroup have not yet seen it full; if
# the ring then refills it at once (ring.py none), they wait for the wrong phase, forever.
import sys
p = '06_train_mlp/dgated_gemm.cu'
s = open(p).read()
a = s.index('    hopper::issue_k_tiles<')
b = s.index('    if (i >= 1) hopper::mbar_wait(', a)
sync = 'hopper::named_barrier_sync(1 + c, kWarpgroup);\n      ' if sys.argv[1:] == ['sync'] else ''
release = ('hopper::release_stage<kCluster>(&empty[pos % kStages], thread);' if 'kCluster' in s
           else 'if (thread == 0) hopper::mbar_arrive(&empty[pos % kStages]);')
s = s[:a] + '''    for (int kt = 0; kt < k_tiles; ++kt) {
      const uint32_t pos = first + kt;
      hopper::mbar_wait(&full[pos % kStages], (pos / kStages) & 1);
      ''' + sync + release + '''
    }
#pragma unroll
    for (int q = 0; q < kBN / 2; ++q) acc[0][q] = float(q + i);
''' + s[b:]
open(p, 'w').write(s)
