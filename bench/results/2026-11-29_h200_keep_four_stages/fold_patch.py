# Patch 06_train_mlp/geglu_gemm_keep.cu in place: h's GELU with its constants folded (keep_exp.cu's gelu_folded).
p = '06_train_mlp/geglu_gemm_keep.cu'
s = open(p).read()
a = '__device__ __forceinline__ uint32_t gelu_times_up(uint32_t g, uint32_t u) {'
assert s.count(a) == 1
fold = '''constexpr float kK0 = static_cast<float>(0.7978845608028654 * -2.8853900817779268);
constexpr float kK1 = static_cast<float>(0.044715 * 0.7978845608028654 * -2.8853900817779268);
__device__ __forceinline__ float gelu_folded(float x) {
  const float arg = __fmul_rn(x, __fmaf_rn(kK1, __fmul_rn(x, x), kK0));
  return __fmul_rn(x, ladder::rcp_ftz(__fadd_rn(1.0f, ladder::ex2_ftz(arg))));
}
'''
s = s.replace(a, fold + a)
b = 'ladder::gelu_tanh_f32_ftz(bf16x2_lo(g)), ladder::gelu_tanh_f32_ftz(bf16x2_hi(g))'
assert s.count(b) == 1
s = s.replace(b, 'gelu_folded(bf16x2_lo(g)), gelu_folded(bf16x2_hi(g))')
open(p, 'w').write(s)
