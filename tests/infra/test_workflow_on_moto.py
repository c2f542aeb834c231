"""The workflow definition executed by moto's Step Functions, with fake step functions.

These pin the routing of workflow.asl.json itself (which step runs with which payload, in which
case), independently of the real handlers: the end-to-end tests cover those.
"""

from __future__ import annotations

import io
import json
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock

import boto3
import pytest

moto = pytest.importorskip("moto")
from moto import mock_aws  # noqa: E402
from moto.awslambda.models import LambdaFunction  # noqa: E402

from infra.workflow import PLACEHOLDERS, load_definition  # noqa: E402
from papersift.steps.contracts import (  # noqa: E402
    ARCHIVE,
    READY,
    AssembleRequest,
    AssembleResult,
    Batch,
    DocumentRef,
    ExtractResult,
    Plan,
    RunInput,
    UnpackRequest,
    UnpackResult,
    manifest_json,
)

REGION = "us-east-1"
BUCKET = "papersift-workflow-test"


class CorruptInputError(Exception):
    """Named like the core's error: Step Functions sees the class name as the error."""


class FakeSteps:
    """Stand-ins for plan/extract/unpack/assemble that record what the workflow sent them.

    Each parses its event with the step's request model and answers with the result model, as
    the real handlers do: a workflow that sends a field no model has fails here.
    """

    def __init__(self, s3: Any) -> None:
        self.s3 = s3
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()

    def called(self, step: str) -> list[dict[str, Any]]:
        return [event for name, event in self.calls if name == step]

    def __call__(self, step: str, event: dict[str, Any]) -> Any:
        with self._lock:
            self.calls.append((step, event))
        handlers = {"plan": (RunInput, self.plan), "extract": (Batch, self.extract),
                    "unpack": (UnpackRequest, self.unpack), "assemble": (AssembleRequest, self.assemble)}
        model, handler = handlers[step]
        return handler(model.model_validate(event)).model_dump(mode="json")

    def plan(self, event: RunInput) -> Plan:
        name = event.source_name
        batches = [Batch(doc_id=event.doc_id, bucket=event.bucket, key=event.key, kind="pdf", first_page=1 + 10 * i,
                         last_page=10 * (i + 1), batch_index=i) for i in range(3)]
        plan = Plan(**event.ref.model_dump(), status=READY, batches=batches, batch_count=3,
                    manifest_key=f"work/{event.doc_id}/batches.json", max_concurrency=4)
        if name.startswith("big"):
            self.s3.put_object(Bucket=BUCKET, Key=plan.manifest_key, Body=manifest_json(batches))
            return plan.model_copy(update={"batches": [], "use_distributed_map": True})
        if name.endswith(".zip"):
            return plan.model_copy(update={"status": ARCHIVE, "batches": [], "batch_count": 0})
        if name.endswith(".xyz"):
            return plan.model_copy(update={"status": "unsupported", "batches": [], "batch_count": 0})
        if name.startswith("holder"):  # a PDF with embedded files, an email with attachments
            return plan.model_copy(update={"holds_files": True})
        return plan

    def extract(self, event: Batch) -> ExtractResult:
        if "poison" in event.key and event.batch_index == 1:
            raise CorruptInputError("page 12 has a broken content stream")
        return ExtractResult(batch_index=event.batch_index, pages=10, chars=1234)

    def unpack(self, event: UnpackRequest) -> UnpackResult:
        items = [DocumentRef(doc_id=f"{event.doc_id}-m{i}", bucket=event.bucket, source_name=f"a{i}.txt",
                             key=f"members/{event.doc_id}/a{i}.txt", parent_doc_id=event.doc_id,
                             archive_path=f"dir/a{i}.txt")
                 for i in range(2)]
        if event.source_name.startswith("nest"):  # a member the unpack step left as a file, yet an archive
            items.append(DocumentRef(doc_id=f"{event.doc_id}-inner", bucket=event.bucket, source_name="inner.zip",
                                     key=f"members/{event.doc_id}/inner.zip", parent_doc_id=event.doc_id,
                                     archive_path="inner.zip"))
        return UnpackResult(status="ok", member_count=len(items), item_count=len(items), use_distributed_map=False,
                            manifest_key=f"work/{event.doc_id}/member-items.json", max_concurrency=4, items=items)

    def assemble(self, event: AssembleRequest) -> AssembleResult:
        return AssembleResult(doc_id=event.doc_id, status="failed" if event.error else "clean", page_count=0,
                              results_prefix=f"results/{event.doc_id}/")


def _dispatching_invoke(steps: FakeSteps) -> Callable[..., bytes]:
    def invoke(self: LambdaFunction, body: str, request_headers: Any, response_headers: Any) -> bytes:
        try:
            result = steps(self.function_name, json.loads(body or "{}"))
        except Exception as exc:  # reported as a function error, as Lambda does
            response_headers["x-amz-function-error"] = "Unhandled"
            return json.dumps({"errorType": type(exc).__name__, "errorMessage": str(exc)}).encode()
        return json.dumps(result).encode()

    return invoke


@pytest.fixture(scope="module")
def workflow() -> Iterator[tuple[Any, str, FakeSteps]]:
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        role = boto3.client("iam", region_name=REGION).create_role(
            RoleName="papersift-test", AssumeRolePolicyDocument="{}"
        )["Role"]["Arn"]
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w") as zf:
            zf.writestr("app.py", "def handler(event, context):\n    return event\n")
        lam = boto3.client("lambda", region_name=REGION)
        arns = {}
        for placeholder in PLACEHOLDERS:
            name = placeholder.removesuffix("FunctionArn").lower()
            arns[placeholder] = lam.create_function(
                FunctionName=name,
                Runtime="python3.12",
                Role=role,
                Handler="app.handler",
                Code={"ZipFile": archive.getvalue()},
            )["FunctionArn"]
        sfn = boto3.client("stepfunctions", region_name=REGION)
        machine = sfn.create_state_machine(name="papersift", definition=load_definition(arns), roleArn=role)
        steps = FakeSteps(s3)
        with mock.patch.object(LambdaFunction, "invoke", _dispatching_invoke(steps)):
            yield sfn, machine["stateMachineArn"], steps


def run(workflow: tuple[Any, str, FakeSteps], source_name: str) -> tuple[dict[str, Any], FakeSteps]:
    sfn, machine_arn, steps = workflow
    doc_id = source_name.replace(".", "-")
    run_input = RunInput(doc_id=doc_id, bucket=BUCKET, key=f"incoming/{source_name}", source_name=source_name,
                         etag="abc")
    execution = sfn.start_execution(stateMachineArn=machine_arn, name=doc_id, input=run_input.model_dump_json())
    deadline = time.monotonic() + 30
    while (described := sfn.describe_execution(executionArn=execution["executionArn"]))["status"] == "RUNNING":
        assert time.monotonic() < deadline, "execution did not finish"
        time.sleep(0.05)
    return described, steps


def for_doc(events: list[dict[str, Any]], doc_id: str) -> list[dict[str, Any]]:
    return [e for e in events if e.get("doc_id") == doc_id]


def test_a_small_document_runs_its_batches_inline_then_assembles(workflow: tuple[Any, str, FakeSteps]) -> None:
    """ready + few batches: each batch item goes to extract as is; assemble gets the documented payload."""
    described, steps = run(workflow, "small.pdf")
    assert described["status"] == "SUCCEEDED", described
    assert sorted(e["batch_index"] for e in for_doc(steps.called("extract"), "small-pdf")) == [0, 1, 2]
    (assembled,) = for_doc(steps.called("assemble"), "small-pdf")
    assert set(assembled) == {"doc_id", "bucket", "key", "source_name", "plan"}
    assert assembled["plan"]["status"] == "ready"
    assert json.loads(described["output"]) == {"doc_id": "small-pdf", "status": "clean", "page_count": 0,
                                               "results_prefix": "results/small-pdf/"}


def test_plan_receives_the_execution_input_unchanged(workflow: tuple[Any, str, FakeSteps]) -> None:
    """The plan step's payload is the execution input from ingest."""
    _, steps = run(workflow, "input.pdf")
    (planned,) = for_doc(steps.called("plan"), "input-pdf")
    assert planned == {
        "doc_id": "input-pdf",
        "bucket": BUCKET,
        "key": "incoming/input.pdf",
        "source_name": "input.pdf",
        "parent_doc_id": None,
        "archive_path": None,
        "member_kind": None,
        "version_id": None,
        "etag": "abc",
    }


def test_a_large_document_reads_its_batches_from_the_manifest(workflow: tuple[Any, str, FakeSteps]) -> None:
    """use_distributed_map: the Distributed Map reads work/<doc>/batches.json, not the (empty) plan batches."""
    described, steps = run(workflow, "big.pdf")
    assert described["status"] == "SUCCEEDED", described
    assert sorted(e["batch_index"] for e in for_doc(steps.called("extract"), "big-pdf")) == [0, 1, 2]
    assert len(for_doc(steps.called("assemble"), "big-pdf")) == 1


def test_an_archive_is_unpacked_its_members_processed_then_it_is_assembled(
    workflow: tuple[Any, str, FakeSteps],
) -> None:
    """status archive: unpack gets doc_id/bucket/key/source_name/plan; each member item runs plan,
    its batches and assemble (with its archive path); then the archive is assembled, without error."""
    described, steps = run(workflow, "pack.zip")
    assert described["status"] == "SUCCEEDED", described
    (unpacked,) = for_doc(steps.called("unpack"), "pack-zip")
    assert set(unpacked) == {"doc_id", "bucket", "key", "source_name", "plan"}
    for i in range(2):
        member = f"pack-zip-m{i}"
        assert len([e for e in steps.called("plan") if e["doc_id"] == member]) == 1
        assert len([e for e in steps.called("extract") if e["doc_id"] == member]) == 3
        (member_assembled,) = [e for e in steps.called("assemble") if e["doc_id"] == member]
        assert member_assembled["archive_path"] == f"dir/a{i}.txt" and "error" not in member_assembled
    archive_assembled = [e for e in steps.called("assemble") if e["doc_id"].endswith("pack-zip")]
    assert len(archive_assembled) == 1 and "error" not in archive_assembled[0]


def test_a_document_that_holds_files_is_extracted_then_unpacked_then_assembled_once(
    workflow: tuple[Any, str, FakeSteps],
) -> None:
    """Plan.holds_files: its own batches are extracted, then the same Unpack state as an archive's
    gets it, each member runs its own plan/extract/assemble, and the document is assembled once,
    with its plan (assemble reads its pages and its members' results)."""
    described, steps = run(workflow, "holder.pdf")
    assert described["status"] == "SUCCEEDED", described
    assert len(for_doc(steps.called("extract"), "holder-pdf")) == 3
    (unpacked,) = for_doc(steps.called("unpack"), "holder-pdf")
    assert unpacked["plan"]["holds_files"] is True
    for i in range(2):
        (member_assembled,) = [e for e in steps.called("assemble") if e["doc_id"] == f"holder-pdf-m{i}"]
        assert "error" not in member_assembled
    (assembled,) = [e for e in steps.called("assemble") if e["doc_id"].endswith("holder-pdf")]
    assert assembled["plan"]["holds_files"] is True and "error" not in assembled


def test_a_terminal_plan_status_goes_straight_to_assemble(workflow: tuple[Any, str, FakeSteps]) -> None:
    """An unsupported file is recorded with its status; nothing is extracted or unpacked."""
    described, steps = run(workflow, "note.xyz")
    assert described["status"] == "SUCCEEDED", described
    assert for_doc(steps.called("extract"), "note-xyz") == for_doc(steps.called("unpack"), "note-xyz") == []
    (assembled,) = for_doc(steps.called("assemble"), "note-xyz")
    assert assembled["plan"]["status"] == "unsupported"


def test_a_failing_batch_is_recorded_as_a_failure_with_its_error(workflow: tuple[Any, str, FakeSteps]) -> None:
    """A batch that raises ends in RecordFailure: assemble is called with the error name and cause."""
    described, steps = run(workflow, "poison.pdf")
    assert described["status"] == "SUCCEEDED", described
    (recorded,) = for_doc(steps.called("assemble"), "poison-pdf")
    assert recorded["error"]["Error"] == "CorruptInputError"
    assert "broken content stream" in recorded["error"]["Cause"]
    assert {"doc_id", "bucket", "key", "source_name"} <= set(recorded)
    assert json.loads(described["output"])["status"] == "failed"


def test_an_archive_member_whose_plan_says_archive_is_unpacked_and_its_members_processed(
    workflow: tuple[Any, str, FakeSteps],
) -> None:
    """The nested member case: inner.zip (a member whose plan says archive) is unpacked by the member
    Map, its members run plan/extract/assemble, then inner.zip and the outer archive are assembled."""
    described, steps = run(workflow, "nest.zip")
    assert described["status"] == "SUCCEEDED", described
    inner = "nest-zip-inner"
    assert [e["doc_id"] for e in steps.called("unpack") if e["doc_id"].startswith("nest-zip")] == ["nest-zip", inner]
    for i in range(2):
        member = f"{inner}-m{i}"
        assert len(for_doc(steps.called("plan"), member)) == 1
        assert len(for_doc(steps.called("extract"), member)) == 3
        (assembled,) = for_doc(steps.called("assemble"), member)
        assert assembled["parent_doc_id"] == inner and "error" not in assembled
    (inner_assembled,) = for_doc(steps.called("assemble"), inner)
    assert inner_assembled["plan"]["status"] == "archive" and "error" not in inner_assembled
    assert json.loads(described["output"])["status"] == "clean"
