"""What the people who run the pipeline watch: alarms, each to one SNS topic, and a dashboard.

Every alarm is a sign that a document may not finish or that the account runs short of
something, not a sign of load: each stays quiet on missing data, and a retried throttle alarms
only when it lasts. The list (and what to do about each) is docs/operations.md.

The dashboard graphs what the pipeline emits itself (``papersift.metrics``, in the powertools
namespace and ``service`` dimension the stack sets): documents, pages, OCR pages, Textract pages
and the estimated cost per 1,000 pages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aws_cdk import Aws, CfnOutput, Duration, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra import deployment
from infra.stacks.nag import acknowledge
from papersift import metrics

PERIOD = Duration.minutes(5)
#: Textract throttling is retried with backoff: only this many 5-minute periods in a row alarm
TEXTRACT_THROTTLED_PERIODS = 3
#: the OCR function's concurrency, as a share of its reservation, that alarms (past it, pages
#: are throttled and wait on the workflow's retries)
OCR_CONCURRENCY_SHARE = 0.9


@dataclass(frozen=True)
class Watched:
    """What the operations construct watches: the stack's queue, workflow and functions."""

    dead_letter_queue: sqs.IQueue
    state_machine: sfn.IStateMachine
    #: every function of the stack, by the name the alarms carry (deployment.FunctionSpec.name)
    functions: Sequence[tuple[str, lambda_.IFunction]]
    #: the OCR function and its reserved concurrency (0: none, no concurrency alarm)
    ocr_function: lambda_.IFunction
    ocr_reserved_concurrency: int
    #: the OCR mode may call Textract: only then is there Textract throttling to alarm on
    uses_textract: bool


def pipeline_metric(name: str, statistic: str = cloudwatch.Stats.SUM) -> cloudwatch.Metric:
    """A metric the handlers emit (``papersift.metrics``) as powertools writes it."""
    return cloudwatch.Metric(namespace=deployment.METRICS_NAMESPACE, metric_name=name,
                             dimensions_map={"service": deployment.SERVICE_NAME},
                             statistic=statistic, period=PERIOD)


class Operations(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, watched: Watched) -> None:
        super().__init__(scope, construct_id)
        self.stack_name = Stack.of(self).stack_name
        self.topic = sns.Topic(self, "AlarmTopic", display_name="papersift alarms", enforce_ssl=True)
        acknowledge(self.topic, "AwsSolutions-SNS2",
                    "Alarm notifications carry alarm names and metric values, no document data; CloudWatch "
                    "cannot publish to a topic under the AWS managed SNS key, and a customer key is the "
                    "deployer's choice.")
        self.alarms: dict[str, cloudwatch.Alarm] = {}

        # documents that cannot finish
        self._alarm("dead-letters", watched.dead_letter_queue.metric_approximate_number_of_messages_visible(
            period=PERIOD, statistic=cloudwatch.Stats.MAXIMUM),
            "Drop notifications in the dead-letter queue: ingest failed on them 5 times; those files were "
            "never started (redrive the queue once the cause is fixed).")
        self._alarm("executions-failed", watched.state_machine.metric_failed(period=PERIOD),
                    "Workflow executions failed: a document (or a Distributed Map batch) ended without "
                    "RecordFailure recording it.")
        self._alarm("executions-timed-out", watched.state_machine.metric_timed_out(period=PERIOD),
                    "Workflow executions timed out.")

        # each function's errors and throttles
        for name, fn in watched.functions:
            errors: cloudwatch.IMetric = fn.metric_errors(period=PERIOD)
            if fn is watched.ocr_function and watched.uses_textract:
                # a Textract throttle is an error of the invocation the workflow retries: its own alarm
                errors = cloudwatch.MathExpression(
                    expression="errors - FILL(throttled, 0)", period=PERIOD, label="errors other than throttling",
                    using_metrics={"errors": errors, "throttled": pipeline_metric(metrics.TEXTRACT_THROTTLES)})
            self._alarm(f"{name}-errors", errors, f"The {name} function raised errors.")
            self._alarm(f"{name}-throttles", fn.metric_throttles(period=PERIOD),
                        f"Lambda throttled the {name} function: the account's (or its reserved) concurrency "
                        "is used up.")

        # Textract and the OCR function's capacity
        if watched.uses_textract:
            self._alarm("textract-throttled", pipeline_metric(metrics.TEXTRACT_THROTTLES),
                        f"Textract throttled OCR pages in {TEXTRACT_THROTTLED_PERIODS} 5-minute periods in a row: "
                        "raise the Textract quota or lower ocr_max_concurrency x max_running_executions.",
                        periods=TEXTRACT_THROTTLED_PERIODS)
        if watched.ocr_reserved_concurrency:
            threshold = max(1, int(watched.ocr_reserved_concurrency * OCR_CONCURRENCY_SHARE))
            self._alarm("ocr-concurrency", watched.ocr_function.metric(
                "ConcurrentExecutions", period=PERIOD, statistic=cloudwatch.Stats.MAXIMUM),
                f"The OCR function ran {threshold} or more at once, of its {watched.ocr_reserved_concurrency} "
                "reserved: pages beyond the reservation are throttled.", threshold=threshold)

        self.dashboard = self._dashboard()
        CfnOutput(scope, "AlarmTopicArn", value=self.topic.topic_arn,
                  description="every alarm notifies this topic: aws sns subscribe --topic-arn <arn> ...")
        CfnOutput(scope, "DashboardName", value=self.dashboard.dashboard_name)

    def _alarm(self, name: str, metric: cloudwatch.IMetric, description: str, *, threshold: float = 1,
               periods: int = 1) -> None:
        alarm = cloudwatch.Alarm(
            self, f"Alarm-{name}",
            alarm_name=f"{self.stack_name}-{name}",
            alarm_description=description,
            metric=metric,
            threshold=threshold,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluation_periods=periods,
            datapoints_to_alarm=periods,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        alarm.add_alarm_action(actions.SnsAction(self.topic))
        alarm.add_ok_action(actions.SnsAction(self.topic))
        self.alarms[name] = alarm

    def _dashboard(self) -> cloudwatch.Dashboard:
        pages = pipeline_metric(metrics.PAGES)
        cost_per_thousand = cloudwatch.MathExpression(
            expression="IF(pages > 0, 1000 * cost / pages, 0)", period=PERIOD, label="USD per 1,000 pages",
            using_metrics={"cost": pipeline_metric(metrics.COST_USD), "pages": pages})
        # dashboard names are unique per account, not per region
        dashboard = cloudwatch.Dashboard(self, "Dashboard", dashboard_name=f"{self.stack_name}-pipeline-{Aws.REGION}")
        dashboard.add_widgets(
            cloudwatch.GraphWidget(title="Documents finished", width=8,
                                   left=[pipeline_metric(metrics.DOCUMENTS).with_(label="documents")]),
            cloudwatch.GraphWidget(title="Pages", width=8, left=[
                pages.with_(label="pages"),
                pipeline_metric(metrics.OCR_PAGES).with_(label="OCR pages"),
                pipeline_metric(metrics.TEXTRACT_PAGES).with_(label="Textract pages"),
            ]),
            cloudwatch.GraphWidget(title="Estimated cost per 1,000 pages (USD)", width=8, left=[cost_per_thousand]),
        )
        dashboard.add_widgets(cloudwatch.SingleValueWidget(
            title="Over the dashboard's time range", width=24, set_period_to_time_range=True, metrics=[
                pipeline_metric(metrics.DOCUMENTS).with_(label="documents"), pages.with_(label="pages"),
                pipeline_metric(metrics.OCR_PAGES).with_(label="OCR pages"),
                pipeline_metric(metrics.TEXTRACT_PAGES).with_(label="Textract pages"), cost_per_thousand]))
        dashboard.add_widgets(cloudwatch.AlarmStatusWidget(title="Alarms", width=24,
                                                           alarms=list(self.alarms.values())))
        return dashboard
