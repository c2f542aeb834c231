"""What keeps `papersift run` fast on the embedded AWS (docs/benchmarks.md section 2): prefix
listings from an index, S3 calls answered from moto's backend, big Maps without recursion, one
parse of the workflow. (Results as each document finishes: test_e2e_run_streaming.py.)"""

from __future__ import annotations

import io
import json
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from papersift_cli.local_aws import LocalAws, s3_bodies
from papersift_cli.local_aws.forget import forget_objects
from papersift_cli.local_aws.s3_direct import DIRECT_S3
from papersift_cli.local_aws.s3_index import PrefixIndex

# -- listing a prefix --------------------------------------------------------------------------


def test_the_prefix_index_finds_what_a_scan_of_every_name_finds() -> None:
    rng = random.Random(11)
    parts = ["work", "results", "members", "a", "ab", "a b", "pages", "x%y", ""]
    names = {"/".join(rng.choice(parts) for _ in range(rng.randint(1, 5))) + f"{i}" for i in range(600)}
    index = PrefixIndex()
    for name in names:
        index.add(name)
    removed = set(rng.sample(sorted(names), 200))
    for name in removed:
        index.discard(name)
    kept = names - removed
    prefixes = {"", "a", "a/", "ab/", "work/", "work/a", "results/pages/", "a b/", "x%y/", "/", "nothing/"}
    prefixes |= {name[: rng.randint(0, len(name))] for name in rng.sample(sorted(kept), 50)}
    for prefix in prefixes:
        assert sorted(index.names(prefix)) == sorted(n for n in kept if n.startswith(prefix)), prefix


def test_listings_of_the_embedded_s3_match_moto_s_own_with_every_option(local_aws: LocalAws) -> None:
    """moto's list_objects (every key visited) and the indexed one return the same pages."""
    from moto.s3.models import S3Backend, s3_backends

    from papersift_cli.local_aws.s3_index import IndexedKeyStore

    aws = local_aws
    aws.reset_documents()
    s3 = aws.client("s3")
    for name in ["work/d1/pages/00001.json", "work/d1/pages/00002.json", "work/d1/plan.json", "work/d10/x",
                 "results/d1/text.txt", "results/d1/pages/00001.json", "results/d1 b/%41.txt", "top.txt"]:
        s3.put_object(Bucket=aws.bucket, Key=name, Body=b"x")
    s3.delete_object(Bucket=aws.bucket, Key="work/d1/plan.json")  # a delete marker is not listed
    assert isinstance(s3_backends["123456789012"]["aws"].buckets[aws.bucket].keys, IndexedKeyStore)
    patched = S3Backend.list_objects
    original = patched.__wrapped__  # type: ignore[attr-defined]  # moto's own

    def listing(function: Any, **kwargs: Any) -> Any:
        S3Backend.list_objects = function
        try:
            pages, token = [], None
            while True:
                extra = {"ContinuationToken": token} if token else {}
                page = s3.list_objects_v2(Bucket=aws.bucket, **kwargs, **extra)
                pages.append([(o["Key"], o["Size"]) for o in page.get("Contents", [])]
                             + [p["Prefix"] for p in page.get("CommonPrefixes", [])])
                token = page.get("NextContinuationToken")
                if not token:
                    return pages
        finally:
            S3Backend.list_objects = patched

    for kwargs in ({}, {"Prefix": "work/d1"}, {"Prefix": "work/d1/"}, {"Prefix": "work/d1/", "Delimiter": "/"},
                   {"Delimiter": "/"}, {"Prefix": "results/d1 b/"}, {"Prefix": "work/", "MaxKeys": 2},
                   {"Prefix": "results/", "Delimiter": "/", "MaxKeys": 1}, {"Prefix": "none/"}):
        assert listing(patched, **kwargs) == listing(original, **kwargs), kwargs


# -- S3 answered from moto's backend -------------------------------------------------------------


@pytest.fixture
def direct(local_aws: LocalAws) -> Iterator[LocalAws]:
    local_aws.reset_documents()
    DIRECT_S3.enabled = True
    try:
        yield local_aws
    finally:
        DIRECT_S3.enabled = False


def _both(call: Any) -> tuple[Any, Any]:
    """The call's response through moto's HTTP handling, then answered from the backend."""
    DIRECT_S3.enabled = False
    usual = call()
    DIRECT_S3.enabled = True
    answered = DIRECT_S3.answered
    direct = call()
    assert DIRECT_S3.answered == answered + 1, "not answered directly"
    for response in (usual, direct):
        response.pop("ResponseMetadata")
        if "Body" in response:
            response["Body"] = response["Body"].read()
    return usual, direct


def test_direct_s3_answers_what_moto_answers(direct: LocalAws) -> None:
    s3, bucket = direct.client("s3"), direct.bucket
    name = "work/doc/pages/a b%20+ü.json"
    DIRECT_S3.enabled = False
    s3.put_object(Bucket=bucket, Key=name, Body=b'{"page": 1}', ContentType="application/json",
                  Metadata={"Papersift-Options": "e30="})
    usual, answered = _both(lambda: s3.get_object(Bucket=bucket, Key=name))
    usual.pop("ChecksumCRC32", None)  # botocore sent one with the usual upload
    answered.pop("ChecksumCRC32", None)
    assert usual == answered
    assert answered["Body"] == b'{"page": 1}' and answered["Metadata"] == {"papersift-options": "e30="}
    usual, answered = _both(lambda: s3.head_object(Bucket=bucket, Key=name))
    assert usual == answered
    for kwargs in ({"Prefix": "work/"}, {"Prefix": "work/doc/", "Delimiter": "/"}, {"Prefix": "", "MaxKeys": 1}):
        usual, answered = _both(lambda kwargs=kwargs: s3.list_objects_v2(Bucket=bucket, **kwargs))
        assert usual == answered, kwargs


def test_direct_s3_stores_what_moto_stores_and_notifies_after(direct: LocalAws) -> None:
    s3, bucket = direct.client("s3"), direct.bucket
    for tag in ("usual", "direct"):
        DIRECT_S3.enabled = tag == "direct"
        s3.put_object(Bucket=bucket, Key=f"t/{tag}", Body=b"body", ContentType="text/plain", Metadata={"A": "1"})
    DIRECT_S3.enabled = False
    usual, direct_put = (s3.head_object(Bucket=bucket, Key=f"t/{tag}") for tag in ("usual", "direct"))
    for field in ("ContentLength", "ContentType", "Metadata", "ETag"):
        assert usual[field] == direct_put[field], field
    assert usual["VersionId"] != direct_put["VersionId"]


@pytest.mark.parametrize("path", ["usual", "direct"])
def test_a_body_kept_compressed_reads_back_as_written_with_its_size_and_etag(direct: LocalAws, path: str) -> None:
    """Small text bodies are stored zlib-compressed in the embedded S3 (s3_bodies.py); clients,
    sizes and ETags see the object's own bytes. Pictures and other dense bytes stay as they are."""
    import hashlib

    from moto.s3.models import s3_backends

    s3, bucket = direct.client("s3"), direct.bucket
    DIRECT_S3.enabled = path == "direct"
    text = ("Member report: every page clean, no engine but pdfium needed. " * 200).encode()
    dense = random.Random(3).randbytes(20_000)
    for name, body in (("t/text.json", text), ("t/dense.bin", dense)):
        s3.put_object(Bucket=bucket, Key=name, Body=body)
        got = s3.get_object(Bucket=bucket, Key=name)
        assert got["Body"].read() == body and got["ContentLength"] == len(body)
        assert got["ETag"] == f'"{hashlib.md5(body).hexdigest()}"'
    keys = s3_backends["123456789012"]["aws"].buckets[bucket].keys
    stored = {name: len(s3_bodies._stored(keys[name])) for name in ("t/text.json", "t/dense.bin")}
    assert stored["t/text.json"] < len(text) // 10 and stored["t/dense.bin"] == len(dense)


def test_bodies_live_on_disk_and_a_forgotten_key_frees_its_own(direct: LocalAws) -> None:
    """The embedded S3 keeps bodies in a temporary SQLite file, not in memory (s3_bodies.py); a key
    removed (every version disposed of) frees its body, and a copy of a key (moto deep-copies every version to list
    them) has a body of its own: freeing the copy leaves the original readable."""
    import gc

    from moto.s3.models import s3_backends

    s3, bucket = direct.client("s3"), direct.bucket
    bodies = direct._patches.bodies
    s3.put_object(Bucket=bucket, Key="t/warm", Body=b"w")  # what an earlier test disposed of is now deleted
    before = bodies.count()
    texts = {f"t/{n}.txt": (f"member {n} text " * 300).encode() for n in range(20)}
    for name, body in texts.items():
        s3.put_object(Bucket=bucket, Key=name, Body=body)
    assert bodies.count() == before + 20
    key = s3_backends["123456789012"]["aws"].buckets[bucket].keys["t/0.txt"]
    assert key._value_buffer is s3_bodies.NO_BUFFER  # nothing of it in memory
    versions = s3.list_object_versions(Bucket=bucket, Prefix="t/")["Versions"]
    assert {v["Key"] for v in versions} >= set(texts)
    gc.collect()  # the listing's copies are gone: their bodies with them, not the originals'
    assert bodies.count() == before + 20
    assert forget_objects(bucket, keys=["t/0.txt"]) == 1  # every version disposed of
    assert bodies.count() == before + 19
    s3.put_object(Bucket=bucket, Key="t/1.txt", Body=b"overwritten")  # a new version beside the old
    assert bodies.count() == before + 20
    for name, body in texts.items():
        if name != "t/0.txt":
            expected = b"overwritten" if name == "t/1.txt" else body
            assert s3.get_object(Bucket=bucket, Key=name)["Body"].read() == expected


@pytest.mark.parametrize("path", ["usual", "direct"])
def test_a_body_of_the_spill_size_is_a_file_of_its_own_read_back_whole(direct: LocalAws, path: str) -> None:
    """A body from SPILL_BELOW_BYTES up is a temporary file of its own (SQLite would copy it once
    more on the way in and out, moto's spooled buffer once more in memory): not in the SQLite
    file, not in memory, and clients, sizes and ETags see the object's own bytes."""
    import hashlib

    from moto.s3.models import s3_backends

    s3, bucket = direct.client("s3"), direct.bucket
    DIRECT_S3.enabled = path == "direct"
    bodies = direct._patches.bodies
    body = random.Random(4).randbytes(s3_bodies.SPILL_BELOW_BYTES)
    before = bodies.count()
    s3.put_object(Bucket=bucket, Key="t/spilled.bin", Body=body)
    assert bodies.count() == before
    key = s3_backends["123456789012"]["aws"].buckets[bucket].keys["t/spilled.bin"]
    assert not isinstance(key._value_buffer, (io.BytesIO, tempfile.SpooledTemporaryFile))
    assert key._value_buffer.fileno() >= 0  # a real file
    got = s3.get_object(Bucket=bucket, Key="t/spilled.bin")
    assert got["Body"].read() == body and got["ContentLength"] == len(body)
    assert got["ETag"] == f'"{hashlib.md5(body).hexdigest()}"'


def test_what_direct_s3_does_not_handle_goes_the_usual_way(direct: LocalAws) -> None:
    s3, bucket = direct.client("s3"), direct.bucket
    s3.put_object(Bucket=bucket, Key="t/range", Body=b"0123456789")
    before = DIRECT_S3.answered
    assert s3.get_object(Bucket=bucket, Key="t/range", Range="bytes=2-4")["Body"].read() == b"234"
    with pytest.raises(ClientError) as missing:
        s3.get_object(Bucket=bucket, Key="t/never-written")
    assert missing.value.response["Error"]["Code"] == "NoSuchKey"
    with pytest.raises(ClientError):
        s3.head_object(Bucket=bucket, Key="t/never-written")
    assert DIRECT_S3.answered == before


# -- Maps larger than the recursion limit --------------------------------------------------------


def _run_machine(aws: LocalAws, definition: dict[str, Any], execution_input: dict[str, Any]) -> dict[str, Any]:
    sfn = aws.client("stepfunctions")
    arn = sfn.create_state_machine(name=f"maps-{time.monotonic_ns()}", definition=json.dumps(definition),
                                   roleArn="arn:aws:iam::123456789012:role/papersift-role")["stateMachineArn"]
    execution = sfn.start_execution(stateMachineArn=arn, input=json.dumps(execution_input))["executionArn"]
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        described = sfn.describe_execution(executionArn=execution)
        if described["status"] != "RUNNING":
            return dict(described)
        time.sleep(0.2)
    raise AssertionError("the execution did not end")


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["INLINE", "DISTRIBUTED"])
def test_a_map_with_more_jobs_a_worker_than_the_recursion_limit_ends(local_aws: LocalAws, mode: str) -> None:
    """One worker (MaxConcurrency 1) and more items than sys.getrecursionlimit(): moto ran a worker's
    jobs one recursion deeper each, so its thread died and the Map never ended."""
    aws = local_aws
    aws.reset_documents()
    items = list(range(sys.getrecursionlimit() + 100))
    processor: dict[str, Any] = {"ProcessorConfig": {"Mode": mode}, "StartAt": "Item",
                                 "States": {"Item": {"Type": "Pass", "End": True}}}
    state: dict[str, Any] = {"Type": "Map", "MaxConcurrency": 1, "ItemProcessor": processor, "ResultPath": None,
                             "End": True}
    if mode == "DISTRIBUTED":
        processor["ProcessorConfig"]["ExecutionType"] = "STANDARD"
        aws.client("s3").put_object(Bucket=aws.bucket, Key="work/maps/items.json", Body=json.dumps(items).encode())
        state["ItemReader"] = {"Resource": "arn:aws:states:::s3:getObject", "ReaderConfig": {"InputType": "JSON"},
                               "Parameters": {"Bucket": aws.bucket, "Key": "work/maps/items.json"}}
    else:
        state["ItemsPath"] = "$.items"
    described = _run_machine(aws, {"StartAt": "Items", "States": {"Items": state}}, {"items": items})
    assert described["status"] == "SUCCEEDED", described


def test_a_distributed_map_s_children_leave_no_history_behind() -> None:
    from moto.stepfunctions.parser.asl.eval.event.event_manager import EventHistoryContext

    from papersift_cli.local_aws.sfn_maps import UnrecordedEventManager

    manager = UnrecordedEventManager()
    context = EventHistoryContext.of_program_start()
    assert [manager.add_event(context=context, event_type="PassStateEntered") for _ in range(3)] == [1, 2, 3]
    assert manager.get_event_history() == []


def test_every_execution_shares_one_parsed_workflow(local_aws: LocalAws) -> None:
    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser

    definition = json.dumps({"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}})
    assert AmazonStateLanguageParser.parse(definition) is AmazonStateLanguageParser.parse(definition)
