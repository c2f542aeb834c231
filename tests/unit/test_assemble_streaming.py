"""Assemble reads a document's pages one at a time (memory flat in page count, issue 20): the
pieces it builds page by page give what the whole join gave."""

from __future__ import annotations

import random
from pathlib import Path

from papersift.report_page import _cut, preview_of
from papersift.storage import LocalDirStore, Spool


def test_the_preview_built_page_by_page_is_the_cut_of_the_whole_join() -> None:
    rng = random.Random(20)
    for _ in range(200):
        texts = [rng.choice(["", "  \n", "é" * rng.randint(1, 40), "word " * rng.randint(1, 9)])
                 for _ in range(rng.randint(0, 12))]
        limit = rng.randint(0, 120)
        whole = "\n\n".join(t for t in texts if t.strip())
        assert preview_of(texts, limit) == _cut(whole, limit), (texts, limit)


def test_a_spool_past_its_memory_is_stored_from_its_file_with_the_same_bytes(tmp_path: Path) -> None:
    store = LocalDirStore(tmp_path / "store")
    parts = [f"page {n}\f".encode() for n in range(1, 200)]
    with Spool(memory_bytes=64) as spool:
        for part in parts:
            spool.write(part)
        spool.put(store, "results/d/text.txt", "text/plain")
        spilled = Path(spool._file.name)
        assert spilled.exists(), "past its memory the spool is a file"
    assert not spilled.exists(), "the spool's file is removed when it is closed"
    assert store.get("results/d/text.txt") == b"".join(parts)


def test_a_small_spool_is_one_put_and_leaves_no_file(tmp_path: Path) -> None:
    store = LocalDirStore(tmp_path / "store")
    with Spool() as spool:
        spool.write("ünïcode text".encode())
        spool.put(store, "results/d/text.txt", "text/plain")
        assert spool._file is None
    assert store.get("results/d/text.txt") == "ünïcode text".encode()
