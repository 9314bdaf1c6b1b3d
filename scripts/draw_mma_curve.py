"""Draws chapter 04's mma.sync occupancy picture from a committed run: TFLOP/s of register-resident mma.sync against
warps per SM, one line per number of independent accumulators a warp ("chains"), from `bench_epilogue_mlp
--mma-curve`'s table, with the portable variant marked at its 8 warps per SM from `bench_epilogue_mlp`'s table of
the same day.

    python3 scripts/draw_mma_curve.py CURVE_TXT BENCH_TXT OUT_SVG
"""
import re
import sys

W, H, LEFT, RIGHT, TOP, BOTTOM = 720, 360, 70, 150, 40, 50
COLORS = {1: "#9ecae1", 2: "#6baed6", 4: "#3182bd", 8: "#08519c"}


def read_curve(path):
    points = {}
    for line in open(path):
        m = re.match(r"\s+(\d+)\s+(\d+)\s+([\d.]+)$", line)
        if m:
            points.setdefault(int(m[2]), []).append((int(m[1]), float(m[3])))
    gpu = next(line for line in open(path) if line.startswith("GPU"))
    return points, gpu.split(": ", 1)[1].split(" (")[0]


def read_portable(path):
    for line in open(path):
        if line.startswith("8192,768,3072") and " portable " in line:
            return float(line.split()[4])  # TFLOP/s
    raise SystemExit(f"{path}: no portable row at the blog's shape")


def main():
    curve_txt, bench_txt, out = sys.argv[1:4]
    points, gpu = read_curve(curve_txt)
    portable = read_portable(bench_txt)
    warps = sorted({w for line in points.values() for w, _ in line})
    top = 100 * (int(max(t for line in points.values() for _, t in line)) // 100 + 1)
    x = {w: LEFT + i * (W - LEFT - RIGHT) / (len(warps) - 1) for i, w in enumerate(warps)}
    y = lambda t: TOP + (H - TOP - BOTTOM) * (1 - t / top)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{LEFT}" y="20" font-size="14">mma.sync m16n8k16 bf16, operands in registers, {gpu}</text>']
    for t in range(0, top + 1, 100):
        svg.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#ddd"/>')
        svg.append(f'<text x="{LEFT - 8}" y="{y(t) + 4:.1f}" text-anchor="end">{t}</text>')
    for w in warps:
        svg.append(f'<text x="{x[w]:.1f}" y="{H - BOTTOM + 18}" text-anchor="middle">{w}</text>')
    svg.append(f'<text x="{(LEFT + W - RIGHT) / 2:.1f}" y="{H - 12}" text-anchor="middle">warps per SM</text>')
    svg.append(f'<text x="16" y="{(TOP + H - BOTTOM) / 2:.1f}" text-anchor="middle" '
               f'transform="rotate(-90 16 {(TOP + H - BOTTOM) / 2:.1f})">TFLOP/s</text>')
    for chains, line in sorted(points.items()):
        line.sort()
        path = " ".join(f"{x[w]:.1f},{y(t):.1f}" for w, t in line)
        svg.append(f'<polyline points="{path}" fill="none" stroke="{COLORS.get(chains, "#000")}" stroke-width="2.5"/>')
        for w, t in line:
            svg.append(f'<circle cx="{x[w]:.1f}" cy="{y(t):.1f}" r="3.5" fill="{COLORS.get(chains, "#000")}"/>')
    legend_y = TOP + 60
    for i, chains in enumerate(sorted(points)):
        cy = legend_y + 18 * i
        svg.append(f'<line x1="{W - RIGHT + 20}" x2="{W - RIGHT + 44}" y1="{cy}" y2="{cy}" '
                   f'stroke="{COLORS.get(chains, "#000")}" stroke-width="2.5"/>')
        svg.append(f'<text x="{W - RIGHT + 50}" y="{cy + 4}">{chains} chain{"s" if chains > 1 else ""} a warp</text>')
    px, py = x[8], y(portable)
    svg.append(f'<rect x="{px - 6:.1f}" y="{py - 6:.1f}" width="12" height="12" fill="#d62728"/>')
    svg.append(f'<text x="{px + 12:.1f}" y="{py + 4:.1f}" fill="#d62728">portable: {portable:.1f} TFLOP/s '
               f'(8 warps, 32 mma per k-step)</text>')
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
