"""Infra tests: CDK assertions on the stack and checks of the one workflow definition."""

import os
import sys
from pathlib import Path

# jsii prints an end-of-life banner for node 20 on every import of aws_cdk; it must be set
# before the first import starts the node process.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

# `infra` is the repository's package, not this folder: the repo root must be importable (pytest
# only puts tests/ on the path, where tests/infra would be found as a namespace package).
REPO_ROOT = str(Path(__file__).resolve().parents[2])
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)
