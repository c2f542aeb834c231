"""The directory store of `papersift extract` on a disk that refuses writes: an object is whole or
as it was, and a copy that cannot fit is refused before it fills the disk."""

from __future__ import annotations

import errno
import os
import shutil
from collections import namedtuple
from pathlib import Path

import pytest

from papersift.storage import LocalDirStore


def test_a_put_that_fails_keeps_the_object_as_it_was_and_leaves_no_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalDirStore(tmp_path / "store")
    store.put("results/d1/text.txt", b"the earlier text")

    def full(source: str, target: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError, match="No space left"):
        store.put("results/d1/text.txt", b"a text that does not fit" * 1000)
    monkeypatch.undo()
    assert store.get("results/d1/text.txt") == b"the earlier text"
    assert store.list_keys("") == ["results/d1/text.txt"]
    assert [p.name for p in (tmp_path / "store").rglob("*") if p.is_file()] == ["text.txt"]


def test_a_copy_that_cannot_fit_is_refused_before_a_byte_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The input is on another file system (no hard link): a copy of 62 MB where 20 are free."""
    big = tmp_path / "big.csv"
    big.write_bytes(b"x" * 4096)
    monkeypatch.setattr(os, "stat", _sized(os.stat, big, 62_000_000))
    monkeypatch.setattr(os, "link", _cross_device)
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(20_000_000, 0, 20_000_000))
    store = LocalDirStore(tmp_path / "store")
    with pytest.raises(OSError) as refused:
        store.upload_file(big, "incoming/big.csv")
    assert refused.value.errno == errno.ENOSPC
    assert "62.0 MB" in str(refused.value) and "20.0 MB free" in str(refused.value)
    assert not store.exists("incoming/big.csv")


def test_a_copy_failing_half_way_leaves_no_partial_object(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "note.txt"
    source.write_bytes(b"a note" * 1000)
    monkeypatch.setattr(os, "link", _cross_device)

    def half_then_full(src: str, dst: str) -> None:
        Path(dst).write_bytes(b"a no")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(shutil, "copyfile", half_then_full)
    store = LocalDirStore(tmp_path / "store")
    with pytest.raises(OSError):
        store.upload_file(source, "incoming/note.txt")
    assert not store.exists("incoming/note.txt")


def _cross_device(source: object, target: object) -> None:
    raise OSError(errno.EXDEV, "Invalid cross-device link")


def _sized(real_stat: object, path: Path, size: int) -> object:
    def stat(target: object, *args: object, **kwargs: object) -> os.stat_result:
        found = real_stat(target, *args, **kwargs)  # type: ignore[operator]
        if os.fspath(target) == str(path):  # type: ignore[call-overload]
            return os.stat_result((*found[:6], size, *found[7:]))
        return found  # type: ignore[no-any-return]
    return stat


def test_a_folder_removed_while_it_is_listed_is_skipped_not_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `papersift extract`'s progress line counts a running document's pages while its lane, done
    # with it, removes its work files: a listing then sees what is left, it does not fail the run
    store = LocalDirStore(tmp_path / "store")
    for number in (1, 2):
        store.put(f"work/d1/pages/{number:05d}.json", b"{}")
    store.put("work/d1/pages/ocr/00001.json", b"{}")
    store.put("work/d2/pages/00001.json", b"{}")
    real_scandir = os.scandir

    def removed_first(path: object) -> object:
        if str(path).endswith(os.path.join("d1", "pages", "ocr")):
            shutil.rmtree(str(path))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", removed_first)
    assert store.list_keys("work/d1/pages/") == ["work/d1/pages/00001.json", "work/d1/pages/00002.json"]
    shutil.rmtree(tmp_path / "store" / "work" / "d1")
    assert store.list_keys("work/d1/pages/") == []
    assert store.list_keys("work/") == ["work/d2/pages/00001.json"]
