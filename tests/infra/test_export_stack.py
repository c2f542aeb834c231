"""The stack with and without the export step (Settings.export_parquet): the state machine has
the Export states only with the setting, and then the export function, from the container image,
writing only under exports/ and only the export's outcome on the documents table."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("aws_cdk")

from aws_cdk import Stack
from aws_cdk.assertions import Template

from infra.app import build_app
from infra.stacks.pipeline_stack import PipelineStack
from infra.workflow import build_definition

FAST = {"aws:cdk:disable-asset-staging": True}
REPO = Path(__file__).resolve().parents[2]


def synthesized(outdir: Path, **settings: Any) -> tuple[PipelineStack, Any, dict[str, Any]]:
    app, stack = build_app(context={**FAST, "papersift": settings}, outdir=str(outdir))
    assembly = app.synth()
    return stack, assembly, Template.from_stack(stack).to_json()["Resources"]


@pytest.fixture(scope="module")
def on(tmp_path_factory: pytest.TempPathFactory) -> tuple[PipelineStack, Any, dict[str, Any]]:
    return synthesized(tmp_path_factory.mktemp("export-on"), export_parquet=True)


@pytest.fixture(scope="module")
def off(tmp_path_factory: pytest.TempPathFactory) -> tuple[PipelineStack, Any, dict[str, Any]]:
    return synthesized(tmp_path_factory.mktemp("export-off"))


def logical_id(stack: Stack, construct: Any) -> str:
    return stack.get_logical_id(construct.node.default_child)


def definition(stack: PipelineStack, resources: dict[str, Any]) -> dict[str, Any]:
    """The deployed definition, its ${...} placeholders left in."""
    machine = resources[logical_id(stack, stack.state_machine)]["Properties"]
    return dict(json.loads(machine["DefinitionString"]))


def state_names(states: dict[str, Any]) -> set[str]:
    """Every state's name, those inside Map states too."""
    names = set(states)
    for state in states.values():
        if "ItemProcessor" in state:
            names |= state_names(state["ItemProcessor"]["States"])
    return names


def test_by_default_the_workflow_has_no_export_state_and_the_stack_no_export_function(
        off: tuple[PipelineStack, Any, dict[str, Any]]) -> None:
    stack, _, resources = off
    assert stack.export_fn is None
    assert not [name for name in state_names(definition(stack, resources)["States"]) if "Export" in name]
    machine = resources[logical_id(stack, stack.state_machine)]["Properties"]
    assert "ExportFunctionArn" not in machine["DefinitionSubstitutions"]


def test_with_export_parquet_every_document_and_member_ends_in_the_export_step(
        on: tuple[PipelineStack, Any, dict[str, Any]]) -> None:
    """The deployed definition is the shared one with the export step: after assemble and after
    RecordFailure, at the top level and in both member Maps, each Export caught by its
    RecordExportFailure, so no export fails an execution."""
    stack, _, resources = on
    deployed = definition(stack, resources)
    assert deployed == build_definition(export=True)
    names = state_names(deployed["States"])
    for prefix in ("", "Member", "ListedMember"):
        assert {f"{prefix}Export", f"{prefix}RecordExportFailure"} <= names, prefix
    top = deployed["States"]
    assert top["Assemble"]["Next"] == top["RecordFailure"]["Next"] == "Export"
    assert top["Export"]["Catch"] == [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.export",
                                       "Next": "RecordExportFailure"}]
    assert top["RecordExportFailure"]["End"] is True and "Catch" not in top["RecordExportFailure"]
    machine = resources[logical_id(stack, stack.state_machine)]["Properties"]
    assert machine["DefinitionSubstitutions"]["ExportFunctionArn"] == \
        {"Fn::GetAtt": [logical_id(stack, stack.export_fn), "Arn"]}


def test_the_export_function_runs_the_container_image_with_its_own_handler(
        on: tuple[PipelineStack, Any, dict[str, Any]]) -> None:
    """pyarrow is in the image, not in the zip functions' layer: the function is the Dockerfile's,
    built with FUNCTION=export."""
    stack, assembly, resources = on
    assert stack.export_fn is not None
    props = resources[logical_id(stack, stack.export_fn)]["Properties"]
    assert props["PackageType"] == "Image" and props["Architectures"] == ["arm64"]
    assert props["Environment"]["Variables"]["PAPERSIFT_EXPORT_PARQUET"] == "true"
    manifest = json.loads(next(Path(assembly.directory).glob("*.assets.json")).read_text())
    built = {image["source"]["dockerBuildArgs"]["FUNCTION"] for image in manifest["dockerImages"].values()}
    assert "export" in built


def test_the_export_function_writes_only_exports_and_only_updates_the_item(
        on: tuple[PipelineStack, Any, dict[str, Any]]) -> None:
    stack, _, resources = on
    assert stack.export_fn is not None
    policy = resources[logical_id(stack, stack.export_fn.role.node.find_child("DefaultPolicy"))]
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    actions = [(s["Action"] if isinstance(s["Action"], list) else [s["Action"]], s["Resource"]) for s in statements]
    puts = {json.dumps(resource) for acts, resource in actions if "s3:PutObject" in acts}
    assert len(puts) == 1 and "/exports/*" in next(iter(puts))
    table = {"Fn::GetAtt": [logical_id(stack, stack.table), "Arn"]}
    dynamodb = [(acts, resource) for acts, resource in actions if any(a.startswith("dynamodb:") for a in acts)]
    assert [(acts, resource[0]) for acts, resource in dynamodb] == [(["dynamodb:UpdateItem"], table)]
    assert not any(a.startswith("s3:Delete") for acts, _ in actions for a in acts)


def test_every_container_function_is_built_by_the_image_script(on: tuple[PipelineStack, Any, dict[str, Any]]) -> None:
    """scripts/build_image.sh builds, and tests/image runs, the image of each function the stack
    deploys from functions/Dockerfile (the export function's too, with its setting on): a new
    container function cannot miss the image tests."""
    _, assembly, _ = on
    manifest = json.loads(next(Path(assembly.directory).glob("*.assets.json")).read_text())
    images = [image["source"] for image in manifest["dockerImages"].values()]
    assert {source["dockerFile"] for source in images} == {"functions/Dockerfile"}
    listed = subprocess.run(["bash", str(REPO / "scripts" / "build_image.sh"), "--list"],
                            capture_output=True, text=True, check=True)
    assert sorted(source["dockerBuildArgs"]["FUNCTION"] for source in images) == sorted(listed.stdout.split())


def test_the_state_machine_may_invoke_the_export_function(on: tuple[PipelineStack, Any, dict[str, Any]]) -> None:
    stack, _, resources = on
    role = {"Ref": logical_id(stack, stack.state_machine.role)}
    invoked = json.dumps([s["Resource"] for r in resources.values() if r["Type"] == "AWS::IAM::Policy"
                          and role in r["Properties"]["Roles"]
                          for s in r["Properties"]["PolicyDocument"]["Statement"]
                          if s["Action"] == "lambda:InvokeFunction"])
    assert stack.export_fn is not None and logical_id(stack, stack.export_fn) in invoked
