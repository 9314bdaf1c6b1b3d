# The three GEMMs after dgated_gemm in 06's epilogue step (dW_down, dx, [dW_gate; dW_up]), one stream against two or
# three, back to back: the time per step of N queued steps (CUDA events), and each GEMM alone.
import statistics, torch
M, D, H = 8192, 768, 3072
bf = dict(device="cuda", dtype=torch.bfloat16)
dy, h, dgu, x, wgu = (torch.randn(*s, **bf) for s in [(M, D), (M, H), (M, 2 * H), (M, D), (2 * H, D)])
dwd, dx, dwgu = torch.empty(D, H, **bf), torch.empty(M, D, **bf), torch.empty(2 * H, D, **bf)
G = {"dWd": lambda: torch.mm(dy.t(), h, out=dwd), "dx": lambda: torch.mm(dgu, wgu, out=dx),
     "dWgu": lambda: torch.mm(dgu.t(), x, out=dwgu)}
main = torch.cuda.current_stream()
side = [torch.cuda.Stream() for _ in range(2)]

def plan(lanes):  # lanes: list of lists of names; lane 0 on main
    def run():
        ev = torch.cuda.Event(); ev.record(main)
        done = []
        for i, names in enumerate(lanes):
            s = main if i == 0 else side[i - 1]
            if i: s.wait_event(ev)
            with torch.cuda.stream(s):
                for n in names: G[n]()
            if i:
                e = torch.cuda.Event(); e.record(s); done.append(e)
        for e in done: main.wait_event(e)
    return run

def timeit(fn, n=40, reps=7):
    out = []
    for _ in range(reps):
        torch.cuda._sleep(2_000_000)  # queue behind a sleep so the GPU never waits for the CPU
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(n): fn()
        b.record(); torch.cuda.synchronize()
        out.append(a.elapsed_time(b) * 1e3 / n)
    return statistics.median(out), min(out)

plans = {"serial dWd,dx,dWgu": [["dWd", "dx", "dWgu"]],
         "serial dx,dWgu,dWd": [["dx", "dWgu", "dWd"]],
         "2 streams: dx,dWgu | dWd": [["dx", "dWgu"], ["dWd"]],
         "2 streams: dx | dWd,dWgu": [["dx"], ["dWd", "dWgu"]],
         "3 streams": [["dx"], ["dWd"], ["dWgu"]]}
for _ in range(3): [plan(p)() for p in plans.values()]
torch.cuda.synchronize()
print(torch.cuda.get_device_name(), torch.__version__)
for n in G: print(f"{n:<28} alone  median {timeit(plan([[n]]))[0]:8.2f} us")
for r in range(3):
    for name, p in plans.items():
        med, mn = timeit(plan(p))
        print(f"round {r + 1} {name:<28} median {med:8.2f} us  min {mn:8.2f} us")
# correctness: the concurrent plan gives the serial bits
plan(plans["serial dWd,dx,dWgu"])(); ref = [t.clone() for t in (dwd, dx, dwgu)]
plan(plans["3 streams"])(); torch.cuda.synchronize()
print("same bits:", all(torch.equal(a, b) for a, b in zip(ref, (dwd, dx, dwgu))))
