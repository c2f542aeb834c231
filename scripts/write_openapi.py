"""Write docs/openapi.json: the API's OpenAPI document, generated from its routes and models.

    .venv/bin/python scripts/write_openapi.py          # rewrite the file
    .venv/bin/python scripts/write_openapi.py --check  # exit 1 when it differs from the code

tests/api/test_openapi.py fails when the committed file drifts from the code.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = ROOT / "docs" / "openapi.json"
#: the handler reads these at import; generating the document needs no deployment
PLACEHOLDER_ENV = {
    "TABLE_NAME": "papersift-documents",
    "BUCKET_NAME": "papersift-documents",
    "STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:papersift-workflow",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def generated() -> str:
    for name, value in PLACEHOLDER_ENV.items():
        os.environ.setdefault(name, value)
    from papersift_cli.api_server import load_api_module

    document: dict[str, Any] = load_api_module(ROOT / "functions" / "api").openapi_document()
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    text = generated()
    if "--check" in argv:
        current = DOCUMENT.read_text(encoding="utf-8") if DOCUMENT.exists() else ""
        if current != text:
            print(f"{DOCUMENT.relative_to(ROOT)} is out of date: run scripts/write_openapi.py", file=sys.stderr)
            return 1
        return 0
    DOCUMENT.write_text(text, encoding="utf-8")
    print(f"wrote {DOCUMENT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
