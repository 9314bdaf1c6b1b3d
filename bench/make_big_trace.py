#!/usr/bin/env python3
"""make_big_trace: a large torch trace for ladder-trace's size figures, made from a small real one.

It repeats a recorded trace (by default the forward + backward of common/trace/tests/data/torch211) end to end until
the file reaches --size bytes: each copy's timestamps are shifted past the previous copy, and every id that links
events (External id, correlation, the flows' ids, "Record function id", "Sequence number") and the step numbers
(ProfilerStep#k) are shifted too, so the copies link, nest and step exactly like the original, only more of them.
Metadata events (ph "M") and the profiler's own span are written once. The file is written as it is made: memory
stays that of one copy.

  python3 bench/make_big_trace.py --size 1G --out /tmp/big.json
  python3 bench/make_big_trace.py --steps 40000 --src common/trace/tests/data/torch211/cudagraph_mlp.json --out /tmp/steps.json
  python3 bench/make_big_trace.py --size 128M --rank 3 --world-size 8 --out /tmp/ranks/rank3.json   # one rank of 8
  python3 bench/make_big_trace.py --size 1G --memory --out /tmp/mem.json   # a profile_memory trace: [memory] events

--memory repeats the profile_memory training step of common/trace/tests/data/torch211_user/memory instead (a gzip
--src is read as such): its [memory] instants are copied with the rest, so every copy allocates and frees what the
recorded steps did, at the same addresses and with the same "Total Allocated" and "Total Reserved".
"""
import argparse
import decimal
import gzip
import json
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SRC = os.path.join(REPO, "common/trace/tests/data/torch211/transformer_fwd_bwd.json")
MEMORY_SRC = os.path.join(REPO, "common/trace/tests/data/torch211_user/memory/memory.1795494522131211083.pt.trace.json.gz")
ID_ARGS = ("External id", "correlation", "Record function id", "Sequence number", "Ev Idx", "Python id",
           "Python parent id")


def size_arg(s):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMG]?)", s)
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {s}")
    return int(float(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)])


class _Exact(json.JSONEncoder):
    def default(self, o):
        if isinstance(o, decimal.Decimal):
            return f"@@{o}@@"  # unquoted again by dumps()
        return super().default(o)


def dumps(obj):
    return re.sub(r'"@@([-0-9.Ee+]+)@@"', r"\1", json.dumps(obj, cls=_Exact))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--src", default=DEFAULT_SRC)
    p.add_argument("--out", required=True)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--size", type=size_arg, help="stop after the copy that makes the file at least this large")
    g.add_argument("--steps", type=int, help="stop after the copy that makes at least this many ProfilerSteps")
    p.add_argument("--rank", type=int, help="write distributedInfo with this rank, as torch.distributed runs do")
    p.add_argument("--world-size", type=int, default=1, help="distributedInfo's world_size, with --rank")
    p.add_argument("--memory", action="store_true", help="repeat the profile_memory step ([memory] events) instead")
    args = p.parse_args()
    if args.memory:
        args.src = MEMORY_SRC

    # Numbers as Decimal: a timestamp like 4463397055646.934 us has 16 digits, more than a double keeps exactly, and
    # the copies must keep torch's nanoseconds.
    with open(args.src, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    with (gzip.open(args.src, "rt") if gz else open(args.src)) as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    events = doc.pop("traceEvents")
    if args.rank is not None:
        doc["distributedInfo"] = {"backend": "nccl", "rank": args.rank, "world_size": args.world_size}
    once = [e for e in events if e.get("ph") == "M" or e.get("cat") == "Trace"]
    body = [e for e in events if not (e.get("ph") == "M" or e.get("cat") == "Trace")]
    timed = [e for e in body if "ts" in e]
    t0 = min(decimal.Decimal(e["ts"]) for e in timed)
    t1 = max(decimal.Decimal(e["ts"]) + decimal.Decimal(e.get("dur", 0)) for e in timed)
    period = (t1 - t0) + 100  # us between copies
    id_span = 1 + max([int(e["args"][k]) for e in body for k in ID_ARGS
                       if isinstance(e.get("args"), dict) and isinstance(e["args"].get(k), int)] +
                      [int(e["id"]) for e in body if isinstance(e.get("id"), int)] + [0])
    step_nums = [int(m.group(1)) for e in body for m in [re.fullmatch(r"ProfilerStep#(\d+)", e.get("name", ""))] if m]
    step_span = (max(step_nums) - min(step_nums) + 1) if step_nums else 0
    steps_per_copy = len({e["name"] for e in body if e.get("cat") == "user_annotation"
                          and e.get("name", "").startswith("ProfilerStep#")})

    tmp = args.out + ".tmp"
    copies = steps = 0
    with open(tmp, "w") as out:
        head = dumps(doc)[:-1]  # the top-level keys, without the closing brace
        out.write(head + (", " if doc else "") + '"traceEvents": [\n')
        first = True
        for e in once:
            out.write(("" if first else ",\n") + dumps(e))
            first = False
        while True:
            shift_ts, shift_id, shift_step = copies * period, copies * id_span, copies * step_span
            for e in body:
                c = dict(e)
                if "ts" in c:
                    c["ts"] = decimal.Decimal(c["ts"]) + shift_ts
                if isinstance(c.get("id"), int):
                    c["id"] = c["id"] + shift_id
                if isinstance(c.get("args"), dict):
                    a = dict(c["args"])
                    for k in ID_ARGS:
                        if isinstance(a.get(k), int) and a[k] > 0:
                            a[k] += shift_id
                    c["args"] = a
                m = re.fullmatch(r"ProfilerStep#(\d+)", c.get("name", ""))
                if m:
                    c["name"] = f"ProfilerStep#{int(m.group(1)) + shift_step}"
                out.write(("" if first else ",\n") + dumps(c))
                first = False
            copies += 1
            steps += steps_per_copy
            if (args.size and out.tell() >= args.size) or (args.steps and steps >= args.steps):
                break
        out.write("\n]}\n")
    os.replace(tmp, args.out)
    print(f"{args.out}: {os.path.getsize(args.out)} bytes, {copies} copies of {os.path.basename(args.src)}, "
          f"{steps} steps", file=sys.stderr)


if __name__ == "__main__":
    main()
