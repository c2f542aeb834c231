"""CDK assertions on what the operators get: one alarm per way a document can be lost or the
account run short, all to one SNS topic; a dashboard of what the pipeline did; the workflow's log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("aws_cdk")

from aws_cdk import App
from aws_cdk.assertions import Match, Template

from infra.app import build_app
from infra.stacks.pipeline_stack import PipelineStack

FAST = {"aws:cdk:disable-asset-staging": True}
#: local-first may send pages to Textract; the reservation is max_running_executions x ocr_max_concurrency
SETTINGS = {"ocr_mode": "local-first", "ocr_reserved_concurrency": 600}
FUNCTIONS = ("plan", "extract", "assemble", "unpack", "ocr_plan", "ocr", "ingest", "api")


@pytest.fixture(scope="module")
def app_and_stack(tmp_path_factory: pytest.TempPathFactory) -> tuple[App, PipelineStack]:
    return build_app(context={**FAST, "papersift": SETTINGS}, outdir=str(tmp_path_factory.mktemp("cdk.out")))


@pytest.fixture(scope="module")
def stack(app_and_stack: tuple[App, PipelineStack]) -> PipelineStack:
    return app_and_stack[1]


@pytest.fixture(scope="module")
def template(stack: PipelineStack) -> Template:
    return Template.from_stack(stack)


@pytest.fixture(scope="module")
def alarms(template: Template) -> dict[str, dict[str, Any]]:
    """Each alarm's properties by its name without the stack's prefix."""
    return {props["AlarmName"].removeprefix("Papersift-"): props
            for props in (r["Properties"] for r in template.find_resources("AWS::CloudWatch::Alarm").values())}


def ref(stack: PipelineStack, construct: Any) -> dict[str, str]:
    return {"Ref": stack.get_logical_id(construct.node.default_child)}


def test_every_alarm_notifies_the_one_topic_both_ways_and_is_quiet_without_data(
    stack: PipelineStack, alarms: dict[str, dict[str, Any]]
) -> None:
    """One topic to subscribe to: an alarm and its recovery both reach it; no data (no documents)
    is not an alarm."""
    topic = ref(stack, stack.operations.topic)
    assert alarms
    for name, props in alarms.items():
        assert props["AlarmActions"] == [topic] and props["OKActions"] == [topic], name
        assert props["TreatMissingData"] == "notBreaching", name
        assert props["ComparisonOperator"] == "GreaterThanOrEqualToThreshold", name


def test_the_alarm_topic_is_a_stack_output_and_refuses_plain_http(template: Template, stack: PipelineStack) -> None:
    """Operators subscribe to the output's ARN; the topic's policy denies publishing without TLS."""
    template.has_output("AlarmTopicArn", {"Value": ref(stack, stack.operations.topic)})
    template.has_resource_properties("AWS::SNS::TopicPolicy", {"PolicyDocument": {"Statement": Match.array_with([
        Match.object_like({"Effect": "Deny", "Condition": {"Bool": {"aws:SecureTransport": "false"}}})])}})


def test_a_drop_in_the_dead_letter_queue_alarms(stack: PipelineStack, alarms: dict[str, dict[str, Any]]) -> None:
    """A notification ingest failed on five times: that file was never started."""
    props = alarms["dead-letters"]
    dead_letters = stack.get_logical_id(stack.queue.dead_letter_queue.queue.node.default_child)  # type: ignore[union-attr]
    assert (props["Namespace"], props["MetricName"], props["Statistic"]) == (
        "AWS/SQS", "ApproximateNumberOfMessagesVisible", "Maximum")
    assert props["Dimensions"] == [{"Name": "QueueName", "Value": {"Fn::GetAtt": [dead_letters, "QueueName"]}}]
    assert props["Threshold"] == 1


@pytest.mark.parametrize(("name", "metric"), [("executions-failed", "ExecutionsFailed"),
                                              ("executions-timed-out", "ExecutionsTimedOut")])
def test_a_failed_or_timed_out_execution_alarms(stack: PipelineStack, alarms: dict[str, dict[str, Any]],
                                                name: str, metric: str) -> None:
    """Every failure inside the workflow is recorded by RecordFailure: an execution that still fails
    (or times out) left a document without its status."""
    props = alarms[name]
    assert (props["Namespace"], props["MetricName"], props["Statistic"], props["Threshold"]) == (
        "AWS/States", metric, "Sum", 1)
    assert props["Dimensions"] == [{"Name": "StateMachineArn", "Value": ref(stack, stack.state_machine)}]


@pytest.mark.parametrize("function", FUNCTIONS)
def test_each_function_has_an_errors_and_a_throttles_alarm(
    stack: PipelineStack, alarms: dict[str, dict[str, Any]], function: str
) -> None:
    """Per function, so the notification names the step; the OCR function's errors leave out
    Textract throttling, which the workflow retries and which has an alarm of its own."""
    fn = dict((spec.name, fn) for spec, fn in stack.functions_by_spec)[function]
    dimension = [{"Name": "FunctionName", "Value": ref(stack, fn)}]
    throttles = alarms[f"{function}-throttles"]
    assert (throttles["Namespace"], throttles["MetricName"], throttles["Dimensions"]) == (
        "AWS/Lambda", "Throttles", dimension)
    errors = alarms[f"{function}-errors"]
    if function == "ocr":
        by_id = {m["Id"]: m for m in errors["Metrics"]}
        assert by_id["expr_1"]["Expression"] == "errors - FILL(throttled, 0)"
        assert by_id["errors"]["MetricStat"]["Metric"] == {
            "Namespace": "AWS/Lambda", "MetricName": "Errors", "Dimensions": dimension}
        assert by_id["throttled"]["MetricStat"]["Metric"]["MetricName"] == "TextractThrottles"
    else:
        assert (errors["Namespace"], errors["MetricName"], errors["Dimensions"]) == ("AWS/Lambda", "Errors", dimension)


def test_the_alarms_cover_every_function_of_the_stack(stack: PipelineStack, alarms: dict[str, dict[str, Any]]) -> None:
    """A function added to the stack gets its alarms without anyone remembering to add them."""
    deployed = {spec.name for spec, _ in stack.functions_by_spec}
    assert deployed == set(FUNCTIONS)
    assert {name.rsplit("-", 1)[0] for name in alarms if name.endswith(("-errors", "-throttles"))} == deployed


def test_textract_throttling_alarms_only_when_it_lasts(alarms: dict[str, dict[str, Any]]) -> None:
    """The OCR function's own metric (papersift.metrics.TEXTRACT_THROTTLES), in three 5-minute
    periods running: a throttle now and then is retried with backoff and is no news."""
    props = alarms["textract-throttled"]
    assert (props["Namespace"], props["MetricName"], props["Statistic"]) == ("Papersift", "TextractThrottles", "Sum")
    assert props["Dimensions"] == [{"Name": "service", "Value": "papersift"}]
    assert (props["EvaluationPeriods"], props["DatapointsToAlarm"], props["Period"]) == (3, 3, 300)


def test_the_ocr_function_alarms_near_its_reserved_concurrency(
    stack: PipelineStack, alarms: dict[str, dict[str, Any]]
) -> None:
    """At 90% of the reservation (540 of 600), before pages are throttled and wait on retries."""
    props = alarms["ocr-concurrency"]
    assert (props["Namespace"], props["MetricName"], props["Statistic"]) == (
        "AWS/Lambda", "ConcurrentExecutions", "Maximum")
    assert props["Dimensions"] == [{"Name": "FunctionName", "Value": ref(stack, stack.ocr_fn)}]
    assert props["Threshold"] == 540


def test_local_only_without_a_reservation_has_no_textract_or_concurrency_alarm(tmp_path: Path) -> None:
    """No Textract client, nothing to throttle; no reservation, nothing to run short of; the OCR
    function's errors are then all its errors."""
    _, stack = build_app(context={**FAST, "papersift": {"ocr_mode": "local-only"}}, outdir=str(tmp_path))
    names = {r["Properties"]["AlarmName"]: r["Properties"]
             for r in Template.from_stack(stack).find_resources("AWS::CloudWatch::Alarm").values()}
    assert "Papersift-textract-throttled" not in names and "Papersift-ocr-concurrency" not in names
    assert names["Papersift-ocr-errors"]["MetricName"] == "Errors"


def test_the_dashboard_graphs_what_the_pipeline_emits_and_the_cost_per_thousand_pages(
    template: Template, stack: PipelineStack
) -> None:
    """Documents, pages, OCR pages, Textract pages by the names the handlers emit them under
    (papersift.metrics), the cost per 1,000 pages computed from two of them, and every alarm."""
    from papersift import metrics

    (dashboard,) = template.find_resources("AWS::CloudWatch::Dashboard").values()
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    for name in (metrics.DOCUMENTS, metrics.PAGES, metrics.OCR_PAGES, metrics.TEXTRACT_PAGES, metrics.COST_USD):
        assert f'\\"Papersift\\",\\"{name}\\",\\"service\\",\\"papersift\\"' in body, name
    assert "1000 * cost / pages" in body
    for alarm in stack.operations.alarms.values():
        assert stack.get_logical_id(alarm.node.default_child) in body  # type: ignore[arg-type]
    template.has_output("DashboardName", {"Value": Match.any_value()})


def test_the_workflow_logs_errors_without_execution_data_by_default(
    template: Template, stack: PipelineStack, tmp_path: Path
) -> None:
    """States' inputs name documents and keys: by default only failures are logged, without them;
    the workflow_log_* settings turn full logging back on."""
    machine = template.to_json()["Resources"][stack.get_logical_id(stack.state_machine.node.default_child)]
    logging = machine["Properties"]["LoggingConfiguration"]
    assert (logging["Level"], logging["IncludeExecutionData"]) == ("ERROR", False)
    _, verbose = build_app(context={**FAST, "papersift": {"workflow_log_level": "all",
                                                          "workflow_log_execution_data": True}},
                           outdir=str(tmp_path))
    machine = Template.from_stack(verbose).to_json()["Resources"][
        verbose.get_logical_id(verbose.state_machine.node.default_child)]
    logging = machine["Properties"]["LoggingConfiguration"]
    assert (logging["Level"], logging["IncludeExecutionData"]) == ("ALL", True)
