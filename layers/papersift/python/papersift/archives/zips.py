"""Zip read in process: zipfile for ZipCrypto and the native methods, pyzipper for WinZip AES."""

from __future__ import annotations

import contextlib
import stat
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

from papersift.archives.limits import CHUNK, Stop
from papersift.archives.members import ArchiveStatus, MemberStatus
from papersift.archives.sink import MemberSink
from papersift.archives.tools import ToolError, read_with_tools


def read_zip(frame: MemberSink, path: Path) -> tuple[ArchiveStatus, str]:
    declared = declared_entries(path)
    cap = frame.run.limits.max_listed
    if declared is not None and declared > cap:
        # zipfile would build one ZipInfo per entry before we see any: refuse from the count itself
        return ArchiveStatus.LIMIT_EXCEEDED, (
            f"the zip declares {declared} members, more than the {cap} papersift lists "
            f"(10 x max_archive_members): not read")
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        status, reason = read_with_tools(frame, path, "zip")
        if status in (ArchiveStatus.CORRUPT, ArchiveStatus.UNSUPPORTED):
            return ArchiveStatus.CORRUPT, f"not a readable zip ({exc}); {reason}"
        return status, reason
    with zf:
        infos = [i for i in zf.infolist() if not i.is_dir()]
        if any(i.compress_type not in _ZIP_NATIVE_METHODS for i in infos):
            # deflate64, PPMd, ...: 7z reads them, zipfile does not
            return read_with_tools(frame, path, "zip")
        aes: _AesZip | None = None
        remaining = iter(infos)
        try:
            for info in remaining:
                raw = _zip_name(info)
                if _zip_is_link(info):
                    try:
                        frame.run.count_member()
                    except Stop as stop:
                        frame.skip_rest(iter([raw]), str(stop))
                        raise
                    frame.record(raw, MemberStatus.UNSAFE_PATH, "symbolic link: not followed")
                    continue
                if info.compress_type == _ZIP_AES:
                    aes = aes or _AesZip(path)
                    opener = aes.opener(info.filename, frame.run.passwords)
                else:
                    opener = _zip_opener(zf, info, frame.run.passwords)
                frame.add_file(raw, opener, packed_size=info.compress_size, declared_size=info.file_size)
        except Stop as stop:
            frame.skip_rest((_zip_name(i) for i in remaining), str(stop))
            raise
        finally:
            if aes is not None:
                aes.close()
    return ArchiveStatus.OK, ""


_EOCD = b"PK\x05\x06"
_ZIP64_LOCATOR = b"PK\x06\x07"
_ZIP64_EOCD = b"PK\x06\x06"


def declared_entries(path: Path) -> int | None:
    """The member count the zip's end-of-central-directory record declares (zip64 included), read
    from the file's tail without parsing the directory; None when there is no such record."""
    size = path.stat().st_size
    with open(path, "rb") as fh:
        start = max(0, size - (22 + 65535))  # the record, after at most a 64 KiB comment
        fh.seek(start)
        tail = fh.read()
        at = tail.rfind(_EOCD)
        if at < 0 or len(tail) - at < 22:
            return None
        entries = int.from_bytes(tail[at + 10:at + 12], "little")
        locator = at - 20
        if entries == 0xFFFF and locator >= 0 and tail[locator:locator + 4] == _ZIP64_LOCATOR:
            offset = int.from_bytes(tail[locator + 8:locator + 16], "little")
            if 0 <= offset <= size - 56:
                fh.seek(offset)
                record = fh.read(56)
                if record[:4] == _ZIP64_EOCD:
                    return int.from_bytes(record[32:40], "little")
        return entries


_ZIP_AES = 99
_ZIP_NATIVE_METHODS = frozenset(
    {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA, _ZIP_AES}
)


class PasswordError(Exception):
    pass


def _zip_name(info: zipfile.ZipInfo) -> str:
    """UTF-8 first for names without flag 0x800: many tools write UTF-8 without setting it."""
    if info.flag_bits & 0x800:
        return info.filename
    try:
        raw = info.orig_filename.encode("cp437")
    except UnicodeEncodeError:
        return info.filename
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return info.orig_filename


def _zip_is_link(info: zipfile.ZipInfo) -> bool:
    return info.create_system == 3 and stat.S_ISLNK(info.external_attr >> 16)


def _password_bytes(passwords: Sequence[str]) -> list[bytes]:
    out: list[bytes] = []
    for pw in passwords:
        for codec in ("utf-8", "latin-1", "cp437"):
            with contextlib.suppress(UnicodeEncodeError):
                candidate = pw.encode(codec)
                if candidate not in out:
                    out.append(candidate)
    return out


def _zip_opener(zf: zipfile.ZipFile, info: zipfile.ZipInfo, passwords: Sequence[str]) -> Callable[[], IO[bytes]]:
    if not info.flag_bits & 0x1:
        return lambda: zf.open(info)
    candidates = _password_bytes(passwords)

    def open_encrypted() -> IO[bytes]:
        if not candidates:
            raise PasswordError("encrypted; no password supplied")
        for pw in candidates:
            # a wrong ZipCrypto password passes the 1-byte check 1 time in 256; a full read
            # with CRC proves it, and costs no more than the budget allows anyway
            try:
                with zf.open(info, pwd=pw) as probe:
                    while probe.read(CHUNK):
                        pass
            except (RuntimeError, zipfile.BadZipFile):
                continue
            return zf.open(info, pwd=pw)
        raise PasswordError("encrypted; no supplied password opens it")

    return open_encrypted


class _AesZip:
    """WinZip AES members, read through pyzipper (zipfile cannot decrypt them)."""

    def __init__(self, path: Path) -> None:
        try:
            import pyzipper
        except ImportError as exc:  # pragma: no cover - pyzipper is a dependency
            raise ToolError("AES-encrypted zip needs pyzipper") from exc
        self.zf = pyzipper.AESZipFile(path)

    def opener(self, name: str, passwords: Sequence[str]) -> Callable[[], IO[bytes]]:
        candidates = _password_bytes(passwords)

        def open_aes() -> IO[bytes]:
            if not candidates:
                raise PasswordError("AES-encrypted; no password supplied")
            for pw in candidates:
                try:
                    stream: IO[bytes] = self.zf.open(name, pwd=pw)
                except RuntimeError:
                    continue
                return stream
            raise PasswordError("AES-encrypted; no supplied password opens it")

        return open_aes

    def close(self) -> None:
        self.zf.close()
