"""Tests of chapter 05's autograd formulas that need no GPU: the backward op's fake, gradients' shapes through both ops
on the meta device (what torch.compile traces), the path LadderGEGLUMLP takes when it trains, and the refusals.

Run with LADDER_TORCH_LIB set to the built library (or the library in build/):
    PYTHONPATH=05_torch_op python -m pytest 05_torch_op/tests/test_cpu_autograd.py
Plain unittest, so `python -m unittest test_cpu_autograd` runs it too.
"""
import unittest

from support import BF16, Config, ladder_ops, ops, torch


def small_config():  # the blog's MLP at dim 64, hidden 200
    return Config(hidden_size=64, intermediate_size=200)


def meta(*shape, grad=False):
    return torch.empty(*shape, dtype=BF16, device="meta", requires_grad=grad)


def graph_names(t):
    """The names of every node of t's autograd graph."""
    names, todo, seen = [], [t.grad_fn], set()
    while todo:
        node = todo.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        names.append(node.name())
        todo.extend(n for n, _ in node.next_functions)
    return names


class BackwardOpTests(unittest.TestCase):
    def test_fake_gives_two_tensors_shaped_like_dh(self):
        dh = meta(2, 5, 24)
        dg, du = ops.gelu_mul_backward(dh, dh, dh)
        self.assertEqual((dg.shape, du.shape), (dh.shape, dh.shape))
        self.assertEqual((dg.dtype, du.dtype), (BF16, BF16))

    def test_fake_refuses_mismatched_shapes(self):
        with self.assertRaisesRegex(RuntimeError, r"dh, g and u must have the same shape"):
            ops.gelu_mul_backward(meta(4, 8), meta(4, 8), meta(4, 7))

    def test_cpu_tensors_get_our_one_line(self):
        t = torch.zeros(4, 8, dtype=BF16)
        line = r"^ladder::gelu_mul_backward: dh must be a CUDA tensor, got one on cpu$"
        with self.assertRaisesRegex(RuntimeError, line):
            ops.gelu_mul_backward(t, t, t)

    def test_no_double_backward(self):
        # The backward ops have no formula of their own: a gradient through one fails loudly instead of being empty.
        g = meta(4, grad=True)
        dg, _ = ops.gelu_mul_backward(g, g, g)
        with self.assertRaisesRegex(RuntimeError, "derivative for ladder::gelu_mul_backward is not implemented"):
            dg.sum().backward()
        dy, w_down, g = meta(4, 8, grad=True), meta(8, 16), meta(4, 16)
        with self.assertRaisesRegex(RuntimeError, "derivative for ladder::dgated_gemm is not implemented"):
            ops.dgated_gemm(dy, w_down, g, g)[0].sum().backward()


class GradientShapeTests(unittest.TestCase):
    def test_gelu_mul_gives_gradients_to_both_inputs(self):
        g, u = meta(3, 7, grad=True), meta(3, 7, grad=True)
        ops.gelu_mul(g, u).sum().backward()
        self.assertEqual((g.grad.shape, u.grad.shape), (g.shape, u.shape))

    def test_geglu_gemm_gives_gradients_to_x_and_both_weights(self):
        x, w_gate, w_up = meta(2, 5, 64, grad=True), meta(200, 64, grad=True), meta(200, 64, grad=True)
        ops.geglu_gemm(x, w_gate, w_up).sum().backward()
        self.assertEqual(x.grad.shape, x.shape)
        self.assertEqual((w_gate.grad.shape, w_up.grad.shape), (w_gate.shape, w_up.shape))

    def test_the_mlp_ops_give_gradients_to_x_and_the_three_weights(self):
        for name in ("geglu_mlp_keep", "geglu_mlp"):
            with self.subTest(op=name):
                x, w_gate, w_up = meta(2, 5, 64, grad=True), meta(200, 64, grad=True), meta(200, 64, grad=True)
                w_down = meta(64, 200, grad=True)
                y = getattr(ops, name)(x, w_gate, w_up, w_down)
                (y[0] if isinstance(y, tuple) else y).sum().backward()
                for t in (x, w_gate, w_up, w_down):
                    self.assertEqual(t.grad.shape, t.shape)

    def test_the_mlp_backward_gives_what_the_mask_asks_for(self):
        # dx, [dW_gate; dW_up] and dW_down, each empty where the mask says autograd does not need it.
        dy, x, w_gate, w_down, g = meta(2, 5, 64), meta(2, 5, 64), meta(200, 64), meta(64, 200), meta(2, 5, 200)
        for mask in ([True] * 3, [False, True, False], [True, False, True]):
            with self.subTest(mask=mask):
                got = ops.geglu_mlp_backward(dy, x, w_gate, w_gate, w_down, g, g, mask)
                want = [(2, 5, 64), (400, 64), (64, 200)]
                self.assertEqual([tuple(t.shape) for t in got], [s if m else (0,) for s, m in zip(want, mask)])
        with self.assertRaisesRegex(RuntimeError, r"w_up must be shaped as w_gate and dy as x"):
            ops.geglu_mlp_backward(dy, x, w_gate, meta(100, 64), w_down, g, g, [True] * 3)
        with self.assertRaisesRegex(RuntimeError, r"^ladder::geglu_mlp_backward: g and u must be \[2, 5, 200\]"):
            ops.geglu_mlp_backward(dy, x, w_gate, w_gate, w_down, g, meta(2, 5, 100), [True] * 3)

    def test_only_what_needs_a_gradient_gets_one(self):
        x, w_gate, w_up = meta(5, 64), meta(200, 64, grad=True), meta(200, 64)
        ops.geglu_gemm(x, w_gate, w_up).sum().backward()
        self.assertIsNone(x.grad)
        self.assertIsNone(w_up.grad)
        self.assertEqual(w_gate.grad.shape, w_gate.shape)


class ModuleTests(unittest.TestCase):
    def mlp(self, **kwargs):
        return ladder_ops.LadderGEGLUMLP(small_config(), fused=True, **kwargs).to(device="meta", dtype=BF16)

    def test_recompute_is_off_by_default(self):
        self.assertFalse(ladder_ops.LadderGEGLUMLP(small_config()).recompute)

    def test_training_keeps_g_and_u_unless_asked_to_recompute(self):
        x = meta(2, 5, 64, grad=True)
        names = graph_names(self.mlp()(x))
        self.assertTrue(any("gelu_mul" in n for n in names), names)  # Linear + gelu_mul: g and u kept
        self.assertFalse(any("geglu_gemm" in n for n in names), names)
        names = graph_names(self.mlp(recompute=True)(x))
        self.assertTrue(any("geglu_gemm" in n for n in names), names)  # one kernel forward, x kept

    def test_inference_runs_the_fused_gemm(self):
        mlp = self.mlp()
        with torch.no_grad():
            self.assertEqual(mlp(meta(2, 5, 64)).shape, (2, 5, 64))
        y = mlp.requires_grad_(False)(meta(2, 5, 64))  # no gradient wanted anywhere: no graph at all
        self.assertIsNone(y.grad_fn)

    def test_module_gradients_have_the_weights_shapes(self):
        for recompute in (False, True):
            with self.subTest(recompute=recompute):
                mlp = self.mlp(recompute=recompute)
                mlp(meta(2, 5, 64, grad=True)).sum().backward()
                for p in mlp.parameters():
                    self.assertEqual(p.grad.shape, p.shape)

    def test_gate_and_up_weights_are_the_halves_of_one_buffer(self):
        # So the training backward makes dx with one GEMM over both weights and no copy; .to() and load_state_dict
        # keep it so, and the state_dict keys stay Liger's.
        mlp = ladder_ops.LadderGEGLUMLP(small_config())
        for step in ("built", "to bf16", "loaded"):
            if step == "to bf16":
                mlp = mlp.to(BF16)
            if step == "loaded":
                mlp.load_state_dict({k: torch.randn_like(v) for k, v in mlp.state_dict().items()})
            with self.subTest(step=step):
                both = ladder_ops.stacked_weights(mlp.gate_proj.weight, mlp.up_proj.weight)
                self.assertIsNotNone(both)
                self.assertEqual(both.shape, (400, 64))
                self.assertTrue(torch.equal(both[:200], mlp.gate_proj.weight))
                self.assertTrue(torch.equal(both[200:], mlp.up_proj.weight))
        self.assertEqual(list(mlp.state_dict()), ["gate_proj.weight", "up_proj.weight", "down_proj.weight"])
        self.assertIsNone(ladder_ops.stacked_weights(meta(200, 64), meta(200, 64)))  # two buffers: two GEMMs


if __name__ == "__main__":
    unittest.main()
