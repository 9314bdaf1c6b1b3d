"""The ladder's kernels as PyTorch ops, and a drop-in GeGLU MLP built on them.

    import ladder_ops                                   # loads the op library: torch.ops.ladder.* now exist
    m = torch.ops.ladder.geglu_gemm(x, w_gate, w_up)    # gelu_tanh(x @ w_gate.T) * (x @ w_up.T), one kernel
    y = torch.ops.ladder.gelu_mul(g, u)                 # gelu_tanh(g) * u, one kernel
    dg, du = torch.ops.ladder.gelu_mul_backward(dy, g, u)   # its backward, one kernel (chapter 06)
    m, g, u = torch.ops.ladder.geglu_gemm_keep(x, w_gate, w_up)  # geglu_gemm also keeping g and u (06; Hopper)
    dgu, m = torch.ops.ladder.dgated_gemm(dy, w_down, g, u)     # [dg | du] and m again, dh = dy @ w_down kept on chip
    y, g, u = torch.ops.ladder.geglu_mlp_keep(x, w_gate, w_up, w_down)  # the MLP, trainable: its backward runs that
    dx, dw_gate_up, dw_down = torch.ops.ladder.geglu_mlp_backward(dy, x, w_gate, w_up, w_down, g, u, [True] * 3)
    mlp = ladder_ops.LadderGEGLUMLP(config)             # where the blog builds LigerGEGLUMLP(config); it trains
    import ladder_ops as kernels_layers                 # ...or, in the blog's script, in place of its get_kernel line

The ops take bf16, contiguous CUDA tensors and give new ones. gelu_mul, geglu_gemm, geglu_gemm_keep, geglu_mlp_keep
and geglu_mlp have autograd formulas (register_autograd below), so a loss computed through them has gradients for their
inputs.
The library is found at $LADDER_TORCH_LIB, beside this file (pip install), or in the repository's build/.
"""
import os
from pathlib import Path

import torch
import torch.nn as nn

__all__ = ["LadderGEGLUMLP", "LigerGEGLUMLP", "fused_gemm_runs", "keep_gemm_runs", "library_path", "stacked_weights"]


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


@torch.library.register_fake("ladder::geglu_gemm_keep")
def _geglu_gemm_keep_fake(x, w_gate, w_up):
    torch._check(w_gate.dim() == 2 and w_gate.shape[1] == x.shape[-1] and w_up.shape == w_gate.shape,
                 lambda: f"ladder::geglu_gemm_keep: w_gate and w_up must both be [hidden, dim] with dim = "
                         f"x.size(-1), got {list(w_gate.shape)} and {list(w_up.shape)}")
    shape = (*x.shape[:-1], w_gate.shape[0])
    return x.new_empty(shape), x.new_empty(shape), x.new_empty(shape)


def _check_dgated(op, dy, w_down, g, u):
    torch._check(w_down.dim() == 2 and w_down.shape[0] == dy.shape[-1],
                 lambda: f"{op}: w_down must be [dim, hidden] with dim = dy.size(-1), got "
                         f"{list(w_down.shape)} for dy {list(dy.shape)}")
    shape = (*dy.shape[:-1], w_down.shape[1])
    torch._check(g.shape == shape and u.shape == shape,
                 lambda: f"{op}: g and u must be {list(shape)}, got {list(g.shape)} and {list(u.shape)}")
    return shape


@torch.library.register_fake("ladder::dgated_gemm")
def _dgated_gemm_fake(dy, w_down, g, u):
    shape = _check_dgated("ladder::dgated_gemm", dy, w_down, g, u)
    return dy.new_empty((*shape[:-1], 2 * shape[-1])), dy.new_empty(shape)


def _check_down(op, x, w_gate, w_down):
    torch._check(w_down.dim() == 2 and w_gate.dim() == 2 and w_down.shape[0] == w_gate.shape[1]
                 and w_down.shape[1] == w_gate.shape[0],
                 lambda: f"{op}: w_down must be [dim, hidden] for w_gate [hidden, dim], got {list(w_down.shape)} for "
                         f"{list(w_gate.shape)}")


@torch.library.register_fake("ladder::geglu_mlp_keep")
def _geglu_mlp_keep_fake(x, w_gate, w_up, w_down):
    _check_down("ladder::geglu_mlp_keep", x, w_gate, w_down)
    _, g, u = _geglu_gemm_keep_fake(x, w_gate, w_up)
    return x.new_empty(x.shape), g, u


@torch.library.register_fake("ladder::geglu_mlp")
def _geglu_mlp_fake(x, w_gate, w_up, w_down):
    _check_down("ladder::geglu_mlp", x, w_gate, w_down)
    _geglu_gemm_fake(x, w_gate, w_up)
    return x.new_empty(x.shape)


@torch.library.register_fake("ladder::geglu_mlp_backward")
def _geglu_mlp_backward_fake(dy, x, w_gate, w_up, w_down, g, u, output_mask):
    _check_down("ladder::geglu_mlp_backward", x, w_gate, w_down)
    torch._check(w_up.shape == w_gate.shape and dy.shape == x.shape,
                 lambda: f"ladder::geglu_mlp_backward: w_up must be shaped as w_gate and dy as x, got "
                         f"{list(w_up.shape)} for {list(w_gate.shape)} and {list(dy.shape)} for {list(x.shape)}")
    _check_dgated("ladder::geglu_mlp_backward", dy, w_down, g, u)
    hidden, dim = w_gate.shape
    shapes = (x.shape, (2 * hidden, dim), (dim, hidden))  # dx, [dW_gate; dW_up], dW_down; empty where not asked for
    return tuple(x.new_empty(shape if need else (0,)) for shape, need in zip(shapes, output_mask))


@torch.library.register_fake("ladder::gelu_mul_backward")
def _gelu_mul_backward_fake(dh, g, u):
    torch._check(dh.shape == g.shape and dh.shape == u.shape,
                 lambda: f"ladder::gelu_mul_backward: dh, g and u must have the same shape, got {list(dh.shape)}, "
                         f"{list(g.shape)} and {list(u.shape)}")
    return dh.new_empty(dh.shape), dh.new_empty(dh.shape)


# The autograd formulas. gelu_mul keeps its inputs g and u (Liger's design); its backward is one kernel that recomputes
# gelu(g) and writes dg and du (chapter 06's gelu_mul_backward, with eager's roundings).
def _gelu_mul_setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _gelu_mul_backward(ctx, dm):
    g, u = ctx.saved_tensors
    return torch.ops.ladder.gelu_mul_backward(dm.contiguous(), g, u)


torch.library.register_autograd("ladder::gelu_mul", _gelu_mul_backward, setup_context=_gelu_mul_setup_context)


# geglu_gemm never writes g and u, so its backward replays them: two GEMMs more than eager's six, in exchange for
# keeping only x between forward and backward (the "recompute" design of chapter 06's notes). Then the gelu_mul
# backward kernel, and the four GEMMs of the two Linears' gradients.
def _geglu_gemm_setup_context(ctx, inputs, keyword_only_inputs, output):
    ctx.save_for_backward(*inputs)  # x, w_gate, w_up: the weights are the parameters, alive anyway


def _geglu_gemm_backward(ctx, dm):
    x, w_gate, w_up = ctx.saved_tensors
    x2 = x.reshape(-1, x.shape[-1])
    g, u = x2 @ w_gate.T, x2 @ w_up.T
    dg, du = torch.ops.ladder.gelu_mul_backward(dm.reshape(-1, dm.shape[-1]).contiguous(), g, u)
    need_x, need_gate, need_up = ctx.needs_input_grad[:3]
    dx = torch.addmm(dg @ w_gate, du, w_up).reshape(x.shape) if need_x else None
    return dx, dg.T @ x2 if need_gate else None, du.T @ x2 if need_up else None


torch.library.register_autograd("ladder::geglu_gemm", _geglu_gemm_backward, setup_context=_geglu_gemm_setup_context)


# geglu_gemm_keep also returns g and u, so its backward needs no replay: chapter 06's epilogue-mode forward with the
# fused mode's backward (the gelu_mul backward kernel, then dx = dg @ W_gate + du @ W_up in one addmm and the two weight
# gradients). g and u are outputs for the backward, not for the caller: they carry no gradient.
def _geglu_gemm_keep_setup_context(ctx, inputs, output):
    _, g, u = output
    ctx.mark_non_differentiable(g, u)
    ctx.set_materialize_grads(False)  # g's and u's gradients stay None, not two [M, hidden] tensors of zeros
    ctx.save_for_backward(*inputs, g, u)


def _geglu_gemm_keep_backward(ctx, dm, _dg, _du):
    x, w_gate, w_up, g, u = ctx.saved_tensors
    x2, hidden = x.reshape(-1, x.shape[-1]), g.shape[-1]
    dg, du = torch.ops.ladder.gelu_mul_backward(dm.reshape(-1, hidden).contiguous(), g.reshape(-1, hidden),
                                                u.reshape(-1, hidden))
    need_x, need_gate, need_up = ctx.needs_input_grad[:3]
    dx = (dg @ w_gate).addmm_(du, w_up).reshape(x.shape) if need_x else None  # in place: no copy of the first
    return dx, dg.T @ x2 if need_gate else None, du.T @ x2 if need_up else None


torch.library.register_autograd("ladder::geglu_gemm_keep", _geglu_gemm_keep_backward,
                                setup_context=_geglu_gemm_keep_setup_context)


# The whole MLP as one op, so that its backward starts from dy: ladder::geglu_mlp_backward runs dgated_gemm, which makes
# dg and du with dh kept on chip, and m again for down_proj's weight gradient (chapter 06's epilogue mode), then the
# GEMMs of the weights' and x's gradients, all launched from C++. geglu_mlp_keep keeps x, g and u (100.7 MB at the
# blog's shape, against 151.0 for g, u and m); geglu_mlp keeps x alone and replays g and u with two GEMMs first
# (chapter 06's recompute mode).
def _mlp_backward(ctx, dy, x, w_gate, w_up, w_down, g, u):
    need_x, need_gate, need_up, need_down = ctx.needs_input_grad[:4]
    dx, d_gate_up, d_down = torch.ops.ladder.geglu_mlp_backward(dy.contiguous(), x, w_gate, w_up, w_down, g, u,
                                                                [need_x, need_gate or need_up, need_down])
    d_gate, d_up = d_gate_up.split(w_gate.shape[0]) if need_gate or need_up else (None, None)
    return dx if need_x else None, d_gate if need_gate else None, d_up if need_up else None, \
        d_down if need_down else None


def _geglu_mlp_keep_setup_context(ctx, inputs, output):
    _, g, u = output
    ctx.mark_non_differentiable(g, u)
    ctx.set_materialize_grads(False)
    ctx.save_for_backward(*inputs, g, u)


def _geglu_mlp_keep_backward(ctx, dy, _dg, _du):
    return _mlp_backward(ctx, dy, *ctx.saved_tensors)


torch.library.register_autograd("ladder::geglu_mlp_keep", _geglu_mlp_keep_backward,
                                setup_context=_geglu_mlp_keep_setup_context)


def _geglu_mlp_setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _geglu_mlp_backward(ctx, dy):
    x, w_gate, w_up, w_down = ctx.saved_tensors
    return _mlp_backward(ctx, dy, x, w_gate, w_up, w_down, x @ w_gate.T, x @ w_up.T)


torch.library.register_autograd("ladder::geglu_mlp", _geglu_mlp_backward, setup_context=_geglu_mlp_setup_context)


_fused_gemm_runs = {}  # device index -> bool
_keep_gemm_runs = {}  # device index -> bool


@torch.compiler.assume_constant_result  # a fact about the GPU, not data: torch.compile calls it while tracing and
def fused_gemm_runs(device_index: int) -> bool:  # keeps the answer (no graph break, no guard)
    """Whether chapter 04's default geglu_gemm variant runs on this GPU (else the MLP uses nn.Linear + gelu_mul)."""
    if device_index not in _fused_gemm_runs:
        major, minor = torch.cuda.get_device_capability(device_index)
        _fused_gemm_runs[device_index] = torch.ops.ladder.geglu_gemm_cannot_run("", major, minor) == ""
    return _fused_gemm_runs[device_index]


@torch.compiler.assume_constant_result
def keep_gemm_runs(device_index: int) -> bool:
    """Whether ladder::geglu_gemm_keep (chapter 06's training forward, Hopper) runs on this GPU."""
    if device_index not in _keep_gemm_runs:
        major, minor = torch.cuda.get_device_capability(device_index)
        _keep_gemm_runs[device_index] = torch.ops.ladder.geglu_gemm_keep_cannot_run(major, minor) == ""
    return _keep_gemm_runs[device_index]


def stacked_weights(w_gate, w_up):
    """[W_gate; W_up] as one [2 hidden, dim] view, when up's rows follow gate's in one storage (as LadderGEGLUMLP keeps
    them), else None; ladder::geglu_mlp_backward makes the same check before its one dx GEMM. Real tensors only: the
    fakes torch.compile traces with show no storage."""
    if torch.compiler.is_compiling() or w_gate.dim() != 2 or w_gate.shape != w_up.shape:
        return None
    if not (w_gate.is_contiguous() and w_up.is_contiguous()) or w_gate.device != w_up.device:
        return None
    if w_gate.untyped_storage().data_ptr() != w_up.untyped_storage().data_ptr():
        return None
    if w_up.storage_offset() != w_gate.storage_offset() + w_gate.numel():
        return None
    return w_gate.as_strided((2 * w_gate.shape[0], w_gate.shape[1]), w_gate.stride())


class LadderGEGLUMLP(nn.Module):
    """Liger's LigerGEGLUMLP, with the ladder's kernels: same constructor, attributes and state_dict keys.

    config: anything with hidden_size, intermediate_size and (optionally) hidden_act, as a Hugging Face model config.
    Its forward, for bf16 CUDA input, is down_proj(gelu_tanh(gate_proj(x)) * up_proj(x)).

    Without gradients (inference), the part before down_proj is one kernel, ladder::geglu_gemm, on a GPU where
    chapter 04 runs; elsewhere gate_proj and up_proj run as nn.Linear and ladder::gelu_mul fuses only the GELU and the
    product, as Liger does. `fused=False` forces that path.

    With gradients (training), what the forward keeps for the backward decides:
      recompute=False (default): keeping x, g and u. On a Hopper GPU, with dim and hidden multiples of 8, the whole MLP
        is one op, ladder::geglu_mlp_keep (chapter 06's epilogue mode): one kernel makes h and keeps g and u, and the
        backward's first GEMM, ladder::dgated_gemm, makes dg, du and h again with dh never in memory (h is not kept).
        Elsewhere nn.Linear + ladder::gelu_mul, keeping h too, as Liger.
      recompute=True: keeping only x. On Hopper ladder::geglu_mlp (the backward replays g and u, then as above);
        elsewhere ladder::geglu_gemm, keeping h for down_proj as well.
    The one-op paths read down_proj.weight directly, as the fused forward reads gate_proj's and up_proj's. Those two
    weights are kept as the halves of one buffer (still two parameters), so the backward's dx is one GEMM over both.
    """

    def __init__(self, config, fused=None, recompute=False):
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
        self.recompute = bool(recompute)
        self._stack_gate_up()

    def _stack_gate_up(self):
        """gate_proj's and up_proj's weights as the two halves of one [2 intermediate, hidden] buffer: still two
        parameters, with their own names, gradients and optimizer state, but ladder::geglu_mlp_backward makes dx with
        one GEMM over both, with no copy."""
        w_gate, w_up = getattr(self.gate_proj, "weight", None), getattr(self.up_proj, "weight", None)
        if not (isinstance(w_gate, nn.Parameter) and isinstance(w_up, nn.Parameter)) or w_gate.shape != w_up.shape:
            return
        if w_gate.device != w_up.device or w_gate.dtype != w_up.dtype or stacked_weights(w_gate, w_up) is not None:
            return
        both = torch.cat([w_gate.detach(), w_up.detach()])
        w_gate.data, w_up.data = both[: w_gate.shape[0]], both[w_gate.shape[0]:]

    def _apply(self, fn, *args, **kwargs):
        # .to(), .cuda(), .bfloat16() give each parameter storage of its own: stack the two again afterwards.
        super()._apply(fn, *args, **kwargs)
        self._stack_gate_up()
        return self

    def forward(self, x):
        fused = self.fused if self.fused is not None else fused_gemm_runs(x.device.index or 0)
        training = torch.is_grad_enabled() and (
            x.requires_grad or self.gate_proj.weight.requires_grad or self.up_proj.weight.requires_grad)
        weights = (self.gate_proj.weight, self.up_proj.weight)
        if fused and training and x.is_cuda and keep_gemm_runs(x.device.index or 0) and self.hidden_size % 8 == 0 \
                and self.intermediate_size % 8 == 0:  # Hopper: the MLP as one op, for dgated_gemm in its backward
            if self.recompute:
                return torch.ops.ladder.geglu_mlp(x, *weights, self.down_proj.weight)
            return torch.ops.ladder.geglu_mlp_keep(x, *weights, self.down_proj.weight)[0]
        if fused and (self.recompute or not training):
            m = torch.ops.ladder.geglu_gemm(x, *weights)
        else:
            m = torch.ops.ladder.gelu_mul(self.gate_proj(x), self.up_proj(x))
        return self.down_proj(m)


# The name the blog's script asks its kernel package's `.layers` for: `import ladder_ops as kernels_layers` in place of
# its `kernels_layers = get_kernel("kernels-community/liger-kernels", version=1).layers` runs it on our kernels.
LigerGEGLUMLP = LadderGEGLUMLP
