"""Infra tests: CDK assertions on the stack and checks of the one workflow definition."""

import os
import sys
from pathlib import Path

# jsii runs aws_cdk on the `node` first on PATH: the project's own Node 22 (npm ci puts it in
# node_modules/.bin), not the machine's, which may be past its end of life (20: jsii prints a
# banner on every import). Set before the first import starts the node process.
_NODE_BIN = Path(__file__).resolve().parents[2] / "node_modules" / ".bin"
if (_NODE_BIN / "node").exists() and not os.environ.get("PATH", "").startswith(str(_NODE_BIN)):
    os.environ["PATH"] = f"{_NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"

# `infra` is the repository's package, not this folder: the repo root must be importable (pytest
# only puts tests/ on the path, where tests/infra would be found as a namespace package).
REPO_ROOT = str(Path(__file__).resolve().parents[2])
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)
