// The host side of the Hopper kernels (launch.h): the GPU's attributes, the persistent grid and the tensor maps.
//
// Tensor maps are made with cuTensorMapEncodeTiled, which lives in the driver library (libcuda). We fetch it through
// the runtime's cudaGetDriverEntryPointByVersion, so nothing here links libcuda directly: a program links only the
// CUDA runtime, like every chapter.
#include "hopper/launch.h"

#include <cuda.h>          // CUtensorMap and its enums (types only: we do not link libcuda)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled_v12000, the driver function's type
#include <cuda_bf16.h>     // __nv_bfloat16, the element every map describes

#include <climits>
#include <map>
#include <mutex>
#include <string>

#include "base/error.h"
#include "gpu/stream.h"

namespace hopper {

namespace {

// Every failure here is a ladder::Error naming the op that asked: the chapter prints its one line and exits 1.
[[noreturn]] void fail(const char* op, const std::string& what) { throw ladder::Error(std::string(op) + ": " + what); }

// cuTensorMapEncodeTiled, fetched once from the driver through the runtime (no libcuda link needed).
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder(const char* op) {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [op] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t e =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found);
    if (e != cudaSuccess || found != cudaDriverEntryPointSuccess || p == nullptr)
      fail(op, "the CUDA driver has no cuTensorMapEncodeTiled (needs a CUDA 12+ driver)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

}  // namespace

const DeviceInfo& current_device() {
  static std::mutex mutex;
  static std::map<int, DeviceInfo> known;  // by device id; a map's elements stay where they are
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));  // the runtime answers from its own state (and the trace leaves it out)
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(device);
  if (it == known.end()) {
    DeviceInfo d;
    CUDA_CHECK(cudaDeviceGetAttribute(&d.major, cudaDevAttrComputeCapabilityMajor, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&d.minor, cudaDevAttrComputeCapabilityMinor, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&d.sms, cudaDevAttrMultiProcessorCount, device));
    it = known.emplace(device, d).first;
  }
  return it->second;
}

int persistent_grid(int64_t m_tiles, int64_t n_tiles, int64_t k_tiles, const char* op) {
  // Every SM, or fewer where the caller leaves the others to another stream's kernels (gemm_sm_limit, gpu/stream.h).
  const int64_t all = current_device().sms, limit = ladder::gemm_sm_limit();
  const int64_t num_tiles = m_tiles * n_tiles, sms = limit > 0 && limit < all ? limit : all;
  const int64_t grid = num_tiles < sms ? num_tiles : sms;  // persistent: at most one block per SM
  // Ring positions (tiles per block x k-tiles) and tile indices are 32-bit in the kernels.
  if (num_tiles + grid > INT_MAX || ceil_div(num_tiles, grid) * k_tiles > INT_MAX)
    fail(op, "too many tiles for 32-bit tile indices (" + std::to_string(num_tiles) + " tiles of " +
                 std::to_string(k_tiles) + " k-tiles)");
  return static_cast<int>(grid);
}

CUtensorMap tile_map(const void* base, int64_t rows, int64_t cols, int64_t row_stride, int box_rows, const char* name,
                     const char* op) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};    // innermost first
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(row_stride) * sizeof(__nv_bfloat16)};  // bytes, row to row
  const cuuint32_t box[2] = {64, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r =
      tensor_map_encoder(op)(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base), dims, strides, box,
                             element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    fail(op, std::string("cuTensorMapEncodeTiled failed for ") + name + " (CUresult " +
                 std::to_string(static_cast<int>(r)) + ")");
  return map;
}

}  // namespace hopper
