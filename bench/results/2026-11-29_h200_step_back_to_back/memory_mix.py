"""How fast this GPU moves dgated_gemm's bytes with no GEMM at all: reads of g and u, writes of dg, du and h (two
reads to three writes), against a copy (one to one) and gelu_mul_backward's mix (three to two), each as one Triton
kernel with trivial arithmetic, at the blog's shape (8192 x 3072 bf16 a tensor, 50.3 MB). The tiled form walks
128 x 128 tiles in dgated_gemm's order (groups of 8 row blocks) and writes dg and du into one [M, 2 hidden] buffer, as
the kernel does. Median of 20 runs, CUDA events, an L2 flush before each.
"""
import statistics

import torch
import triton
import triton.language as tl

M, H = 8192, 3072
N = M * H
BLOCK = 4096


@triton.jit
def copy_kernel(a, b, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(b + offs, tl.load(a + offs, mask=m), mask=m)


@triton.jit
def two_to_three(g, u, dg, du, h, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(g + offs, mask=m, eviction_policy="evict_first")
    y = tl.load(u + offs, mask=m, eviction_policy="evict_first")
    tl.store(dg + offs, x + y, mask=m)
    tl.store(du + offs, x * y, mask=m)
    tl.store(h + offs, x - y, mask=m)


@triton.jit
def three_to_two(dh, g, u, dg, du, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(g + offs, mask=m)
    y = tl.load(u + offs, mask=m)
    z = tl.load(dh + offs, mask=m)
    tl.store(dg + offs, x * z, mask=m)
    tl.store(du + offs, y * z, mask=m)


@triton.jit
def two_to_three_tiles(g, u, dgu, h, M, H, BM: tl.constexpr, BN: tl.constexpr, GROUP: tl.constexpr):
    pid = tl.program_id(0)
    m_tiles, n_tiles = tl.cdiv(M, BM), tl.cdiv(H, BN)
    per_group = GROUP * n_tiles
    first = (pid // per_group) * GROUP
    rows_in_group = min(m_tiles - first, GROUP)
    mb = first + (pid % per_group) % rows_in_group
    nb = (pid % per_group) // rows_in_group
    r = mb * BM + tl.arange(0, BM)[:, None]
    c = nb * BN + tl.arange(0, BN)[None, :]
    m = (r < M) & (c < H)
    x = tl.load(g + r * H + c, mask=m, eviction_policy="evict_first")
    y = tl.load(u + r * H + c, mask=m, eviction_policy="evict_first")
    tl.store(dgu + r * (2 * H) + c, x + y, mask=m)
    tl.store(dgu + r * (2 * H) + H + c, x * y, mask=m)
    tl.store(h + r * H + c, x - y, mask=m)


def timed(fn, flush):
    times = []
    for _ in range(21):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times[1:])


def main():
    t = [torch.randn(N, device="cuda", dtype=torch.bfloat16) for _ in range(5)]
    dgu = torch.empty(M, 2 * H, device="cuda", dtype=torch.bfloat16)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    grid = (triton.cdiv(N, BLOCK),)
    tiles = (triton.cdiv(M, 128) * triton.cdiv(H, 128),)
    runs = [
        ("cudaMemcpy (torch copy_), 1 read : 1 write", 2, lambda: t[1].copy_(t[0])),
        ("Triton copy, 1 : 1", 2, lambda: copy_kernel[grid](t[0], t[1], N, BLOCK=BLOCK, num_warps=8)),
        ("Triton, 3 reads : 2 writes (gelu_mul_backward)", 5,
         lambda: three_to_two[grid](t[0], t[1], t[2], t[3], t[4], N, BLOCK=BLOCK, num_warps=8)),
        ("Triton, 2 reads : 3 writes (dgated_gemm's g, u -> dg, du, h)", 5,
         lambda: two_to_three[grid](t[0], t[1], t[2], t[3], t[4], N, BLOCK=BLOCK, num_warps=8)),
        ("Triton, 2 : 3 in dgated_gemm's 128 x 128 tiles, dg | du in one buffer", 5,
         lambda: two_to_three_tiles[tiles](t[0], t[1], dgu, t[4], M, H, BM=128, BN=128, GROUP=8, num_warps=8)),
    ]
    print(f"{torch.cuda.get_device_name()}, {M} x {H} bf16 a tensor ({N * 2 / 1e6:.1f} MB)")
    for name, tensors, fn in runs:
        fn()
        us = timed(fn, flush)
        print(f"{name:<72} {us:8.1f} us {tensors * N * 2 / us / 1e3:8.0f} GB/s")


if __name__ == "__main__":
    main()
