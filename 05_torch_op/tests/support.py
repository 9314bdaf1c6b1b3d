"""What chapter 05's test files share: torch (or a skip when it cannot be imported), the op library, the blog's MLP,
references and inputs. test_cpu_*.py need no GPU; test_gpu_*.py do (ctest runs them as two tests: CMakeLists.txt).
"""
import os
import unittest

REQUIRE_GPU = os.environ.get("LADDER_REQUIRE_GPU", "") not in ("", "0")
try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except (ImportError, OSError) as e:  # OSError: a torch whose shared libraries do not load
    if REQUIRE_GPU:
        raise RuntimeError(f"LADDER_REQUIRE_GPU is set, but torch does not import: {e}")
    raise unittest.SkipTest(f"torch cannot be imported: {e}")

import ladder_ops  # noqa: E402,F401  (loads the op library; the test files import it from here)

HAVE_GPU = torch.cuda.is_available()
NO_GPU = "no CUDA GPU was found (torch.cuda.is_available() is False)"

ops = torch.ops.ladder
BF16 = torch.bfloat16
# Chapter 04's tolerance against a reference that rounds where eager PyTorch stores (04_epilogue_mlp/tests): the
# GEMMs' float32 sums may round to the neighbouring bf16, and the chain after them then moves by an ulp or two.
GEMM_TOL = dict(atol=1e-3, rtol=1 / 64)
# Our GELU matches PyTorch's within one bf16 step, not bit for bit (common/gpu/gelu.cuh): after the product that is
# two steps (rtol 2^-7); below x ~ -2.9 PyTorch's own float32 formula loses its digits, but there |gelu| < 0.004, so
# |gelu * u| < 0.02 for these inputs (atol).
GELU_TOL = dict(atol=2e-2, rtol=2**-7)


class Config:  # what the blog's script hands LigerGEGLUMLP: a Hugging Face config's three fields
    def __init__(self, hidden_size=768, intermediate_size=3072, hidden_act="gelu_pytorch_tanh"):
        self.hidden_size, self.intermediate_size, self.hidden_act = hidden_size, intermediate_size, hidden_act


class SimpleGeGLUMLP(nn.Module):  # the blog's eager MLP (03_simple_mlp.py), whose weights the drop-in must load
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden, bias=False)
        self.up_proj = nn.Linear(dim, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down_proj(F.gelu(self.gate_proj(x), approximate="tanh") * self.up_proj(x))


def bf16_round(t):
    return t.to(BF16).float()


def reference_m(x, w_gate, w_up):
    """m as eager PyTorch rounds it, from float32 GEMMs: g and u, gelu(g) and the product each rounded to bf16."""
    g = bf16_round(x.float() @ w_gate.float().T)
    u = bf16_round(x.float() @ w_up.float().T)
    return (bf16_round(F.gelu(g, approximate="tanh")) * u).to(BF16)


def problem(M, dim, hidden, seed=0, lead=()):
    """x in [-1, 1] and weights in nn.Linear's range, as chapter 04's tests draw them."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    uniform = lambda *shape, bound=1.0: ((torch.rand(*shape, generator=gen, device="cuda") * 2 - 1) * bound).to(BF16)
    bound = 1 / max(dim, 1) ** 0.5
    return (uniform(*lead, M, dim), uniform(hidden, dim, bound=bound), uniform(hidden, dim, bound=bound))


def differ_report(got, want):
    bad = (got.view(torch.int16) != want.view(torch.int16)).flatten().nonzero()
    if bad.numel() == 0:
        return ""
    i = bad[0].item()
    return (f"{bad.numel()} of {got.numel()} values differ; first at flat index {i}: got {got.flatten()[i].item()}, "
            f"want {want.flatten()[i].item()}")


