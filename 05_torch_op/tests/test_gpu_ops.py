"""Chapter 05's GPU tests: the ops against eager PyTorch and chapter 04, opcheck, torch.compile, streams, CUDA graphs,
every refusal. ctest runs them as 05_torch_op.gpu_tests (label gpu): without a GPU they skip with "no CUDA GPU was
found"; under LADDER_REQUIRE_GPU=1, set on every GPU machine, the file fails instead, with a message that leaves that
phrase out.
"""
import unittest

from support import (BF16, GELU_TOL, GEMM_TOL, HAVE_GPU, NO_GPU, REQUIRE_GPU, Config, F, SimpleGeGLUMLP, differ_report,
                     ladder_ops, ops, problem, reference_m, torch)

if REQUIRE_GPU and not HAVE_GPU:
    raise RuntimeError("LADDER_REQUIRE_GPU is set, but torch.cuda.is_available() is False: nothing would be tested")


@unittest.skipUnless(HAVE_GPU, NO_GPU)
class OpTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        major, minor = torch.cuda.get_device_capability()
        cls.cannot_run = {v: ops.geglu_gemm_cannot_run(v, major, minor) for v in ops.geglu_gemm_variants()}
        cls.fused = ladder_ops.fused_gemm_runs(torch.cuda.current_device())

    def need_fused(self):
        if not self.fused:
            why = ops.geglu_gemm_cannot_run("", *torch.cuda.get_device_capability())
            self.skipTest(f"no geglu_gemm variant runs on this GPU: {why}")

    # ------------------------------------------------------------ outputs
    def test_gelu_mul_against_eager_pytorch(self):
        for n in (0, 1, 7, 8, 1000003, 8192 * 3072):
            g, u = torch.randn(2, n, device="cuda", dtype=BF16).unbind(0)
            got = ops.gelu_mul(g, u)
            self.assertTrue(got.is_contiguous() and got.shape == g.shape and got.dtype == BF16)
            torch.testing.assert_close(got, F.gelu(g, approximate="tanh") * u, **GELU_TOL, msg=f"n = {n}")
        # A view that starts 2 bytes into its storage: the vectorized kernel falls back to its plain one.
        base = torch.randn(2, 1001, device="cuda", dtype=BF16)
        g, u = base[0, 1:], base[1, 1:]
        torch.testing.assert_close(ops.gelu_mul(g, u), F.gelu(g, approximate="tanh") * u, **GELU_TOL)

    def test_gelu_mul_bit_identical_to_chapter04_on_every_bf16(self):
        # Chapter 04's tests prove its GEMM's epilogue equals chapter 03's gelu_mul bit for bit; through torch the two
        # ops must agree too. x = e_0 makes column n of g = x @ w_gate^T exactly w_gate[n, 0] (one product, no sum),
        # so the 65536 columns of m see every bf16 bit pattern as g, with random u. As in 04's test, gelu_mul gets g
        # and u from torch's GEMMs (which turn g = -0 into +0, as the fused GEMM's sum does).
        self.need_fused()
        g = torch.arange(-32768, 32768, device="cuda", dtype=torch.int32).to(torch.int16).view(BF16)
        u = torch.randn(65536, device="cuda", dtype=BF16)
        x = torch.zeros(64, 8, device="cuda", dtype=BF16)
        x[:, 0] = 1
        w_gate = torch.zeros(65536, 8, device="cuda", dtype=BF16)
        w_up = torch.zeros_like(w_gate)
        w_gate[:, 0], w_up[:, 0] = g, u
        m = ops.geglu_gemm(x, w_gate, w_up)
        want = ops.gelu_mul((x @ w_gate.T)[0], (x @ w_up.T)[0])
        nan = want.isnan()
        self.assertTrue(torch.equal(nan, m[0].isnan()))
        for row in (0, 63):
            self.assertEqual(differ_report(m[row][~nan], want[~nan]), "")

    def test_geglu_gemm_against_reference_and_gelu_mul(self):
        self.need_fused()
        # The blog's shape, then odd ones: rows around the tiles' 64 and 128, dims that are multiples of 8 only.
        # `bitwise`: the shapes at which 04's own tests compare with its chapter 03 path bit for bit (cuBLAS gate and
        # up, then gelu_mul); elsewhere cuBLAS may sum in another order (split-K, a GEMV for one row), so g and u may
        # round to the neighbouring bf16, and only the tolerance holds.
        for lead, M, dim, hidden, bitwise in (((64,), 128, 768, 3072, True), ((), 300, 200, 200, True),
                                              ((), 1, 768, 3072, False), ((3,), 5, 64, 200, False),
                                              ((), 127, 1000, 1032, False), ((), 3, 24, 16, False)):
            with self.subTest(lead=lead, M=M, dim=dim, hidden=hidden):
                x, w_gate, w_up = problem(M, dim, hidden, seed=M + dim, lead=lead)
                m = ops.geglu_gemm(x, w_gate, w_up)
                self.assertEqual(m.shape, (*lead, M, hidden))
                torch.testing.assert_close(m, reference_m(x, w_gate, w_up), **GEMM_TOL)
                if bitwise:
                    self.assertEqual(differ_report(m, ops.gelu_mul(x @ w_gate.T, x @ w_up.T)), "")

    def test_every_variant_runs_or_says_why(self):
        x, w_gate, w_up = problem(300, 200, 200, seed=5)
        for variant, why in self.cannot_run.items():
            with self.subTest(variant=variant):
                if why:
                    with self.assertRaisesRegex(RuntimeError, "^ladder::geglu_gemm: variant '" + variant + "': "):
                        ops.geglu_gemm(x, w_gate, w_up, variant=variant)
                else:
                    m = ops.geglu_gemm(x, w_gate, w_up, variant=variant)
                    torch.testing.assert_close(m, reference_m(x, w_gate, w_up), **GEMM_TOL)

    def test_empty_and_zero_sizes(self):
        self.need_fused()
        x, w = torch.empty(0, 64, device="cuda", dtype=BF16), torch.ones(16, 64, device="cuda", dtype=BF16)
        self.assertEqual(ops.geglu_gemm(x, w, w).shape, (0, 16))
        x, w = torch.ones(4, 0, device="cuda", dtype=BF16), torch.ones(16, 0, device="cuda", dtype=BF16)
        self.assertTrue(torch.equal(ops.geglu_gemm(x, w, w), torch.zeros(4, 16, device="cuda", dtype=BF16)))

    # ------------------------------------------------------------ how PyTorch calls them
    def test_opcheck(self):
        g, u = torch.randn(2, 37, 24, device="cuda", dtype=BF16).unbind(0)
        torch.library.opcheck(ops.gelu_mul.default, (g, u))
        if self.fused:
            x, w_gate, w_up = problem(5, 64, 200, lead=(3,))
            torch.library.opcheck(ops.geglu_gemm.default, (x, w_gate, w_up))
            torch.library.opcheck(ops.geglu_gemm.default, (x, w_gate, w_up), {"variant": "teach"})

    def test_compile_fullgraph(self):
        # fullgraph=True: a graph break (an op Dynamo could not trace, e.g. one without a fake) is an error.
        torch.manual_seed(0)
        for fused in ((True, False) if self.fused else (False,)):
            with self.subTest(fused=fused), torch.no_grad():
                torch._dynamo.reset()
                mlp = ladder_ops.LadderGEGLUMLP(Config(), fused=fused).to("cuda", BF16)
                x = torch.randn(4, 32, 768, device="cuda", dtype=BF16)
                eager = mlp(x)
                compiled = torch.compile(mlp, fullgraph=True)(x)
                torch.testing.assert_close(compiled, eager, **GEMM_TOL)
        with torch.no_grad():  # the default path, where the module asks the GPU which one to take
            torch._dynamo.reset()
            torch.compile(ladder_ops.LadderGEGLUMLP(Config()).to("cuda", BF16), fullgraph=True)(x)

    def test_every_gpu_in_one_process(self):
        # A launcher's once-per-device set-up (the kernel's shared-memory attribute) must happen on each GPU: a tensor
        # on cuda:1 runs on cuda:1 after one on cuda:0 has run. With one GPU this is one more shape on it.
        self.need_fused()
        for d in range(torch.cuda.device_count()):
            with self.subTest(device=d), torch.cuda.device(d):
                x, w_gate, w_up = problem(300, 200, 200, seed=d)
                m = ops.geglu_gemm(x, w_gate, w_up)
                self.assertEqual(m.device, torch.device("cuda", d))
                torch.testing.assert_close(m, reference_m(x, w_gate, w_up), **GEMM_TOL)
                print(f"[ every GPU ] cuda:{d} ({torch.cuda.get_device_name(d)}): geglu_gemm checked")

    def test_drop_in_matches_the_blogs_mlp(self):
        torch.manual_seed(1)
        blog = SimpleGeGLUMLP(768, 3072).to("cuda", BF16)
        x = torch.randn(2, 64, 768, device="cuda", dtype=BF16)
        for fused in ((True, False) if self.fused else (False,)):
            with self.subTest(fused=fused), torch.no_grad():
                mlp = ladder_ops.LadderGEGLUMLP(Config(), fused=fused).to("cuda", BF16)
                mlp.load_state_dict(blog.state_dict())
                torch.testing.assert_close(mlp(x), blog(x), atol=2e-2, rtol=2e-2)

    def test_side_stream(self):
        # On a side stream the inputs are written only after a spin of 50 million GPU cycles (tens of ms). A kernel
        # launched on any other stream would read them before that write and give the wrong output.
        self.need_fused()
        x_src, w_gate, w_up = problem(256, 768, 3072, seed=7)
        g_src, u = torch.randn(2, 1 << 20, device="cuda", dtype=BF16).unbind(0)
        want_m, want_h = ops.geglu_gemm(x_src, w_gate, w_up), ops.gelu_mul(g_src, u)
        x, g = torch.zeros_like(x_src), torch.zeros_like(g_src)
        torch.cuda.synchronize()
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            torch.cuda._sleep(50_000_000)
            x.copy_(x_src)
            g.copy_(g_src)
            m, h = ops.geglu_gemm(x, w_gate, w_up), ops.gelu_mul(g, u)
        side.synchronize()
        self.assertEqual(differ_report(m, want_m), "")
        self.assertEqual(differ_report(h, want_h), "")

    def test_cuda_graph_capture_and_replay(self):
        self.need_fused()
        x, w_gate, w_up = problem(128, 768, 3072, seed=8)
        g, u = torch.randn(2, 4096, device="cuda", dtype=BF16).unbind(0)
        side = torch.cuda.Stream()  # warm up off the capture stream, as torch.cuda.graphs' docs do
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            ops.geglu_gemm(x, w_gate, w_up), ops.gelu_mul(g, u)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):  # a launch on another stream would fail the capture or escape it
            m, h = ops.geglu_gemm(x, w_gate, w_up), ops.gelu_mul(g, u)
        for seed in (9, 10):  # new inputs in the same buffers, then replay
            x.copy_(problem(128, 768, 3072, seed=seed)[0])
            g.copy_(torch.randn_like(g))
            graph.replay()
            torch.cuda.synchronize()
            self.assertEqual(differ_report(m, ops.geglu_gemm(x, w_gate, w_up)), "")
            self.assertEqual(differ_report(h, ops.gelu_mul(g, u)), "")

    # ------------------------------------------------------------ refusals: one line, RuntimeError, nothing launched
    def assert_refused(self, pattern, op, *args, **kwargs):
        with self.assertRaises(RuntimeError) as caught:
            op(*args, **kwargs)
        message = str(caught.exception)
        self.assertNotIn("\n", message)
        self.assertRegex(message, pattern)

    def test_refusals(self):
        x, w_gate, w_up = problem(16, 64, 32)
        gemm, gm = ops.geglu_gemm, ops.gelu_mul
        self.assert_refused(r"^ladder::geglu_gemm: x must be bfloat16, got Float$", gemm, x.float(), w_gate, w_up)
        self.assert_refused(r"^ladder::geglu_gemm: w_up must be bfloat16, got Half$", gemm, x, w_gate, w_up.half())
        self.assert_refused(r"^ladder::geglu_gemm: w_gate must be a CUDA tensor, got one on cpu$", gemm, x,
                            w_gate.cpu(), w_up)
        self.assert_refused(r"^ladder::geglu_gemm: w_gate must be contiguous", gemm, x, w_gate.T.contiguous().T, w_up)
        self.assert_refused(r"^ladder::geglu_gemm: x must be contiguous", gemm, x[:, ::2], w_gate[:, :32],
                            w_up[:, :32].contiguous())
        # Integers and sizes formatted by TORCH_CHECK itself (c10::str through an ostream): the library must share the
        # process's libstdc++ for that (cmake/shared_libstdcxx.cmake); with a copy of its own this line crashed.
        self.assert_refused(r"^ladder::geglu_gemm: w_gate and w_up must both be \[hidden, dim\] with dim = "
                            r"x.size\(-1\) = 64, got \[32, 64\] and \[16, 64\]$", gemm, x, w_gate, w_up[:16])
        self.assert_refused(r"^ladder::geglu_gemm: w_gate and w_up must both be \[hidden, dim\]", gemm, x,
                            w_gate[:, :32].contiguous(), w_up[:, :32].contiguous())
        x12, w12 = problem(16, 12, 32)[:2]
        self.assert_refused(r"^ladder::geglu_gemm: .*\b12\b.* multiple of 8", gemm, x12, w12, w12)
        self.assert_refused(r"^ladder::geglu_gemm: no variant named 'nope' \(have: .*fast.*\)$", gemm, x, w_gate,
                            w_up, variant="nope")
        if self.fused:  # a pointer 2 bytes past a 16-byte boundary: TMA cannot load it
            shifted = torch.empty(x.numel() + 1, device="cuda", dtype=BF16)[1:].view_as(x).copy_(x)
            self.assert_refused(r"^ladder::geglu_gemm: .*(align|16-byte)", gemm, shifted, w_gate, w_up)
        if torch.cuda.device_count() > 1:
            self.assert_refused(r"^ladder::geglu_gemm: w_up is on cuda:1 but the first input is on cuda:0$", gemm,
                                x, w_gate, w_up.to("cuda:1"))
        g = torch.randn(10, device="cuda", dtype=BF16)
        self.assert_refused(r"^ladder::gelu_mul: u must be bfloat16, got Float$", gm, g, g.float())
        self.assert_refused(r"^ladder::gelu_mul: g and u must have the same shape, got \[10\] and \[5\]$", gm, g, g[:5])
        self.assert_refused(r"^ladder::gelu_mul: g must be contiguous", gm, g[::2], g[:5])


if __name__ == "__main__":
    unittest.main()
