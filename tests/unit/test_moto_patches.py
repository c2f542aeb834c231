"""Guards on the moto behaviour that each patch of ``local_aws/moto_patches.py`` replaces (issue 21).

The embedded AWS patches some 30 private moto modules, written against moto 5.2.5 (the project pins
``moto<6``). Each test here runs moto *unpatched* (no LocalAws is open in these tests, and the
``unpatched`` fixture checks it) and asserts what the patch relies on: the attribute it replaces, the
behaviour it replaces (so a moto that fixed it says the patch can go) or, for a patch that
re-implements a moto function, a fingerprint of that function's source (so a moto that changed it
says the copy must be compared again). Every failure names its patch. docs/local-pipeline.md
("Upgrading moto") says what to check for each.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

pytest.importorskip("moto")

from moto import mock_aws
from moto.core import DEFAULT_ACCOUNT_ID

from papersift_cli.local_aws.moto_patches import MotoPatches

REGION = "us-east-1"

#: every patch (a method of MotoPatches that ``apply`` calls) -> the tests here that guard it
GUARDS: dict[str, tuple[str, ...]] = {
    "_keep_step_functions_config": ("test_moto_api_config_replaces_the_global_step_functions_config",),
    "_dispatch_invocations": ("test_every_lambda_invocation_goes_through_lambda_function_invoke",),
    "_scale_retry_waits": ("test_the_step_functions_retrier_sleeps_with_its_module_time",),
    "_add_version_ids_to_notifications": ("test_s3_notifications_leave_out_the_version_id",),
    "_notify_when_objects_are_complete": ("test_s3_notifies_a_put_before_its_user_metadata_is_set",),
    "_answer_boto_calls_in_process": ("test_botocore_stubber_enabled_answers_clients_in_process",),
    "_read_s3_urls_once": ("test_s3_backend_reloads_its_url_module_on_every_access",),
    "_reuse_step_functions_clients": ("test_step_functions_build_a_new_client_for_every_call",),
    "_compile_json_paths_once": ("test_step_functions_compile_every_json_path_anew",),
    "_parse_definitions_once": ("test_step_functions_parse_the_definition_for_every_execution",),
    "_iterate_map_jobs": ("test_map_workers_run_their_jobs_by_recursion",
                          "test_the_map_run_event_manager_is_made_by_name"),
    "_forget_finished_threads": ("test_step_functions_threads_are_kept_in_tmp_threads_forever",),
    "_track_models_weakly": ("test_every_model_object_is_tracked_strongly",),
    "_keep_bodies_on_disk": ("test_s3_keys_keep_their_bodies_in_a_buffer",),
    "_index_s3_listings": ("test_buckets_take_their_key_store_class_from_moto_s3_models",
                           "test_list_objects_visits_every_key_of_the_bucket"),
    "_answer_s3_directly": ("test_the_s3_backend_calls_direct_s3_makes_are_as_written_against",),
    "_take_put_bodies_as_sent": ("test_a_put_sent_as_a_form_is_stored_empty",
                                 "test_the_server_reads_a_form_put_to_guess_its_service_and_loses_binary_ones"),
}

#: every moto attribute a patch replaces or reads: (module, attribute path)
PATCHED_ATTRIBUTES: tuple[tuple[str, str], ...] = (
    ("moto.core.config", "default_user_config"),
    ("moto.awslambda.models", "LambdaFunction.invoke"),
    ("moto.stepfunctions.parser.asl.component.common.retry.retrier_decl", "time"),
    ("moto.s3.notifications", "_get_s3_event"),
    ("moto.s3.notifications", "send_event"),
    ("moto.s3.notifications", "S3NotificationEvent.OBJECT_CREATED_PUT_EVENT"),
    ("moto.s3.responses", "S3Response.put_object"),
    ("moto.s3.responses", "S3Response._bucket_response_post"),
    ("moto.s3.responses", "S3Response._key_response_post"),
    ("moto.core.models", "botocore_stubber.enabled"),
    ("moto.s3.models", "S3Backend._url_module"),
    ("moto.stepfunctions.parser.asl.utils.boto_client", "boto_client_for"),
    ("moto.stepfunctions.parser.asl.component.state.exec.state_task.lambda_eval_utils", "boto_client_for"),
    ("moto.stepfunctions.parser.asl.component.state.exec.state_map.item_reader.eval.resource_eval_s3",
     "boto_client_for"),
    ("moto.stepfunctions.parser.asl.utils.json_path", "parse"),
    ("moto.stepfunctions.parser.asl.component.common.path.result_path", "parse"),
    ("moto.stepfunctions.parser.asl.parse.asl_parser", "AmazonStateLanguageParser.parse"),
    ("moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.iteration_worker",
     "IterationWorker._eval_pool"),
    ("moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.itemprocessor."
     "distributed_item_processor_worker", "DistributedItemProcessorWorker._eval_pool"),
    ("moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.distributed_iteration_component",
     "EventManager"),
    ("moto.stepfunctions.parser.asl.eval.event.event_manager", "EventManager._publish_history_event"),
    ("moto.stepfunctions.parser.utils", "TMP_THREADS"),
    ("moto.core.common_models", "BaseModel.__new__"),
    ("moto.s3.models", "FakeKey.etag"),
    ("moto.s3.models", "FakeKey.value"),
    ("moto.s3.models", "FakeKey.dispose"),
    ("moto.s3.models", "FakeKey.__getstate__"),
    ("moto.s3.models", "_VersionedKeyStore"),
    ("moto.s3.models", "S3Backend.list_objects"),
    ("moto.s3.models", "S3Backend._get_results_from_token"),
    ("moto.s3.models", "S3Backend._truncate_result"),
    ("moto.s3.models", "FakeDeleteMarker"),
    ("moto.s3.models", "FakeTableStorageBucket"),
    ("moto.s3.models", "s3_backends"),
    ("moto.core", "DEFAULT_ACCOUNT_ID"),
    ("moto.s3.utils", "_VersionedKeyStore.setlist"),
    ("moto.s3.exceptions", "MethodNotAllowed"),
    ("moto.moto_server.werkzeug_app", "DomainDispatcherApplication._get_body"),
    ("moto.core.request", "Request.want_form_data_parsed"),
)

_MAP = "moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration"
#: the source of each moto function a patch re-implements, as in moto 5.2.5: a change means that
#: the copy named must be compared with moto's new code again
FINGERPRINTS: dict[str, tuple[str, str, str]] = {
    # moto module:attribute -> (the patch, its copy of moto's code, sha256 of the source, first 16 digits)
    f"{_MAP}.iteration_worker:IterationWorker._eval_pool":
        ("_iterate_map_jobs", "sfn_maps._eval_jobs", "45ca0026e8cc8e85"),
    f"{_MAP}.itemprocessor.distributed_item_processor_worker:DistributedItemProcessorWorker._eval_pool":
        ("_iterate_map_jobs", "sfn_maps._eval_jobs", "8797235af229965f"),
    "moto.s3.models:S3Backend.list_objects":
        ("_index_s3_listings", "s3_index.indexed_list_objects", "9409ba5af314a9d7"),
    "moto.core.common_models:BaseModel.__new__":
        ("_track_models_weakly", "MotoPatches._track_models_weakly.new", "08cf0ef20e88029a"),
    "moto.s3.models:FakeKey.value": ("_keep_bodies_on_disk", "s3_bodies._get_value/_set_value", "bc1a1122bc371309"),
    "moto.s3.models:FakeKey.etag": ("_keep_bodies_on_disk", "s3_bodies.etag_of", "aa3062e82e089cb3"),
    "moto.s3.models:FakeKey.__getstate__": ("_keep_bodies_on_disk", "s3_bodies.stateless", "9e38b58ef9ad7162"),
    "moto.s3.responses:S3Response.put_object":
        ("_answer_s3_directly", "s3_direct.DirectS3._PutObject", "992229be920b6363"),
    "moto.s3.models:FakeKey.response_dict": ("_answer_s3_directly", "s3_direct._object_fields", "57d0ac8aa00fe7be"),
}


def _resolve(module_name: str, path: str) -> Any:
    found: Any = importlib.import_module(module_name)
    for part in path.split("."):
        owner = found
        found = owner.__dict__[part] if isinstance(owner, type) and part in owner.__dict__ else getattr(owner, part)
    return found


def _fingerprint(obj: Any) -> str:
    if isinstance(obj, property):
        obj = (obj.fget, obj.fset)
        source = "".join(inspect.getsource(f) for f in obj if f is not None)
    else:
        source = inspect.getsource(obj.__func__ if isinstance(obj, staticmethod) else obj)
    return hashlib.sha256(source.encode()).hexdigest()[:16]


@pytest.fixture(autouse=True)
def unpatched() -> None:
    """moto as it is shipped: no LocalAws (nor a test that leaked one) has patched it."""
    from moto.awslambda.models import LambdaFunction
    from moto.s3 import notifications

    assert LambdaFunction.invoke.__module__ == "moto.awslambda.models", "a LocalAws is open: moto is patched"
    assert notifications._get_s3_event.__module__ == "moto.s3.notifications", "a LocalAws is open"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    with mock_aws():
        yield


def _versioned_bucket(name: str = "guard") -> Any:
    s3 = boto3.client("s3", region_name=REGION)
    s3.create_bucket(Bucket=name)
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    return s3


def _function(name: str = "guarded") -> str:
    iam = boto3.client("iam", region_name=REGION)
    role = iam.create_role(RoleName="guard", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    return str(boto3.client("lambda", region_name=REGION).create_function(
        FunctionName=name, Runtime="python3.11", Role=role, Handler="app.handler",
        Code={"ZipFile": b"PK\x05\x06" + b"\x00" * 18})["FunctionArn"])


# -- the inventory ----------------------------------------------------------------------------------

def test_every_patch_has_a_guard_test() -> None:
    patches = {name for name, value in vars(MotoPatches).items()
               if callable(value) and name.startswith("_") and not name.startswith("__") and name != "_replace"}
    assert patches == set(GUARDS), "a patch without a guard here (or a guard of a patch that is gone)"
    tests = {name for name in globals() if name.startswith("test_")}
    for patch, guards in GUARDS.items():
        assert set(guards) <= tests, f"{patch}: guard test missing"


@pytest.mark.parametrize(("module_name", "path"), PATCHED_ATTRIBUTES, ids=[f"{m}:{p}" for m, p in PATCHED_ATTRIBUTES])
def test_every_patched_moto_attribute_still_exists(module_name: str, path: str) -> None:
    _resolve(module_name, path)


@pytest.mark.parametrize("target", sorted(FINGERPRINTS))
def test_moto_functions_the_patches_copy_are_as_written_against(target: str) -> None:
    patch, copy, expected = FINGERPRINTS[target]
    module_name, path = target.split(":")
    found = _fingerprint(_resolve(module_name, path))
    assert found == expected, (
        f"{target} changed since {patch} was written (moto 5.2.5): compare {copy} with moto's new code, "
        f"then set its fingerprint to {found!r}")


def test_restore_puts_every_patched_attribute_back() -> None:
    def snapshot() -> dict[str, Any]:
        return {f"{m}:{p}": _resolve(m, p) for m, p in PATCHED_ATTRIBUTES if not p.endswith(".enabled")}

    from moto.core.config import default_user_config
    from moto.core.models import botocore_stubber

    before, stubbing, config = snapshot(), botocore_stubber.enabled, dict(default_user_config["stepfunctions"])
    patches = MotoPatches(lambda *_: b"", 0, in_process=True, direct_s3=True)
    patches.apply()
    try:
        during = snapshot()
        assert botocore_stubber.enabled
        default_user_config["stepfunctions"] = {"execute_state_machine": True}
    finally:
        patches.restore()
    assert [name for name in before if during[name] is not before[name]], "apply patched nothing"
    changed = [name for name, value in snapshot().items() if value is not before[name]]
    assert changed == []
    assert botocore_stubber.enabled == stubbing
    assert default_user_config["stepfunctions"] == config


# -- one guard per patch ----------------------------------------------------------------------------

def test_moto_api_config_replaces_the_global_step_functions_config(aws: None) -> None:
    """_keep_step_functions_config: ``POST /moto-api/config`` replaces moto's process-wide
    ``default_user_config["stepfunctions"]`` (LocalAws sets execute_state_machine so Step Functions
    run), which outlives the server: the patch saves it and puts it back."""
    from moto.core.config import default_user_config
    from moto.moto_api._internal.models import moto_api_backend

    saved = default_user_config["stepfunctions"]
    try:
        moto_api_backend.set_config({"stepfunctions": {"execute_state_machine": True}})
        assert default_user_config["stepfunctions"] == {"execute_state_machine": True}
    finally:
        default_user_config["stepfunctions"] = saved


def test_every_lambda_invocation_goes_through_lambda_function_invoke(aws: None,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """_dispatch_invocations: boto3's Invoke and an S3 notification both reach
    ``LambdaFunction.invoke(body, request_headers, response_headers)`` (Step Functions' Lambda tasks
    and SQS event source mappings call it too: the e2e tests cover those), so replacing that one
    method runs our handlers for every path."""
    from moto.awslambda.models import LambdaFunction

    assert list(inspect.signature(LambdaFunction.invoke).parameters) == [
        "self", "body", "request_headers", "response_headers"]
    calls: list[tuple[str, Any]] = []

    def recorded(fn: Any, body: str, request_headers: Any, response_headers: Any) -> bytes:
        calls.append((fn.function_name, json.loads(body)))
        return b'"ok"'

    monkeypatch.setattr(LambdaFunction, "invoke", recorded)
    arn = _function()
    reply = boto3.client("lambda", region_name=REGION).invoke(FunctionName="guarded", Payload=b'{"a": 1}')
    assert reply["Payload"].read() == b'"ok"'
    s3 = _versioned_bucket()
    s3.put_bucket_notification_configuration(Bucket="guard", NotificationConfiguration={
        "LambdaFunctionConfigurations": [{"LambdaFunctionArn": arn, "Events": ["s3:ObjectCreated:*"]}]})
    s3.put_object(Bucket="guard", Key="uploads/a.pdf", Body=b"%PDF")
    assert [name for name, _ in calls] == ["guarded", "guarded"]
    assert calls[0][1] == {"a": 1}
    assert calls[1][1]["Records"][0]["s3"]["object"]["key"] == "uploads%2Fa.pdf"


def test_the_step_functions_retrier_sleeps_with_its_module_time() -> None:
    """_scale_retry_waits: moto's Retry really waits, ``time.sleep`` of the module's own ``time``
    name, which the patch replaces by a scaled one."""
    from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl

    assert retrier_decl.time is time
    assert "time.sleep(" in inspect.getsource(retrier_decl)


def test_s3_notifications_leave_out_the_version_id(aws: None) -> None:
    """_add_version_ids_to_notifications: moto's event of a versioned object has no ``versionId``
    (AWS's has); ingest derives the document id from it. When this fails, moto sends it: the
    patch can go."""
    from moto.s3 import notifications
    from moto.s3.models import s3_backends

    _versioned_bucket().put_object(Bucket="guard", Key="uploads/a.pdf", Body=b"%PDF")
    bucket = s3_backends[DEFAULT_ACCOUNT_ID]["aws"].buckets["guard"]
    key = bucket.keys["uploads/a.pdf"]
    assert key.version_id not in (None, "null")
    event = notifications._get_s3_event(notifications.S3NotificationEvent.OBJECT_CREATED_PUT_EVENT,
                                        bucket, key, "id")
    assert "versionId" not in event["Records"][0]["s3"]["object"]


@pytest.mark.parametrize("upload", ["put", "multipart"])
def test_s3_notifies_a_put_before_its_user_metadata_is_set(aws: None, monkeypatch: pytest.MonkeyPatch,
                                                            upload: str) -> None:
    """_notify_when_objects_are_complete: moto's backend sends a PUT's (and a completed multipart
    upload's) notification before the request handler sets the object's user metadata; S3 notifies
    a complete object, and the plan step reads an upload's options from its metadata. When this
    fails, moto notifies a complete object: the patch can go."""
    from moto.s3 import models, notifications

    seen: list[dict[str, Any]] = []
    send = notifications.send_event

    def recorded(account_id: str, event_name: Any, bucket: Any, key: Any) -> None:
        seen.append(dict(key.metadata))
        send(account_id, event_name, bucket, key)

    monkeypatch.setattr(notifications, "send_event", recorded)
    assert models.notifications is notifications  # the backend calls it through the module
    s3 = _versioned_bucket()
    if upload == "put":
        s3.put_object(Bucket="guard", Key="uploads/a.pdf", Body=b"%PDF", Metadata={"extract-tables": "true"})
    else:
        started = s3.create_multipart_upload(Bucket="guard", Key="uploads/a.pdf", Metadata={"extract-tables": "true"})
        part = s3.upload_part(Bucket="guard", Key="uploads/a.pdf", UploadId=started["UploadId"], PartNumber=1,
                              Body=b"%PDF")
        s3.complete_multipart_upload(Bucket="guard", Key="uploads/a.pdf", UploadId=started["UploadId"],
                                     MultipartUpload={"Parts": [{"ETag": part["ETag"], "PartNumber": 1}]})
    assert seen, "moto no longer notifies from its backend"
    assert "x-amz-meta-extract-tables" not in seen[0]
    stored = s3.head_object(Bucket="guard", Key="uploads/a.pdf")["Metadata"]
    assert stored == {"extract-tables": "true"}


def test_botocore_stubber_enabled_answers_clients_in_process(aws: None) -> None:
    """_answer_boto_calls_in_process: ``botocore_stubber`` is a ``before-send`` handler of every
    client, and its ``enabled`` flag (what ``mock_aws`` switches) is what makes moto's backends answer
    a client without an endpoint URL."""
    from botocore.handlers import BUILTIN_HANDLERS
    from moto.core.models import botocore_stubber

    assert ("before-send", botocore_stubber) in BUILTIN_HANDLERS
    assert botocore_stubber.enabled is True
    s3 = boto3.client("s3", region_name=REGION)
    s3.create_bucket(Bucket="guard")
    assert [b["Name"] for b in s3.list_buckets()["Buckets"]] == ["guard"]


def test_s3_backend_reloads_its_url_module_on_every_access(aws: None) -> None:
    """_read_s3_urls_once: ``S3Backend._url_module`` re-executes ``moto.s3.urls`` (importlib.reload)
    each time moto looks up an S3 request's handler."""
    import moto.s3.urls as s3_urls
    from moto.s3.models import S3Backend, s3_backends

    assert isinstance(S3Backend.__dict__["_url_module"], property)
    backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
    first = s3_urls.url_paths
    assert backend._url_module is s3_urls
    assert s3_urls.url_paths is not first, "moto no longer reloads its S3 URLs: the patch can go"


def test_step_functions_build_a_new_client_for_every_call() -> None:
    """_reuse_step_functions_clients: ``boto_client_for(region, service, state_credentials)`` makes a
    new boto3 client every call, with the same fake keys whatever the credentials; the Lambda task
    and the item reader call it by the name they imported."""
    from moto.stepfunctions.parser.asl.component.state.exec.state_map.item_reader.eval import resource_eval_s3
    from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils
    from moto.stepfunctions.parser.asl.utils import boto_client

    assert list(inspect.signature(boto_client.boto_client_for).parameters) == [
        "region", "service", "state_credentials"]
    assert lambda_eval_utils.boto_client_for is boto_client.boto_client_for
    assert resource_eval_s3.boto_client_for is boto_client.boto_client_for
    one = boto_client.boto_client_for(REGION, "lambda", {"RoleArn": "a"})
    other = boto_client.boto_client_for(REGION, "lambda", {"RoleArn": "b"})
    assert one is not other
    assert one._request_signer._credentials.access_key == other._request_signer._credentials.access_key == "ak"


def test_step_functions_compile_every_json_path_anew() -> None:
    """_compile_json_paths_once: the modules' ``parse`` (jsonpath_ng's) compiles anew each call, and
    a compiled path can be used again (what makes caching it safe)."""
    from moto.stepfunctions.parser.asl.component.common.path import result_path
    from moto.stepfunctions.parser.asl.utils import json_path

    for module in (json_path, result_path):
        assert not hasattr(module.parse, "cache_info")
        first, second = module.parse("$.a.b"), module.parse("$.a.b")
        assert first is not second and first == second
        assert [m.value for m in first.find({"a": {"b": 1}})] == [m.value for m in first.find({"a": {"b": 1}})] == [1]


def test_step_functions_parse_the_definition_for_every_execution() -> None:
    """_parse_definitions_once: ``AmazonStateLanguageParser.parse(definition)`` is a staticmethod
    that parses the text anew (ANTLR) every time it is called."""
    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser

    assert isinstance(AmazonStateLanguageParser.__dict__["parse"], staticmethod)
    definition = json.dumps({"StartAt": "A", "States": {"A": {"Type": "Pass", "End": True}}})
    first, second = AmazonStateLanguageParser.parse(definition), AmazonStateLanguageParser.parse(definition)
    assert first[0] is not second[0]
    assert type(first[0]) is type(second[0])


def test_map_workers_run_their_jobs_by_recursion() -> None:
    """_iterate_map_jobs: both Map workers' ``_eval_pool`` call themselves once per job (a frame a
    job: past the recursion limit a big Distributed Map never ends). When this fails, moto loops:
    the patch may go (the fingerprint test says whether the steps changed)."""
    from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration import iteration_worker
    from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.itemprocessor import (
        distributed_item_processor_worker,
    )

    for worker in (iteration_worker.IterationWorker,
                   distributed_item_processor_worker.DistributedItemProcessorWorker):
        source = inspect.getsource(worker.__dict__["_eval_pool"])
        assert "self._eval_pool(job=next_job, worker_frame=worker_frame)" in source, worker


def test_the_map_run_event_manager_is_made_by_name() -> None:
    """_iterate_map_jobs: a Distributed Map's ``_eval_body`` makes its Map Run's ``EventManager()``
    by the module's name for it, which the patch replaces by one that keeps no history."""
    from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration import (
        distributed_iteration_component as component,
    )
    from moto.stepfunctions.parser.asl.eval.event.event_manager import EventManager

    assert component.EventManager is EventManager
    assert "env.event_manager = EventManager()" in inspect.getsource(component)
    assert "_publish_history_event" in inspect.getsource(EventManager)


def test_step_functions_threads_are_kept_in_tmp_threads_forever() -> None:
    """_forget_finished_threads: moto's Step Functions append their threads to ``TMP_THREADS``, which
    the modules hold by name, and nothing in moto ever removes one."""
    from moto.stepfunctions.parser import utils

    assert isinstance(utils.TMP_THREADS, list)
    for name in ("moto.stepfunctions.parser.asl.component.program.program",
                 "moto.stepfunctions.parser.asl.component.state.exec.state_parallel.branch_worker"):
        importlib.import_module(name)  # two of the modules the patch imports
    holders = [name for name, module in list(sys.modules.items())
               if name.startswith("moto.stepfunctions") and getattr(module, "TMP_THREADS", None) is utils.TMP_THREADS]
    assert {"moto.stepfunctions.parser.asl.component.program.program",
            "moto.stepfunctions.parser.asl.component.state.exec.state_parallel.branch_worker"} <= set(holders)
    package = Path(inspect.getfile(utils)).parent
    for source in package.rglob("*.py"):
        text = source.read_text()
        for forgetting in ("TMP_THREADS.remove", "TMP_THREADS.pop", "TMP_THREADS.clear", "TMP_THREADS[:]",
                           "TMP_THREADS ="):
            assert forgetting not in text or (source.name == "utils.py" and forgetting == "TMP_THREADS ="), (
                f"{source}: moto now forgets its threads ({forgetting}): the patch may go")


def test_every_model_object_is_tracked_strongly(aws: None) -> None:
    """_track_models_weakly: ``BaseModel.__new__`` appends every object to its class's
    ``instances_tracked``, a list that keeps it alive after the backend dropped it (here: a deleted
    object's key)."""
    import gc
    import weakref

    from moto.s3.models import FakeKey, s3_backends

    s3 = boto3.client("s3", region_name=REGION)
    s3.create_bucket(Bucket="guard")
    s3.put_object(Bucket="guard", Key="a", Body=b"body")
    key = weakref.ref(s3_backends[DEFAULT_ACCOUNT_ID]["aws"].buckets["guard"].keys["a"])
    s3.delete_object(Bucket="guard", Key="a")
    gc.collect()
    assert isinstance(FakeKey.instances_tracked, list)  # type: ignore[attr-defined]
    assert key() is not None and any(found is key() for found in FakeKey.instances_tracked)  # type: ignore[attr-defined]


def test_s3_keys_keep_their_bodies_in_a_buffer(aws: None) -> None:
    """_keep_bodies_on_disk: a ``FakeKey`` keeps its bytes in ``_value_buffer`` (a spooled temporary
    file of ``_max_buffer_size``) under ``lock``; ``value`` reads it, ``etag`` hashes it (cached in
    ``_etag``), ``dispose`` closes it and ``__getstate__`` copies ``value`` in its place."""
    from moto.s3.models import FakeKey, s3_backends

    s3 = boto3.client("s3", region_name=REGION)
    s3.create_bucket(Bucket="guard")
    s3.put_object(Bucket="guard", Key="a", Body=b"body")
    key = s3_backends[DEFAULT_ACCOUNT_ID]["aws"].buckets["guard"].keys["a"]
    assert isinstance(key, FakeKey)
    assert isinstance(key.lock, type(threading.Lock()))
    assert key._max_buffer_size > 0 and key.contentsize == 4
    key._value_buffer.seek(0)
    assert key._value_buffer.read() == b"body" == key.value
    assert key.etag.strip('"') == hashlib.md5(b"body").hexdigest() == key._etag
    state = key.__getstate__()
    assert state["value"] == b"body" and "_value_buffer" not in state
    key.dispose()
    assert key._value_buffer.closed


def test_buckets_take_their_key_store_class_from_moto_s3_models(aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """_index_s3_listings: ``FakeBucket.__init__`` makes its key store from ``moto.s3.models``'s
    name ``_VersionedKeyStore`` at the time a bucket is made."""
    from moto.s3 import models
    from moto.s3.utils import _VersionedKeyStore

    class Store(_VersionedKeyStore):
        pass

    monkeypatch.setattr(models, "_VersionedKeyStore", Store)
    boto3.client("s3", region_name=REGION).create_bucket(Bucket="guard")
    assert type(models.s3_backends[DEFAULT_ACCOUNT_ID]["aws"].buckets["guard"].keys) is Store


def test_list_objects_visits_every_key_of_the_bucket(aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """_index_s3_listings: moto's ``list_objects`` looks at every key of the bucket whatever the
    prefix (a listing costs what the bucket holds). When this fails, moto narrows it: the patch may
    go."""
    from moto.s3.models import s3_backends
    from moto.s3.utils import _VersionedKeyStore

    s3 = boto3.client("s3", region_name=REGION)
    s3.create_bucket(Bucket="guard")
    for name in ("work/a/1", "work/b/1", "work/b/2", "results/c"):
        s3.put_object(Bucket="guard", Key=name, Body=b"x")
    visited: list[str] = []
    items = _VersionedKeyStore.items

    def counted(store: Any) -> Any:
        found = list(items(store))
        visited.extend(name for name, _ in found)
        return found

    monkeypatch.setattr(_VersionedKeyStore, "items", counted)
    backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
    found, _, _, _ = backend.list_objects(backend.buckets["guard"], "work/a/", None, None, None)
    assert [key.name for key in found] == ["work/a/1"]
    assert sorted(visited) == ["results/c", "work/a/1", "work/b/1", "work/b/2"]


def test_the_s3_backend_calls_direct_s3_makes_are_as_written_against() -> None:
    """_answer_s3_directly: ``s3_direct`` stores and lists through the backend's ``put_object``
    (with ``disable_notification``, then notifies itself once the metadata is set, as the
    notification patch does), ``set_metadata``, ``set_acl``, ``put_object_tagging`` and
    ``list_objects_v2``; the fingerprints guard the handler it reproduces."""
    from moto.s3.models import FakeKey, S3Backend

    assert {"bucket_name", "key_name", "value", "storage", "disable_notification"} <= set(
        inspect.signature(S3Backend.put_object).parameters)
    assert list(inspect.signature(S3Backend.list_objects_v2).parameters) == [
        "self", "bucket", "prefix", "delimiter", "continuation_token", "start_after", "max_keys"]
    assert list(inspect.signature(S3Backend.put_object_tagging).parameters)[:3] == ["self", "key", "tags"]
    for method in ("set_metadata", "set_acl"):
        assert callable(getattr(FakeKey, method))


def test_a_put_sent_as_a_form_is_stored_empty(aws: None) -> None:
    """_take_put_bodies_as_sent: moto's request (werkzeug's) parses a body sent as
    ``application/x-www-form-urlencoded`` into form fields, and S3's PutObject then stores what is
    left of it: nothing. S3 stores the bytes whatever the Content-Type (urllib's default for a PUT)."""
    s3 = _versioned_bucket()
    s3.put_object(Bucket="guard", Key="form.bin", Body=b"a=1&b=2", ContentType="application/x-www-form-urlencoded")
    assert s3.get_object(Bucket="guard", Key="form.bin")["Body"].read() == b""


def test_the_server_reads_a_form_put_to_guess_its_service_and_loses_binary_ones() -> None:
    """_take_put_bodies_as_sent: moto's server reads a form-typed body of an unsigned request (a
    presigned URL's) to guess its service, and when the bytes are not UTF-8 it leaves the stream
    consumed: the request then waited for bytes the client had sent already (over a minute)."""
    import io

    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    body = b"\xff\xfe binary"
    environ: dict[str, Any] = {"REQUEST_METHOD": "PUT", "CONTENT_TYPE": "application/x-www-form-urlencoded",
               "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body)}
    assert DomainDispatcherApplication._get_body(None, environ) is None  # type: ignore[arg-type]
    assert environ["wsgi.input"].read() == b"", "the body was read and not put back"
