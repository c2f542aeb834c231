"""The real-world archive, misnamed and corrupt files of the corpus: each ends with a status, fast."""

from __future__ import annotations

import csv
import time
from pathlib import Path

import pytest

from papersift.archives import ArchiveLimits, ArchiveStatus, MemberStatus, archive_kind, unpack

pytestmark = pytest.mark.corpus

#: kinds the sniffer gives these files (the corpus names lie on purpose: .foo)
KINDS = {
    "pa__p.rar": "rar",
    "pa__t.tar.bz2": "bzip2",
    "pa__t.tar.xz.foo": "xz",
    "pa__p.7z": "7z",
    "tk__full_encrypted.7z": "7z",
    "rz__zipWithEncryption.zip": "zip",
    "ms__mixed.cab": "cab",
    "ms__large-files-cab.cab": "cab",
    "tk__TIKA-216.tgz": "gzip",
    "pl__issue-948.zip": "zip",
    "pa__t.cpio.foo": "cpio",
    "pa__t.txt.gz.foo": "gzip",
    "ms__cve-2010-2800-mszip-infinite-loop.cab": "cab",
    "tk__testZIP_corrupted_oom.zip": "zip",
    "rz__zipWithTooBigCDirSizeField.zip": "zip",
    "tk__empty-file.txt.bz2": "bzip2",
}


def rows(corpus_dir: Path) -> list[dict[str, str]]:
    with open(corpus_dir / "MANIFEST.tsv", encoding="utf-8", newline="") as fh:
        return [r for r in csv.DictReader(fh, delimiter="\t") if r["out_name"] in KINDS]


def test_every_corpus_archive_ends_with_a_status_within_bounds(corpus_dir: Path, tmp_path: Path) -> None:
    started = time.monotonic()
    for row in rows(corpus_dir):
        name, expected, password = row["out_name"], row["expected"], row["password"]
        path = corpus_dir / "files" / name
        kind = KINDS[name]
        if kind != "gzip":  # the magic check must agree with the sniffer's kind for members
            assert archive_kind(path) in (kind, None), name
        result = unpack(path, kind, tmp_path / name, ArchiveLimits(), (password,) if password else ())
        assert all(isinstance(m.status, MemberStatus) for m in result.members), name
        if expected == "<ENCRYPTED>":
            assert result.status is ArchiveStatus.ENCRYPTED, name
        elif expected == "<BOUNDED>":
            assert result.status in ArchiveStatus, name
        elif expected == "<ERROR>":
            assert sum(m.size for m in result.extracted) == 0, name
        else:
            texts = b"".join(m.local_path.read_bytes() for m in result.extracted if m.local_path)
            found = expected.encode() in texts or any(m.path.endswith(".pdf") for m in result.extracted)
            assert found, (name, result)
    assert time.monotonic() - started < 30


def test_tika_216_nested_bomb_is_rejected(corpus_dir: Path, tmp_path: Path) -> None:
    result = unpack(corpus_dir / "files" / "tk__TIKA-216.tgz", "gzip", tmp_path, ArchiveLimits())
    assert result.status is ArchiveStatus.LIMIT_EXCEEDED
    assert sum(m.size for m in result.extracted) < 2 * 1024 * 1024


def test_large_files_cab_bomb_is_not_extracted(corpus_dir: Path, tmp_path: Path) -> None:
    result = unpack(corpus_dir / "files" / "ms__large-files-cab.cab", "cab", tmp_path, ArchiveLimits())
    assert result.status is ArchiveStatus.LIMIT_EXCEEDED
    assert not result.extracted


def test_passwords_open_the_corpus_7z_and_rar(corpus_dir: Path, tmp_path: Path) -> None:
    for name, kind in (("pa__p.7z", "7z"), ("pa__p.rar", "rar")):
        result = unpack(corpus_dir / "files" / name, kind, tmp_path / name, ArchiveLimits(), ("thereisnotry",))
        [member] = result.extracted
        assert member.path == "t/t.txt" and member.local_path is not None
        assert member.local_path.read_bytes().strip() == b"42"
