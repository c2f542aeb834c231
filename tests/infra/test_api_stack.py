"""CDK assertions on the API: its routes, authentication, throttling, logs, traces and grants."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("aws_cdk")

from aws_cdk import App
from aws_cdk.assertions import Match, Template

from infra.app import build_app
from infra.stacks.api import STAGE_NAME, openapi_operations
from infra.stacks.pipeline_stack import PipelineStack
from papersift import listing
from papersift.api_models import GATEWAY_ERRORS

pytestmark = pytest.mark.slow
FAST = {"aws:cdk:disable-asset-staging": True}
SETTINGS = {"api_throttle_rate": 25, "api_throttle_burst": 60, "api_quota_per_day": 5000, "upload_expiry_days": 2}


def synthesized(tmp_path_factory: pytest.TempPathFactory, **settings: Any) -> tuple[App, PipelineStack]:
    return build_app(context={**FAST, "papersift": {**SETTINGS, **settings}},
                     outdir=str(tmp_path_factory.mktemp("cdk.out")))


@pytest.fixture(scope="module")
def iam_app(tmp_path_factory: pytest.TempPathFactory) -> tuple[App, PipelineStack]:
    return synthesized(tmp_path_factory)


@pytest.fixture(scope="module")
def key_app(tmp_path_factory: pytest.TempPathFactory) -> tuple[App, PipelineStack]:
    return synthesized(tmp_path_factory, api_auth="api_key")


@pytest.fixture(scope="module")
def iam(iam_app: tuple[App, PipelineStack]) -> Template:
    return Template.from_stack(iam_app[1])


@pytest.fixture(scope="module")
def keyed(key_app: tuple[App, PipelineStack]) -> Template:
    return Template.from_stack(key_app[1])


def methods(template: Template) -> dict[str, dict[str, Any]]:
    return {k: v["Properties"] for k, v in template.find_resources("AWS::ApiGateway::Method").items()}


def resource_paths(template: Template) -> set[str]:
    """Every API Gateway resource as its full path, rebuilt from the PathPart/ParentId chain."""
    resources = template.find_resources("AWS::ApiGateway::Resource")

    def path_of(logical_id: str) -> str:
        properties = resources[logical_id]["Properties"]
        parent = properties["ParentId"]
        prefix = path_of(parent["Ref"]) if "Ref" in parent else ""
        return f"{prefix}/{properties['PathPart']}"

    return {path_of(logical_id) for logical_id in resources}


def test_api_gateway_serves_exactly_the_operations_of_the_openapi_document(iam: Template) -> None:
    """Routes, OpenAPI document and API Gateway are one list: the stack reads docs/openapi.json."""
    operations = openapi_operations()
    assert len(operations) == 6
    assert {path for path, _ in operations} <= resource_paths(iam)
    assert sorted(m["HttpMethod"] for m in methods(iam).values()) == sorted(method for _, method in operations)
    for properties in methods(iam).values():
        integration = properties["Integration"]
        assert (integration["Type"], integration["IntegrationHttpMethod"]) == ("AWS_PROXY", "POST")


def test_every_method_requires_iam_sigv4_by_default_and_none_answers_anonymously(iam: Template) -> None:
    assert {(m["AuthorizationType"], m.get("ApiKeyRequired", False)) for m in methods(iam).values()} == {
        ("AWS_IAM", False)}
    iam.resource_count_is("AWS::ApiGateway::UsagePlan", 0)


def test_api_key_mode_requires_the_key_on_every_method_with_a_throttled_usage_plan_and_quota(
        keyed: Template) -> None:
    assert {m.get("ApiKeyRequired") for m in methods(keyed).values()} == {True}
    keyed.has_resource_properties("AWS::ApiGateway::UsagePlan", {
        "Throttle": {"RateLimit": 25, "BurstLimit": 60},
        "Quota": {"Limit": 5000, "Period": "DAY"},
        "ApiStages": [Match.object_like({"Stage": Match.any_value()})],
    })
    keyed.resource_count_is("AWS::ApiGateway::UsagePlanKey", 1)


def test_the_stage_throttles_logs_access_without_bodies_and_traces(iam: Template) -> None:
    iam.has_resource_properties("AWS::ApiGateway::Stage", {
        "StageName": STAGE_NAME,
        "TracingEnabled": True,
        "AccessLogSetting": {"DestinationArn": Match.any_value(), "Format": Match.string_like_regexp(r"requestId")},
        "MethodSettings": [Match.object_like({
            "HttpMethod": "*", "ResourcePath": "/*", "ThrottlingRateLimit": 25, "ThrottlingBurstLimit": 60,
            "DataTraceEnabled": False, "LoggingLevel": "ERROR",
        })],
    })
    function = next(v["Properties"] for k, v in iam.find_resources("AWS::Lambda::Function").items()
                    if k.startswith("Api"))
    assert function["TracingConfig"] == {"Mode": "Active"} and function["Timeout"] == 29


def test_api_gateway_refusals_answer_in_the_error_shape_with_a_stable_code(iam: Template) -> None:
    responses = {v["Properties"]["ResponseType"]: v["Properties"]
                 for v in iam.find_resources("AWS::ApiGateway::GatewayResponse").values()}
    assert set(responses) == set(GATEWAY_ERRORS)
    for kind, (status, code) in GATEWAY_ERRORS.items():
        template = responses[kind]["ResponseTemplates"]["application/json"]
        assert responses[kind]["StatusCode"] == str(status)
        expected = '{"error": {"code": "CODE", "message": $context.error.messageString, "field": null}}'
        assert template == expected.replace("CODE", code)


def test_api_uploads_and_archive_members_expire_by_a_lifecycle_rule(iam: Template) -> None:
    """They may carry passwords in their metadata: expired after processing, old versions a day later."""
    bucket = next(v["Properties"] for v in iam.find_resources("AWS::S3::Bucket").values()
                  if v["Properties"].get("VersioningConfiguration"))
    rules = {r["Id"]: r for r in bucket["LifecycleConfiguration"]["Rules"]}
    for rule_id, prefix in (("expire-api-uploads", "incoming/api/"), ("expire-archive-members", "members/")):
        assert rules[rule_id]["Prefix"] == prefix and rules[rule_id]["ExpirationInDays"] == 2
        assert rules[rule_id]["NoncurrentVersionExpiration"] == {"NoncurrentDays": 1}


def test_the_apis_view_copies_expire_once_no_link_to_them_can_still_be_valid(iam: Template) -> None:
    """An archive's view copy is handed out for one link lifetime and each URL lasts one more
    (900 s by default): a day, old versions a day later."""
    bucket = next(v["Properties"] for v in iam.find_resources("AWS::S3::Bucket").values()
                  if v["Properties"].get("VersioningConfiguration"))
    rule = next(r for r in bucket["LifecycleConfiguration"]["Rules"] if r["Id"] == "expire-views")
    assert (rule["Prefix"], rule["ExpirationInDays"], rule["Status"]) == ("views/", 1, "Enabled")
    assert rule["NoncurrentVersionExpiration"] == {"NoncurrentDays": 1}


def test_the_table_has_the_listing_indexes_the_api_queries(iam: Template) -> None:
    table = next(iter(iam.find_resources("AWS::DynamoDB::Table").values()))["Properties"]
    indexes = {i["IndexName"]: i for i in table["GlobalSecondaryIndexes"]}
    assert set(indexes) == {index.name for index in listing.INDEXES}
    for index in listing.INDEXES:
        assert indexes[index.name]["KeySchema"] == [{"AttributeName": index.partition, "KeyType": "HASH"},
                                                    {"AttributeName": index.sort, "KeyType": "RANGE"}]
        assert indexes[index.name]["Projection"]["NonKeyAttributes"] == list(listing.PROJECTED)


def test_the_api_function_presigns_uploads_only_under_incoming_api_and_deletes_only_what_papersift_wrote(
        iam: Template, iam_app: tuple[App, PipelineStack]) -> None:
    stack = iam_app[1]
    role = stack.get_logical_id(stack.api_fn.role.node.default_child)  # type: ignore[union-attr,arg-type]
    policy = next(v["Properties"]["PolicyDocument"] for v in iam.find_resources("AWS::IAM::Policy").values()
                  if {"Ref": role} in v["Properties"]["Roles"])
    text = json.dumps(policy)
    puts = [json.dumps(r) for s in policy["Statement"] if "s3:PutObject" in s["Action"]
            for r in (s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]])]
    assert sorted(r.split("/")[-2] for r in puts) == ["api", "views"], puts  # uploads; an archive's view copies
    assert "/incoming/api/*" in puts[0] + puts[-1]
    deletes = next(s for s in policy["Statement"] if "s3:DeleteObjectVersion" in s["Action"])
    assert sorted(json.dumps(r).split("/")[-2] for r in deletes["Resource"]) == [
        "api", "exports", "members", "results", "views", "work"]
    assert "states:StartExecution" not in text, "the API never starts runs: uploads do"


def test_cdk_nag_passes_in_both_auth_modes_with_every_acknowledgement_reasoned(
        iam_app: tuple[App, PipelineStack], key_app: tuple[App, PipelineStack]) -> None:
    """Synth fails on an unacknowledged finding; a plugin with nothing to report is not listed
    (tests/infra/test_pipeline_stack.py shows the checks are active)."""
    for app, _ in (iam_app, key_app):
        report = json.loads((Path(app.synth().directory) / "validation-report.json").read_text())
        assert all(plugin["conclusion"] == "success" for plugin in report["pluginReports"]), report


@pytest.mark.parametrize(("settings", "named"), [
    ({"api_auth": "open"}, "api_auth"),
    ({"api_inline_max_bytes": 6_000_000}, "api_inline_max_bytes"),
    ({"api_upload_url_seconds": 8 * 24 * 3600}, "api_upload_url_seconds"),
    ({"api_throttle_rate": 0}, "api_throttle_rate"),
])
def test_a_bad_api_setting_fails_synth_naming_it(settings: dict[str, Any], named: str) -> None:
    """An API with no auth, an inline limit API Gateway cannot carry, a URL SigV4 cannot sign: refused."""
    from papersift.errors import SettingsError

    with pytest.raises(SettingsError, match=named):
        PipelineStack(App(context={"papersift": settings}), "Bad")
