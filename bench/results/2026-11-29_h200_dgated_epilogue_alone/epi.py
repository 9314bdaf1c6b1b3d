# Patch 06_train_mlp/dgated_gemm.cu in place, for the epilogue diagnostics. Arguments, any of:
#   nostore  the arithmetic runs, nothing is stored (a store no value can reach keeps it alive)
#   noarith  dg = g, du = u, h = g ^ u: the loads and stores without the GELU arithmetic
#   warps11  eleven epilogue warps (640 threads)
import sys
p = '06_train_mlp/dgated_gemm.cu'
s = open(p).read()
def rep(a, b):
    global s
    assert s.count(a) == 1, a
    s = s.replace(a, b)
for what in sys.argv[1:]:
    if what == 'nostore':
        rep('      if (static_cast<int>(row) < rows_in) {', '      if ((g.x ^ u.y ^ h.z) == 0x12345679u) {')
    elif what == 'noarith':
        rep('      backward_vector(ld_shared_v4(dh_panel + in_row), g, u, h);',
            '      h = ld_shared_v4(dh_panel + in_row); h.x ^= g.x; h.y ^= u.y;')
    elif what == 'warps11':
        rep('constexpr int kThreads = 4 * kWarpgroup;', 'constexpr int kThreads = 5 * kWarpgroup;')
        rep('constexpr int kEpilogueThreads = 2 * kWarpgroup - 32;', 'constexpr int kEpilogueThreads = 3 * kWarpgroup - 32;')
    else:
        sys.exit('unknown ' + what)
open(p, 'w').write(s)
