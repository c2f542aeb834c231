"""cdk-nag findings accepted on purpose: each one with the reason it is accepted."""

from __future__ import annotations

from aws_cdk import Acknowledgment, Validations
from constructs import IConstruct


def acknowledge(scope: IConstruct, rule: str, reason: str) -> None:
    """Accept one cdk-nag finding on ``scope`` (and below) with the reason it is accepted."""
    Validations.of(scope).acknowledge(Acknowledgment(id=rule, reason=reason))
