"""cfn-lint on the synthesized template, with the repository's .cfnlintrc.yaml: what `sam validate
--lint` and a reviewer's cfn-lint run report must be nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("aws_cdk")
pytest.importorskip("cfnlint")

from infra.app import build_app

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The settings that add resources are on (API key, OCR reservation, the export step), so their
    resources are linted too."""
    app, _ = build_app(context={"aws:cdk:disable-asset-staging": True,
                                "papersift": {"api_auth": "api_key", "ocr_reserved_concurrency": 600,
                                              "export_parquet": True}},
                       outdir=str(tmp_path_factory.mktemp("lint") / "cdk.out"))
    return Path(app.synth().directory) / "Papersift.template.json"


def cfn_lint(template: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from cfnlint.runner import main; main()", "--info", str(template)],
                          cwd=cwd, capture_output=True, text=True)


def test_cfn_lint_finds_nothing_in_the_synthesized_template(template: Path) -> None:
    """Errors, warnings and informational findings alike, with the repository's settings."""
    lint = cfn_lint(template, REPO)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_no_resource_depends_on_what_it_already_references(template: Path, tmp_path: Path) -> None:
    """W3005: CDK makes each function and the state machine DependsOn their role beside the
    role's policy, and the bucket notification DependsOn the queue it names by GetAtt;
    infra/dependencies.py drops those. Linted outside the repository, so that no ignore in
    .cfnlintrc.yaml can hide one, while every needed DependsOn (the role policies) stays."""
    lint = cfn_lint(template, tmp_path)
    assert "W3005" not in lint.stdout, lint.stdout
    assert lint.returncode == 0, lint.stdout + lint.stderr
    resources = json.loads(template.read_text())["Resources"]
    checked = 0
    ours = [r for r in resources.values() if r["Type"] == "AWS::Lambda::Function"
            and (r["Properties"].get("Handler") == "app.handler" or r["Properties"].get("PackageType") == "Image")]
    for fn in ours:
        role = fn["Properties"]["Role"]["Fn::GetAtt"][0]
        policies = {name for name, r in resources.items() if r["Type"] == "AWS::IAM::Policy"
                    and {"Ref": role} in r["Properties"].get("Roles", [])}
        assert policies <= set(fn.get("DependsOn", [])), (role, policies, fn.get("DependsOn"))
        checked += bool(policies)
    assert checked == len(ours) >= 9
