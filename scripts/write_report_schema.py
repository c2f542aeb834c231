"""Write layers/papersift/python/papersift/schema/report.schema.json: the JSON Schema of report.json,
generated from the report models (papersift.report).

    .venv/bin/python scripts/write_report_schema.py          # rewrite the file
    .venv/bin/python scripts/write_report_schema.py --check  # exit 1 when it differs from the code

tests/unit/test_report_models.py fails when the committed file drifts from the models.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "layers" / "papersift" / "python" / "papersift" / "schema" / "report.schema.json"


def generated() -> str:
    from papersift.report import report_json_schema

    return json.dumps(report_json_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT / "layers" / "papersift" / "python"))  # this checkout's models
    text = generated()
    if "--check" in argv:
        current = SCHEMA.read_text(encoding="utf-8") if SCHEMA.exists() else ""
        if current != text:
            print(f"{SCHEMA.relative_to(ROOT)} is out of date: run scripts/write_report_schema.py", file=sys.stderr)
            return 1
        return 0
    SCHEMA.write_text(text, encoding="utf-8")
    print(f"wrote {SCHEMA.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
