"""Share of Nsight Compute's warp-state samples in each part of geglu_gemm_portable, from a source page export
(ncu -i REPORT --page source --csv --print-source sass): the prologue, the main k-loop (the most executed backward
branch and its target), what runs after it up to the epilogue (the barrier, the next tile's first copies), and the
epilogue. Prints each part's share of all samples, its warp instructions per warp and tile (12288 warp-tiles at the
blog's shape: 3072 tiles x 4 warps), and its largest stall reasons, in percent of all samples.
Usage: python3 regions.py ncu_source_call3_v6.csv.gz"""
import collections, csv, gzip, sys

rows = list(csv.reader(gzip.open(sys.argv[1], "rt")))
hdr = rows[1]
ix = {h: i for i, h in enumerate(hdr)}
stalls = [h for h in hdr if h.startswith("stall_") and "(" not in h]
num = lambda x: float(x.replace(",", "") or 0)
recs = [(int(r[ix["Address"]], 16), r[ix["Source"]], num(r[ix["Warp Stall Sampling (All Samples)"]]),
         {s: num(r[ix[s]]) for s in stalls}, num(r[ix["Instructions Executed"]]))
        for r in rows[2:] if len(r) >= len(hdr)]
total = sum(x[2] for x in recs)
branches = [i for i, x in enumerate(recs) if "BRA" in x[1]]
loop_end = max(branches, key=lambda i: recs[i][4])
target = lambda i: int(recs[i][1].split("BRA")[1].strip(), 16)
loop_start = next(i for i, x in enumerate(recs) if x[0] == target(loop_end))
ep_branch = next(i for i in branches if i > loop_end and "@P0" in recs[i][1])
ep_start = next(i for i, x in enumerate(recs) if x[0] == target(ep_branch))
print(sys.argv[1], "samples:", int(total))
for name, a, b in [("prologue", 0, loop_start), ("main loop", loop_start, loop_end + 1),
                   ("after loop, next tile", loop_end + 1, ep_start), ("epilogue", ep_start, len(recs))]:
    part = recs[a:b]
    why = collections.Counter()
    for x in part:
        why.update(x[3])
    share, inst = 100 * sum(x[2] for x in part) / total, sum(x[4] for x in part) / 12288
    print(f"{name:22s} {share:5.1f}%  {inst:7.1f} inst/warp-tile  "
          + " ".join(f"{k[6:]} {100 * v / total:.1f}" for k, v in why.most_common(8)))
