#!/usr/bin/env python3
"""Checks that every figure a README quotes from a committed file still matches that file.

A re-recording of a trace or a benchmark changes its numbers; this check makes a README that still quotes the old ones
fail. Each quoted figure is marked in the README by an HTML comment (invisible on GitHub) right above the paragraph,
list item or code block that quotes it; several markers may stand one above the other. The marked block runs from
the line below the markers to the next blank line, or, for prose, to the next list item or marker: a marker at the
end of a list item, indented like its text, marks the next item.
Paths are relative to the repository root. Three kinds:

  <!-- figures: traces/reference/h100/03_fused_mlp.txt "56.5us" "GPU time per forward: 226.5 us" -->
      Each quoted string must appear both in the named file and in the block below (whitespace runs count as one
      space, and "51.4 us" as "51.4us"; a string that starts or ends with a digit or letter must not sit inside a
      longer number or word, so "5.9" does not match "15.9" or "5.91"). Change either side and the check fails.

  <!-- printed: summary traces/reference/h100/02_linear.json -- "42.101us" -->
      The same for figures that `build/tools/ladder-trace` prints about a committed trace: each string after `--`
      must appear in what `ladder-trace summary traces/reference/h100/02_linear.json` prints and in the block below.
      Needs --ladder-trace, like `output` below. A string written "~52.81" is a rounded figure: the block shows
      52.81, and the command prints a number that rounds to it (52.809017..., as --csv prints at full precision).

  <!-- lines: traces/reference/h100/03_simple_mlp.txt -->
      Each non-empty line of the block below, a copy of lines the file holds, must equal one line of the file
      (whitespace runs count as one space).

  <!-- output -->
      The block below is a terminal session: its first line is `$ build/tools/ladder-trace ...`, the rest is what
      that command prints. The check runs the command with the ladder-trace given by --ladder-trace and requires the
      same lines. Without --ladder-trace these blocks are skipped (and counted).

A marker that names a file that does not exist fails too. `<!-- figures pending: WHAT -->` is no marker: it holds the
place of a figure not measured yet. --unmarked lists the paragraphs that name a committed file
and hold figures but have no marker, to find what is left to mark (it only lists them: some figures are arithmetic
of the reader's own, which no file holds).

Usage: scripts/check_figures.py [--ladder-trace PATH] [--unmarked] [README.md ...]
   (default: every README.md, and the per-kernel indexes bench/results/*.md)
Exit status 0 when every marked figure matches, 1 otherwise.
"""

import argparse
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKER = re.compile(r"^\s*<!--\s*(figures|printed|lines|output)\b(?!\s+pending):?(.*?)-->\s*$")
# "<!-- figures pending: WHAT -->" is not a marker: it stands where a measured figure is still to come, and says which.
# What --unmarked looks for: a committed file's name, and a number with a unit.
FILE_REF = re.compile(r"[\w./-]+\.(?:txt|json|md)\b")
FIGURE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:us|ms|ns|MB|GB/s|TFLOP/s|%)(?!\w)")


UNIT_GAP = re.compile(r"(\d) (us|ms|ns|MB|GB|MiB|GiB|GB/s|TFLOP/s|%)(?![\w/])")
LIST_ITEM = re.compile(r"^\s*(?:[-*]|\d+\.) ")


def collapse(text):
    """Whitespace runs as one space, and no space between a number and its unit: "51.4 us" reads as "51.4us"."""
    return UNIT_GAP.sub(r"\1\2", " ".join(text.split()))


def readmes():
    out = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        rel = os.path.relpath(dirpath, ROOT)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "build")))
        if "README.md" in filenames:
            out.append(os.path.normpath(os.path.join(rel, "README.md")))
    # bench/results/'s indexes (one per kernel, beside the dated folders' READMEs) are read like READMEs.
    index_dir = os.path.join(ROOT, "bench", "results")
    if os.path.isdir(index_dir):
        out += [os.path.join("bench", "results", f) for f in os.listdir(index_dir) if f.endswith(".md")]
    return sorted(out)


def token_pattern(token):
    """token, not inside a longer number or word."""
    left = r"(?<![\w.])" if token[0].isalnum() else ""
    right = r"(?!\.?\d)" if token[-1].isdigit() else r"(?!\w)" if token[-1].isalnum() else ""
    return re.compile(left + re.escape(token) + right)


ROUNDED = re.compile(r"^~(-?\d+(?:\.(\d+))?)$")
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")


def holds_rounded(text, figure, decimals):
    """Whether text holds a number that, rounded to `decimals` places, is `figure` (a string as the block shows it):
    rounded exactly, or as numpy and pandas round (scaled by 10^decimals, then half to even)."""
    scale = 10 ** decimals
    return any(figure in (f"{float(n):.{decimals}f}", f"{round(float(n) * scale) / scale:.{decimals}f}")
               for n in NUMBER.findall(text))


def indent(line):
    return len(line) - len(line.lstrip())


def block_after(lines, i):
    """The block below marker line i and the markers right below it, as (its first line's number, 1-based; its lines).
    A code block (indented 4 more than the marker) runs to the next blank line; a paragraph or list item also ends
    where the next list item or marker starts."""
    start = i + 1
    while start < len(lines) and MARKER.match(lines[start]):
        start += 1
    code = start < len(lines) and lines[start].strip() and indent(lines[start]) >= indent(lines[i]) + 4
    j = start
    while j < len(lines) and lines[j].strip():
        if j > start and not code and (LIST_ITEM.match(lines[j]) or MARKER.match(lines[j])):
            break
        j += 1
    return start + 1, lines[start:j]


def read_named(name, where, errors):
    path = os.path.join(ROOT, name)
    if not os.path.isfile(path):
        errors.append(f"{where}: the marker names {name}, which does not exist")
        return None
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def check_readme(readme, ladder_trace, errors, counts):
    with open(os.path.join(ROOT, readme), encoding="utf-8") as f:
        lines = f.read().split("\n")
    marked = set()  # line numbers of blocks that carry a marker
    for i, line in enumerate(lines):
        m = MARKER.match(line)
        if not m:
            continue
        kind, args = m.group(1), m.group(2).strip()
        where = f"{readme}:{i + 1}"
        first, block = block_after(lines, i)
        if not block:
            errors.append(f"{where}: a {kind} marker must sit right above its paragraph or block (no blank line)")
            continue
        marked.update(range(first, first + len(block)))
        span = f"{readme}:{first}-{first + len(block) - 1}"
        if kind in ("figures", "printed"):
            try:
                words = shlex.split(args)
            except ValueError as e:
                errors.append(f"{where}: cannot read the marker ({e})")
                continue
            if kind == "printed":
                if "--" not in words or words.index("--") == len(words) - 1:
                    errors.append(f"{where}: a printed marker is: ladder-trace's arguments, --, the quoted figures")
                    continue
                command, tokens = words[:words.index("--")], words[words.index("--") + 1:]
                if any(read_named(w, where, errors) is None for w in command if w.endswith(".json")):
                    continue
                if not ladder_trace:
                    counts["output skipped"] += 1
                    continue
                run = subprocess.run([ladder_trace] + command, cwd=ROOT, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, universal_newlines=True)
                text, source = run.stdout, "what `ladder-trace " + " ".join(command) + "` prints"
                if run.returncode != 0:
                    errors.append(f"{where}: `ladder-trace {' '.join(command)}` failed (exit {run.returncode})")
                    continue
            else:
                if len(words) < 2:
                    errors.append(f"{where}: a figures marker names a file and at least one quoted figure")
                    continue
                text, source, tokens = read_named(words[0], where, errors), words[0], words[1:]
                if text is None:
                    continue
            text, quoted = collapse(text), collapse("\n".join(block))
            for token in tokens:
                counts["figures"] += 1
                rounded = ROUNDED.match(token)
                if rounded:
                    figure, decimals = rounded.group(1), len(rounded.group(2) or "")
                    if not holds_rounded(text, figure, decimals):
                        errors.append(f"{where}: no number in {source} rounds to \"{figure}\" (the README quotes it "
                                      f"at {span})")
                    if not token_pattern(figure).search(quoted):
                        errors.append(f"{where}: \"{figure}\" is in the marker but not in the text below it ({span})")
                    continue
                pattern = token_pattern(collapse(token))
                if not pattern.search(text):
                    errors.append(f"{where}: \"{token}\" is not in {source} (the README quotes it at {span})")
                if not pattern.search(quoted):
                    errors.append(f"{where}: \"{token}\" is in the marker but not in the text below it ({span})")
        elif kind == "lines":
            text = read_named(args, where, errors)
            if text is None:
                continue
            have = {collapse(x) for x in text.split("\n")}
            for k, quoted in enumerate(block):
                if not quoted.strip():
                    continue
                counts["lines"] += 1
                if collapse(quoted) not in have:
                    errors.append(f"{readme}:{first + k}: this line is not a line of {args}:\n    {quoted.strip()}")
        else:  # output
            prompt = block[0].lstrip()
            if not prompt.startswith("$ build/tools/ladder-trace "):
                errors.append(f"{where}: an output block starts with `$ build/tools/ladder-trace ...`")
                continue
            if not ladder_trace:
                counts["output skipped"] += 1
                continue
            counts["output"] += 1
            indent = len(block[0]) - len(prompt)
            want = [x[indent:].rstrip() for x in block[1:]]
            run = subprocess.run([ladder_trace] + shlex.split(prompt[len("$ build/tools/ladder-trace "):]), cwd=ROOT,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
            got = [x.rstrip() for x in run.stdout.rstrip("\n").split("\n")]
            if run.returncode != 0 or got != want:
                diff = next((k for k in range(max(len(got), len(want)))
                             if k >= len(got) or k >= len(want) or got[k] != want[k]), None)
                detail = "" if diff is None else (
                    f"\n    {readme}:{first + 1 + diff} shows:\n      {want[diff] if diff < len(want) else '(nothing)'}"
                    f"\n    the command prints:\n      {got[diff] if diff < len(got) else '(nothing)'}")
                errors.append(f"{where}: `{prompt[2:]}` (exit {run.returncode}) no longer prints what the README "
                              f"shows at {span}{detail}")
    return lines, marked


def unmarked(readme, lines, marked):
    """Paragraphs that name a file and hold figures, with no marker above them."""
    out, i = [], 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].strip():
            j += 1
        para = "\n".join(lines[i:j])
        if not marked.intersection(range(i + 1, j + 1)) and FILE_REF.search(para) and FIGURE.search(para):
            out.append(f"{readme}:{i + 1}: {', '.join(sorted(set(FIGURE.findall(para))))[:150]}")
        i = j
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("readmes", nargs="*", help="README files, relative to the repository root (default: all, and bench/results/*.md)")
    ap.add_argument("--ladder-trace", help="the ladder-trace program, to check `output` blocks")
    ap.add_argument("--unmarked", action="store_true", help="also list paragraphs with figures and no marker")
    args = ap.parse_args()
    errors, counts, todo = [], {"figures": 0, "lines": 0, "output": 0, "output skipped": 0}, []
    for readme in [os.path.relpath(os.path.abspath(r), ROOT) for r in args.readmes] or readmes():
        lines, marked = check_readme(readme, args.ladder_trace, errors, counts)
        if args.unmarked:
            todo += unmarked(readme, lines, marked)
    for e in errors:
        print("error:", e)
    for t in todo:
        print("unmarked:", t)
    skipped = f", {counts['output skipped']} markers that run ladder-trace skipped (no --ladder-trace)" if counts["output skipped"] else ""
    print(f"{'FAILED' if errors else 'ok'}: {counts['figures']} figures, {counts['lines']} copied lines, "
          f"{counts['output']} command outputs checked{skipped}; {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
