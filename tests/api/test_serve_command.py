"""`papersift serve` as a person runs it: the installed command in a process of its own, on the port
the system picks (`--port 0`), driven by the README's curl session, stopped with Ctrl-C (SIGINT).

test_api_http.py covers the routes in depth against the same server held in-process (LocalApi);
this test is what those cannot show: the command's arguments, the URL it prints, and a clean stop.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from readme_session import run_readme_curl_session

pytestmark = pytest.mark.slow
COMMAND = Path(sys.executable).with_name("papersift")
#: the first line `papersift serve` prints: where it listens
LISTENING = re.compile(r"papersift API on (http://127\.0\.0\.1:(\d+)) ")
START_SECONDS = 60


def wait_for_url(server: subprocess.Popen[bytes], stdout: Path, stderr: Path) -> str:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        found = LISTENING.search(stdout.read_text(encoding="utf-8", errors="replace"))
        if found:
            return found.group(1)
        assert server.poll() is None, f"serve exited {server.returncode}: {stderr.read_text(errors='replace')}"
        time.sleep(0.1)
    raise AssertionError(f"serve printed no URL in {START_SECONDS} s: {stderr.read_text(errors='replace')}")


def test_serve_on_port_0_prints_its_url_answers_the_readme_session_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    assert COMMAND.exists(), f"{COMMAND} is missing: `pip install -e .` installs the papersift command"
    stdout, stderr = tmp_path / "serve.out", tmp_path / "serve.err"
    with open(stdout, "wb") as out, open(stderr, "wb") as err:
        server = subprocess.Popen([str(COMMAND), "serve", "--port", "0"], cwd=tmp_path, stdout=out, stderr=err,
                                  stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        url = wait_for_url(server, stdout, stderr)
        assert int(url.rsplit(":", 1)[1]) > 0, "the port the system picked, not the 0 asked for"
        session = tmp_path / "session"
        session.mkdir()
        run_readme_curl_session(url, session, timeout=60)
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) == 0, stderr.read_text(errors="replace")
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert "papersift: stopped" in stderr.read_text(encoding="utf-8", errors="replace")
    printed = stdout.read_text(encoding="utf-8")
    assert "auth: IAM (SigV4" in printed, printed
