"""Chapter 05's tests that need no GPU: the drop-in module's shape, the fakes, the variant queries, and the refusals
that come before any GPU work. ctest runs them as 05_torch_op.cpu_tests (label cpu), apart from the GPU tests, so that a
GPU skip can never hide one of these failing. By hand: PYTHONPATH=05_torch_op python -m pytest 05_torch_op/tests
"""
import unittest

from support import BF16, Config, SimpleGeGLUMLP, ladder_ops, nn, ops, torch


class ModuleTests(unittest.TestCase):
    """What needs no GPU: the drop-in's shape, and the refusals that come before any GPU work."""

    def test_same_attributes_and_state_dict_keys_as_liger(self):
        mlp = ladder_ops.LadderGEGLUMLP(Config())
        for name, shape in (("gate_proj", (3072, 768)), ("up_proj", (3072, 768)), ("down_proj", (768, 3072))):
            layer = getattr(mlp, name)
            self.assertIsInstance(layer, nn.Linear)
            self.assertIsNone(layer.bias)
            self.assertEqual(tuple(layer.weight.shape), shape)
        self.assertEqual(list(mlp.state_dict()), ["gate_proj.weight", "up_proj.weight", "down_proj.weight"])
        self.assertEqual((mlp.hidden_size, mlp.intermediate_size), (768, 3072))
        mlp.load_state_dict(SimpleGeGLUMLP(768, 3072).state_dict())  # the blog's weights load as they are
        self.assertIs(ladder_ops.LigerGEGLUMLP, ladder_ops.LadderGEGLUMLP)  # `import ladder_ops as kernels_layers`

    def test_refuses_another_activation(self):
        with self.assertRaisesRegex(ValueError, "not the tanh GELU"):
            ladder_ops.LadderGEGLUMLP(Config(hidden_act="gelu"))

    def test_cpu_tensors_get_our_one_line(self):
        x, w = torch.zeros(4, 8, dtype=BF16), torch.zeros(8, 8, dtype=BF16)
        with self.assertRaisesRegex(RuntimeError, r"^ladder::geglu_gemm: x must be a CUDA tensor, got one on cpu$"):
            ops.geglu_gemm(x, w, w)
        with self.assertRaisesRegex(RuntimeError, r"^ladder::gelu_mul: g must be a CUDA tensor, got one on cpu$"):
            ops.gelu_mul(x, x)
        keep_line = r"^ladder::geglu_gemm_keep: x must be a CUDA tensor, got one on cpu$"
        with self.assertRaisesRegex(RuntimeError, keep_line):
            ops.geglu_gemm_keep(x, w, w)
        for name in ("geglu_mlp_keep", "geglu_mlp"):
            with self.assertRaisesRegex(RuntimeError, rf"^ladder::{name}: x must be a CUDA tensor, got one on cpu$"):
                getattr(ops, name)(x, w, w, w)
        with self.assertRaisesRegex(RuntimeError, r"^ladder::dgated_gemm: dy must be a CUDA tensor, got one on cpu$"):
            ops.dgated_gemm(x, w, x, x)

    def test_fakes_give_the_shapes(self):
        # What torch.compile sees while tracing: tensors without data, here on the meta device.
        x, w = torch.empty(2, 5, 64, dtype=BF16, device="meta"), torch.empty(200, 64, dtype=BF16, device="meta")
        self.assertEqual(ops.geglu_gemm(x, w, w).shape, (2, 5, 200))
        self.assertEqual(ops.gelu_mul(x, x).shape, x.shape)
        self.assertEqual([t.shape for t in ops.geglu_gemm_keep(x, w, w)], [(2, 5, 200)] * 3)
        with self.assertRaisesRegex(RuntimeError, "must both be"):
            ops.geglu_gemm(x, w, w[:100])
        with self.assertRaisesRegex(RuntimeError, "must both be"):
            ops.geglu_gemm_keep(x, w, w[:100])
        w_down, dy = torch.empty(64, 200, dtype=BF16, device="meta"), x
        g = torch.empty(2, 5, 200, dtype=BF16, device="meta")
        self.assertEqual([t.shape for t in ops.dgated_gemm(dy, w_down, g, g)], [(2, 5, 400), (2, 5, 200)])
        self.assertEqual([t.shape for t in ops.geglu_mlp_keep(x, w, w, w_down)], [(2, 5, 64), (2, 5, 200), (2, 5, 200)])
        self.assertEqual(ops.geglu_mlp(x, w, w, w_down).shape, x.shape)
        with self.assertRaisesRegex(RuntimeError, r"g and u must be \[2, 5, 200\], got \[2, 5, 200\] and \[2, 5, 199\]"):
            ops.dgated_gemm(dy, w_down, g, g[..., :199])
        with self.assertRaisesRegex(RuntimeError, "w_down must be \\[dim, hidden\\]"):
            ops.dgated_gemm(dy, w_down.T, g, g)
        for name in ("geglu_mlp_keep", "geglu_mlp"):
            with self.assertRaisesRegex(RuntimeError, rf"ladder::{name}: w_down must be \[dim, hidden\] for w_gate"):
                getattr(ops, name)(x, w, w, w)

    def test_variant_queries(self):
        names = ops.geglu_gemm_variants()
        self.assertIn("fast", names)
        self.assertEqual(ops.geglu_gemm_cannot_run("fast", 9, 0), "")
        self.assertNotEqual(ops.geglu_gemm_cannot_run("fast", 8, 0), "")  # wgmma and TMA are Hopper's
        self.assertIn(ops.geglu_gemm_keep_cannot_run(9, 0), ("", "this build has no sm_90a code (configure with "
                                                                 "CMAKE_CUDA_ARCHITECTURES including 90)"))
        self.assertNotEqual(ops.geglu_gemm_keep_cannot_run(8, 6), "")  # Hopper only (or no sm_90a code at all)
        with self.assertRaisesRegex(RuntimeError, "no variant named 'nope'"):
            ops.geglu_gemm_cannot_run("nope", 9, 0)


if __name__ == "__main__":
    unittest.main()
