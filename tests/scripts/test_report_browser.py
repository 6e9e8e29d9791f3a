"""test_report_browser — report.html in a real browser: Debian's chromium, headless, opens it from file:// and
  * renders it: the summary table, every section, the strip plots (SVG elements in the DOM), every <img> decoded
    (complete, a natural width), a screenshot that is not blank;
  * prints no console message (the page has no script: a message is a load error or a blocked request);
  * fetches nothing but files of its own folder (the page's resource timing entries, and chromium's net log
    for requests the page started).
The probe that reads images and resource entries is a script added to a copy of the page (the page itself
forbids scripts). Exit 77 (ctest: skipped) with the reason when chromium is not installed
(scripts/install-deps.sh installs it). COOPBENCH_SCREENSHOT=PATH keeps the screenshot.
Run: /usr/bin/python3 test_report_browser.py (in tests/scripts).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import synthetic  # noqa: E402
from test_report_html import SECTIONS, make_folder  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PROBE = """<script>
window.addEventListener('load', function () {
  var broken = [];
  for (var i = 0; i < document.images.length; i++) {
    var im = document.images[i];
    if (!im.complete || im.naturalWidth === 0) broken.push(im.getAttribute('src'));
  }
  var out = {images: document.images.length, broken: broken, svgs: document.querySelectorAll('svg').length,
             h2: Array.prototype.map.call(document.querySelectorAll('h2'), function (h) { return h.id; }),
             summary_rows: document.querySelectorAll('#summary-table tbody tr').length,
             resources: performance.getEntriesByType('resource').map(function (e) { return e.name; })};
  var p = document.createElement('pre');
  p.id = 'coopbench-probe';
  p.textContent = JSON.stringify(out);
  document.body.appendChild(p);
});
</script>"""


def chromium(url: str, *extra, timeout: int = 180):
    """chromium — run headless chromium on url with the project's flags (no sandbox: tests may run as root; no
    background networking, component updates or sync; a fresh profile); returns CompletedProcess."""
    profile = tempfile.mkdtemp(prefix="coopbench-chromium-")
    try:
        return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                               "--disable-background-networking", "--disable-component-update", "--disable-sync",
                               "--no-first-run", f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
                               "--virtual-time-budget=10000", *extra, url],
                              capture_output=True, text=True, timeout=timeout)
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def page_requests(netlog: Path) -> list:
    """page_requests — the URLs (not file://) whose requests a page started, from chromium's net log; the browser's
    own (update checks, its clock: initiator "not an origin") left out."""
    log = json.loads(netlog.read_text())
    types = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    started = [e["params"] for e in log["events"]
               if types.get(e["type"]) == "URL_REQUEST_START_JOB" and "url" in e.get("params", {})]
    return sorted({p["url"] for p in started if p.get("initiator") != "not an origin" and not p["url"].startswith("file:")})


def png_pixels(path):
    import matplotlib.image as mpimg
    return mpimg.imread(str(path))


class BrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = Path(tempfile.mkdtemp(prefix="coopbench-report-browser-"))
        folder = make_folder(cls.dir / "r")
        p = synthetic.run("plot.py", folder)
        assert p.returncode == 0, p.stderr
        cls.page = folder / "report.html"
        html = cls.page.read_text()
        # The probe's copy: the page with its script ban lifted and the probe added.
        probe = re.sub(r"<meta http-equiv='Content-Security-Policy'[^>]*>", "", html).replace("</body>",
                                                                                               PROBE + "</body>")
        cls.probe = folder / "probe.html"
        cls.probe.write_text(probe)
        cls.netlog = cls.dir / "netlog.json"
        cls.shot = Path(os.environ.get("COOPBENCH_SCREENSHOT") or cls.dir / "report.png")
        cls.dom = chromium(cls.probe.as_uri(), "--dump-dom", f"--log-net-log={cls.netlog}")
        cls.real = chromium(cls.page.as_uri(), "--hide-scrollbars", "--window-size=1280,1600",
                            f"--screenshot={cls.shot}")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def probe_result(self):
        self.assertEqual(self.dom.returncode, 0, self.dom.stderr[-2000:])
        m = re.search(r'<pre id="coopbench-probe">(.*?)</pre>', self.dom.stdout, re.S)
        self.assertIsNotNone(m, "the probe did not run: " + self.dom.stdout[-500:])
        import html
        return json.loads(html.unescape(m.group(1)))

    def test_sections_summary_and_plots_render(self):
        r = self.probe_result()
        self.assertEqual([h for h in r["h2"] if h in SECTIONS], SECTIONS)
        self.assertGreater(r["summary_rows"], 3)
        self.assertGreater(r["svgs"], 10)  # the points' strip plots

    def test_every_image_decoded(self):
        r = self.probe_result()
        self.assertGreater(r["images"], 0)
        self.assertEqual(r["broken"], [])

    def test_nothing_fetched_but_its_own_files(self):
        r = self.probe_result()
        folder = self.page.parent.as_uri()
        for url in r["resources"]:
            self.assertTrue(url.startswith(folder + "/"), url)
        self.assertEqual(page_requests(self.netlog), [])

    def test_the_network_check_sees_a_page_request(self):
        # A page that asks loopback's discard port for an image: its request is in the net log as the page's.
        page = self.dir / "fetches.html"
        page.write_text("<!DOCTYPE html><html><body><img src='http://127.0.0.1:9/x.png'></body></html>")
        log = self.dir / "fetches-netlog.json"
        chromium(page.as_uri(), "--dump-dom", f"--log-net-log={log}")
        self.assertEqual(page_requests(log), ["http://127.0.0.1:9/x.png"])

    def test_no_console_message_and_a_screenshot(self):
        self.assertEqual(self.real.returncode, 0, self.real.stderr[-2000:])
        console = [ln for ln in self.real.stderr.splitlines() if ":CONSOLE" in ln]
        self.assertEqual(console, [])
        px = png_pixels(self.shot)
        self.assertEqual(px.shape[1], 1280)
        self.assertGreater(float(px.std()), 0.05)  # not a blank page


if __name__ == "__main__":
    if CHROMIUM is None:
        print("test_report_browser: skipped: chromium is not installed (Debian's chromium package; "
              "scripts/install-deps.sh installs it)")
        sys.exit(77)
    unittest.main()
