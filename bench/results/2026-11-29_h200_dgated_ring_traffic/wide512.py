# Patch 06_train_mlp/dgated_gemm_wide.cu in place: 512 threads (seven epilogue warps, as dgated_gemm.cu has), the
# epilogue and producer warps giving registers to the math warpgroups by setmaxnreg (48 and 208 a thread), two vectors
# of g and u a thread in flight. Compiled only (ptxas -v), to see whether ptxas allows it.
p = '06_train_mlp/dgated_gemm_wide.cu'
s = open(p).read()
def rep(a, b):
    global s
    assert s.count(a) == 1, a
    s = s.replace(a, b)
rep('constexpr int kThreads = 3 * kWarpgroup;', 'constexpr int kThreads = 4 * kWarpgroup;')
rep('constexpr int kEpilogueThreads = kWarpgroup - 32;', 'constexpr int kEpilogueThreads = 2 * kWarpgroup - 32;')
rep('constexpr int kBatch = 6;', 'constexpr int kBatch = 2;')
rep('''  if (threadIdx.x >= 2 * kWarpgroup) {
    if (threadIdx.x >= 2 * kWarpgroup + kEpilogueThreads) {''', '''  if (threadIdx.x >= 2 * kWarpgroup) {
    hopper::warpgroup_release_registers<48>();
    if (threadIdx.x >= 2 * kWarpgroup + kEpilogueThreads) {''')
rep('''  const int c = threadIdx.x / kWarpgroup, thread = threadIdx.x % kWarpgroup;
  float acc[1][kBN / 2];''', '''  hopper::warpgroup_claim_registers<208>();
  const int c = threadIdx.x / kWarpgroup, thread = threadIdx.x % kWarpgroup;
  float acc[1][kBN / 2];''')
open(p, 'w').write(s)
