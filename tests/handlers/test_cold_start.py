"""What a handler's init loads: each function's module imported in a fresh interpreter, in the
environment the Lambda runtime sets (so the powertools Tracer is on and patches, as on AWS)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from handler_env import REPO

FUNCTIONS = sorted(path.parent.name for path in (REPO / "functions").glob("*/app.py"))
PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import app
import botocore.client
print(json.dumps({"requests": "requests" in sys.modules,
                  "botocore_traced": type(botocore.client.BaseClient._make_api_call).__name__ != "function"}))
"""


@pytest.mark.parametrize("function", FUNCTIONS)
def test_a_handlers_tracer_patches_botocore_and_imports_no_http_library_it_does_not_use(function: str) -> None:
    root = REPO / "functions" / function
    env = {**os.environ, "AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "LAMBDA_TASK_ROOT": str(root), "AWS_LAMBDA_FUNCTION_NAME": function,
           "TABLE_NAME": "t", "BUCKET_NAME": "b",
           "STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:x"}
    env.pop("POWERTOOLS_TRACE_DISABLED", None)
    out = subprocess.run([sys.executable, "-c", PROBE, str(root)], env=env, capture_output=True, text=True,
                         check=True, cwd=REPO)
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert loaded == {"requests": False, "botocore_traced": True}
