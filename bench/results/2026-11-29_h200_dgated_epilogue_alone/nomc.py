# Patch 06_train_mlp/dgated_gemm.cu in place: still launched in clusters of two, but each block loads W_down's whole
# tile itself (no multicast) and hands its stages back to itself only.
p = '06_train_mlp/dgated_gemm.cu'
s = open(p).read()
def rep(a, b):
    global s
    assert s.count(a) == 1, a
    s = s.replace(a, b)
rep('init_ring<kStages>(full, empty, 2 * kCluster)', 'init_ring<kStages>(full, empty, 2)')
rep('''          hopper::tma_load_2d_multicast(b + rank * hopper::kMnPanelBytes, &map_w, &full[s], nb * kBN + 64 * rank,
                                        kt * kBK, (1 << kCluster) - 1, keep);''',
'''          for (int p = 0; p < 2; ++p)
            hopper::tma_load_2d(b + p * hopper::kMnPanelBytes, &map_w, &full[s], nb * kBN + 64 * p, kt * kBK, keep);''')
rep('hopper::Major::MN, kCluster>(', 'hopper::Major::MN, 1>(')
rep('finish_k_tiles<kStages, 1, kBN / 2, kCluster>(', 'finish_k_tiles<kStages, 1, kBN / 2, 1>(')
open(p, 'w').write(s)
