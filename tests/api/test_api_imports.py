"""The API Lambda loads nothing of extraction (issue 21): its cold start pays for the routes, the
models and the catalog, never for archives, format readers, the page worker or OCR.

Each case imports the module in a fresh interpreter (the test process has loaded everything) and
reads ``sys.modules``; an import added anywhere on the way, at module level, fails it naming the
module that came in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import papersift
from papersift.layout import BUCKET_NAME_ENV, STATE_MACHINE_ARN_ENV, TABLE_NAME_ENV

REPO = Path(__file__).resolve().parents[2]
#: the papersift under test (a worktree's, not whichever one the venv has installed)
CORE = Path(papersift.__file__).resolve().parents[1]
API = REPO / "functions" / "api"
#: modules of the core that read documents: what the extraction steps load and the API never needs
EXTRACTION = ("papersift.archives", "papersift.formats", "papersift.isolation", "papersift.ocr", "papersift.pdf_",
              "papersift.decryption", "papersift.rendering", "papersift.quality", "papersift.sniff",
              "papersift.pipeline", "papersift.steps.plan", "papersift.steps.unpack", "papersift.steps.extract",
              "papersift.steps.ocr", "papersift.steps.assemble", "papersift.verdict")

PROBE = """import json, sys
sys.path.insert(0, sys.argv[1])
__import__(sys.argv[2])
print(json.dumps(sorted(name for name in sys.modules if name.startswith("papersift"))))"""


def loaded_by(module: str) -> list[str]:
    """The papersift modules a fresh interpreter holds after importing ``module``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(CORE), os.environ.get("PYTHONPATH", "")]),
           "AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
           "POWERTOOLS_TRACE_DISABLED": "true", TABLE_NAME_ENV: "papersift-documents",
           BUCKET_NAME_ENV: "papersift-local",
           STATE_MACHINE_ARN_ENV: "arn:aws:states:us-east-1:123456789012:stateMachine:papersift"}
    done = subprocess.run([sys.executable, "-c", PROBE, str(API), module], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def is_extraction(name: str) -> bool:
    """``name`` is one of EXTRACTION or inside it (``papersift.pdf_`` stands for every pdf_* module)."""
    return any(name.startswith(prefix) if prefix.endswith("_") else name == prefix or name.startswith(prefix + ".")
               for prefix in EXTRACTION)


@pytest.mark.parametrize("module", ["app", "papersift.catalog"])
def test_the_api_lambda_imports_nothing_of_extraction(module: str) -> None:
    loaded = loaded_by(module)
    assert "papersift.catalog" in loaded  # the probe did load the API
    assert [name for name in loaded if is_extraction(name)] == []
