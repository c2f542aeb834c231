"""Archives built in code for tests, including hostile ones (bombs, traversal, links, odd names).

Tools that only exist as binaries (7z, gcab, arj, lha, lzip, compress, bsdtar, ar) are run
in a temporary directory; ``have(tool)`` lets a test skip when one is absent.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import shutil
import stat
import subprocess
import tarfile
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path


def have(tool: str) -> bool:
    return shutil.which(tool) is not None


def zip_bytes(members: Mapping[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name), data, compress_type=compression)
    return buf.getvalue()


def zip_with_symlink(link_name: str, target: str, extra: Mapping[str, bytes] = {}) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        info = zipfile.ZipInfo(link_name)
        info.create_system = 3
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, target)
        for name, data in extra.items():
            zf.writestr(name, data)
    return buf.getvalue()


def zip_without_utf8_flag(members: Mapping[str, bytes]) -> bytes:
    """UTF-8 names with general-purpose bit 11 cleared, as many Windows tools write them."""
    data = bytearray(zip_bytes(members, zipfile.ZIP_STORED))
    for sig, flag_offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        pos = data.find(sig)
        while pos != -1:
            data[pos + flag_offset + 1] &= ~0x08 & 0xFF  # bit 11 is bit 3 of the high byte
            pos = data.find(sig, pos + 4)
    return bytes(data)


def zip_cp437(name: str, payload: bytes) -> bytes:
    """A legacy zip whose name is stored in cp437 without the UTF-8 flag."""
    raw_name = name.encode("cp437")
    placeholder = "N" * len(raw_name)
    data = zip_bytes({placeholder: payload}, zipfile.ZIP_STORED)
    return data.replace(placeholder.encode(), raw_name)


def zip_bomb(size: int, name: str = "zeros.txt") -> bytes:
    """One member of ``size`` zero bytes, deflated about 1000:1, written in chunks."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf, zf.open(name, "w", force_zip64=True) as dst:
        chunk = b"\0" * (1024 * 1024)
        left = size
        while left > 0:
            dst.write(chunk[: min(left, len(chunk))])
            left -= len(chunk)
    return buf.getvalue()


def nested_zip(depth: int, leaf: bytes = b"the leaf 42\n") -> bytes:
    """level1.zip > level2.zip > ... > leaf.txt, ``depth`` zips in all."""
    data = zip_bytes({"leaf.txt": leaf})
    for level in range(depth - 1, 0, -1):
        data = zip_bytes({f"level{level + 1}.zip": data})
    return data


def tar_bytes(
    members: Mapping[str, bytes] | Sequence[tuple[str, bytes]],
    *,
    mode: str = "w",
    symlinks: Mapping[str, str] = {},
    hardlinks: Mapping[str, str] = {},
    devices: tuple[str, ...] = (),
) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:  # type: ignore[call-overload]
        for name, data in members.items() if isinstance(members, Mapping) else members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        for name, target in symlinks.items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tf.addfile(info)
        for name, target in hardlinks.items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.LNKTYPE
            info.linkname = target
            tf.addfile(info)
        for name in devices:
            info = tarfile.TarInfo(name)
            info.type = tarfile.CHRTYPE
            tf.addfile(info)
    return buf.getvalue()


def compress(data: bytes, kind: str) -> bytes:
    if kind == "gzip":
        return gzip.compress(data)
    if kind == "bzip2":
        return bz2.compress(data)
    if kind == "xz":
        return lzma.compress(data)
    if kind == "lzma":
        return lzma.compress(data, format=lzma.FORMAT_ALONE)
    if kind == "zstd":
        import zstandard

        return zstandard.ZstdCompressor().compress(data)
    if kind == "lzip":
        return _pipe(["lzip", "-c"], data)
    if kind == "compress":
        return _pipe(["compress", "-c"], data)
    raise ValueError(kind)


def _pipe(cmd: list[str], data: bytes) -> bytes:
    return subprocess.run(cmd, input=data, capture_output=True, check=True, timeout=30).stdout


def with_tool(
    kind: str, members: Mapping[str, bytes], password: str | None = None, encrypt_headers: bool = False
) -> bytes:
    """Build a 7z, cab, cpio, ar, iso or arj archive (lhasa only reads lzh) with the binary that writes it."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        names = []
        for name, data in members.items():
            path = src / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            names.append(name)
        out = Path(tmp) / f"out.{kind}"
        pw = [f"-p{password}"] if password else []
        commands = {
            "7z": ["7z", "a", "-bd", "-t7z", *pw, *(["-mhe=on"] if encrypt_headers else []), str(out), *names],
            "zip-aes": ["7z", "a", "-bd", "-tzip", *pw, "-mem=AES256", str(out), *names],
            "zip-crypto": ["7z", "a", "-bd", "-tzip", *pw, "-mem=ZipCrypto", str(out), *names],
            "cab": ["gcab", "-c", "-z", str(out), *names],
            "cpio": ["bsdtar", "--format", "newc", "-cf", str(out), *names],
            "ar": ["ar", "rc", str(out), *names],
            "iso": ["bsdtar", "--format", "iso9660", "-cf", str(out), *names],
            "arj": ["arj", "a", str(out), *names],
        }
        subprocess.run(commands[kind], cwd=src, capture_output=True, check=True, timeout=60)
        return out.read_bytes()
