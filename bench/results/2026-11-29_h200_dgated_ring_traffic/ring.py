# Patch 06_train_mlp/dgated_gemm.cu (the tree before) in place: the producer brings only dy (`ring.py dy`), only
# W_down (`ring.py w`), dy and one of W_down's two panels (`ring.py dyw1`: the traffic a 128 x 256 tile's ring has for
# the same output) or nothing (`ring.py none`: it only marks each stage full) into the ring; with nomain, the epilogue
# runs beside that share of the ring's traffic.
import sys
p = '06_train_mlp/dgated_gemm.cu'
s = open(p).read()
def rep(a, b):
    global s
    assert s.count(a) == 1, a
    s = s.replace(a, b)
dy = '          hopper::tma_load_2d(a, &map_dy, &full[s], kt * kBK, mb * kBM, keep);                        // dy rows\n'
w = '''          for (int p = 0; p < kBN / 64; ++p)  // W_down rows kt * 64 .., 64 columns a panel
            hopper::tma_load_2d(b + p * hopper::kMnPanelBytes, &map_w, &full[s], nb * kBN + 64 * p, kt * kBK, keep);
'''
if sys.argv[1] == 'none':
    rep('mbar_arrive_expect_tx(&full[s], L::kStageBytes)', 'mbar_arrive(&full[s])')
    rep(dy, '          (void)a; (void)mb;\n')
    rep(w, '          (void)b; (void)nb;\n')
elif sys.argv[1] == 'dyw1':
    rep('mbar_arrive_expect_tx(&full[s], L::kStageBytes)', 'mbar_arrive_expect_tx(&full[s], L::kABytes + hopper::kMnPanelBytes)')
    rep('for (int p = 0; p < kBN / 64; ++p)  // W_down', 'for (int p = 0; p < 1; ++p)  // W_down')
elif sys.argv[1] == 'dy':
    rep('mbar_arrive_expect_tx(&full[s], L::kStageBytes)', 'mbar_arrive_expect_tx(&full[s], L::kABytes)')
    rep(w, '          (void)b; (void)nb;\n')
else:
    rep('mbar_arrive_expect_tx(&full[s], L::kStageBytes)', 'mbar_arrive_expect_tx(&full[s], L::kStageBytes - L::kABytes)')
    rep(dy, '          (void)mb;\n')
open(p, 'w').write(s)
