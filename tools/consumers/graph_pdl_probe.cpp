// graph_pdl_probe: why do kernels replayed from 03_fused_mlp's CUDA graph start a few ns before the previous kernel on
// the same stream ends? Two candidates: programmatic dependent launch (PDL: a kernel launched with
// cudaLaunchAttributeProgrammaticStreamSerialization may start once the kernel before it triggered, before that kernel
// has finished) or the granularity of CUPTI's clocks. A graph keeps PDL as an edge of type
// cudaGraphDependencyTypeProgrammatic (or as the attribute on the kernel node), so we capture the chapter's forward
// and print, for every node, its kernel, its PDL attributes and the type of the edge that leads into it.
//
// Build: ninja -C build graph_pdl_probe (not built by default). Run: build/tools/consumers/graph_pdl_probe
// The overlaps themselves are measured on a trace: tools/consumers/gpu_overlap_probe.sh runs both.
#include <cuda.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "chapter/chapter.h"
#include "gpu/check.h"
#include "gpu/device.h"
#include "gpu/ops.h"
#include "kernels.cuh"

using namespace ladder;

namespace {

std::string kernel_name(cudaGraphNode_t node) {
  CUDA_KERNEL_NODE_PARAMS p{};
  if (cuGraphKernelNodeGetParams(reinterpret_cast<CUgraphNode>(node), &p) != CUDA_SUCCESS) return "?";
  const char* name = nullptr;
  if (p.func && cuFuncGetName(&name, p.func) == CUDA_SUCCESS && name) return name;
  if (p.kern && cuKernelGetName(&name, p.kern) == CUDA_SUCCESS && name) return name;
  return "?";
}

}  // namespace

int main() {
  return run_main([] {
    start_on_gpu();
    const int64_t batch = 64, seq = 128, dim = 768, hidden = 3072;  // the chapter's defaults
    const DType dt = DType::BF16;
    const Tensor x = to_device(random_values(batch * seq * dim, 1, dt), {batch, seq, dim}, dt);
    const Tensor gate = to_device(random_values(hidden * dim, 2, dt, -0.03f, 0.03f), {hidden, dim}, dt);
    const Tensor up = to_device(random_values(hidden * dim, 3, dt, -0.03f, 0.03f), {hidden, dim}, dt);
    const Tensor down = to_device(random_values(dim * hidden, 4, dt, -0.02f, 0.02f), {dim, hidden}, dt);
    const Tensor g = empty({batch, seq, hidden}, dt), u = empty({batch, seq, hidden}, dt);
    const Tensor m = empty({batch, seq, hidden}, dt), y = empty({batch, seq, dim}, dt);
    auto forward = [&] {  // exactly 03_fused_mlp's forward
      ops::linear(x, gate, nullptr, g);
      ops::linear(x, up, nullptr, u);
      ch03::gelu_mul(g, u, m, "vec");
      ops::linear(m, down, nullptr, y);
    };
    forward();  // cuBLASLt picks and loads its kernels outside the capture
    CUDA_CHECK(cudaDeviceSynchronize());

    // Capture as gpu::CudaGraph does (a stream of its own), but keep the graph to walk it.
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const cudaStream_t previous = current_stream();
    set_current_stream(s);
    cudaGraph_t graph;
    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    forward();
    CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    set_current_stream(previous);

    size_t n = 0;
    CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &n));
    std::vector<cudaGraphNode_t> nodes(n);
    CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &n));
    size_t ne = 0;
    CUDA_CHECK(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &ne));
    std::vector<cudaGraphNode_t> from(ne), to(ne);
    std::vector<cudaGraphEdgeData> data(ne);
    CUDA_CHECK(cudaGraphGetEdges(graph, from.data(), to.data(), data.data(), &ne));
    std::map<cudaGraphNode_t, int> index;
    for (size_t i = 0; i < n; ++i) index[nodes[i]] = static_cast<int>(i);

    fmt::print("graph: {} nodes, {} edges\n", n, ne);
    for (size_t i = 0; i < n; ++i) {
      cudaGraphNodeType type;
      CUDA_CHECK(cudaGraphNodeGetType(nodes[i], &type));
      if (type != cudaGraphNodeTypeKernel) {
        fmt::print("node {}: type {} (not a kernel)\n", i, static_cast<int>(type));
        continue;
      }
      cudaLaunchAttributeValue ser{}, ev{};
      const cudaError_t e1 =
          cudaGraphKernelNodeGetAttribute(nodes[i], cudaLaunchAttributeProgrammaticStreamSerialization, &ser);
      const cudaError_t e2 = cudaGraphKernelNodeGetAttribute(nodes[i], cudaLaunchAttributeProgrammaticEvent, &ev);
      fmt::print("node {}: kernel {}\n  attribute ProgrammaticStreamSerialization = {}, ProgrammaticEvent = {}\n", i,
                 kernel_name(nodes[i]),
                 e1 == cudaSuccess ? std::to_string(ser.programmaticStreamSerializationAllowed)
                                   : std::string(cudaGetErrorString(e1)),
                 e2 == cudaSuccess ? fmt::format("event {} trigger {}", fmt::ptr(ev.programmaticEvent.event),
                                                 ev.programmaticEvent.triggerAtBlockStart)
                                   : std::string(cudaGetErrorString(e2)));
      cudaGetLastError();
      for (size_t k = 0; k < ne; ++k) {
        if (to[k] != nodes[i]) continue;
        const bool pdl = data[k].type == cudaGraphDependencyTypeProgrammatic;
        fmt::print("  edge from node {}: type {} ({}), from_port {}\n", index[from[k]], static_cast<int>(data[k].type),
                   pdl ? "cudaGraphDependencyTypeProgrammatic: may start before node " +
                             std::to_string(index[from[k]]) + " ends"
                       : "default: starts after node " + std::to_string(index[from[k]]) + " ends",
                   static_cast<int>(data[k].from_port));
      }
    }
    CUDA_CHECK(cudaGraphDestroy(graph));
    CUDA_CHECK(cudaStreamDestroy(s));
    return 0;
  });
}
