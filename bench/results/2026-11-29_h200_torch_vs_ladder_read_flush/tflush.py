"""Is torch.compile's gelu*mul slower after a read flush than after a memset, or is it the kernel it compiled?
The same compiled function, timed after each flush in turn, in one process; the Triton kernel's name and config
printed. Repeats the whole thing in a second process (a second compile) to see whether the compile itself varies."""
import statistics, sys
import torch
import torch.nn.functional as F

torch.manual_seed(0)
bf16 = dict(device="cuda", dtype=torch.bfloat16)
g, u = torch.randn(8192, 3072, **bf16), torch.randn(8192, 3072, **bf16)
h = F.gelu(g, approximate="tanh")
l2 = torch.cuda.get_device_properties(0).L2_cache_size
f32 = torch.zeros(2 * l2 // 4, dtype=torch.float32, device="cuda")
u8 = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
flushes = {"memset": lambda: u8.zero_(), "read": lambda: f32.sum(), "none": lambda: None}
fused = torch.compile(lambda g, u: F.gelu(g, approximate="tanh") * u, dynamic=False)
for _ in range(3):
    fused(g, u)

def time_kernel(fn, reps, flush):
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    stops = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for _ in range(5):
        flush(); fn()
    for s, e in zip(starts, stops):
        flush()
        torch.cuda._sleep(200_000)
        s.record(); fn(); e.record()
    torch.cuda.synchronize()
    us = sorted(s.elapsed_time(e) * 1e3 for s, e in zip(starts, stops))
    return statistics.median(us), us[0]

src = torch.randn(3 * g.numel() // 2, **bf16); dst = torch.empty_like(src)
cases = [("copy 151 MB", lambda: dst.copy_(src)), ("eager h * u", lambda: h * u), ("compile gelu*mul", lambda: fused(g, u))]
for rnd in range(2):
    for fname, fl in flushes.items():
        for name, fn in cases:
            med, low = time_kernel(fn, 100, fl)
            print(f"proc {sys.argv[1]} round {rnd} flush {fname:7s} {name:18s} median {med:6.1f} us  min {low:6.1f}", flush=True)
# the compiled kernel under the profiler: its name
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
    fused(g, u); torch.cuda.synchronize()
print("kernels:", [e.name for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA][:3])
