"""Nsight Compute's per-instruction warp-state samples of call 2's A kernel (call2_ncu_A_sass.csv.gz), summed by what
each warp does. The row ranges are this kernel's SASS as that file lists it (row 0 = its first instruction): the math
warpgroups from the start to the first EXIT, the epilogue warps to the second, then the producer; each wait is its
SYNCS.PHASECHK.TRANS64.TRYWAIT, the branch after it and its retry loop at the end of the listing."""
import collections, csv, gzip, sys

rows = list(csv.reader(gzip.open(sys.argv[1] if len(sys.argv) > 1 else "call2_ncu_A_sass.csv.gz", "rt")))
hdr, data = rows[1], rows[2:]
ix = {h: i for i, h in enumerate(hdr)}
stalls = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]


def n(r, col):
    return int(r[ix[col]] or 0)


def region(lines, name):
    s = sum(n(data[i], "Warp Stall Sampling (All Samples)") for i in lines)
    e = sum(n(data[i], "Instructions Executed") for i in lines)
    agg = {h[6:]: sum(n(data[i], h) for i in lines) for h in stalls}
    top = sorted(agg.items(), key=lambda x: -x[1])[:6]
    print(f"{name:34s} samples {s:5d}  warp instructions {e:9d}  " + " ".join(f"{k}:{v}" for k, v in top))


print("all samples", sum(n(r, "Warp Stall Sampling (All Samples)") for r in data))
region(range(0, 258), "math warpgroups")
region([183, 184, 185, 1083, 1084, 1085, 1086], "  waiting for dh_empty")
region([90, 91, 99, 100, 1079, 1080, 1081, 1082], "  waiting for a full stage")
region(range(76, 171), "  main loop body (a k-tile)")
region(range(258, 613), "epilogue warps")
region([331, 332, 350, 1087, 1088, 1089, 1090], "  waiting for dh_full")
region([371, 372, 373, 1091, 1092, 1093, 1094], "  waiting for g and u")
region(range(379, 600), "  loop body (a 16-byte vector)")
region(range(613, 1079), "producer warp")
print("main loop body: %.1f instructions a k-tile a warp" % (sum(n(data[i], "Instructions Executed") for i in range(81, 171)) / 147456))
print("epilogue loop body: %.1f instructions a vector" % (sum(n(data[i], "Instructions Executed") for i in range(379, 600)) / 98304))
ops = collections.Counter(data[i][1].strip().lstrip("@!P0123456789 ").split()[0] for i in range(379, 600))
print("epilogue loop body by opcode:", ", ".join(f"{k} {v}" for k, v in ops.most_common()))
