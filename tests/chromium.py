"""Headless Chromium (Debian's `chromium`) driven by its own command line: load a page, run a
probe script on it, read back what the probe wrote, or take a screenshot.

A report page forbids scripts (its Content-Security-Policy), so the probe runs in a harness page
that loads the report in an iframe and inspects its DOM as the browser built it (file URLs share
an origin with --allow-file-access-from-files). --dump-dom prints the harness once its virtual
time budget is spent, by when the iframe has loaded and the probe has written its JSON.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TIMEOUT_SECONDS = 90


def chromium_binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _run(arguments: list[str]) -> str:
    binary = chromium_binary()
    if binary is None:
        raise RuntimeError("chromium is not installed (scripts/bootstrap.sh installs Debian's package)")
    with tempfile.TemporaryDirectory(prefix="papersift-chromium-") as profile:
        result = subprocess.run([binary, *FLAGS, f"--user-data-dir={profile}", *arguments], capture_output=True,
                                text=True, timeout=TIMEOUT_SECONDS, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"chromium failed ({result.returncode}): {result.stderr[-2000:]}")
    return result.stdout


def probe(page: Path, script: str, width: int = 390, height: int = 844) -> Any:
    """Load ``page`` at a phone's width and return what ``script`` returns: a JavaScript function
    body run with ``doc`` (the report's document) and ``win`` (its window) once it has loaded."""
    harness = page.with_name(page.stem + ".probe.html")
    harness.write_text(f"""<!DOCTYPE html><html><body>
<iframe id="page" src="{html.escape(page.name)}" style="width:{width}px;height:{height}px;border:0"></iframe>
<pre id="probe-result">pending</pre>
<script>
document.getElementById('page').addEventListener('load', () => {{
  const frame = document.getElementById('page'), doc = frame.contentDocument, win = frame.contentWindow;
  let out;
  try {{ out = (function (doc, win) {{ {script} }})(doc, win); }} catch (e) {{ out = {{probeError: String(e)}}; }}
  document.getElementById('probe-result').textContent = JSON.stringify(out);
}});
</script></body></html>""", encoding="utf-8")
    dom = _run(["--allow-file-access-from-files", "--virtual-time-budget=10000", "--dump-dom", harness.as_uri()])
    found = re.search(r'<pre id="probe-result">(.*?)</pre>', dom, re.S)
    if not found or found.group(1) == "pending":
        raise RuntimeError(f"the probe did not run; chromium printed: {dom[:2000]}")
    return json.loads(html.unescape(found.group(1)))


def screenshot(page: Path, out: Path, width: int = 1100, height: int = 1500) -> None:
    _run([f"--window-size={width},{height}", "--hide-scrollbars", f"--screenshot={out}", page.as_uri()])
