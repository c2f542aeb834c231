"""The CDK app: wires the pipeline stack and the cdk-nag checks. Run by cdk.json as ``python -m infra.app``."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from aws_cdk import App, Validations
from cdk_nag import AwsSolutionsChecks

from infra.stacks.pipeline_stack import PipelineStack
from papersift.errors import SettingsError


def build_app(context: Mapping[str, Any] | None = None, outdir: str | None = None) -> tuple[App, PipelineStack]:
    """The app as ``cdk synth`` builds it; tests call this too, so they check what is deployed."""
    app = App(context=dict(context) if context is not None else None, outdir=outdir)
    stack = PipelineStack(app, "Papersift", description="papersift: document text extraction pipeline")
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app, stack


def main() -> int:
    try:
        app, _ = build_app()
    except SettingsError as exc:
        print(f"papersift: {exc}", file=sys.stderr)
        return 2
    app.synth()
    return 0


if __name__ == "__main__":
    sys.exit(main())
