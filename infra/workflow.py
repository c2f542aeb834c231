"""The one workflow definition, with its function ARNs filled in.

``build_definition`` is the single source: a document is planned, its page batches are
extracted (inline Map, or a Distributed Map reading an S3 manifest when large), and it is
assembled; an archive is unpacked and each member runs the same plan/extract/assemble
states as a document of its own (inline, or a Distributed Map for large archives) before
the archive itself is assembled. ``workflow.asl.json`` is that definition written out
(``python -m infra.workflow``), kept for reading and for SAM; a test keeps it in sync.

The fields passed between states, the JSONPaths into step results and the plan routes come from
the step models (``papersift.steps``): a path naming a field no model has fails the build.
The CDK stack and the local runner both deploy ``definition_text()``. Pure: no CDK, no AWS.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from infra.deployment import ASSEMBLE, EXTRACT, PLAN, UNPACK, WORKFLOW_FUNCTIONS, FunctionSpec
from papersift.steps import (
    AssembleRequest,
    DocumentRef,
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


def _plan(name: str) -> str:
    return field_path("$.plan", Plan, name)


def _unpack(name: str) -> str:
    return field_path("$.unpack", UnpackResult, name)


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


def _extract_batch_processor(mode: str) -> dict[str, Any]:
    config: dict[str, str] = {"Mode": mode}
    if mode == "DISTRIBUTED":
        config["ExecutionType"] = "STANDARD"
    return {
        "ProcessorConfig": config,
        "StartAt": "ExtractBatch",
        "States": {"ExtractBatch": _task(EXTRACT, "One page batch in, page JSONs written to S3, a small summary out",
                                         ocr_retry=True)},
    }


def _manifest_reader(bucket_path: str, key_path: str) -> dict[str, Any]:
    return {
        "Resource": "arn:aws:states:::s3:getObject",
        "ReaderConfig": {"InputType": "JSON"},
        "Parameters": {"Bucket.$": bucket_path, "Key.$": key_path},
    }


#: state name prefix of a document ``level`` archive levels down
_LEVEL_PREFIXES = ("", "Member", "NestedMember")


def _document_states(level: int, fields: tuple[str, ...]) -> dict[str, Any]:
    """Plan -> page batches -> assemble for one document ``level`` archive levels down; state
    names start with the level's prefix.

    Members of archives run the same states inside the member Map. The routes are
    ``steps.routes_at(level)``, the ones `papersift extract` follows: a member whose plan says
    archive is unpacked too, one level down (``UNPACK_LEVELS``). Only the top level switches to
    Distributed Maps (a member's batches and members are inline Maps inside its iteration).
    """
    prefix = _LEVEL_PREFIXES[level]
    distributed = level == 0
    failure, assemble = f"{prefix}RecordFailure", f"{prefix}Assemble"
    next_state = {
        Route.EXTRACT: f"{prefix}ChooseMapKind" if distributed else f"{prefix}ExtractBatchesInline",
        Route.UNPACK: f"{prefix}Unpack",
    }
    routes = routes_at(level)
    route: dict[str, Any] = {
        "Type": "Choice",
        "Comment": "Plan.route: " + "; ".join(f"{status} -> {target}" for status, target in routes.items())
                   + "; anything else (encrypted, empty, ...) is final",
        "Choices": [{"Variable": _plan("status"), "StringEquals": status, "Next": next_state[target]}
                    for status, target in routes.items()],
        "Default": assemble,
    }
    inline_map: dict[str, Any] = {
        "Type": "Map",
        "ItemsPath": _plan("batches"),
        # Settings.max_concurrency, carried by the plan: page batches of one document at a time
        "MaxConcurrencyPath": _plan("max_concurrency"),
        "ItemProcessor": _extract_batch_processor("INLINE"),
        "ResultPath": None,
        "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": failure}],
        "Next": assemble,
    }
    states: dict[str, Any] = {
        f"{prefix}Plan": _task(PLAN, "Sniff the file and cut it into page batches", result_path="$.plan",
                               catch_to=failure, next_state=f"{prefix}RouteByPlanStatus"),
        f"{prefix}RouteByPlanStatus": route,
        f"{prefix}ExtractBatchesInline": inline_map,
    }
    if distributed:
        states[f"{prefix}ChooseMapKind"] = {
            "Type": "Choice",
            "Comment": "The plan step decides (distributed_map_threshold); the batches are then in an S3 manifest",
            "Choices": [{"Variable": _plan("use_distributed_map"), "BooleanEquals": True,
                         "Next": f"{prefix}ExtractBatchesDistributed"}],
            "Default": f"{prefix}ExtractBatchesInline",
        }
        states[f"{prefix}ExtractBatchesDistributed"] = {
            **{k: v for k, v in inline_map.items() if k not in ("ItemsPath", "ItemProcessor")},
            "ItemReader": _manifest_reader(_plan("bucket"), _plan("manifest_key")),
            "ItemProcessor": _extract_batch_processor("DISTRIBUTED"),
        }
    if Route.UNPACK in routes.values():
        states.update(_archive_states(level, fields, assemble, failure))
    states[assemble] = _task(ASSEMBLE, "Write text, Markdown, report and the DynamoDB item",
                             parameters=_request(AssembleRequest, fields, plan="$.plan"), catch_to=failure)
    states[failure] = _task(ASSEMBLE, "Every failure ends as a recorded status with a reason, never a silent stop",
                            parameters=_request(AssembleRequest, fields, error="$.error"))
    return states


def _archive_states(level: int, fields: tuple[str, ...], assemble: str, failure: str) -> dict[str, Any]:
    prefix, member_start = _LEVEL_PREFIXES[level], f"{_LEVEL_PREFIXES[level + 1]}Plan"
    member_states = _document_states(level + 1, _MEMBER_FIELDS)
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
    unpack = _task(UNPACK, "Open the archive safely; each member is uploaded as a document of its own",
                   parameters=_request(UnpackRequest, fields, plan="$.plan"), result_path="$.unpack",
                   catch_to=failure, next_state=f"{prefix}ProcessMembersInline")
    if level > 0:  # an archive member's members: inline (its unpack result lists them all)
        return {f"{prefix}Unpack": unpack, f"{prefix}ProcessMembersInline": members_inline}
    unpack["Next"] = f"{prefix}ChooseMemberMapKind"
    members_distributed = {
        **{k: v for k, v in members_inline.items() if k != "ItemsPath"},
        "ItemReader": _manifest_reader("$.bucket", _unpack("manifest_key")),
        "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
                          "StartAt": member_start, "States": member_states},
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


def build_definition() -> dict[str, Any]:
    return {
        "Comment": "papersift: plan a document, extract its page batches (inline or Distributed Map) or unpack "
                   "an archive and process each member the same way, then assemble the results. States carry "
                   "S3 pointers and counts, never page text.",
        "StartAt": "Plan",
        "States": _document_states(0, _DOCUMENT_FIELDS),
    }


def definition_text() -> str:
    """The definition as ASL JSON with ``${...FunctionArn}`` placeholders left in."""
    return json.dumps(build_definition(), indent=2) + "\n"


def load_definition(arns: Mapping[str, str]) -> str:
    """Return the ASL text with every ``${Placeholder}`` replaced by ``arns[Placeholder]``.

    Raises ``ValueError`` naming the placeholders left without a value, so a runner that forgot
    a function fails at creation time instead of at the first execution that reaches it.
    """
    text = definition_text()
    missing = sorted({name for name in _PLACEHOLDER.findall(text) if not arns.get(name)})
    if missing:
        raise ValueError(f"workflow definition: no ARN for {', '.join(missing)}")
    substituted = _PLACEHOLDER.sub(lambda match: arns[match.group(1)], text)
    json.loads(substituted)  # an ARN with a quote in it would break the JSON: fail here, not in Step Functions
    return substituted


if __name__ == "__main__":
    DEFINITION_PATH.write_text(definition_text(), encoding="utf-8")
    sys.stdout.write(f"wrote {DEFINITION_PATH}\n")
