# Patch 06_train_mlp/dgated_gemm.cu in place: the math warpgroups wait for each k-tile's wgmma before the next and
# hand its stage back at once (one stage held instead of two, so one more in flight). Works on the tree before and on
# the clustered one (its release_stage).
p = '06_train_mlp/dgated_gemm.cu'
s = open(p).read()
a = s.index('    hopper::issue_k_tiles<')
b = s.index('\n', s.index('    hopper::finish_k_tiles<', a)) + 1
cluster = 'kCluster' in s
release = ('hopper::release_stage<kCluster>(&empty[s], thread);' if cluster
           else 'if (thread == 0) hopper::mbar_arrive(&empty[s]);')
s = s[:a] + '''    for (int kt = 0; kt < k_tiles; ++kt) {  // each stage handed back as soon as its wgmma are done
      const uint32_t pos = first + kt, s = pos % kStages;
      hopper::mbar_wait(&full[s], (pos / kStages) & 1);
      const uint32_t a = hopper::smem_u32(smem + s * L::kStageBytes);
      hopper::wgmma_fence();
      hopper::mma_stage<1, kBN, hopper::Major::MN>(acc, a + c * kRows * hopper::kRowBytes, a + L::kABytes, kt > 0);
      hopper::wgmma_commit_group();
      hopper::wgmma_wait_group<0>();
      ''' + release + '''
    }
    hopper::pin_accumulators(acc);
''' + s[b:]
open(p, 'w').write(s)
