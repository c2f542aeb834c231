"""The API in front of the pipeline: API Gateway (REST) and its one Lambda, ``functions/api``.

Its resources and methods are read from ``docs/openapi.json``, which is generated from the
handler's routes (a test fails when it drifts), so API Gateway exposes exactly what the code
serves. Every method is authenticated: IAM (SigV4) by default, or an API key with a usage plan
(``Settings.api_auth``); the stage throttles, logs access (never bodies) and traces with X-Ray;
API Gateway's own refusals answer in the API's error shape.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aws_cdk import CfnOutput, RemovalPolicy
from aws_cdk import aws_apigateway as apigateway
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra.stacks.nag import acknowledge
from papersift.api_models import GATEWAY_ERRORS
from papersift.settings import Settings

OPENAPI_DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"
STAGE_NAME = "v1"


def openapi_operations(document: Path = OPENAPI_DOCUMENT) -> list[tuple[str, str]]:
    """(path, METHOD) of every operation the API serves, from its OpenAPI document."""
    paths: dict[str, Any] = json.loads(document.read_text(encoding="utf-8"))["paths"]
    return [(path, method.upper()) for path, operations in sorted(paths.items()) for method in sorted(operations)]


class DocumentsApi(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, handler: lambda_.IFunction, settings: Settings) -> None:
        super().__init__(scope, construct_id)
        self.settings = settings
        iam_auth = settings.api_auth == "iam"
        access_logs = logs.LogGroup(self, "AccessLogs", retention=logs.RetentionDays.ONE_MONTH,
                                    removal_policy=RemovalPolicy.DESTROY)
        self.rest_api = apigateway.RestApi(
            self,
            "RestApi",
            description="papersift: submit documents, follow their extraction, fetch the results",
            endpoint_types=[apigateway.EndpointType.REGIONAL],
            cloud_watch_role=True,  # the account-level role API Gateway logs errors with
            cloud_watch_role_removal_policy=RemovalPolicy.DESTROY,
            deploy_options=apigateway.StageOptions(
                stage_name=STAGE_NAME,
                tracing_enabled=True,
                throttling_rate_limit=settings.api_throttle_rate,
                throttling_burst_limit=settings.api_throttle_burst,
                metrics_enabled=True,
                # errors only, and never request data: a body may hold passwords
                logging_level=apigateway.MethodLoggingLevel.ERROR,
                data_trace_enabled=False,
                access_log_destination=apigateway.LogGroupLogDestination(access_logs),
                access_log_format=apigateway.AccessLogFormat.json_with_standard_fields(
                    caller=True, http_method=True, ip=True, protocol=True, request_time=True, resource_path=True,
                    response_length=True, status=True, user=True),
            ),
        )
        validator = self.rest_api.add_request_validator(
            "Validator", validate_request_parameters=True, validate_request_body=True)
        integration = apigateway.LambdaIntegration(handler, proxy=True)
        for path, method in openapi_operations():
            resource = self.rest_api.root.resource_for_path(path)
            parameters = {f"method.request.path.{name[1:-1]}": True
                          for name in path.split("/") if name.startswith("{")}
            resource.add_method(
                method,
                integration,
                authorization_type=apigateway.AuthorizationType.IAM if iam_auth else apigateway.AuthorizationType.NONE,
                api_key_required=not iam_auth,
                request_validator=validator,
                request_parameters=parameters or None,
            )
        for kind, (status, code) in GATEWAY_ERRORS.items():
            self.rest_api.add_gateway_response(
                f"Gateway{kind.title().replace('_', '')}",
                type=apigateway.ResponseType.of(kind),
                status_code=str(status),
                templates={"application/json": json.dumps(
                    {"error": {"code": code, "message": "MESSAGE", "field": None}}
                ).replace('"MESSAGE"', "$context.error.messageString")},
            )
        if not iam_auth:
            self._usage_plan()
        self._acknowledge_accepted_findings(iam_auth)
        CfnOutput(scope, "ApiUrl", value=self.rest_api.url, description="the API's base URL (stage included)")

    def _acknowledge_accepted_findings(self, iam_auth: bool) -> None:
        acknowledge(self, "AwsSolutions-COG4",
                    "Callers are services and scripts, authenticated by IAM SigV4 (or an API key), not user pools.")
        acknowledge(self, "AwsSolutions-APIG3",
                    "A WAF web ACL is the deployer's choice per account; IAM auth and stage throttling guard the API.")
        acknowledge(self, "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
                          "AmazonAPIGatewayPushToCloudWatchLogs]",
                    "API Gateway's account-level logging role: the managed policy only writes CloudWatch logs.")
        if not iam_auth:
            acknowledge(self, "AwsSolutions-APIG4",
                        "api_key mode (chosen in Settings.api_auth): every method requires the usage plan's API key.")

    def _usage_plan(self) -> None:
        """api_key mode: one key, in a usage plan that throttles and caps the day's requests."""
        key = self.rest_api.add_api_key("ApiKey", description="papersift API caller")
        plan = self.rest_api.add_usage_plan(
            "UsagePlan",
            description="papersift API callers",
            throttle=apigateway.ThrottleSettings(rate_limit=self.settings.api_throttle_rate,
                                                 burst_limit=self.settings.api_throttle_burst),
            quota=apigateway.QuotaSettings(limit=self.settings.api_quota_per_day, period=apigateway.Period.DAY),
        )
        plan.add_api_stage(stage=self.rest_api.deployment_stage)
        plan.add_api_key(key)
        CfnOutput(self, "ApiKeyId", value=key.key_id,
                  description="aws apigateway get-api-key --include-value --api-key <id> gives the key")
