#!/usr/bin/env python3
"""check_links.py on planted trees: it must name each dead link and anchor, and pass a tree whose links all lead
somewhere (code blocks and spans, other schemes and duplicate headings included)."""

import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_links.py")

GOOD = {
    "README.md": "# Top\n\nSee [the tool](tools/README.md#the-views), [its code](tools/), [below](#two-words-here),\n"
                 "![a picture](docs/a.svg) and [the web](https://example.com/x).\n\n## Two words: `here`\n\n"
                 "## Again\n\n## Again\n\n[the second](#again-1)\n\n```\n[not a link](nowhere.md)\n```\n"
                 "and `[nor this](nowhere.md)`.\n",
    "tools/README.md": "# ladder-trace\n\n## The views\n\n[up](../README.md#top)\n",
    "docs/a.svg": "<svg/>",
    "build/README.md": "[a build output is not read](nowhere.md)\n",
}
DEAD = {
    "README.md": "# Top\n\n[a file](tools/NOPE.md) and [a heading](tools/README.md#the-views)\n\n"
                 "[an anchor](tools/README.md#no-such-heading) and [here](#nowhere)\n",
    "tools/README.md": "# ladder-trace\n\n## The views\n",
}


def run(tree):
    with tempfile.TemporaryDirectory() as root:
        for name, text in tree.items():
            os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
            with open(os.path.join(root, name), "w") as f:
                f.write(text)
        p = subprocess.run([sys.executable, SCRIPT, root], capture_output=True, text=True)
        return p.returncode, p.stdout


def main():
    failures = []
    code, out = run(GOOD)
    if code != 0 or "ok: " not in out:
        failures.append(f"the good tree failed (exit {code}):\n{out}")
    code, out = run(DEAD)
    expected = ["README.md:3: tools/NOPE.md: no such file or folder",
                "README.md:5: tools/README.md#no-such-heading: no heading of README.md has the anchor #no-such-heading",
                "README.md:5: #nowhere: no heading of README.md has the anchor #nowhere",
                "error: 3 dead links in 2 Markdown files"]
    if code != 1 or out.splitlines() != expected:
        failures.append(f"the dead tree: exit {code}, printed:\n{out}expected exit 1 and:\n" + "\n".join(expected))
    for f in failures:
        print(f)
    print("ok" if not failures else f"{len(failures)} of 2 planted trees went wrong")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
