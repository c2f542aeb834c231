"""Build hook (all metadata is in pyproject.toml): compile the word lists into papersift/data
before the package's files are collected, so every install (``pip install .``, ``pip install -e .``)
carries them. The compiler is the package's own (``papersift.lexicon``), so this file only calls it."""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

CORE = Path(__file__).resolve().parent / "layers" / "papersift" / "python"


class BuildWithWordLists(build_py):
    def run(self) -> None:
        sys.path.insert(0, str(CORE))
        try:
            from papersift import lexicon
        finally:
            sys.path.remove(str(CORE))
        lexicon.main([])
        super().run()


setup(cmdclass={"build_py": BuildWithWordLists})
