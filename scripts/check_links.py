#!/usr/bin/env python3
"""Checks that every relative link in the repository's Markdown files leads somewhere.

A link `[text](path)` or picture `![alt](path)` must name a file or folder that exists, relative to the Markdown file
that holds it; a link `[text](file.md#anchor)` or `[text](#anchor)` must also name a heading of that file, as GitHub
makes its anchors (lower case, punctuation dropped, spaces as hyphens). Links with a scheme (https:, mailto:) are not
followed, nor are links inside code blocks or code spans. Each dead link is one line, `FILE:LINE: TARGET: why`.

Usage: scripts/check_links.py [ROOT]   (default: the repository; build*/ and hidden folders are left out)
Exit status 0 when every link leads somewhere, 1 otherwise.
"""

import functools
import os
import re
import sys

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"`[^`]*`")


def markdown_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "build")))
        for name in sorted(filenames):
            if name.endswith(".md"):
                yield os.path.join(dirpath, name)


def prose_lines(path):
    """(line number, text) of each line outside fenced code blocks."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
            elif not fenced:
                yield number, line


def slug(heading):
    """GitHub's anchor of a heading: its text in lower case, without punctuation, spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps its text
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


@functools.lru_cache(maxsize=None)
def anchors(path):
    """Every heading's anchor in the file; a repeated heading gets -1, -2, ... as GitHub numbers them."""
    found, count = set(), {}
    for _, line in prose_lines(path):
        m = HEADING.match(line)
        if m:
            base = slug(m.group(1))
            n = count.get(base, 0)
            count[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def dead_links(path):
    here = os.path.dirname(path)
    for number, line in prose_lines(path):
        for m in LINK.finditer(CODE_SPAN.sub("", line)):
            target = m.group(1)
            if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(here, file_part)) if file_part else path
            if not os.path.exists(dest):
                yield number, target, "no such file or folder"
            elif anchor and dest.endswith(".md") and os.path.isfile(dest) and anchor not in anchors(dest):
                yield number, target, f"no heading of {os.path.basename(dest)} has the anchor #{anchor}"


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(__file__)))
    files = links = 0
    bad = []
    for path in markdown_files(root):
        files += 1
        for number, target, why in dead_links(path):
            bad.append(f"{os.path.relpath(path, root)}:{number}: {target}: {why}")
        links += sum(len(LINK.findall(CODE_SPAN.sub("", line))) for _, line in prose_lines(path))
    for line in bad:
        print(line)
    if bad:
        print(f"error: {len(bad)} dead links in {files} Markdown files")
        return 1
    print(f"ok: {links} links in {files} Markdown files lead somewhere")
    return 0


if __name__ == "__main__":
    sys.exit(main())
