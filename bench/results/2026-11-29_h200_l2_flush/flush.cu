// How much does a memset flush (dirty L2 lines) cost the timed run after it, against a flush that only reads?
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#define CK(x) do { cudaError_t e = (x); if (e) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
__global__ void read_all(const int4* p, size_t n, int* sink) {
  int4 acc = {0, 0, 0, 0};
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    int4 v = __ldcs(p + i); acc.x ^= v.x; acc.y ^= v.y; acc.z ^= v.z; acc.w ^= v.w;
  }
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x7fffffff) *sink = 1;
}
__global__ void read_only(const int4* p, size_t n, int* sink) {
  int4 acc = {0, 0, 0, 0};
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    int4 v = p[i]; acc.x ^= v.x; acc.y ^= v.y; acc.z ^= v.z; acc.w ^= v.w;
  }
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x7fffffff) *sink = 1;
}
__global__ void write_only(int4* p, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) p[i] = make_int4(i, 0, 0, 0);
}
int main() {
  int l2 = 0, sms = 0; CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0)); CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  size_t fl = 2 * size_t(l2); void *flush, *a, *b; int* sink;
  const size_t big = 270u << 20;
  CK(cudaMalloc(&flush, fl)); CK(cudaMalloc(&a, big)); CK(cudaMalloc(&b, big)); CK(cudaMalloc(&sink, 4));
  CK(cudaMemset(flush, 1, fl)); CK(cudaMemset(a, 2, big)); CK(cudaMemset(b, 3, big));
  printf("L2 %.1f MiB, flush %.1f MiB\n", l2 / 1048576.0, fl / 1048576.0);
  cudaEvent_t s, e; cudaEventCreate(&s); cudaEventCreate(&e);
  const char* fnames[] = {"memset", "read", "memset+read", "none"};
  for (size_t bytes : {size_t(100) << 20, size_t(134) << 20, size_t(269) << 20}) {
    for (int op = 0; op < 3; ++op) {
      for (int f = 0; f < 4; ++f) {
        std::vector<float> t;
        for (int r = 0; r < 60; ++r) {
          if (f == 0 || f == 2) cudaMemsetAsync(flush, 0, fl);
          if (f == 1 || f == 2) read_all<<<sms * 4, 512>>>((const int4*)flush, fl / 16, sink);
          cudaEventRecord(s);
          if (op == 0) cudaMemcpyAsync(b, a, bytes / 2, cudaMemcpyDeviceToDevice);  // bytes moved: read + write
          if (op == 1) read_only<<<sms * 4, 512>>>((const int4*)a, bytes / 16, sink);
          if (op == 2) write_only<<<sms * 4, 512>>>((int4*)b, bytes / 16);
          cudaEventRecord(e); cudaEventSynchronize(e);
          float ms; cudaEventElapsedTime(&ms, s, e); if (r >= 5) t.push_back(ms * 1e3f);
        }
        std::sort(t.begin(), t.end());
        const char* on[] = {"copy", "read", "write"};
        printf("%-5s %6.1f MB  flush %-12s median %8.1f us  %7.0f GB/s\n", on[op], bytes / 1e6, fnames[f], t[t.size() / 2], bytes / 1e3 / t[t.size() / 2]);
      }
    }
  }
  CK(cudaGetLastError());
  return 0;
}
