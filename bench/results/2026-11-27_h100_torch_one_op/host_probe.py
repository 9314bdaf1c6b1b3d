"""Where a training step's host time goes: forward and backward host time per mode (no profiler), and a cProfile of
ladder's step."""
import cProfile, pstats, statistics, sys, time, io
sys.path.insert(0, "06_train_mlp")
import torch
from torch_train_step import make

def probe(mode):
    torch.manual_seed(0)
    mlp = make(mode, 768, 3072)
    x = torch.empty(64, 128, 768, device="cuda", dtype=torch.bfloat16).uniform_(-1, 1).requires_grad_(True)
    dy = torch.empty_like(x).uniform_(-1, 1)
    def step():
        mlp.zero_grad(set_to_none=True); x.grad = None
        t0 = time.perf_counter(); y = mlp(x); t1 = time.perf_counter(); y.backward(dy); t2 = time.perf_counter()
        return t1 - t0, t2 - t1
    for _ in range(5): step()
    torch.cuda.synchronize()
    f, b, w = [], [], []
    for _ in range(30):
        torch.cuda.synchronize(); t0 = time.perf_counter()
        a, c = step(); torch.cuda.synchronize(); w.append(time.perf_counter() - t0); f.append(a); b.append(c)
    print(f"{mode:<18} host fwd {statistics.median(f)*1e6:8.1f} us  host bwd {statistics.median(b)*1e6:8.1f} us  "
          f"wall {statistics.median(w)*1e6:8.1f} us", flush=True)
    return step

for mode in sys.argv[1].split(","):
    step = probe(mode)
    if mode.startswith("ladder") and not mode.endswith("compile"):
        pr = cProfile.Profile(); pr.enable()
        with torch.autograd.set_multithreading_enabled(False):
            for _ in range(20): step()
        pr.disable(); torch.cuda.synchronize()
        s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(25); print(s.getvalue())
