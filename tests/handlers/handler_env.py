"""What handler tests share: sample events from events/ and the real handler modules."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[2]
BUCKET = "papersift-local"
TABLE = "papersift-documents"


def load_event(name: str) -> dict[str, Any]:
    return json.loads((REPO / "events" / f"{name}.json").read_text(encoding="utf-8"))


def load_handler(name: str) -> ModuleType:
    """Import functions/<name>/app.py fresh, so its module-level clients bind to moto."""
    module_name = f"papersift_handler_{name}"
    spec = importlib.util.spec_from_file_location(module_name, REPO / "functions" / name / "app.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


