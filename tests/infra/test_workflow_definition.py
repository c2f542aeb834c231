"""The workflow definition file: placeholders, structure, and the step contracts it encodes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from infra.workflow import DEFINITION_PATH, PLACEHOLDERS, load_definition

ARNS = {
    name: f"arn:aws:lambda:us-east-1:123456789012:function:{name.removesuffix('FunctionArn')}" for name in PLACEHOLDERS
}
LAMBDA_ERRORS = {
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
}


def structural_problems(definition: dict[str, Any], where: str = "") -> list[str]:
    """Every way a state graph can be wired wrong that Step Functions would reject or silently
    strand: a missing StartAt, a Next/Default/Catch to nowhere, a state with no way out, a state
    nobody reaches. Map processors are checked as graphs of their own."""
    states: dict[str, Any] = definition.get("States", {})
    problems: list[str] = []
    if definition.get("StartAt") not in states:
        problems.append(f"{where}StartAt {definition.get('StartAt')!r} is not a state")
    edges: dict[str, set[str]] = {}
    for name, state in states.items():
        targets: set[str] = set()
        kind = state.get("Type")
        if "Next" in state:
            targets.add(state["Next"])
        if kind == "Choice":
            targets.update(choice["Next"] for choice in state.get("Choices", []))
            if "Default" in state:
                targets.add(state["Default"])
            if not state.get("Choices"):
                problems.append(f"{where}{name}: Choice without choices")
        targets.update(catch["Next"] for catch in state.get("Catch", []))
        for target in targets - states.keys():
            problems.append(f"{where}{name} -> {target!r}, which is not a state")
        if kind not in ("Choice", "Succeed", "Fail") and not state.get("End") and "Next" not in state:
            problems.append(f"{where}{name}: neither Next nor End")
        if state.get("End") and "Next" in state:
            problems.append(f"{where}{name}: both Next and End")
        if kind == "Map":
            processor = state.get("ItemProcessor") or state.get("Iterator")
            if processor is None:
                problems.append(f"{where}{name}: Map without ItemProcessor")
            else:
                problems += structural_problems(processor, where=f"{where}{name}/")
        edges[name] = targets
    reached, frontier = set(), [definition.get("StartAt")]
    while frontier:
        current = frontier.pop()
        if current in reached or current not in states:
            continue
        reached.add(current)
        frontier.extend(edges[current])
    problems += [f"{where}{name}: unreachable" for name in states.keys() - reached]
    return problems


def all_states(definition: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, state in definition["States"].items():
        yield name, state
        processor = state.get("ItemProcessor")
        if processor:
            yield from all_states(processor)


@pytest.fixture(scope="module")
def definition() -> dict[str, Any]:
    return json.loads(load_definition(ARNS))


def test_every_placeholder_is_substituted_and_the_result_is_json() -> None:
    """The runner and the stack both rely on load_definition leaving no ${...} behind."""
    text = load_definition(ARNS)
    assert "${" not in text
    for arn in ARNS.values():
        assert arn in text


def test_the_file_uses_exactly_the_declared_placeholders() -> None:
    """A placeholder added to the file but not to PLACEHOLDERS would never be substituted by the stack."""
    text = DEFINITION_PATH.read_text()
    for name in PLACEHOLDERS:
        assert "${" + name + "}" in text
    assert text.count("${") == sum(text.count("${" + name + "}") for name in PLACEHOLDERS)


def test_a_missing_arn_fails_at_load_naming_the_placeholder() -> None:
    """A runner that forgets a function must fail when it creates the state machine, not mid-run."""
    partial = {k: v for k, v in ARNS.items() if k != "UnpackFunctionArn"}
    with pytest.raises(ValueError, match="UnpackFunctionArn"):
        load_definition(partial)


def test_an_arn_that_would_break_the_json_is_refused() -> None:
    """Substitution is textual; a quote in a value must not produce an invalid definition."""
    with pytest.raises(ValueError):
        load_definition({**ARNS, "PlanFunctionArn": 'arn"broken'})


def test_the_state_graph_is_wired_completely(definition: dict[str, Any]) -> None:
    """Every Next/Default/Catch points at a state, in the top level and inside both Maps."""
    assert structural_problems(definition) == []


def test_the_structural_check_catches_a_dangling_next(tmp_path: Path) -> None:
    """The check above must be able to fail: a renamed state leaves a Next pointing nowhere."""
    broken = json.loads(load_definition(ARNS))
    broken["States"]["Assemble2"] = broken["States"].pop("Assemble")
    broken["States"]["ExtractBatchesInline"]["ItemProcessor"]["States"]["ExtractBatch"].pop("End")
    problems = structural_problems(broken)
    assert any("-> 'Assemble'" in p for p in problems)
    assert any("Assemble2: unreachable" in p for p in problems)
    assert any("ExtractBatchesInline/ExtractBatch: neither Next nor End" in p for p in problems)


def test_every_task_retries_transient_lambda_errors_with_jitter(definition: dict[str, Any]) -> None:
    """Lambda service hiccups and throttles are retried (3 attempts, 2 s, backoff, full jitter)."""
    tasks = [
        (name, state)
        for name, state in all_states(definition)
        if state["Type"] == "Task" and state["Resource"].startswith("arn:aws:lambda:")
    ]
    # top level: Plan, 2x ExtractBatch, Unpack, Assemble, RecordFailure, PlanOcr and the OCR Maps' three
    # tasks twice (inline, manifest); in each of the two member Maps: MemberPlan, ExtractBatch, MemberUnpack,
    # MemberAssemble, MemberRecordFailure, MemberPlanOcr, three OCR tasks, and in its nested member Map:
    # NestedMemberPlan, ExtractBatch, NestedMemberAssemble, NestedMemberRecordFailure, PlanOcr, three OCR tasks
    assert len(tasks) == 13 + 2 * (9 + 8)
    for name, state in tasks:
        retrier = next(r for r in state["Retry"] if set(r["ErrorEquals"]) >= LAMBDA_ERRORS)
        assert (retrier["MaxAttempts"], retrier["IntervalSeconds"], retrier["JitterStrategy"]) == (3, 2, "FULL"), name
        assert retrier["BackoffRate"] > 1, name


def test_every_failure_is_recorded_by_the_assemble_function(definition: dict[str, Any]) -> None:
    """Each top-level step catches everything into $.error and goes to RecordFailure, which calls
    Assemble with the error, so no document ends without a recorded status."""
    top = definition["States"]
    for name, state in top.items():
        if state["Type"] in ("Task", "Map") and name != "RecordFailure":
            assert state["Catch"] == [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "RecordFailure"}]
    record = top["RecordFailure"]
    assert record["Resource"] == ARNS["AssembleFunctionArn"]
    assert record["Parameters"]["error.$"] == "$.error"
    assert record.get("End") is True and "Catch" not in record


def test_plan_result_routes_the_document(definition: dict[str, Any]) -> None:
    """ready -> the batch Map (distributed when the plan says so), archive -> Unpack, a picture
    -> straight to OCR, any terminal status -> Assemble directly."""
    route = definition["States"]["RouteByPlanStatus"]
    assert definition["States"]["Plan"]["ResultPath"] == "$.plan"
    assert {(c["StringEquals"], c["Next"]) for c in route["Choices"] if "StringEquals" in c} == {
        ("ready", "ExtractBatchesInline"),
        ("archive", "Unpack"),
        ("picture", "PlanOcr"),
    }
    assert route["Default"] == "Assemble"
    assert definition["States"]["Unpack"]["ResultPath"] == "$.unpack"
    assert definition["States"]["Unpack"]["Next"] == "ChooseMemberMapKind"


def test_archive_members_run_the_document_states_and_then_the_archive_is_assembled(
    definition: dict[str, Any],
) -> None:
    """Each member is planned, extracted and assembled like a dropped file (its failure recorded as
    its own), inline for small archives and from the unpack manifest in a Distributed Map for large
    ones; then the archive itself is assembled from its members."""
    top = definition["States"]
    choose = top["ChooseMemberMapKind"]
    assert choose["Choices"][0]["Next"] == "ProcessMembersDistributed"
    assert choose["Default"] == "ProcessMembersInline"
    inline, distributed = top["ProcessMembersInline"], top["ProcessMembersDistributed"]
    assert inline["ItemsPath"] == "$.unpack.items"
    assert distributed["ItemReader"]["Parameters"] == {"Bucket.$": "$.bucket", "Key.$": "$.unpack.manifest_key"}
    for members, member in ((inline, "Member"), (distributed, "ListedMember")):
        assert members["Next"] == "Assemble" and members["ResultPath"] is None
        states = members["ItemProcessor"]["States"]
        assert members["ItemProcessor"]["StartAt"] == f"{member}Plan"
        assert states[f"{member}Plan"]["Catch"][0]["Next"] == f"{member}RecordFailure"
        assert states[f"{member}Assemble"]["Parameters"]["archive_path.$"] == "$.archive_path"
        assert states[f"{member}RecordFailure"]["Parameters"]["parent_doc_id.$"] == "$.parent_doc_id"


def test_an_archive_member_whose_plan_says_archive_is_unpacked_one_level_down(definition: dict[str, Any]) -> None:
    """A member the unpack step left as a file but whose plan says archive is unpacked, and its
    members processed inline; one level further down an archive goes to assemble (routes_at)."""
    for members, member in (("ProcessMembersInline", "Member"), ("ProcessMembersDistributed", "ListedMember")):
        states = definition["States"][members]["ItemProcessor"]["States"]
        route = states[f"{member}RouteByPlanStatus"]
        assert ("archive", f"{member}Unpack") in {(c["StringEquals"], c["Next"]) for c in route["Choices"]}
        assert states[f"{member}Unpack"]["Next"] == f"{member}ProcessMembersInline"
        assert states[f"{member}Unpack"]["Catch"][0]["Next"] == f"{member}RecordFailure"
        nested = states[f"{member}ProcessMembersInline"]
        assert nested["ItemsPath"] == "$.unpack.items" and nested["Next"] == f"{member}Assemble"
        assert nested["ItemProcessor"]["ProcessorConfig"] == {"Mode": "INLINE"}
        deepest = nested["ItemProcessor"]["States"]
        # a member of a member: no archive route (routes_at), a picture still goes to OCR
        assert {c["StringEquals"] for c in deepest[f"Nested{member}RouteByPlanStatus"]["Choices"]} == {
            "ready", "picture"}
        assert f"Nested{member}Unpack" not in deepest


def test_large_documents_use_a_distributed_map_reading_the_manifest(definition: dict[str, Any]) -> None:
    """The plan's use_distributed_map flag picks the Distributed Map, which reads batches from S3:
    the route's first rule, ahead of plain ready (no Choice of its own: each state entered is billed)."""
    first = definition["States"]["RouteByPlanStatus"]["Choices"][0]
    assert first == {"And": [{"Variable": "$.plan.status", "StringEquals": "ready"},
                             {"Variable": "$.plan.use_distributed_map", "BooleanEquals": True}],
                     "Next": "ExtractBatchesDistributed"}
    distributed = definition["States"]["ExtractBatchesDistributed"]
    assert distributed["ItemReader"]["Resource"] == "arn:aws:states:::s3:getObject"
    assert distributed["ItemReader"]["Parameters"] == {"Bucket.$": "$.plan.bucket", "Key.$": "$.plan.manifest_key"}
    assert distributed["ItemProcessor"]["ProcessorConfig"] == {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}
    assert definition["States"]["ExtractBatchesInline"]["ItemsPath"] == "$.plan.batches"


def test_page_results_never_flow_back_into_the_state(definition: dict[str, Any]) -> None:
    """Both Maps keep one boolean of their results (whether OCR is needed): page text and counts
    stay in S3, far under the 256 KiB limit."""
    for name in ("ExtractBatchesInline", "ExtractBatchesDistributed"):
        state = definition["States"][name]
        assert list(state["ResultSelector"]) == ["needs_ocr.$"], name
        assert state["MaxConcurrencyPath"] == "$.plan.max_concurrency", name


def _resolve(parameters: dict[str, str], state: dict[str, Any]) -> dict[str, Any]:
    """What Step Functions passes a task: each ``"name.$": "$.a.b"`` read from the state."""
    payload: dict[str, Any] = {}
    for name, path in parameters.items():
        value: Any = state
        for part in path.removeprefix("$.").split("."):
            value = value[part]
        payload[name.removesuffix(".$")] = value
    return payload


def test_each_task_payload_built_from_a_real_state_is_a_valid_request_of_its_step(
    definition: dict[str, Any],
) -> None:
    """The Parameters of Unpack, Assemble and RecordFailure, applied to a state as the workflow
    holds it (execution input, $.plan, $.error), give a payload the step's model accepts."""
    from papersift.steps.contracts import AssembleRequest, DocumentRef, Plan, RunInput, UnpackRequest

    document = RunInput.for_object("bucket", "incoming/edital.zip", "v1", "etag")
    plan = Plan(**document.ref.model_dump(), status="archive", kind="zip", manifest_key="m", max_concurrency=2)
    state = {**document.model_dump(mode="json", exclude_none=True), "plan": plan.model_dump(mode="json"),
             "error": {"Error": "States.Timeout", "Cause": "took too long"}}
    top = definition["States"]
    unpack = UnpackRequest.model_validate(_resolve(top["Unpack"]["Parameters"], state))
    assert unpack.plan == plan and unpack.ref == document.ref
    assembled = AssembleRequest.model_validate(_resolve(top["Assemble"]["Parameters"], state))
    assert assembled.plan == plan and assembled.error is None
    failed = AssembleRequest.model_validate(_resolve(top["RecordFailure"]["Parameters"], state))
    assert failed.error is not None and failed.error.error == "States.Timeout" and failed.plan is None
    member = DocumentRef(doc_id="dm", bucket="bucket", key="members/d/a.txt", source_name="a.txt",
                         parent_doc_id=document.doc_id, archive_path="a.txt")
    member_state = {**member.model_dump(mode="json"), "plan": {**plan.model_dump(mode="json"), **member.model_dump()}}
    members = top["ProcessMembersInline"]["ItemProcessor"]["States"]
    member_assembled = AssembleRequest.model_validate(_resolve(members["MemberAssemble"]["Parameters"], member_state))
    assert member_assembled.ref == member, "a member's assemble keeps its archive path and parent"


def test_committed_asl_file_is_the_built_definition() -> None:
    """workflow.asl.json is written from build_definition (python -m infra.workflow): never edited apart."""
    from infra.workflow import definition_text

    assert DEFINITION_PATH.read_text(encoding="utf-8") == definition_text()


def test_state_names_are_unique_in_the_whole_definition(definition: dict[str, Any]) -> None:
    """Step Functions wants every state name unique across the definition, Map processors included."""
    names = [name for name, _ in all_states(definition)]
    assert len(names) == len(set(names)), sorted(n for n in set(names) if names.count(n) > 1)


def test_after_the_text_layer_only_documents_a_batch_sent_to_ocr_go_to_ocr(definition: dict[str, Any]) -> None:
    """Both extract Maps reduce their batches' results to one boolean (any ExtractResult.needs_ocr)
    and OcrNeeded goes to PlanOcr on it, else straight to Assemble: a native document pays one
    Choice, no OCR plan step. PlanOcr lists the pages under $.ocr; none: Assemble."""
    top = definition["States"]
    for name in ("ExtractBatchesInline", "ExtractBatchesDistributed"):
        extract = top[name]
        assert extract["ResultSelector"] == {"needs_ocr.$": "States.ArrayContains($[*].needs_ocr, true)"}
        assert (extract["ResultPath"], extract["Next"]) == ("$.extracted", "OcrNeeded")
    needed = top["OcrNeeded"]
    assert needed["Choices"][0] == {"Variable": "$.extracted.needs_ocr", "BooleanEquals": True, "Next": "PlanOcr"}
    assert needed["Default"] == "Assemble"
    plan_ocr = top["PlanOcr"]
    assert plan_ocr["Resource"] == ARNS["OcrPlanFunctionArn"] and plan_ocr["ResultPath"] == "$.ocr"
    assert plan_ocr["Parameters"]["plan.$"] == "$.plan"
    choose = top["ChooseOcrMap"]
    assert {"Variable": "$.ocr.page_count", "NumericEquals": 0, "Next": "Assemble"} in choose["Choices"]
    assert {"Variable": "$.ocr.use_distributed_map", "BooleanEquals": True,
            "Next": "OcrPagesOfManifest"} in choose["Choices"]
    assert choose["Default"] == "OcrPagesInline"


def test_ocr_pages_run_one_an_iteration_bounded_by_the_ocr_concurrency(definition: dict[str, Any]) -> None:
    """The OCR Maps read their items from $.ocr (inline) or the manifest (distributed), at most
    $.ocr.max_concurrency at a time (Settings.ocr_max_concurrency), then Assemble."""
    top = definition["States"]
    inline, by_manifest = top["OcrPagesInline"], top["OcrPagesOfManifest"]
    assert inline["ItemsPath"] == "$.ocr.items"
    assert inline["MaxConcurrencyPath"] == by_manifest["MaxConcurrencyPath"] == "$.ocr.max_concurrency"
    assert by_manifest["ItemReader"]["Parameters"] == {"Bucket.$": "$.plan.bucket", "Key.$": "$.ocr.manifest_key"}
    assert by_manifest["ItemProcessor"]["ProcessorConfig"] == {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}
    assert inline["Next"] == by_manifest["Next"] == "AfterOcr"
    assert top["AfterOcr"]["Default"] == "Assemble"


def test_a_document_that_holds_files_unpacks_them_after_its_own_text(definition: dict[str, Any]) -> None:
    """A PDF with embedded files or an email with attachments (Plan.holds_files) goes to the same
    Unpack state as an archive after its text layer and OCR, from the Choices already on the way
    (no OCR needed, no OCR page, after the OCR Map), at the top level and in the member Map; at
    the deepest level, where nothing is unpacked, no such route exists."""
    holds = {"Variable": "$.plan.holds_files", "BooleanEquals": True}
    top = definition["States"]
    assert {**holds, "Next": "Unpack"} in top["OcrNeeded"]["Choices"]
    assert {"And": [{"Variable": "$.ocr.page_count", "NumericEquals": 0}, holds], "Next": "Unpack"} \
        == top["ChooseOcrMap"]["Choices"][0]
    assert top["AfterOcr"]["Choices"] == [{**holds, "Next": "Unpack"}]
    member = top["ProcessMembersInline"]["ItemProcessor"]["States"]
    assert {**holds, "Next": "MemberUnpack"} in member["MemberOcrNeeded"]["Choices"]
    nested = member["MemberProcessMembersInline"]["ItemProcessor"]["States"]
    assert "NestedMemberAfterOcr" not in nested
    assert all(c.get("Variable") != "$.plan.holds_files" for c in nested["NestedMemberOcrNeeded"]["Choices"])


def test_textract_throttling_is_retried_with_backoff_and_jitter_then_read_without_textract(
    definition: dict[str, Any],
) -> None:
    """OcrThrottledError: retried with exponential backoff and full jitter; past the retries the
    page is read again without Textract; any other failure is recorded on the page, so one page
    never fails its document."""
    states = definition["States"]["OcrPagesInline"]["ItemProcessor"]["States"]
    read = states["InlineReadPage"]
    throttled = next(r for r in read["Retry"] if r["ErrorEquals"] == ["OcrThrottledError"])
    assert throttled["JitterStrategy"] == "FULL" and throttled["BackoffRate"] > 1 and throttled["MaxAttempts"] >= 3
    assert read["Catch"][0] == {"ErrorEquals": ["OcrThrottledError"], "ResultPath": "$.throttled",
                                "Next": "InlineReadPageWithoutTextract"}
    assert read["Catch"][1] == {"ErrorEquals": ["States.ALL"], "ResultPath": "$.error",
                                "Next": "InlineRecordPageFailure"}
    without = states["InlineReadPageWithoutTextract"]
    assert all(r["ErrorEquals"] != ["OcrThrottledError"] for r in without["Retry"])
    assert without["Catch"] == [read["Catch"][1]]
    assert states["InlineRecordPageFailure"]["End"] is True
    assert {s["Resource"] for s in states.values()} == {ARNS["OcrFunctionArn"]}


def test_an_extract_batch_short_of_time_is_continued_by_its_retry_without_backoff(definition: dict[str, Any]) -> None:
    """ContinueBatchError: the batch wrote what it read before its Lambda ran short of time; the
    retry resumes after the last page written, at once (a time budget, not a failure)."""
    for map_name, task in (("ExtractBatchesInline", "ExtractBatch"),
                           ("ExtractBatchesDistributed", "ExtractBatchOfManifest")):
        state = definition["States"][map_name]["ItemProcessor"]["States"][task]
        (continued,) = [r for r in state["Retry"] if r["ErrorEquals"] == ["ContinueBatchError"]]
        assert continued["BackoffRate"] == 1 and continued["MaxAttempts"] >= 10


# -- with the export step (Settings.export_parquet) -------------------------------------------------

EXPORT_ARN = "arn:aws:lambda:us-east-1:123456789012:function:Export"


@pytest.fixture(scope="module")
def exporting() -> dict[str, Any]:
    return json.loads(load_definition({**ARNS, "ExportFunctionArn": EXPORT_ARN}, export=True))


def test_with_the_export_step_the_graph_is_wired_completely_and_its_names_unique(exporting: dict[str, Any]) -> None:
    assert structural_problems(exporting) == []
    names = [name for name, _ in all_states(exporting)]
    assert len(names) == len(set(names)), sorted(n for n in set(names) if names.count(n) > 1)


def test_without_its_arn_the_definition_with_the_export_step_is_refused() -> None:
    with pytest.raises(ValueError, match="ExportFunctionArn"):
        load_definition(ARNS, export=True)


def test_every_assemble_of_every_level_goes_on_to_an_export_whose_failure_is_recorded(
        exporting: dict[str, Any]) -> None:
    """Each Assemble and RecordFailure (top level, members, members of members) goes to its Export;
    each Export catches everything into its RecordExportFailure, which ends the document."""
    states = dict(all_states(exporting))
    assembles = [name for name in states if name.endswith(("Assemble", "RecordFailure"))
                 and states[name]["Resource"] == ARNS["AssembleFunctionArn"]]
    assert len(assembles) == 2 * 5  # top level, two member Maps, a nested member Map in each
    for name in assembles:
        prefix = name.removesuffix("Assemble").removesuffix("RecordFailure")
        export, record = states[states[name]["Next"]], states[f"{prefix}RecordExportFailure"]
        assert states[name]["Next"] == f"{prefix}Export" and states[name]["ResultPath"] == "$.assembled"
        assert export["Resource"] == record["Resource"] == EXPORT_ARN
        assert export["Catch"] == [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.export",
                                    "Next": f"{prefix}RecordExportFailure"}]
        assert export.get("End") is True and record.get("End") is True and "Catch" not in record
        assert {r for retry in export["Retry"] for r in retry["ErrorEquals"]} >= LAMBDA_ERRORS


def test_the_export_payloads_built_from_a_real_state_are_valid_requests_of_the_step(
        exporting: dict[str, Any]) -> None:
    """After Assemble the state holds the document's fields and $.assembled; after a caught export,
    $.export holds the error: both payloads are ExportRequests, a member's with its parent and path."""
    from papersift.steps.contracts import DocumentRef, ExportRequest, RunInput

    document = RunInput.for_object("bucket", "incoming/edital.pdf", "v1", "etag")
    state = {**document.model_dump(mode="json", exclude_none=True),
             "assembled": {"doc_id": document.doc_id, "status": "clean", "page_count": 2, "results_prefix": "r/"}}
    top = exporting["States"]
    request = ExportRequest.model_validate(_resolve(top["Export"]["Parameters"], state))
    assert request.ref == document.ref and request.error is None
    caught = {**state, "export": {"Error": "Sandbox.Timedout", "Cause": "timed out"}}
    failed = ExportRequest.model_validate(_resolve(top["RecordExportFailure"]["Parameters"], caught))
    assert failed.error is not None and failed.error.reason == "Sandbox.Timedout: timed out"
    member = DocumentRef(doc_id="dm", bucket="bucket", key="members/d/1/a.txt", source_name="a.txt",
                         parent_doc_id=document.doc_id, archive_path="docs/a.txt", member_kind="archive_member")
    members = top["ProcessMembersInline"]["ItemProcessor"]["States"]
    member_request = ExportRequest.model_validate(_resolve(members["MemberExport"]["Parameters"],
                                                           member.model_dump(mode="json")))
    assert member_request.ref == member, "a member's export keeps its archive path and parent"
