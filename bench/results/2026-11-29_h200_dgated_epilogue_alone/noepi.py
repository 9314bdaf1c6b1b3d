# Patch 06_train_mlp/dgated_gemm.cu in place: the epilogue warps read nothing and write nothing (the main loop alone).
import sys
p = '06_train_mlp/dgated_gemm.cu'
s = open(p).read()
a = s.index('      const uint32_t in_row = row * 128')
b = s.index('    __syncwarp();\n    if (e % 32 == 0) hopper::mbar_arrive(&gu_empty[q', a)
body_end = s.rindex('    }\n', a, b)
s = s[:a] + '      (void)slot;\n' + s[body_end:]
open(p, 'w').write(s)
