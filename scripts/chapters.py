#!/usr/bin/env python3
"""Reads chapters.txt, the list of the chapters (its top says the format), for Python; run, it checks the file.

    import chapters                       # with scripts/ on sys.path
    for e in chapters.entries("figure"):  # Entry(kind, chapter, needs, name, rest), in the file's order
        ...

entries() joins the chapter line's needs to each entry's, as scripts/chapters.sh does; chapter(name) is a chapter's
own line. Run as a script, it checks what the file names against the tree: every chapter folder exists with a
CMakeLists.txt and every NN_* folder is listed, every reference trace is committed under traces/reference/h100/
and every figure trace under traces/reference/, and no two entries share a name. Exit status 1 with one line per
problem.
"""

import collections
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILE = os.environ.get("LADDER_CHAPTERS", os.path.join(ROOT, "chapters.txt"))
KINDS = ("chapter", "run", "trace", "sanitize", "figure")
NEED = re.compile(r"^(-|cuda|sm90|torch|mpi|gpus[0-9]+)$")
REFERENCE = os.path.join("traces", "reference", "h100")
FIGURE_TRACES = os.path.join("traces", "reference")  # a figure's trace names its GPU's folder

Entry = collections.namedtuple("Entry", "kind chapter needs name rest line")


class ManifestError(Exception):
    pass


def _read(path=FILE):
    out, own = [], {}
    with open(path, encoding="utf-8") as f:
        for n, text in enumerate(f, 1):
            text = text.strip()
            if not text or text.startswith("#"):
                continue
            shown = os.path.abspath(path)
            shown = os.path.relpath(shown, ROOT) if shown.startswith(ROOT + os.sep) else shown
            where = f"{shown}:{n}"
            if re.search(r"[|;\"'\[\]]", text):
                raise ManifestError(f"{where}: an entry holds no quotes, bars, semicolons or brackets")
            fields = text.split(None, 4)
            if len(fields) < 4:
                raise ManifestError(f"{where}: expected KIND CHAPTER NEEDS NAME [REST], found {text!r}")
            kind, chapter, needs, name = fields[:4]
            rest = fields[4] if len(fields) > 4 else ""
            if kind not in KINDS:
                raise ManifestError(f"{where}: unknown kind {kind!r} (the kinds are {', '.join(KINDS)})")
            bad = [w for w in needs.split(",") if not NEED.match(w)]
            if bad:
                raise ManifestError(f"{where}: unknown need {bad[0]!r} (the needs are cuda, sm90, torch, mpi, gpusN)")
            if kind == "chapter":
                if chapter in own:
                    raise ManifestError(f"{where}: chapter {chapter} listed twice")
                own[chapter] = needs
            elif chapter not in own:
                raise ManifestError(f"{where}: {kind} entry for {chapter}, which has no chapter line above it")
            elif needs != "-":
                needs = needs if own[chapter] == "-" else own[chapter] + "," + needs
            else:
                needs = own[chapter]
            out.append(Entry(kind, chapter, needs, name, rest, where))
    return out


def entries(kind=None, path=FILE):
    """The entries of one kind (every kind when None), in the file's order."""
    return [e for e in _read(path) if kind is None or e.kind == kind]


def chapter(name, path=FILE):
    """A chapter's own line: Entry("chapter", folder, needs, target, launch command, ...)."""
    for e in entries("chapter", path):
        if e.chapter == name:
            return e
    raise KeyError(name)


def problems(path=FILE, root=ROOT):
    """What the file names that the tree does not hold, one line each."""
    try:
        all_entries = _read(path)
    except ManifestError as e:
        return [str(e)]
    out = []
    listed = [e.chapter for e in all_entries if e.kind == "chapter"]
    for c in listed:
        if not os.path.isfile(os.path.join(root, c, "CMakeLists.txt")):
            out.append(f"{c}: listed in chapters.txt, but {c}/CMakeLists.txt does not exist")
    for d in sorted(os.listdir(root)):
        if re.match(r"^\d\d_", d) and os.path.isdir(os.path.join(root, d)) and d not in listed:
            out.append(f"{d}: a chapter folder chapters.txt does not list (add its chapter line)")
    seen = {}
    for e in all_entries:
        if e.kind == "chapter":
            continue
        key = (e.kind, e.chapter if e.kind == "figure" else "", e.name)
        if key in seen:
            out.append(f"{e.line}: {e.kind} {e.name} already at {seen[key]}")
        seen[key] = e.line
        if e.kind in ("run", "trace"):
            ref = os.path.join(root, REFERENCE, e.name)
            if not (os.path.isdir(ref) or os.path.isfile(ref + ".json")):
                out.append(f"{e.line}: no committed trace {REFERENCE}/{e.name}.json (or folder): scripts/record_traces.sh "
                           "records it on a GPU")
        if e.kind == "figure":
            trace = e.rest.split()[0] if e.rest else ""
            if not e.name.endswith(".svg"):
                out.append(f"{e.line}: a figure's name ends in .svg, not {e.name!r}")
            if not trace or not os.path.exists(os.path.join(root, FIGURE_TRACES, trace)):
                out.append(f"{e.line}: figure {e.name}: no committed trace {FIGURE_TRACES}/{trace}")
    return out


if __name__ == "__main__":
    found = problems()
    for p in found:
        print(f"error: {p}")
    if not found:
        kinds = collections.Counter(e.kind for e in entries())
        print("chapters.txt: " + ", ".join(f"{kinds[k]} {k}" for k in KINDS) + " lines, all found")
    sys.exit(1 if found else 0)
