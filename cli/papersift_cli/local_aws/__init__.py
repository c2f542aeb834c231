"""The whole pipeline on an embedded AWS: moto in-process, our handlers in-process.

moto's server provides S3, SQS, DynamoDB, IAM, Lambda (as a registry) and Step Functions,
and it *executes* the workflow (``execute_state_machine``). moto cannot run Lambda code without
Docker, and every path that invokes a function (boto3 ``invoke``, Step Functions tasks, S3
notifications, SQS event source mappings) goes through one method,
``moto.awslambda.models.LambdaFunction.invoke``. While a :class:`LocalAws` is open that method
is replaced by a dispatch to ``functions/<name>/app.py:handler`` in this process, so the
handlers' own boto3 calls (pointed at the server through ``AWS_ENDPOINT_URL``) hit moto too.

One module per job: ``runner`` (LocalAws: the server, the environment, the handlers, dropping
files and waiting), ``moto_patches`` (what is patched in moto, and undone), ``resources`` (the
stack's resources re-created in moto from ``infra.deployment``), ``queue_poller`` (the SQS poller
moto does not have) and ``outcomes`` (what happened to each file). See docs/local-pipeline.md.
"""

from papersift_cli.local_aws.outcomes import DocumentOutcome
from papersift_cli.local_aws.resources import REGION
from papersift_cli.local_aws.runner import InvocationContext, LocalAws, handler_path

__all__ = ["REGION", "DocumentOutcome", "InvocationContext", "LocalAws", "handler_path"]
