"""cfn-lint on the synthesized template, with the repository's .cfnlintrc.yaml: what `sam validate
--lint` and a reviewer's cfn-lint run report must be nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("aws_cdk")
pytest.importorskip("cfnlint")

from infra.app import build_app

REPO = Path(__file__).resolve().parents[2]


def test_cfn_lint_finds_nothing_in_the_synthesized_template(tmp_path: Path) -> None:
    """Errors, warnings and informational findings alike (W3005, CDK's redundant DependsOn, is
    ignored in .cfnlintrc.yaml with the reason); the settings that add resources are on (API key,
    OCR reservation), so their resources are linted too."""
    app, _ = build_app(context={"aws:cdk:disable-asset-staging": True,
                                "papersift": {"api_auth": "api_key", "ocr_reserved_concurrency": 600}},
                       outdir=str(tmp_path / "cdk.out"))
    template = Path(app.synth().directory) / "Papersift.template.json"
    lint = subprocess.run([sys.executable, "-c", "from cfnlint.runner import main; main()", "--info", str(template)],
                          cwd=REPO, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
