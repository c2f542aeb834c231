"""The moto internals patched while a LocalAws is open; every patch is undone by ``restore``.

Written against moto 5.2.5 (``moto<6`` is pinned). Each patch's docstring says which moto behaviour
it replaces and why; tests/unit/test_moto_patches.py runs moto unpatched and fails, naming the patch,
when that behaviour (or a moto function a patch copies) changes: docs/local-pipeline.md, "Upgrading
moto".

- ``LambdaFunction.invoke``: every way moto invokes a function goes through it; it becomes a
  dispatch to our handler in this process.
- The Step Functions retrier's ``time``: Retry waits really sleep in moto; they are scaled.
- ``s3.notifications._get_s3_event``: AWS puts the object's versionId into the notification and
  moto leaves it out; the document id (and so ingest's dedupe) is derived from it.
- S3 notifications of a PUT, a form POST or a completed multipart upload: moto sends them from its
  backend's ``put_object``, before it sets the object's user metadata; S3 notifies once the object
  is complete. The ingest -> plan steps could read an upload before its options were on it (a race
  the suite lost now and then: an upload's ``extract_tables`` seen by OCR but not by the plan). They
  are held back until moto's request handler returns (``_notify_when_objects_are_complete``).
- moto's global Step Functions config, which ``POST /moto-api/config`` changes, is saved and put back.
- In process (``papersift run``, the tests): moto's botocore stubber is switched on, so every boto3
  client without an endpoint URL (the handlers', the runner's, Step Functions' own Lambda client) is
  answered by moto's backends in this thread, with no HTTP round trip, socket or server thread; and
  S3's URL table, which moto re-imports (``importlib.reload``) on every S3 request, is read once.
  Both were most of `papersift run`'s time (docs/benchmarks.md). The server still answers clients
  that name its endpoint (`papersift serve`'s presigned URLs, the container image tests).
- Step Functions' own clients and JSONPaths: moto built a new boto3 client (service model JSON read
  again) for every Task's Lambda invoke and every item-reader read, and compiled every JSONPath with a
  fresh ply parser at every state; both are built once per key instead (clients are thread-safe,
  compiled paths immutable). moto's ``boto_client_for`` takes the state's credentials but never uses
  them (every client has the same fake keys), so one client per region and service serves all.
- ``direct_s3`` (`papersift run`): S3's GetObject, HeadObject, PutObject and ListObjectsV2 are
  answered from moto's S3 backend in the calling thread (``s3_direct``): the same fields, without
  the HTTP request and XML response that botocore and moto each built and parsed again (~1.4 ms of
  CPU a call, some 30 calls a document). Any other call, parameter or error goes the usual way.
  Off for the tests, which fail requests on their way (``before-send``) to test the SDK's retries.
- Step Functions parsed the whole workflow definition (ANTLR, ~0.25 s for ours) again for every
  execution it started; the parsed program is kept per definition text instead. Its components keep
  no execution state (every execution's state is in its ``Environment``; the concurrent iterations
  of one Map already share one parsed program), so executions can share it.
- Map iterations (``sfn_maps``): a Map worker ran its jobs by recursion, one frame per job, so a
  Distributed Map of 20,000 members died past the recursion limit and never ended; it is a loop here.
  A Distributed Map's children wrote their history into an event manager of the Map Run that moto
  never shows: one that keeps no events stands in for it (the events' ids are as before). The
  threads moto keeps in ``TMP_THREADS`` (never read) are pruned of finished ones.
- moto keeps every model object it ever made (``instances_tracked``, for its dashboard and reset):
  an object removed from S3 or DynamoDB was never freed (10 S3 versions a member of an archive, a
  third of them forgotten). Tracked weakly instead: what moto still holds is still listed.
- S3 object bodies are kept in a temporary SQLite file, those below 1 MiB zlib-compressed
  (``s3_bodies``): a big archive's members' results stay in S3 until the archive is assembled,
  ~50 KB a member.
- A PUT's body is the object whatever its Content-Type, as in S3: moto's server read a PUT sent
  as ``application/x-www-form-urlencoded`` (Python urllib's default) to guess its service, lost it
  when it was not UTF-8 (left the request stream consumed: werkzeug then waited for bytes the client
  had sent already, over a minute), and werkzeug parsed the rest as form fields, storing an empty
  object. A PUT is never a query-protocol call (those are POSTs), so neither reads it as a form.
- S3 listings: moto's ``list_objects`` visits every key of the bucket for any prefix, so listing a
  document's pages cost more the more documents the run had written (quadratic in a big archive's
  members). New buckets get a key store that also indexes its names by folder
  (``s3_index.IndexedKeyStore``) and ``list_objects`` takes its candidates from it; same results.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

#: (function name, request body, request headers, response headers) -> response payload
Dispatch = Callable[[str, str, Any, Any], bytes]


class _ScaledTime:
    """Stands in for the ``time`` module inside moto's retrier so Retry waits are shortened."""

    def __init__(self, scale: float) -> None:
        self.scale = scale

    def sleep(self, seconds: float) -> None:
        if self.scale > 0:
            time.sleep(seconds * self.scale)

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


class MotoPatches:
    def __init__(self, dispatch: Dispatch, retry_time_scale: float, in_process: bool = True,
                 direct_s3: bool = False) -> None:
        self.dispatch = dispatch
        self.retry_time_scale = retry_time_scale
        self.in_process = in_process
        self.direct_s3 = direct_s3
        self._undo: list[Callable[[], None]] = []
        #: where the embedded S3's object bodies are while the patches are applied
        self.bodies: Any = None

    def apply(self) -> None:
        self._keep_step_functions_config()
        self._dispatch_invocations()
        self._scale_retry_waits()
        self._add_version_ids_to_notifications()
        self._notify_when_objects_are_complete()
        self._reuse_step_functions_clients()
        self._compile_json_paths_once()
        self._parse_definitions_once()
        self._iterate_map_jobs()
        self._forget_finished_threads()
        self._track_models_weakly()
        self._keep_bodies_on_disk()
        self._index_s3_listings()
        self._take_put_bodies_as_sent()
        if self.in_process:
            self._answer_boto_calls_in_process()
            self._read_s3_urls_once()
        if self.direct_s3:
            self._answer_s3_directly()

    def restore(self) -> None:
        while self._undo:
            self._undo.pop()()

    def _keep_step_functions_config(self) -> None:
        """moto: ``POST /moto-api/config`` replaces the process-wide ``default_user_config["stepfunctions"]``
        (LocalAws sets ``execute_state_machine`` so the workflow runs), and it outlives the server.
        Ours: put back as it was, so a test or a later LocalAws starts from moto's default.
        Written against moto 5.2.5 (``moto_api._internal.models.set_config``).

        Guard: tests/unit/test_moto_patches.py (``GUARDS["_keep_step_functions_config"]``)."""

        from moto.core.config import default_user_config

        saved: Any = dict(default_user_config.get("stepfunctions", {}))

        def undo() -> None:
            default_user_config["stepfunctions"] = saved

        self._undo.append(undo)

    def _dispatch_invocations(self) -> None:
        """moto: ``LambdaFunction.invoke(body, request_headers, response_headers)`` runs the function's
        code in Docker; boto3's Invoke, Step Functions' Lambda tasks, S3 notifications and SQS event
        source mappings all go through it. Ours: the handler ``functions/<name>/app.py`` in this
        process (no Docker, our code, our debugger). Written against moto 5.2.5.

        Guard: tests/unit/test_moto_patches.py (``GUARDS["_dispatch_invocations"]``)."""

        from moto.awslambda.models import LambdaFunction

        dispatch = self.dispatch

        def invoke(fn: Any, body: str, request_headers: Any, response_headers: Any) -> bytes:
            return dispatch(fn.function_name, body, request_headers, response_headers)

        original = LambdaFunction.invoke
        LambdaFunction.invoke = invoke  # type: ignore[method-assign,assignment]

        def undo() -> None:
            LambdaFunction.invoke = original  # type: ignore[method-assign]

        self._undo.append(undo)

    def _scale_retry_waits(self) -> None:
        """moto: a Retry's interval is a real ``time.sleep`` of the module's own ``time`` name
        (``retrier_decl.time``). Ours: the same waits times ``retry_time_scale`` (0 in tests, 0.05 in
        the CLI), so a retried step does not cost its real backoff. Written against moto 5.2.5.

        Guard: tests/unit/test_moto_patches.py (``GUARDS["_scale_retry_waits"]``)."""

        from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl

        original = retrier_decl.time
        retrier_decl.time = _ScaledTime(self.retry_time_scale)  # type: ignore[assignment]

        def undo() -> None:
            retrier_decl.time = original

        self._undo.append(undo)

    def _add_version_ids_to_notifications(self) -> None:
        """moto: ``notifications._get_s3_event`` leaves the object's ``versionId`` out of the
        notification; AWS sends it. Ours: added, since ingest derives the document id (and so its
        dedupe) from it. Written against moto 5.2.5.

        Guard: tests/unit/test_moto_patches.py (``GUARDS["_add_version_ids_to_notifications"]``)."""

        from moto.s3 import notifications

        original = notifications._get_s3_event

        def s3_event(event_name: str, bucket: Any, key: Any, notification_id: str) -> dict[str, Any]:
            event = original(event_name, bucket, key, notification_id)
            version_id = getattr(key, "version_id", None)
            if version_id and version_id != "null":
                for record in event["Records"]:
                    record["s3"]["object"]["versionId"] = version_id
            return event

        notifications._get_s3_event = s3_event

        def undo() -> None:
            notifications._get_s3_event = original

        self._undo.append(undo)

    def _notify_when_objects_are_complete(self) -> None:
        """moto: the backend's ``put_object`` sends a PUT's, a form POST's and a completed multipart
        upload's notification, and only then does ``S3Response`` set the object's user metadata; S3
        notifies a complete object. Ours: ``send_event`` is held back (per thread) until the S3
        request handler returns, so the plan step never reads an upload without its options.
        Written against moto 5.2.5.

        Guard: tests/unit/test_moto_patches.py (``GUARDS["_notify_when_objects_are_complete"]``)."""

        from moto.s3 import notifications
        from moto.s3.responses import S3Response

        send = notifications.send_event
        held = threading.local()

        def send_event(account_id: str, event_name: Any, bucket: Any, key: Any) -> None:
            waiting = getattr(held, "events", None)
            if waiting is None:
                send(account_id, event_name, bucket, key)
            else:
                waiting.append((account_id, event_name, bucket, key))

        def completing(handler: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(handler)
            def handle(*args: Any, **kwargs: Any) -> Any:
                if getattr(held, "events", None) is not None:  # nested: the outer call sends
                    return handler(*args, **kwargs)
                held.events = []
                try:
                    return handler(*args, **kwargs)
                finally:
                    events, held.events = held.events, None
                    for event in events:
                        send(*event)
            return handle

        self._replace(notifications, "send_event", send_event)
        # PutObject, a form POST, and CompleteMultipartUpload (moto's backend notifies a PUT there
        # too, before the upload's metadata is set)
        for name in ("put_object", "_bucket_response_post", "_key_response_post"):
            self._replace(S3Response, name, completing(S3Response.__dict__[name]))

    def _answer_boto_calls_in_process(self) -> None:
        """moto: ``botocore_stubber`` (a ``before-send`` handler of every client) answers from moto's
        backends only while ``enabled``, which ``mock_aws`` switches on. Ours: on for the open
        LocalAws, so clients without an endpoint URL skip the HTTP server. Written against moto 5.2.5.

        Guard: tests/unit/test_moto_patches.py (``GUARDS["_answer_boto_calls_in_process"]``)."""

        from moto.core.models import botocore_stubber

        original = botocore_stubber.enabled
        botocore_stubber.enabled = True

        def undo() -> None:
            botocore_stubber.enabled = original

        self._undo.append(undo)

    def _answer_s3_directly(self) -> None:
        """moto: every S3 call is a serialized HTTP request parsed again by moto and an XML response
        parsed again by botocore. Ours (``direct_s3``): four plain calls answered from the backend by
        ``s3_direct``, which calls ``put_object(disable_notification=True)``, ``set_metadata``,
        ``set_acl``, ``put_object_tagging`` and ``list_objects_v2`` and reproduces
        ``S3Response.put_object`` and ``FakeKey.response_dict``. Written against moto 5.2.5.

        Guard: tests/unit/test_moto_patches.py (``GUARDS["_answer_s3_directly"]``)."""

        from papersift_cli.local_aws.s3_direct import DIRECT_S3, install_builtin

        install_builtin()
        DIRECT_S3.enabled = True

        def undo() -> None:
            DIRECT_S3.enabled = False

        self._undo.append(undo)

    def _read_s3_urls_once(self) -> None:
        """moto: the property ``S3Backend._url_module`` re-executes ``moto.s3.urls``
        (``importlib.reload``) on every S3 request, in case the environment changed its URLs. Ours:
        the module as imported (the environment does not change during a run). Written against
        moto 5.2.5.

        Guard: tests/unit/test_moto_patches.py (``GUARDS["_read_s3_urls_once"]``)."""

        import moto.s3.urls as s3_urls
        from moto.s3.models import S3Backend

        original = S3Backend.__dict__["_url_module"]
        S3Backend._url_module = property(lambda backend: s3_urls)  # type: ignore[assignment,method-assign]

        def undo() -> None:
            S3Backend._url_module = original  # type: ignore[method-assign]

        self._undo.append(undo)

    def _take_put_bodies_as_sent(self) -> None:
        from moto.core.request import Request
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication
        from werkzeug.wrappers import Request as WerkzeugRequest

        parsed = WerkzeugRequest.want_form_data_parsed

        def want_form_data_parsed(request: Any) -> bool:
            return request.method != "PUT" and bool(parsed.fget(request))  # type: ignore[attr-defined]

        get_body = DomainDispatcherApplication.__dict__["_get_body"]

        def body_of(app: Any, environ: dict[str, Any]) -> str | None:
            return None if environ.get("REQUEST_METHOD") == "PUT" else get_body(app, environ)

        self._replace(DomainDispatcherApplication, "_get_body", body_of)
        Request.want_form_data_parsed = property(want_form_data_parsed)  # type: ignore[method-assign,assignment]
        self._undo.append(lambda: delattr(Request, "want_form_data_parsed"))

    def _replace(self, owner: ModuleType | type, name: str, value: Any) -> None:
        """``owner.name = value`` until restore (a class's own attribute, as it was defined)."""
        original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        setattr(owner, name, value)
        self._undo.append(lambda: setattr(owner, name, original))

    def _reuse_step_functions_clients(self) -> None:
        """moto: ``boto_client_for(region, service, state_credentials)``, imported by name by the Lambda
        task and the item reader, builds a new boto3 client every call (the service model read
        again) and ignores the credentials. Ours: one client per region, service and stubber state,
        with ``s3_direct``'s handlers on it. Written against moto 5.2.5.

        Guard: tests/unit/test_moto_patches.py (``GUARDS["_reuse_step_functions_clients"]``)."""

        from moto.core.models import botocore_stubber
        from moto.stepfunctions.parser.asl.component.state.exec.state_map.item_reader.eval import (
            resource_eval_s3 as item_reader,
        )
        from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils
        from moto.stepfunctions.parser.asl.utils import boto_client

        from papersift_cli.local_aws.s3_direct import install

        build = boto_client.boto_client_for
        clients: dict[tuple[str, str, bool], Any] = {}
        lock = threading.Lock()

        def client_for(region: str, service: str, state_credentials: Any = None) -> Any:
            # moto builds every client with the same fake keys whatever the state's credentials
            key = (region, service, botocore_stubber.enabled)
            with lock:
                if key not in clients:
                    clients[key] = install(build(region, service))
                return clients[key]

        for module in (lambda_eval_utils, item_reader):
            self._replace(module, "boto_client_for", client_for)

    def _compile_json_paths_once(self) -> None:
        """moto: ``json_path.parse`` and ``result_path.parse`` (jsonpath_ng's) compile every JSONPath
        anew, with a fresh ply parser, at every state. Ours: cached per path (a compiled path is
        immutable and reusable). Written against moto 5.2.5.

        Guard: tests/unit/test_moto_patches.py (``GUARDS["_compile_json_paths_once"]``)."""

        from moto.stepfunctions.parser.asl.component.common.path import result_path
        from moto.stepfunctions.parser.asl.utils import json_path

        for module in (json_path, result_path):
            self._replace(module, "parse", functools.lru_cache(maxsize=1024)(module.parse))

    def _iterate_map_jobs(self) -> None:
        """moto: both Map workers' ``_eval_pool`` call themselves once per job (past the recursion
        limit a big Distributed Map never ends), and a Distributed Map's ``_eval_body`` makes its Map
        Run's ``EventManager()`` by name, which keeps every child's history though moto never shows
        it. Ours: ``sfn_maps``' loop (the same steps) and an event manager that keeps no events.
        Written against moto 5.2.5 (the guard fingerprints both ``_eval_pool``).

        Guard: tests/unit/test_moto_patches.py (``GUARDS["_iterate_map_jobs"]``)."""

        from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration import (
            distributed_iteration_component,
            iteration_worker,
        )
        from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.itemprocessor import (
            distributed_item_processor_worker,
        )

        from papersift_cli.local_aws.sfn_maps import (
            UnrecordedEventManager,
            distributed_eval_pool,
            inline_eval_pool,
        )

        self._replace(iteration_worker.IterationWorker, "_eval_pool", inline_eval_pool)
        self._replace(distributed_item_processor_worker.DistributedItemProcessorWorker, "_eval_pool",
                      distributed_eval_pool)
        # the Map Run's event manager is made by name in _eval_body
        self._replace(distributed_iteration_component, "EventManager", UnrecordedEventManager)

    def _forget_finished_threads(self) -> None:
        """moto: every thread Step Functions start is appended to ``utils.TMP_THREADS``, which
        several modules hold by name and nothing reads or empties. Ours: a list that drops finished
        threads (``sfn_maps.LiveThreads``), in every module that holds it. Written against moto 5.2.5.

        Guard: tests/unit/test_moto_patches.py (``GUARDS["_forget_finished_threads"]``)."""

        import sys

        import moto.stepfunctions.parser.asl.component.program.program
        import moto.stepfunctions.parser.asl.component.state.exec.execute_state
        import moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.inline_iteration_component
        import moto.stepfunctions.parser.asl.component.state.exec.state_parallel.branch_worker
        import moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_callback  # noqa: F401
        from moto.stepfunctions.parser import utils

        from papersift_cli.local_aws.sfn_maps import LiveThreads

        original = utils.TMP_THREADS
        live = LiveThreads(original)
        # every module that imported the list by name holds it as a global of its own
        for module in [m for name, m in list(sys.modules.items()) if name.startswith("moto.stepfunctions")]:
            if getattr(module, "TMP_THREADS", None) is original:
                self._replace(module, "TMP_THREADS", live)

    def _track_models_weakly(self) -> None:
        """moto: ``BaseModel.__new__`` appends every model object to its class's
        ``instances_tracked`` list (for its dashboard and reset), so nothing removed from S3 or
        DynamoDB is ever freed. Ours: the same registration, held weakly (``forget.WeaklyTracked``).
        Written against moto 5.2.5.

        Guard: tests/unit/test_moto_patches.py (``GUARDS["_track_models_weakly"]``)."""

        from moto.core.common_models import BaseModel

        from papersift_cli.local_aws.forget import WeaklyTracked

        def new(cls: type, *args: Any, **kwargs: Any) -> Any:
            instance: Any = object.__new__(cls)
            tracked = cls.instances_tracked  # type: ignore[attr-defined]
            if not isinstance(tracked, WeaklyTracked):  # a model's first object, or after moto's reset
                tracked = WeaklyTracked(tracked)
                cls.instances_tracked = tracked  # type: ignore[attr-defined]
            tracked.append(instance)
            return instance

        self._replace(BaseModel, "__new__", staticmethod(new))

    def _keep_bodies_on_disk(self) -> None:
        """moto: a ``FakeKey`` keeps its bytes in memory (``_value_buffer``, a spooled temporary
        file) read by ``value``, hashed by ``etag``, closed by ``dispose`` and copied by
        ``__getstate__``. Ours: bodies in a temporary SQLite file, small ones compressed
        (``s3_bodies``), the same four members re-implemented over it. Written against moto 5.2.5.

        Guard: tests/unit/test_moto_patches.py (``GUARDS["_keep_bodies_on_disk"]``)."""

        from moto.s3.models import FakeKey

        from papersift_cli.local_aws.s3_bodies import BodyFile, etag_of, releasing, stateless, stored_value

        self.bodies = BodyFile()
        self._undo.append(self.bodies.close)  # after the patches below are undone
        self._replace(FakeKey, "etag", etag_of(FakeKey.__dict__["etag"]))
        self._replace(FakeKey, "value", stored_value(self.bodies))
        self._replace(FakeKey, "dispose", releasing(FakeKey.dispose))
        self._replace(FakeKey, "__getstate__", stateless(FakeKey.__getstate__))

    def _parse_definitions_once(self) -> None:
        """moto: ``AmazonStateLanguageParser.parse(definition)`` parses the whole definition
        (ANTLR, ~0.25 s for ours) for every execution it starts. Ours: the parsed program kept per
        definition text (its components keep no execution state). Written against moto 5.2.5.

        Guard: tests/unit/test_moto_patches.py (``GUARDS["_parse_definitions_once"]``)."""

        from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser

        original = AmazonStateLanguageParser.__dict__["parse"]  # the staticmethod itself
        AmazonStateLanguageParser.parse = staticmethod(  # type: ignore[method-assign]
            functools.lru_cache(maxsize=8)(original.__func__))

        def undo() -> None:
            AmazonStateLanguageParser.parse = original  # type: ignore[method-assign]

        self._undo.append(undo)

    def _index_s3_listings(self) -> None:
        """moto: ``S3Backend.list_objects`` visits every key of the bucket for any prefix, and
        ``FakeBucket.__init__`` makes its key store from ``moto.s3.models._VersionedKeyStore``.
        Ours: new buckets get ``s3_index.IndexedKeyStore`` and listings take their candidates from
        its folder index (a copy of moto's ``list_objects`` otherwise). Written against moto 5.2.5.

        Guard: tests/unit/test_moto_patches.py (``GUARDS["_index_s3_listings"]``)."""

        from moto.s3 import models

        from papersift_cli.local_aws.s3_index import IndexedKeyStore, indexed_list_objects

        # FakeBucket.__init__ looks the store's class up in moto.s3.models when a bucket is made
        self._replace(models, "_VersionedKeyStore", IndexedKeyStore)
        original = models.S3Backend.list_objects
        models.S3Backend.list_objects = indexed_list_objects(original)  # type: ignore[method-assign,assignment]

        def undo() -> None:
            models.S3Backend.list_objects = original  # type: ignore[method-assign]

        self._undo.append(undo)
