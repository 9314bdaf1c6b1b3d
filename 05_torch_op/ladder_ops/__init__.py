"""The ladder's kernels as PyTorch ops, and a drop-in GeGLU MLP built on them.

    import ladder_ops                                   # loads the op library: torch.ops.ladder.* now exist
    m = torch.ops.ladder.geglu_gemm(x, w_gate, w_up)    # gelu_tanh(x @ w_gate.T) * (x @ w_up.T), one kernel
    y = torch.ops.ladder.gelu_mul(g, u)                 # gelu_tanh(g) * u, one kernel
    mlp = ladder_ops.LadderGEGLUMLP(config)             # where the blog builds LigerGEGLUMLP(config)
    import ladder_ops as kernels_layers                 # ...or, in the blog's script, in place of its get_kernel line

The ops take bf16, contiguous CUDA tensors and give new ones; they are forward-only (no autograd formula).
The library is found at $LADDER_TORCH_LIB, beside this file (pip install), or in the repository's build/.
"""
import os
from pathlib import Path

import torch
import torch.nn as nn

__all__ = ["LadderGEGLUMLP", "LigerGEGLUMLP", "fused_gemm_runs", "library_path"]


def library_path():
    """The built op library: $LADDER_TORCH_LIB, else beside this package, else the repository's build folder."""
    if os.environ.get("LADDER_TORCH_LIB"):
        return Path(os.environ["LADDER_TORCH_LIB"])
    here = Path(__file__).resolve().parent
    in_build = here.parent.parent / "build/chapters/05_torch_op/libladder_torch_ops.so"
    for path in (here / "libladder_torch_ops.so", in_build):
        if path.exists():
            return path
    raise ImportError("ladder_ops: libladder_torch_ops.so not found: build it (05_torch_op/README.md) or set "
                      "LADDER_TORCH_LIB to its path")


# Loading the library runs its TORCH_LIBRARY blocks: the schemas and the CUDA kernels join the dispatcher.
torch.ops.load_library(str(library_path()))


# The fakes: what torch.compile (and torch.library.opcheck) run instead of the kernels while tracing. They see tensors
# with shapes, dtypes and devices but no data, and must return what the real op would: a new contiguous tensor of the
# right shape. Without them Dynamo cannot trace a call and breaks the graph there (fullgraph=True makes that an error).
@torch.library.register_fake("ladder::gelu_mul")
def _gelu_mul_fake(g, u):
    torch._check(g.shape == u.shape, lambda: f"ladder::gelu_mul: g and u must have the same shape, got {g.shape} "
                                             f"and {u.shape}")
    return g.new_empty(g.shape)


@torch.library.register_fake("ladder::geglu_gemm")
def _geglu_gemm_fake(x, w_gate, w_up, *, variant=""):
    torch._check(w_gate.dim() == 2 and w_gate.shape[1] == x.shape[-1] and w_up.shape == w_gate.shape,
                 lambda: f"ladder::geglu_gemm: w_gate and w_up must both be [hidden, dim] with dim = x.size(-1) = "
                         f"{x.shape[-1]}, got {list(w_gate.shape)} and {list(w_up.shape)}")
    return x.new_empty((*x.shape[:-1], w_gate.shape[0]))


_fused_gemm_runs = {}  # device index -> bool


@torch.compiler.assume_constant_result  # a fact about the GPU, not data: torch.compile calls it while tracing and
def fused_gemm_runs(device_index: int) -> bool:  # keeps the answer (no graph break, no guard)
    """Whether chapter 04's default geglu_gemm variant runs on this GPU (else the MLP uses nn.Linear + gelu_mul)."""
    if device_index not in _fused_gemm_runs:
        major, minor = torch.cuda.get_device_capability(device_index)
        _fused_gemm_runs[device_index] = torch.ops.ladder.geglu_gemm_cannot_run("", major, minor) == ""
    return _fused_gemm_runs[device_index]


class LadderGEGLUMLP(nn.Module):
    """Liger's LigerGEGLUMLP, with the ladder's kernels: same constructor, attributes and state_dict keys.

    config: anything with hidden_size, intermediate_size and (optionally) hidden_act, as a Hugging Face model config.
    Its forward, for bf16 CUDA input, is down_proj(gelu_tanh(gate_proj(x)) * up_proj(x)) with the part before down_proj
    in one kernel, ladder::geglu_gemm, on a GPU where chapter 04 runs; elsewhere gate_proj and up_proj run as
    nn.Linear and ladder::gelu_mul fuses only the GELU and the product, as Liger does. `fused=False` forces that path.
    """

    def __init__(self, config, fused=None):
        super().__init__()
        act = getattr(config, "hidden_act", "gelu_pytorch_tanh")
        if act not in ("gelu_pytorch_tanh", "gelu_new"):  # both are the tanh GELU; the kernels compute no other
            raise ValueError(f"LadderGEGLUMLP: hidden_act {act!r} is not the tanh GELU (gelu_pytorch_tanh)")
        self.config = config
        self.hidden_size = config.hidden_size
        self.intermediate_size = config.intermediate_size
        self.gate_proj = nn.Linear(self.hidden_size, self.intermediate_size, bias=False)
        self.up_proj = nn.Linear(self.hidden_size, self.intermediate_size, bias=False)
        self.down_proj = nn.Linear(self.intermediate_size, self.hidden_size, bias=False)
        self.fused = fused  # None: wherever the GPU runs chapter 04's default variant

    def forward(self, x):
        fused = self.fused if self.fused is not None else fused_gemm_runs(x.device.index or 0)
        if fused:
            m = torch.ops.ladder.geglu_gemm(x, self.gate_proj.weight, self.up_proj.weight)
        else:
            m = torch.ops.ladder.gelu_mul(self.gate_proj(x), self.up_proj(x))
        return self.down_proj(m)


# The name the blog's script asks its kernel package's `.layers` for: `import ladder_ops as kernels_layers` in place of
# its `kernels_layers = get_kernel("kernels-community/liger-kernels", version=1).layers` runs it on our kernels.
LigerGEGLUMLP = LadderGEGLUMLP
