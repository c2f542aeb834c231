"""`papersift run` on the embedded AWS: each document's outcome as soon as its execution ends, its
results written out then, and what it left in moto removed (LocalAws forget_finished), so memory
does not grow with the run (docs/benchmarks.md section 2)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from archive_factory import zip_bytes
from pdf_factory import numbered_pdf

from infra.deployment import TABLE_KEY
from papersift.settings import Settings
from papersift_cli.local_aws import LocalAws
from papersift_cli.local_aws.outcomes import DocumentOutcome


def _keys_under(aws: LocalAws, prefix: str) -> list[str]:
    """Every version of every key under the prefix, straight from moto (what it keeps in memory)."""
    listed: list[str] = []
    for page in aws.client("s3").get_paginator("list_object_versions").paginate(Bucket=aws.bucket, Prefix=prefix):
        listed.extend(v["Key"] for v in page.get("Versions", []) + page.get("DeleteMarkers", []))
    return listed



@pytest.fixture
def forgetful(tmp_path: Path) -> Iterator[LocalAws]:
    with LocalAws(Settings(page_batch_size=5), forget_finished=True, direct_s3=True) as aws:
        yield aws


def test_each_document_is_delivered_once_the_moment_its_execution_ends(forgetful: LocalAws, tmp_path: Path) -> None:
    """The PDF's first page batch is held until the note's outcome has been delivered: the note
    comes out while the PDF still runs, and each comes out once. (One batch only: a held batch
    keeps one of the runner's step slots, and the note needs the other.)"""
    aws = forgetful
    note, pdf = tmp_path / "note.txt", tmp_path / "slow.pdf"
    note.write_text("The ferry leaves at dawn.\n", encoding="utf-8")
    pdf.write_bytes(numbered_pdf(12))
    released = threading.Event()
    real_extract = aws.handlers["extract"]

    def held_extract(event: Any, context: Any) -> Any:
        if event.get("kind") == "pdf" and event.get("batch_index") == 0:
            assert released.wait(60), "the note was not delivered while the PDF ran"
        return real_extract(event, context)

    aws.handlers["extract"] = held_extract
    delivered: list[tuple[str, str, list[str]]] = []

    def on_finished(outcome: DocumentOutcome) -> None:
        running = [e["input"]["key"] for e in aws.results.executions() if e["status"] == "RUNNING"]
        delivered.append((outcome.key, outcome.status, running))
        released.set()

    keys = [aws.drop(note), aws.drop(pdf)]
    assert aws.wait(keys, timeout=120, on_finished=on_finished)
    assert [(key, status) for key, status, _ in delivered] == [(keys[0], "clean"), (keys[1], "clean")]
    assert delivered[0][2] == [keys[1]]  # the PDF was still running when the note came out
    # metrics are off locally: what the handlers added is dropped after each invocation, not kept
    # until 100 values are printed to stdout
    for name in ("plan", "extract", "assemble"):
        assert aws.handler_module(name).metrics.metric_set == {}, name


def test_a_finished_document_leaves_nothing_once_written_out(forgetful: LocalAws, tmp_path: Path) -> None:
    """Work files, page JSONs and a member's source go when its assemble step returns; its results
    stay until written out (an archive's assemble reads its members'); forget removes the rest."""
    aws = forgetful
    archive = tmp_path / "bundle.zip"
    archive.write_bytes(zip_bytes({"a/first.txt": b"First note about herons.\n", "second.pdf": numbered_pdf(7),
                              "third.txt": b"Third note about the marsh.\n"}))
    outcomes: list[DocumentOutcome] = []
    files_when_delivered: dict[str, bytes] = {}

    def on_finished(outcome: DocumentOutcome) -> None:
        outcomes.append(outcome)
        for member in outcome.members:  # what is left of a member when its archive is done
            assert member.doc_id
            assert _keys_under(aws, f"work/{member.doc_id}/") == []
            assert _keys_under(aws, f"results/{member.doc_id}/pages/") == []
            assert sorted(k.rsplit("/", 1)[-1] for k in _keys_under(aws, f"results/{member.doc_id}/")) == \
                ["document.md", "report.html", "report.json", "text.txt"]
            # its item is set aside from the table, and still answers for it
            raw = aws.client("dynamodb").get_item(TableName=aws.table_name, Key={TABLE_KEY: {"S": member.doc_id}})
            assert "Item" not in raw and member.status == "clean"
            assert aws.results.items()[member.doc_id]["status"] == "clean"
        assert _keys_under(aws, f"members/{outcome.doc_id}/") == []
        files_when_delivered.update(aws.results.files(outcome).items())

    key = aws.drop(archive)
    assert aws.wait([key], timeout=120, on_finished=on_finished)
    (outcome,) = outcomes
    assert outcome.status == "clean" and len(outcome.members) == 3
    assert b"=== a/first.txt ===" in files_when_delivered["text.txt"]
    removed = aws.forget(outcome)
    assert removed >= 4 * 4  # the archive's results and its members'
    for prefix in ("work/", "results/", "members/", "incoming/"):
        assert _keys_under(aws, prefix) == [], prefix
    assert aws.results.items() == {}  # the table's and the set-aside members'


def test_papersift_run_writes_each_input_before_forgetting_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """`papersift run` writes an input's folder the moment it is done and only then removes it from
    the embedded AWS; the output is complete."""
    from papersift_cli import main as cli

    inputs = tmp_path / "in"
    inputs.mkdir()
    for number in range(3):
        (inputs / f"note-{number}.txt").write_text(f"Note {number} about the lighthouse.\n", encoding="utf-8")
    out = tmp_path / "out"
    seen: list[tuple[str, bool]] = []
    real_forget = LocalAws.forget

    def forget(self: LocalAws, outcome: DocumentOutcome) -> int:
        seen.append((outcome.source_name, (out / outcome.source_name / "text.txt").exists()))
        return real_forget(self, outcome)

    monkeypatch.setattr(LocalAws, "forget", forget)
    assert cli.main(["run", str(inputs), "--out", str(out), "--quiet"]) == 0
    assert sorted(seen) == [(f"note-{n}.txt", True) for n in range(3)]
    for number in range(3):
        assert f"Note {number} about" in (out / f"note-{number}.txt" / "text.txt").read_text(encoding="utf-8")
        assert json.loads((out / f"note-{number}.txt" / "report.json").read_text())["status"] == "clean"
    assert "3 file(s)" in capsys.readouterr().out


def test_what_a_run_forgets_is_freed_and_finished_threads_are_not_kept(forgetful: LocalAws, tmp_path: Path) -> None:
    """moto kept every object it made (for its dashboard) and every thread its Step Functions
    started, so a big archive's run grew by ~80 KB a member after all was forgotten."""
    import gc
    import weakref

    from moto.s3.models import s3_backends
    from moto.stepfunctions.parser import utils

    aws = forgetful
    archive = tmp_path / "notes.zip"
    notes = {f"note-{n:02d}.txt": f"Note {n} about the tide tables.\n".encode() for n in range(40)}
    archive.write_bytes(zip_bytes(notes))
    kept: list[weakref.ref[Any]] = []

    def on_finished(outcome: DocumentOutcome) -> None:
        bucket = s3_backends["123456789012"]["aws"].buckets[aws.bucket]
        kept.extend(weakref.ref(bucket.keys[key]) for key in aws.results.result_keys(outcome.members[0]))

    assert aws.wait([aws.drop(archive)], timeout=120, on_finished=lambda o: (on_finished(o), aws.forget(o)))
    gc.collect()
    assert kept and all(ref() is None for ref in kept)
    # 40 members' Maps started over 600 threads; the finished ones are let go
    assert len(utils.TMP_THREADS) < 200, len(utils.TMP_THREADS)
