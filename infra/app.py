"""The CDK app: wires the pipeline stack and the cdk-nag checks. Run by cdk.json as ``python -m infra.app``."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from aws_cdk import App, Aspects, Validations
from cdk_nag import AwsSolutionsChecks

from infra.dependencies import DropImpliedDependsOn
from infra.stacks.pipeline_stack import PipelineStack
from papersift.errors import SettingsError

#: CDK feature flags the template relies on, set here rather than in cdk.json so that the tests'
#: apps (which do not read cdk.json) synthesize what `cdk synth` does. serverAccessLogsUseBucketPolicy:
#: the access-log bucket admits S3's log delivery by a bucket policy, not the legacy
#: LogDeliveryWrite ACL (cfn-lint W3045: a legacy property; S3 recommends bucket policies).
FEATURE_FLAGS: dict[str, Any] = {"@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy": True}


def build_app(context: Mapping[str, Any] | None = None, outdir: str | None = None) -> tuple[App, PipelineStack]:
    """The app as ``cdk synth`` builds it; tests call this too, so they check what is deployed."""
    app = App(context={**FEATURE_FLAGS, **(context or {})}, outdir=outdir)
    stack = PipelineStack(app, "Papersift", description="papersift: document text extraction pipeline")
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    Aspects.of(app).add(DropImpliedDependsOn())  # cfn-lint W3005 (infra/dependencies.py)
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
