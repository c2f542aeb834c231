"""The one workflow definition, with its function ARNs filled in.

``build_definition`` is the single source: a document is planned, its page batches are
extracted (inline Map, or a Distributed Map reading an S3 manifest when large), and it is
assembled; an archive is unpacked and each member runs the same plan/extract/assemble
states as a document of its own (inline, or a Distributed Map for large archives) before
the archive itself is assembled. ``workflow.asl.json`` is that definition written out
(``python -m infra.workflow``), kept for reading and for SAM; a test keeps it in sync.

The fields passed between states, the JSONPaths into step results and the plan routes come from
the step models (``papersift.steps.contracts``): a path naming a field no model has fails the build.
The CDK stack and the local runner both deploy ``definition_text()``. Pure: no CDK, no AWS.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from infra.deployment import ASSEMBLE, EXPORT, EXTRACT, OCR, OCR_PLAN, PLAN, UNPACK, WORKFLOW_FUNCTIONS, FunctionSpec
from papersift.steps.contracts import (
    AssembleRequest,
    DocumentRef,
    ExportRequest,
    ExtractResult,
    OcrPlan,
    OcrPlanRequest,
    OcrRequest,
    Plan,
    Route,
    UnpackRequest,
    UnpackResult,
    field_path,
    required_fields,
    routes_at,
)

DEFINITION_PATH = Path(__file__).resolve().parent / "workflow.asl.json"

#: names substituted as ``${Name}`` in the definition; the stack passes the same keys to CDK
PLACEHOLDERS: tuple[str, ...] = tuple(spec.placeholder for spec in WORKFLOW_FUNCTIONS)
#: the export step's, in the definition only with ``export`` (Settings.export_parquet)
EXPORT_PLACEHOLDER = EXPORT.placeholder

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_]+)\}")

_LAMBDA_TRANSIENT = {
    "ErrorEquals": [
        "Lambda.ServiceException",
        "Lambda.AWSLambdaException",
        "Lambda.SdkClientException",
        "Lambda.TooManyRequestsException",
    ],
    "IntervalSeconds": 2,
    "MaxAttempts": 3,
    "BackoffRate": 2,
    "JitterStrategy": "FULL",
}
#: an extract batch whose Lambda ran short of time with pages left: the retry resumes after the last
#: page written (a step's time budget, not a failure: no backoff)
_CONTINUE_BATCH = {"ErrorEquals": ["ContinueBatchError"], "IntervalSeconds": 1, "MaxAttempts": 20, "BackoffRate": 1}
_OCR_THROTTLED = {
    "ErrorEquals": ["OcrThrottledError"],
    "IntervalSeconds": 5,
    "MaxAttempts": 6,
    "BackoffRate": 2,
    "MaxDelaySeconds": 120,
    "JitterStrategy": "FULL",
}
#: what every step needs to find the document; page text never travels in the state. A dropped
#: file's execution input may leave out the optional fields; a member item (unpack's dump) has all.
_DOCUMENT_FIELDS = required_fields(DocumentRef)
_MEMBER_FIELDS = tuple(DocumentRef.model_fields)


#: the ExtractResult field the batch Maps reduce to one boolean (``$.extracted.needs_ocr``)
_NEEDS_OCR = field_path("$", ExtractResult, "needs_ocr").removeprefix("$.")


def _plan(name: str) -> str:
    return field_path("$.plan", Plan, name)


def _unpack(name: str) -> str:
    return field_path("$.unpack", UnpackResult, name)


def _ocr(name: str) -> str:
    return field_path("$.ocr", OcrPlan, name)


def _request(model: type[DocumentRef], fields: tuple[str, ...], **extra: str) -> dict[str, str]:
    """A task's Parameters: the document's fields and ``extra`` state paths, each a field of the
    step's request model."""
    for name in (*fields, *extra):
        field_path("$", model, name)
    return {**{f"{name}.$": f"$.{name}" for name in fields}, **{f"{k}.$": v for k, v in extra.items()}}


def _task(function: FunctionSpec, comment: str, *, parameters: dict[str, str] | None = None,
          result_path: str | None = None, catch_to: str | None = None, next_state: str | None = None,
          ocr_retry: bool = False) -> dict[str, Any]:
    # Resource is the plain function ARN: the function's return value is the task result
    # (no {"Payload": ...} wrapper), the shape CDK's LambdaInvoke(payload_response_only=True) makes.
    state: dict[str, Any] = {"Type": "Task", "Comment": comment, "Resource": "${" + function.placeholder + "}"}
    if parameters is not None:
        state["Parameters"] = parameters
    if result_path is not None:
        state["ResultPath"] = result_path
    state["Retry"] = [_LAMBDA_TRANSIENT, _OCR_THROTTLED] if ocr_retry else [_LAMBDA_TRANSIENT]
    if catch_to:
        state["Catch"] = [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": catch_to}]
    state.update({"Next": next_state} if next_state else {"End": True})
    return state


def _processor_config(mode: str) -> dict[str, str]:
    return {"Mode": mode, "ExecutionType": "STANDARD"} if mode == "DISTRIBUTED" else {"Mode": mode}


def _extract_batch_processor(mode: str, name: str) -> dict[str, Any]:
    """One page batch per iteration; ``name`` is unique in the whole definition, as Step
    Functions wants state names to be."""
    return {
        "ProcessorConfig": _processor_config(mode),
        "StartAt": name,
        "States": {name: {**_task(EXTRACT, "One page batch in, page JSONs written to S3, a small summary out"),
                          "Retry": [_LAMBDA_TRANSIENT, _CONTINUE_BATCH]}},
    }


def _ocr_page_processor(mode: str, prefix: str) -> dict[str, Any]:
    """One page per iteration. Textract refusing for load is retried with backoff and full jitter
    (_OCR_THROTTLED); past those retries the page is read again without Textract; any other
    failure is recorded on the page (failed, with the reason), so one page never fails the
    document. The iteration's input is an OcrItem; a Catch adds ``throttled`` or ``error``."""
    read, without, record = f"{prefix}ReadPage", f"{prefix}ReadPageWithoutTextract", f"{prefix}RecordPageFailure"
    catch_all = {"ErrorEquals": ["States.ALL"], "ResultPath": field_path("$", OcrRequest, "error"), "Next": record}
    first = _task(OCR, "Tesseract and/or Textract, as the OCR mode says; the page JSON is written to S3",
                  ocr_retry=True)
    first["Catch"] = [{"ErrorEquals": ["OcrThrottledError"], "ResultPath": field_path("$", OcrRequest, "throttled"),
                       "Next": without}, catch_all]
    second = _task(OCR, "Textract refused for load past the retries: the page is read without it")
    second["Catch"] = [catch_all]
    return {
        "ProcessorConfig": _processor_config(mode),
        "StartAt": read,
        "States": {read: first, without: second,
                   record: _task(OCR, "Record the page as failed with the reason; its text layer is kept")},
    }


def _manifest_reader(bucket_path: str, key_path: str) -> dict[str, Any]:
    return {
        "Resource": "arn:aws:states:::s3:getObject",
        "ReaderConfig": {"InputType": "JSON"},
        "Parameters": {"Bucket.$": bucket_path, "Key.$": key_path},
    }


def _member_prefix(prefix: str, listed: bool) -> str:
    """The state name prefix of the members of an archive whose states start with ``prefix``:
    Step Functions wants every state name unique in the whole definition, so the member states
    of the inline Map and of the Distributed Map (``listed``: its items come from a manifest) are
    named apart, and each nesting level adds its own word."""
    if not prefix:
        return "ListedMember" if listed else "Member"
    return f"Nested{prefix}"


def _export_states(prefix: str, fields: tuple[str, ...]) -> dict[str, Any]:
    """After assemble (or RecordFailure), with Settings.export_parquet: the document's page records
    to exports/<doc_id>.parquet; its result goes to ``$.export``. A failure is caught and recorded by
    the same function (its request then carries ``error``), so an export never fails the document:
    its results are written."""
    export, record = f"{prefix}Export", f"{prefix}RecordExportFailure"
    result = "$.export"
    return {
        export: {**_task(EXPORT, "The page records as exports/<doc_id>.parquet, for an Athena/Glue table",
                         parameters=_request(ExportRequest, fields), result_path=result),
                 "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": result, "Next": record}]},
        record: _task(EXPORT, "Record why the export failed on the document's item; its results stand",
                      parameters=_request(ExportRequest, fields, error=result), result_path=result),
    }


def _document_states(level: int, fields: tuple[str, ...], prefix: str = "", export: bool = False) -> dict[str, Any]:
    """Plan -> page batches -> assemble (-> export, with ``export``) for one document ``level``
    archive levels down; state names start with ``prefix`` (see ``_member_prefix``).

    Members of archives run the same states inside the member Map. The routes are
    ``steps.routes_at(level)``, the ones `papersift extract` follows: a member whose plan says
    archive is unpacked too, one level down (``UNPACK_LEVELS``). Only the top level switches to
    Distributed Maps (a member's batches and members are inline Maps inside its iteration).
    """
    distributed = level == 0
    failure, assemble = f"{prefix}RecordFailure", f"{prefix}Assemble"
    next_state = {
        Route.EXTRACT: f"{prefix}ExtractBatchesInline",
        Route.UNPACK: f"{prefix}Unpack",
        Route.OCR: f"{prefix}PlanOcr",
    }
    routes = routes_at(level)
    choices: list[dict[str, Any]] = [{"Variable": _plan("status"), "StringEquals": status, "Next": next_state[target]}
                                     for status, target in routes.items()]
    if distributed:
        # the plan step decides (distributed_map_threshold): the batches are then in an S3 manifest. In
        # this Choice, not one of its own: every state entered is a billed transition
        ready = next(status for status, target in routes.items() if target is Route.EXTRACT)
        choices.insert(0, {"And": [{"Variable": _plan("status"), "StringEquals": ready},
                                   {"Variable": _plan("use_distributed_map"), "BooleanEquals": True}],
                           "Next": f"{prefix}ExtractBatchesDistributed"})
    route: dict[str, Any] = {
        "Type": "Choice",
        "Comment": "Plan.route: " + "; ".join(f"{status} -> {target}" for status, target in routes.items())
                   + "; anything else (encrypted, empty, ...) is final",
        "Choices": choices,
        "Default": assemble,
    }
    inline_map: dict[str, Any] = {
        "Type": "Map",
        "ItemsPath": _plan("batches"),
        # Settings.max_concurrency, carried by the plan: page batches of one document at a time
        "MaxConcurrencyPath": _plan("max_concurrency"),
        "ItemProcessor": _extract_batch_processor("INLINE", f"{prefix}ExtractBatch"),
        # only whether a batch sent a page to OCR: the batches' summaries stay out of the state
        "ResultSelector": {f"{_NEEDS_OCR}.$": f"States.ArrayContains($[*].{_NEEDS_OCR}, true)"},
        "ResultPath": "$.extracted",
        "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": failure}],
        "Next": f"{prefix}OcrNeeded",
    }
    states: dict[str, Any] = {
        f"{prefix}Plan": _task(PLAN, "Sniff the file and cut it into page batches", result_path="$.plan",
                               catch_to=failure, next_state=f"{prefix}RouteByPlanStatus"),
        f"{prefix}RouteByPlanStatus": route,
        f"{prefix}ExtractBatchesInline": inline_map,
    }
    if distributed:
        states[f"{prefix}ExtractBatchesDistributed"] = {
            **{k: v for k, v in inline_map.items() if k not in ("ItemsPath", "ItemProcessor")},
            "ItemReader": _manifest_reader(_plan("bucket"), _plan("manifest_key")),
            "ItemProcessor": _extract_batch_processor("DISTRIBUTED", f"{prefix}ExtractBatchOfManifest"),
        }
    unpacks = Route.UNPACK in routes.values()
    states.update(_ocr_states(prefix, distributed, fields, assemble, failure, f"{prefix}Unpack" if unpacks else None))
    if unpacks:
        states.update(_archive_states(level, prefix, fields, assemble, failure, export))
    # with the export step next, assemble's result goes beside the document's fields the step reads
    after, assembled = (f"{prefix}Export", "$.assembled") if export else (None, None)
    states[assemble] = _task(ASSEMBLE, "Write text, Markdown, report and the DynamoDB item",
                             parameters=_request(AssembleRequest, fields, plan="$.plan"), catch_to=failure,
                             result_path=assembled, next_state=after)
    states[failure] = _task(ASSEMBLE, "Every failure ends as a recorded status with a reason, never a silent stop",
                            parameters=_request(AssembleRequest, fields, error="$.error"), result_path=assembled,
                            next_state=after)
    if export:
        states.update(_export_states(prefix, fields))
    return states


def _ocr_states(prefix: str, distributed: bool, fields: tuple[str, ...], assemble: str,
                failure: str, unpack: str | None) -> dict[str, Any]:
    """After the text layer (or straight from the plan, for a picture): the pages that need OCR,
    and only those, one per Map iteration, at most ``ocr_max_concurrency`` at a time; a Distributed
    Map reading an S3 manifest past the threshold (top level only, like the page batches).

    Where members are unpacked (``unpack``, the state), a document that holds files
    (``Plan.holds_files``: a PDF's embedded files, an email's attachments) goes there after its own
    text instead of to assemble: in the Choices already on the way, so a document that holds none
    is entered in no state more; after the OCR Map, one Choice (``AfterOcr``) decides."""
    plan_ocr, choose = f"{prefix}PlanOcr", f"{prefix}ChooseOcrMap"
    inline, by_manifest = f"{prefix}OcrPagesInline", f"{prefix}OcrPagesOfManifest"
    after_ocr = f"{prefix}AfterOcr"
    holds_files = {"Variable": _plan("holds_files"), "BooleanEquals": True}
    ocr_map: dict[str, Any] = {
        "Type": "Map",
        "Comment": "Pages without a trustworthy text layer (or a picture's frames): OCR, one page an iteration",
        "ItemsPath": _ocr("items"),
        "MaxConcurrencyPath": _ocr("max_concurrency"),
        "ItemProcessor": _ocr_page_processor("INLINE", f"{prefix}Inline"),
        "ResultPath": None,
        "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": failure}],
        "Next": after_ocr if unpack else assemble,
    }
    no_page = {"Variable": _ocr("page_count"), "NumericEquals": 0}
    choices: list[dict[str, Any]] = [{**no_page, "Next": assemble}]
    needed: list[dict[str, Any]] = [{"Variable": f"$.extracted.{_NEEDS_OCR}", "BooleanEquals": True, "Next": plan_ocr}]
    if unpack:
        choices.insert(0, {"And": [no_page, holds_files], "Next": unpack})
        needed.append({**holds_files, "Next": unpack})
    states: dict[str, Any] = {
        f"{prefix}OcrNeeded": {
            "Type": "Choice",
            "Comment": "A batch sent a page to OCR (ExtractResult.needs_ocr; never with the OCR mode off)"
                       + ("; else a document that holds files unpacks them" if unpack else ""),
            "Choices": needed,
            "Default": assemble,
        },
        plan_ocr: _task(OCR_PLAN, "The pages OCR reads: those the text layer sent, or a picture's frames",
                        parameters=_request(OcrPlanRequest, fields, plan="$.plan"), result_path="$.ocr",
                        catch_to=failure, next_state=choose),
        choose: {"Type": "Choice", "Comment": "No page to read: assemble; many: from an S3 manifest",
                 "Choices": choices, "Default": inline},
        inline: ocr_map,
    }
    if unpack:
        states[after_ocr] = {"Type": "Choice", "Comment": "A document that holds files unpacks them after OCR",
                             "Choices": [{**holds_files, "Next": unpack}], "Default": assemble}
    if distributed:
        choices.append({"Variable": _ocr("use_distributed_map"), "BooleanEquals": True, "Next": by_manifest})
        states[by_manifest] = {
            **{k: v for k, v in ocr_map.items() if k not in ("ItemsPath", "ItemProcessor")},
            "ItemReader": _manifest_reader(_plan("bucket"), _ocr("manifest_key")),
            "ItemProcessor": _ocr_page_processor("DISTRIBUTED", f"{prefix}OfManifest"),
        }
    return states


def _archive_states(level: int, prefix: str, fields: tuple[str, ...], assemble: str,
                    failure: str, export: bool) -> dict[str, Any]:
    inline_prefix = _member_prefix(prefix, listed=False)
    member_start = f"{inline_prefix}Plan"
    member_states = _document_states(level + 1, _MEMBER_FIELDS, inline_prefix, export)
    members_inline: dict[str, Any] = {
        "Type": "Map",
        "Comment": "Each member runs the same states as a dropped document; a member's failure is its own",
        "ItemsPath": _unpack("items"),
        "MaxConcurrencyPath": _unpack("max_concurrency"),
        "ItemProcessor": {"ProcessorConfig": {"Mode": "INLINE"}, "StartAt": member_start, "States": member_states},
        "ResultPath": None,
        "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": failure}],
        "Next": assemble,
    }
    unpack = _task(UNPACK, "Open the archive (or a PDF's or an email's files) safely; each member is uploaded "
                           "as a document of its own",
                   parameters=_request(UnpackRequest, fields, plan="$.plan"), result_path="$.unpack",
                   catch_to=failure, next_state=f"{prefix}ProcessMembersInline")
    if level > 0:  # an archive member's members: inline (its unpack result lists them all)
        return {f"{prefix}Unpack": unpack, f"{prefix}ProcessMembersInline": members_inline}
    unpack["Next"] = f"{prefix}ChooseMemberMapKind"
    listed_prefix = _member_prefix(prefix, listed=True)
    members_distributed = {
        **{k: v for k, v in members_inline.items() if k != "ItemsPath"},
        "ItemReader": _manifest_reader("$.bucket", _unpack("manifest_key")),
        "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
                          "StartAt": f"{listed_prefix}Plan",
                          "States": _document_states(level + 1, _MEMBER_FIELDS, listed_prefix, export)},
    }
    return {
        f"{prefix}Unpack": unpack,
        f"{prefix}ChooseMemberMapKind": {
            "Type": "Choice",
            "Comment": "Large archives read their members from an S3 manifest in a Distributed Map",
            "Choices": [{"Variable": _unpack("use_distributed_map"), "BooleanEquals": True,
                         "Next": f"{prefix}ProcessMembersDistributed"}],
            "Default": f"{prefix}ProcessMembersInline",
        },
        f"{prefix}ProcessMembersInline": members_inline,
        f"{prefix}ProcessMembersDistributed": members_distributed,
    }


def build_definition(export: bool = False) -> dict[str, Any]:
    """The workflow; with ``export`` (Settings.export_parquet) every document, member or not, ends
    with the export step. The step is there by the setting rather than behind a Choice: a
    deployment's settings are fixed when it is synthesized (and `papersift run`'s when it starts),
    and a Choice (and the state it defaults to) would be two billed transitions a document for a
    step that is off by default."""
    return {
        "Comment": "papersift: plan a document, extract its page batches (inline or Distributed Map) or unpack "
                   "an archive and process each member the same way, then assemble the results"
                   + (" and export its page records as Parquet" if export else "")
                   + ". States carry S3 pointers and counts, never page text.",
        "StartAt": "Plan",
        "States": _document_states(0, _DOCUMENT_FIELDS, export=export),
    }


def definition_text(export: bool = False) -> str:
    """The definition as ASL JSON with ``${...FunctionArn}`` placeholders left in."""
    return json.dumps(build_definition(export), indent=2) + "\n"


def placeholders(export: bool = False) -> tuple[str, ...]:
    """The placeholders of the definition with or without the export step."""
    return (*PLACEHOLDERS, *((EXPORT_PLACEHOLDER,) if export else ()))


def load_definition(arns: Mapping[str, str], export: bool = False) -> str:
    """Return the ASL text with every ``${Placeholder}`` replaced by ``arns[Placeholder]``.

    Raises ``ValueError`` naming the placeholders left without a value, so a runner that forgot
    a function fails at creation time instead of at the first execution that reaches it.
    """
    text = definition_text(export)
    missing = sorted({name for name in _PLACEHOLDER.findall(text) if not arns.get(name)})
    if missing:
        raise ValueError(f"workflow definition: no ARN for {', '.join(missing)}")
    substituted = _PLACEHOLDER.sub(lambda match: arns[match.group(1)], text)
    json.loads(substituted)  # an ARN with a quote in it would break the JSON: fail here, not in Step Functions
    return substituted


if __name__ == "__main__":
    DEFINITION_PATH.write_text(definition_text(), encoding="utf-8")
    sys.stdout.write(f"wrote {DEFINITION_PATH}\n")
