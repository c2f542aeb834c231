"""No DependsOn that a Ref or Fn::GetAtt already implies (cfn-lint W3005).

Why CDK writes them: an L2 construct that must not start before its role has its policies (a
Lambda function, the state machine, the bucket-notifications handler) adds a dependency on the
role *construct*, so every CloudFormation resource under it lands in DependsOn: the role's
default policy, which nothing else orders first and which must stay, and the role itself, which
the function's ``Role: Fn::GetAtt [Role, Arn]`` already orders (aws/aws-cdk#24578; CDK has no
flag for it). The bucket notification's dependency on the queue's policy is needed for the
same reason; the one on the queue is implied by its ``QueueArn: Fn::GetAtt``.

CloudFormation treats a Ref or GetAtt as a dependency (cfn-lint W3005's premise), so dropping
those entries changes no creation or deletion order. CDK turns the construct dependencies into
resource dependencies only when it prepares the app, after the aspects have run, so the aspect
cannot drop them itself: it gives each stack a validation, the step CDK runs after preparing and
before writing the template, which removes them through the escape hatch
``CfnResource.remove_resource_dependency``. Everything else CDK writes (the order too) is left as it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jsii
from aws_cdk import CfnResource, IAspect, Stack
from constructs import IConstruct, IValidation


def referenced_logical_ids(properties: Any) -> set[str]:
    """The logical ids a resolved property tree names by ``Ref`` or ``Fn::GetAtt``."""
    return set(_references(properties))


def _references(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "Ref" and isinstance(value, str):
                yield value
            elif key == "Fn::GetAtt":
                target = value[0] if isinstance(value, list) and value else value
                if isinstance(target, str):
                    yield target.split(".", 1)[0]
            else:
                yield from _references(value)
    elif isinstance(node, list):
        for item in node:
            yield from _references(item)


def implied_dependencies(resource: CfnResource) -> list[CfnResource]:
    """The resources ``resource`` depends on that its own properties name by Ref or GetAtt."""
    stack = Stack.of(resource)
    referenced = referenced_logical_ids(stack.resolve(resource._cfn_properties))
    return [target for target in resource.obtain_dependencies()
            if isinstance(target, CfnResource) and Stack.of(target) is stack
            and stack.resolve(target.logical_id) in referenced]


@jsii.implements(IAspect)
class DropImpliedDependsOn:
    """Leaves out of every resource's DependsOn the ones a Ref or GetAtt in it already imply."""

    def visit(self, node: IConstruct) -> None:
        if isinstance(node, Stack):
            node.node.add_validation(_DropImplied(node))


@jsii.implements(IValidation)
class _DropImplied:
    """Runs once the app is prepared (the dependencies are final) and finds nothing to report."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack

    def validate(self) -> list[str]:
        for construct in self.stack.node.find_all():
            if isinstance(construct, CfnResource) and Stack.of(construct) is self.stack:
                for target in implied_dependencies(construct):
                    construct.remove_resource_dependency(target)
        return []
