"""The README's curl session (the block between `<!-- curl-session` and `<!-- /curl-session -->`),
run as written with bash, curl --aws-sigv4 and jq against a papersift API at a given URL."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from pdf_factory import text_pdf

ROOT = Path(__file__).resolve().parents[1]
MEMO = "Minutes of the harbour board, with the budget for buoys."


def readme_curl_session() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    session = re.search(r"<!-- curl-session.*?-->\n```bash\n(.*?)```\n<!-- /curl-session -->", readme, re.S)
    assert session, "the README lost its curl session block"
    return session.group(1)


def run_readme_curl_session(api_url: str, workdir: Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """Run the session in ``workdir`` (with the memo.pdf it uploads) against ``api_url`` and check
    what it prints: the document clean, its text, the report page it saved."""
    for tool in ("curl", "jq"):
        assert shutil.which(tool), f"{tool} is missing: scripts/bootstrap.sh installs it"
    (workdir / "memo.pdf").write_bytes(text_pdf([MEMO]))
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", readme_curl_session()], cwd=workdir,
                            capture_output=True, text=True, timeout=timeout, env={**os.environ, "API": api_url})
    assert result.returncode == 0, result.stderr
    assert '"status": "clean"' in result.stdout and "harbour board" in result.stdout, result.stdout
    assert 'id="page-strip"' in (workdir / "report.html").read_text(encoding="utf-8")
    return result
