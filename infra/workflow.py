"""The one workflow definition, with its function ARNs filled in.

The CDK stack deploys ``workflow.asl.json`` through ``DefinitionBody.from_file`` and the local
runner creates the same file in moto through :func:`load_definition`, so both run one workflow.
Pure: no CDK, no AWS calls.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

DEFINITION_PATH = Path(__file__).resolve().parent / "workflow.asl.json"

#: names substituted as ``${Name}`` in the definition; the stack passes the same keys to CDK
PLACEHOLDERS: tuple[str, ...] = (
    "PlanFunctionArn",
    "ExtractFunctionArn",
    "AssembleFunctionArn",
    "UnpackFunctionArn",
)

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_]+)\}")


def load_definition(arns: Mapping[str, str], path: Path = DEFINITION_PATH) -> str:
    """Return the ASL text with every ``${Placeholder}`` replaced by ``arns[Placeholder]``.

    Raises ``ValueError`` naming the placeholders left without a value, so a runner that forgot
    a function fails at creation time instead of at the first execution that reaches it.
    """
    text = path.read_text(encoding="utf-8")
    missing = sorted({name for name in _PLACEHOLDER.findall(text) if not arns.get(name)})
    if missing:
        raise ValueError(f"workflow definition {path.name}: no ARN for {', '.join(missing)}")
    substituted = _PLACEHOLDER.sub(lambda match: arns[match.group(1)], text)
    json.loads(substituted)  # an ARN with a quote in it would break the JSON: fail here, not in Step Functions
    return substituted
