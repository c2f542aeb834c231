from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@pytest.fixture
def pdf_factory() -> ModuleType:
    import pdf_factory

    return pdf_factory
