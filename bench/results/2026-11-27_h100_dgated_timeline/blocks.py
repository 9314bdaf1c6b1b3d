"""Summarize one call's per-block times of dgated_gemm_kernel (lines: block, SM, start, main loop done, end, in ns of
%globaltimer), as the README quotes them: python3 blocks.py blocks_diag0.txt ..."""
import collections
import statistics
import sys

for path in sys.argv[1:]:
    rows = [list(map(int, line.split())) for line in open(path)]
    t0 = min(r[2] for r in rows)
    blocks = [((s - t0) / 1e3, (m - t0) / 1e3, (e - t0) / 1e3, sm) for _, sm, s, m, e in rows]
    span = max(b[2] for b in blocks)
    first = [b for b in blocks if b[0] < 1.0]
    later = [b for b in blocks if b[0] > 30 and b[2] < span - 20]
    main = lambda bs: statistics.median(b[1] - b[0] for b in bs)
    # the part of the kernel's span in which an SM has at least one block in its main loop, averaged over SMs
    per_sm = collections.defaultdict(list)
    for b in blocks:
        per_sm[b[3]].append((b[0], b[1]))
    busy = 0.0
    for spans in per_sm.values():
        spans.sort()
        start, end = spans[0]
        for s, e in spans[1:]:
            if s > end:
                busy += end - start
                start, end = s, e
            else:
                end = max(end, e)
        busy += end - start
    print(f"{path}: {len(blocks)} blocks on {len(per_sm)} SMs over {span:.1f} us; main loop median {main(blocks):.2f} us "
          f"(first wave {main(first):.2f}, blocks started after 30 us {main(later):.2f}); epilogue median "
          f"{statistics.median(b[2] - b[1] for b in blocks):.2f} us; an SM has a block in its main loop "
          f"{100 * busy / len(per_sm) / span:.0f}% of the span")
