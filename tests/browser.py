"""A real browser's view of a page (headless Chromium, when one is installed; tests skip otherwise).

:func:`measure` opens a page from disk with the network off and returns what the browser laid out:
every ``<math>`` element (whether the browser parsed it as MathML and its size), every table (rows and
height), text left that still looks like TeX, and the script errors the page raised.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

BROWSER = next((found for name in ("chromium", "chromium-browser", "google-chrome") if (found := shutil.which(name))),
               None)
PROBE = """<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message)));
window.addEventListener('load', () => {
  const maths = [...document.querySelectorAll('math')].map(m => {
    const r = m.getBoundingClientRect(); return {mathml: m instanceof MathMLElement, width: r.width, height: r.height};
  });
  const tables = [...document.querySelectorAll('table')].map(
    t => ({rows: t.rows.length, height: t.getBoundingClientRect().height}));
  const tex = (document.body.innerText.match(/\\$[^$\\n]*\\\\[a-zA-Z]+[^$\\n]*\\$/g) || []).slice(0, 5);
  const out = document.createElement('pre'); out.id = '__measure';
  out.textContent = JSON.stringify({maths, tables, tex, errors: window.__errors});
  document.body.appendChild(out);
});
</script>"""


def measure(page: Path) -> dict:
    """What Chromium laid out for ``page`` (a copy with the probe script added is opened, never ``page`` itself)."""
    html = Path(page).read_text(encoding="utf-8", errors="replace")
    probed = html.replace("</body>", PROBE + "</body>", 1) if "</body>" in html else html + PROBE
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "page.html"
        copy.write_text(probed, encoding="utf-8")
        done = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu",
                               "--proxy-server=127.0.0.1:9", "--virtual-time-budget=5000", "--dump-dom",
                               copy.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="__measure">(.*?)</pre>', done.stdout, re.S)
    assert found, f"the browser returned no measurement: {done.stderr[-2000:]}"
    import html as html_module

    return json.loads(html_module.unescape(found.group(1)))
