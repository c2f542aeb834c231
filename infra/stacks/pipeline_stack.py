"""The papersift pipeline as one stack, in the order a document meets it.

A drop under ``incoming/`` notifies a queue; the ingest function starts one workflow execution
per document; the workflow (``infra/workflow.asl.json``) plans, extracts page batches, unpacks
archives and assembles results into the bucket and one DynamoDB item per document.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aws_cdk import (
    Annotations,
    ArnFormat,
    AssetHashType,
    CfnOutput,
    Duration,
    IgnoreMode,
    RemovalPolicy,
    Size,
    Stack,
    Tags,
)
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_notifications as s3n
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra import deployment
from infra.deployment import (
    API,
    ASSEMBLE,
    EXPORT,
    EXTRACT,
    INGEST,
    OCR,
    OCR_PLAN,
    PLAN,
    UNPACK,
    FunctionSpec,
)
from infra.stacks.api import DocumentsApi
from infra.stacks.nag import acknowledge
from infra.stacks.operations import Operations, Watched
from infra.workflow import definition_text, placeholders
from papersift import listing
from papersift.catalog import view_copy_days
from papersift.errors import SettingsError
from papersift.layout import (
    ADMISSION_DELAY_ENV,
    ADMISSION_DELAY_SECONDS,
    API_UPLOAD_PREFIX,
    EXPORTS_PREFIX,
    INCOMING_PREFIX,
    MEMBERS_PREFIX,
    RESULTS_PREFIX,
    STATE_MACHINE_ARN_ENV,
    TEXTRACT_ENABLED,
    TEXTRACT_ENABLED_ENV,
    VIEWS_PREFIX,
    WORK_PREFIX,
)
from papersift.ocr.routing import uses_textract
from papersift.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS_DIR = ROOT / "functions"
CORE_LAYER_DIR = ROOT / "layers" / "papersift"
DEPS_LAYER_DIR = ROOT / "build" / "layers" / "deps"
LAYER_STAMP = ".requirements.sha256"  # written by scripts/build_layers.py
CONTAINER_DOCKERFILE = "functions/Dockerfile"

RUNTIME = lambda_.Runtime(deployment.RUNTIME, lambda_.RuntimeFamily.PYTHON)
#: every function's machine, the layers' and the image's (deployment.ARCHITECTURE: Graviton)
ARCHITECTURE = {"arm64": lambda_.Architecture.ARM_64, "x86_64": lambda_.Architecture.X86_64}[deployment.ARCHITECTURE]
IMAGE_PLATFORM = ecr_assets.Platform.custom(ARCHITECTURE.docker_platform)
CONTEXT_KEY = "papersift"
ASSET_EXCLUDE = ["**/__pycache__", "**/*.pyc", "**/.pytest_cache", "**/.mypy_cache"]


def settings_from_context(value: Any) -> Settings:
    """Settings from the ``papersift`` context key: a mapping (cdk.json) or a JSON object string
    (``cdk synth -c papersift='{"ocr_mode": "local-first"}'``). Raises SettingsError naming the setting."""
    source = f"CDK context {CONTEXT_KEY!r}"
    if value is None:
        return Settings()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise SettingsError(f"{source} must be a JSON object: {exc}") from exc
    if not isinstance(value, Mapping):
        raise SettingsError(f"{source} must be an object of settings, got {type(value).__name__}")
    return Settings.from_mapping(value, source=source)


class PipelineStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.settings = settings_from_context(self.node.try_get_context(CONTEXT_KEY))
        Tags.of(self).add("project", "papersift")
        if not self.settings.container_base_image:
            Annotations.of(self).add_warning_v2(
                "papersift:BaseImageNotPinned",
                "the container image builds on functions/Dockerfile's BASE_IMAGE tag, which moves upstream: "
                "pin it by digest with the container_base_image setting before deploying (docs/operations.md).",
            )

        # 1. Storage: drops, work files and results in one bucket; one item per document.
        self.bucket = self._bucket()
        self.table = self._table()

        # 2. Drops under incoming/ are buffered in a queue with a dead-letter queue for poison events.
        self.queue = self._drop_queue()
        self.bucket.add_event_notification(
            s3.EventType.OBJECT_CREATED,
            s3n.SqsDestination(self.queue),
            s3.NotificationKeyFilter(prefix=INCOMING_PREFIX),
        )

        # 3. The workflow steps: zip functions on two layers, container functions for binaries.
        self.layers = self._layers()
        # (memory, timeout, zip or container image, prefixes written: infra/deployment.py)
        self.plan_fn = self._function(PLAN)
        # extract runs in the container: its recovery ladder calls pdftotext, legacy .doc needs antiword
        self.extract_fn = self._function(EXTRACT)
        self.assemble_fn = self._function(ASSEMBLE)
        self.unpack_fn = self._function(UNPACK)  # members are uploaded as documents of their own
        self.ocr_plan_fn = self._function(OCR_PLAN)
        # OCR runs in the container (Tesseract and its models); Textract only where the mode may use it.
        # Pages read at once are at most max_running_executions x ocr_max_concurrency (the OCR Map);
        # a reserved concurrency (settings: at least that) keeps them from the rest of the account.
        textract = uses_textract(self.settings.ocr_mode)
        self.ocr_fn = self._function(OCR, environment={TEXTRACT_ENABLED_ENV: TEXTRACT_ENABLED} if textract else None,
                                     reserved_concurrency=self.settings.ocr_reserved_concurrency or None)
        # With Settings.export_parquet, a last step writes each document's page records as
        # exports/<doc_id>.parquet (pyarrow: in the container image) and its outcome on the item.
        self.export_fn = self._function(EXPORT) if self.settings.export_parquet else None
        # Every step reads the source and the work files; each writes only under its own prefixes.
        for spec, fn in self.workflow_functions_by_spec:
            self.bucket.grant_read(fn)
            for prefix in spec.writes:
                self.bucket.grant_put(fn, f"{prefix}*")
        self.table.grant_write_data(self.assemble_fn)
        if self.export_fn is not None:  # the export's outcome on the document's item, nothing more
            self.table.grant(self.export_fn, "dynamodb:UpdateItem")
        if textract:
            self.ocr_fn.add_to_role_policy(
                iam.PolicyStatement(
                    actions=["textract:DetectDocumentText", "textract:AnalyzeDocument"], resources=["*"]
                )
            )

        # 4. The one workflow definition, shared with the local runner.
        self.state_machine = self._state_machine()

        # 5. Ingest: queue -> one execution per document, no more running than max_running_executions.
        self.ingest_fn = self._function(
            INGEST, environment={STATE_MACHINE_ARN_ENV: self.state_machine.state_machine_arn,
                                 ADMISSION_DELAY_ENV: str(ADMISSION_DELAY_SECONDS)}
        )
        # two ingests at once at most (SQS's least): admission decisions race with one other only
        self.ingest_fn.add_event_source(
            event_sources.SqsEventSource(self.queue, batch_size=deployment.INGEST_BATCH_SIZE,
                                         report_batch_item_failures=True,
                                         max_concurrency=deployment.INGEST_MAX_CONCURRENCY)
        )
        # the execution name is the document id: a duplicate notification cannot start a second run
        self.state_machine.grant_start_execution(self.ingest_fn)
        # admission: ingest counts the workflow's RUNNING executions, and sends a drop that must wait
        # back to the queue with a delay (a new message: waiting never counts towards the DLQ)
        self.ingest_fn.add_to_role_policy(iam.PolicyStatement(
            actions=["states:ListExecutions"], resources=[self.state_machine.state_machine_arn]))
        self.queue.grant_send_messages(self.ingest_fn)

        # 6. The API: callers submit, follow, fetch, list and delete documents.
        self.api_fn = self._api_function()
        self.api = DocumentsApi(self, "DocumentsApi", handler=self.api_fn, settings=self.settings)

        # 7. Operations: alarms to one SNS topic, and a dashboard of what the pipeline did.
        self.operations = Operations(self, "Operations", watched=Watched(
            dead_letter_queue=self.queue.dead_letter_queue.queue,  # type: ignore[union-attr]
            state_machine=self.state_machine,
            functions=[(spec.name, fn) for spec, fn in self.functions_by_spec],
            ocr_function=self.ocr_fn,
            ocr_reserved_concurrency=self.settings.ocr_reserved_concurrency,
            uses_textract=textract,
        ))

        self._outputs()
        self._acknowledge_accepted_findings()

    @property
    def workflow_functions(self) -> tuple[lambda_.Function, ...]:
        """The functions the workflow invokes, in the order of ``deployment.workflow_functions``."""
        optional = (self.export_fn,) if self.export_fn is not None else ()
        return (self.plan_fn, self.extract_fn, self.assemble_fn, self.unpack_fn, self.ocr_plan_fn, self.ocr_fn,
                *optional)

    @property
    def workflow_functions_by_spec(self) -> tuple[tuple[FunctionSpec, lambda_.Function], ...]:
        """The workflow's functions with their specs (the export step's when its setting is on)."""
        return tuple(zip(deployment.workflow_functions(self.settings), self.workflow_functions, strict=True))

    @property
    def functions_by_spec(self) -> tuple[tuple[FunctionSpec, lambda_.Function], ...]:
        """Every function of the stack with its spec: the workflow's, ingest and the API's."""
        return (*self.workflow_functions_by_spec, (INGEST, self.ingest_fn), (API, self.api_fn))

    # -- storage -------------------------------------------------------------------------

    def _bucket(self) -> s3.Bucket:
        access_logs = s3.Bucket(
            self,
            "AccessLogs",
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
            removal_policy=RemovalPolicy.RETAIN,
            lifecycle_rules=[s3.LifecycleRule(id="expire-access-logs", expiration=Duration.days(90))],
        )
        acknowledge(access_logs, "AwsSolutions-S1", "This is the access-log bucket; logging it into itself would loop.")
        return s3.Bucket(
            self,
            deployment.BUCKET.construct_id,
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            versioned=True,
            removal_policy=RemovalPolicy.RETAIN,
            server_access_logs_bucket=access_logs,
            server_access_logs_prefix="documents/",
            lifecycle_rules=[
                # work/ holds plans, manifests and per-page JSON: only needed while a document runs
                s3.LifecycleRule(
                    id="expire-work-files",
                    prefix=WORK_PREFIX,
                    expiration=Duration.days(7),
                    noncurrent_version_expiration=Duration.days(1),
                ),
                # API uploads and archive members may carry passwords in their metadata; once
                # processed (minutes) only their results are needed
                *(s3.LifecycleRule(
                    id=f"expire-{name}",
                    prefix=prefix,
                    expiration=Duration.days(self.settings.upload_expiry_days),
                    noncurrent_version_expiration=Duration.days(1),
                ) for name, prefix in (("api-uploads", API_UPLOAD_PREFIX), ("archive-members", MEMBERS_PREFIX))),
                # the API's view copies with presigned member links: a copy is served for one
                # expiry window and its links outlive it by one link lifetime, never longer
                s3.LifecycleRule(
                    id="expire-views",
                    prefix=VIEWS_PREFIX,
                    expiration=Duration.days(view_copy_days(self.settings)),
                    noncurrent_version_expiration=Duration.days(1),
                ),
                s3.LifecycleRule(
                    id="expire-old-versions",
                    noncurrent_version_expiration=Duration.days(30),
                    abort_incomplete_multipart_upload_after=Duration.days(2),
                ),
            ],
        )

    def _table(self) -> dynamodb.Table:
        table = dynamodb.Table(
            self,
            deployment.TABLE.construct_id,
            partition_key=dynamodb.Attribute(name=deployment.TABLE_KEY, type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            removal_policy=RemovalPolicy.RETAIN,
        )
        # the API's listing: sparse indexes of the top-level documents (papersift.listing)
        for index in listing.INDEXES:
            table.add_global_secondary_index(
                index_name=index.name,
                partition_key=dynamodb.Attribute(name=index.partition, type=dynamodb.AttributeType.STRING),
                sort_key=dynamodb.Attribute(name=index.sort, type=dynamodb.AttributeType.STRING),
                projection_type=dynamodb.ProjectionType.INCLUDE,
                non_key_attributes=list(listing.PROJECTED),
            )
        return table

    def _drop_queue(self) -> sqs.Queue:
        dead_letters = sqs.Queue(
            self,
            deployment.DEAD_LETTER_QUEUE.construct_id,
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(deployment.DEAD_LETTER_RETENTION_DAYS),
        )
        return sqs.Queue(
            self,
            deployment.QUEUE.construct_id,
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            visibility_timeout=Duration.seconds(deployment.QUEUE_VISIBILITY_TIMEOUT_SECONDS),
            dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=deployment.MAX_RECEIVE_COUNT, queue=dead_letters),
        )

    # -- functions -----------------------------------------------------------------------

    def _layers(self) -> list[lambda_.ILayerVersion]:
        deps_python = DEPS_LAYER_DIR / "python"
        if not deps_python.is_dir():
            # Synth must work from a fresh clone (tests, offline review): stage an empty layer and say
            # loudly that it is not deployable. cdk.json's build step builds the real one first.
            deps_python.mkdir(parents=True, exist_ok=True)
        if not any(deps_python.iterdir()):
            Annotations.of(self).add_warning_v2(
                "papersift:DependencyLayerNotBuilt",
                "build/layers/deps is empty: run scripts/build_layers.py before deploying "
                "(cdk.json runs it unless PAPERSIFT_SKIP_LAYER_BUILD=1).",
            )
        # The build stamp (hash of requirements and pip target) identifies the layer's content, so
        # synth need not hash ~140 MB of wheels on every run.
        stamp = DEPS_LAYER_DIR / LAYER_STAMP
        fingerprint = stamp.read_text().strip() if stamp.is_file() else None
        deps = lambda_.LayerVersion(
            self,
            "DependencyLayer",
            code=lambda_.Code.from_asset(
                str(DEPS_LAYER_DIR),
                exclude=[LAYER_STAMP, *ASSET_EXCLUDE],
                asset_hash=fingerprint,
                asset_hash_type=AssetHashType.CUSTOM if fingerprint else AssetHashType.SOURCE,
            ),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            description="Third-party packages of papersift (layers/requirements.txt)",
        )
        core = lambda_.LayerVersion(
            self,
            "CoreLayer",
            code=lambda_.Code.from_asset(str(CORE_LAYER_DIR), exclude=ASSET_EXCLUDE),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            description="The papersift core library",
        )
        return [deps, core]

    def _environment(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        return deployment.function_environment(self.settings, table_name=self.table.table_name,
                                               bucket_name=self.bucket.bucket_name, extra=extra)

    def _log_group(self, construct_id: str) -> logs.LogGroup:
        return logs.LogGroup(
            self, f"{construct_id}Logs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=RemovalPolicy.DESTROY
        )

    def _function(self, spec: FunctionSpec, environment: Mapping[str, str] | None = None,
                  reserved_concurrency: int | None = None) -> lambda_.Function:
        if spec.container:
            return self._container_function(spec, environment, reserved_concurrency)
        return lambda_.Function(
            self,
            spec.construct_id,
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler=deployment.HANDLER,
            code=lambda_.Code.from_asset(str(FUNCTIONS_DIR / spec.name), exclude=ASSET_EXCLUDE),
            layers=self.layers,
            memory_size=spec.memory_mb,
            timeout=Duration.seconds(spec.timeout_seconds),
            environment=self._environment(environment),
            reserved_concurrent_executions=reserved_concurrency,
            tracing=lambda_.Tracing.ACTIVE,
            log_group=self._log_group(spec.construct_id),
        )

    def _container_function(self, spec: FunctionSpec, environment: Mapping[str, str] | None = None,
                            reserved_concurrency: int | None = None) -> lambda_.DockerImageFunction:
        """A function whose image carries binaries (7z, unar, Tesseract, poppler). The image is
        only staged at synth (no Docker needed); ``cdk deploy`` builds it."""
        name = spec.name
        code = lambda_.DockerImageCode.from_image_asset(
            str(ROOT),
            file=CONTAINER_DOCKERFILE,
            build_args={"FUNCTION": name,
                        **({"BASE_IMAGE": self.settings.container_base_image}
                           if self.settings.container_base_image else {})},
            platform=IMAGE_PLATFORM,
            # the build context is the repository root: send only what the Dockerfile copies
            ignore_mode=IgnoreMode.DOCKER,
            exclude=[
                "*",
                "!functions/Dockerfile",
                f"!functions/{name}",
                "!layers/requirements.txt",
                "!functions/image-requirements.txt",
                "!constraints.txt",
                "!layers/papersift",
                # word lists compiled on the deploying machine: the image compiles its own
                "layers/papersift/python/papersift/data/words-*",
                *ASSET_EXCLUDE,
            ],
        )
        return lambda_.DockerImageFunction(
            self,
            spec.construct_id,
            code=code,
            architecture=ARCHITECTURE,
            memory_size=spec.memory_mb,
            timeout=Duration.seconds(spec.timeout_seconds),
            ephemeral_storage_size=Size.gibibytes(10),
            environment=self._environment(environment),
            reserved_concurrent_executions=reserved_concurrency,
            tracing=lambda_.Tracing.ACTIVE,
            log_group=self._log_group(spec.construct_id),
        )

    def _api_function(self) -> lambda_.Function:
        """The API's Lambda: 29 s is API Gateway's integration limit. It presigns uploads under
        incoming/api/ (a presigned URL carries its signer's rights), reads and presigns results,
        writes and presigns an archive's view copies under views/,
        and deletes a document's objects, every version of them."""
        fn = self._function(API, environment={STATE_MACHINE_ARN_ENV: self.state_machine.state_machine_arn})
        self.bucket.grant_put(fn, f"{API_UPLOAD_PREFIX}*")
        self.bucket.grant_read(fn, f"{RESULTS_PREFIX}*")
        self.bucket.grant_put(fn, f"{VIEWS_PREFIX}*")  # an archive's view: a copy with presigned member links
        self.bucket.grant_read(fn, f"{VIEWS_PREFIX}*")
        owned = [API_UPLOAD_PREFIX, RESULTS_PREFIX, WORK_PREFIX, MEMBERS_PREFIX, VIEWS_PREFIX, EXPORTS_PREFIX]
        fn.add_to_role_policy(iam.PolicyStatement(
            actions=["s3:DeleteObject", "s3:DeleteObjectVersion"],
            resources=[self.bucket.arn_for_objects(f"{prefix}*") for prefix in owned]))
        fn.add_to_role_policy(iam.PolicyStatement(
            actions=["s3:ListBucket", "s3:ListBucketVersions"], resources=[self.bucket.bucket_arn]))
        self.table.grant_read_write_data(fn)
        fn.add_to_role_policy(iam.PolicyStatement(
            actions=["states:DescribeExecution"],
            resources=[self.format_arn(service="states", resource="execution",
                                       resource_name=f"{self.state_machine.state_machine_name}:*",
                                       arn_format=ArnFormat.COLON_RESOURCE_NAME)]))
        machine = self.get_logical_id(self.state_machine.node.default_child)  # type: ignore[arg-type]
        bucket = self.get_logical_id(self.bucket.node.default_child)  # type: ignore[arg-type]
        acknowledge(fn, f"AwsSolutions-IAM5[Resource::<{bucket}.Arn>/{API_UPLOAD_PREFIX}*]",
                    "Each upload's key is minted per submission (incoming/api/<token>/<name>); the prefix is the "
                    "narrowest scope.")
        acknowledge(fn, "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:"
                        f"execution:<{machine}.Name>:*]",
                    "Executions are named after document ids, known only at run time; scoped to this state machine.")
        return fn

    # -- workflow ------------------------------------------------------------------------

    def _state_machine(self) -> sfn.StateMachine:
        export = self.settings.export_parquet
        arns = {spec.placeholder: fn.function_arn for spec, fn in self.workflow_functions_by_spec}
        assert set(arns) == set(placeholders(export)), "workflow placeholders and stack substitutions disagree"
        machine = sfn.StateMachine(
            self,
            deployment.STATE_MACHINE.construct_id,
            # inline rather than from_file (an S3 asset): the definition stays readable in the template
            # and in `cdk diff`; CloudFormation fills in the ARNs from definition_substitutions
            definition_body=sfn.DefinitionBody.from_string(definition_text(export)),
            definition_substitutions=arns,
            state_machine_type=sfn.StateMachineType.STANDARD,
            tracing_enabled=True,
            logs=sfn.LogOptions(
                destination=logs.LogGroup(
                    self,
                    "WorkflowLogs",
                    log_group_name=f"/aws/vendedlogs/states/{self.stack_name}-workflow",
                    retention=logs.RetentionDays.ONE_MONTH,
                    removal_policy=RemovalPolicy.DESTROY,
                ),
                # failures only, without the states' data, unless the settings ask (workflow_log_*)
                level=sfn.LogLevel(self.settings.workflow_log_level),
                include_execution_data=self.settings.workflow_log_execution_data,
            ),
        )
        if self.settings.workflow_log_level != sfn.LogLevel.ALL.value:
            acknowledge(machine, "AwsSolutions-SF1",
                        "Settings.workflow_log_level: failures only by default (every document's states would "
                        "be logged otherwise); a deployer who follows runs state by state sets ALL.")
        for fn in self.workflow_functions:
            fn.grant_invoke(machine)
        # the Distributed Map reads its items from the manifest under work/
        self.bucket.grant_read(machine, f"{WORK_PREFIX}*")
        # ... and runs each batch as a child execution of this same state machine. A separate
        # policy, because the role's default policy cannot name the machine that depends on it.
        iam.Policy(
            self,
            "WorkflowChildExecutions",
            roles=[machine.role],
            statements=[
                iam.PolicyStatement(actions=["states:StartExecution"], resources=[machine.state_machine_arn]),
                iam.PolicyStatement(
                    actions=["states:DescribeExecution", "states:StopExecution"],
                    resources=[
                        self.format_arn(
                            service="states",
                            resource="execution",
                            resource_name=f"{machine.state_machine_name}/*",
                            arn_format=ArnFormat.COLON_RESOURCE_NAME,
                        )
                    ],
                ),
            ],
        )
        acknowledge(
            self,
            "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:"
            f"<{self.get_logical_id(machine.node.default_child)}.Name>/*]",  # type: ignore[arg-type]
            "Distributed Map child executions are named at run time; they are scoped to this state machine.",
        )
        return machine

    def _outputs(self) -> None:
        CfnOutput(self, "BucketName", value=self.bucket.bucket_name, description="Drop files under incoming/")
        CfnOutput(self, "TableName", value=self.table.table_name)
        CfnOutput(self, "StateMachineArn", value=self.state_machine.state_machine_arn)
        CfnOutput(self, "DeadLetterQueueUrl", value=self.queue.dead_letter_queue.queue.queue_url)  # type: ignore[union-attr]

    # -- accepted cdk-nag findings -------------------------------------------------------

    def _acknowledge_accepted_findings(self) -> None:
        """Findings accepted for the whole stack, each with the reason; narrower ones sit next to
        the construct they concern."""
        bucket = self.get_logical_id(self.bucket.node.default_child)  # type: ignore[arg-type]
        table = self.get_logical_id(self.table.node.default_child)  # type: ignore[arg-type]
        basic_role = "arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
        accepted = [
            (
                f"AwsSolutions-IAM4[Policy::{basic_role}]",
                "The AWS managed basic execution role only grants writing the function's own CloudWatch logs.",
            ),
            (
                "AwsSolutions-IAM5[Action::s3:GetObject*]",
                "CDK's read grant: GetObject and its version/tagging variants, on the one documents bucket.",
            ),
            (
                "AwsSolutions-IAM5[Action::s3:GetBucket*]",
                "CDK's read grant: bucket location and versioning lookups on the one documents bucket.",
            ),
            (
                "AwsSolutions-IAM5[Action::s3:List*]",
                "CDK's read grant: listing the documents bucket, so a retry skips pages already written.",
            ),
            (
                "AwsSolutions-IAM5[Action::s3:Abort*]",
                "CDK's put grant: aborting the function's own multipart uploads of large results.",
            ),
            (
                f"AwsSolutions-IAM5[Resource::<{bucket}.Arn>/*]",
                "Steps read any object of the documents bucket: the source document can be anywhere in it.",
            ),
            (
                f"AwsSolutions-IAM5[Resource::<{bucket}.Arn>/{WORK_PREFIX}*]",
                "Work files are keyed by document id, known only at run time; the prefix is the narrowest scope.",
            ),
            (
                f"AwsSolutions-IAM5[Resource::<{bucket}.Arn>/{RESULTS_PREFIX}*]",
                "Results are keyed by document id, known only at run time; the prefix is the narrowest scope.",
            ),
            (
                f"AwsSolutions-IAM5[Resource::<{bucket}.Arn>/{MEMBERS_PREFIX}*]",
                "Unpack uploads archive members under members/<doc_id>/, known only at run time.",
            ),
            (
                f"AwsSolutions-IAM5[Resource::<{bucket}.Arn>/{EXPORTS_PREFIX}*]",
                "The export step writes exports/<doc_id>.parquet, the document id known only at run time.",
            ),
            (
                f"AwsSolutions-IAM5[Resource::<{bucket}.Arn>/{VIEWS_PREFIX}*]",
                "The API writes view copies under views/<doc_id>/, known only at run time.",
            ),
            (
                f"AwsSolutions-IAM5[Resource::<{table}.Arn>/index/*]",
                "CDK's table grants cover its indexes: the API lists documents through the listing indexes.",
            ),
            (
                "AwsSolutions-L1",
                "python3.12 is the runtime the dependency layer is built and tested for; moving on is a "
                "deliberate change of scripts/build_layers.py, the layer and this stack together.",
            ),
        ]
        for rule, reason in accepted:
            acknowledge(self, rule, reason)
        # X-Ray tracing, the workflow's log delivery and the S3 notification handler (which CDK adds
        # for bucket notifications): these actions have no resource-level permissions.
        notification_handler = next(c for c in self.node.children if c.node.id.startswith("BucketNotificationsHandler"))
        for construct in (
            *self.workflow_functions,
            self.ingest_fn,
            self.api_fn,
            self.state_machine,
            notification_handler,
        ):
            acknowledge(
                construct,
                "AwsSolutions-IAM5[Resource::*]",
                "X-Ray, Textract, log delivery and PutBucketNotification have no resource-level permissions.",
            )
        for fn in self.workflow_functions:
            acknowledge(
                self.state_machine,
                f"AwsSolutions-IAM5[Resource::<{self.get_logical_id(fn.node.default_child)}.Arn>:*]",  # type: ignore[arg-type]
                "CDK's invoke grant covers the function's versions and aliases (ARN:*).",
            )
