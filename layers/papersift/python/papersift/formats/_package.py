"""Reading parts of zip-based documents (ODF, EPUB) within the size limits of Settings,
so a document cannot smuggle a zip bomb past the archive limits."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable

from papersift.content import EmbeddedPicture
from papersift.errors import CorruptInputError, DecompressionBombError, LimitExceededError
from papersift.settings import Settings


def open_package(data: bytes, what: str) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError) as exc:
        raise CorruptInputError(f"{what} is not a readable zip: {exc}") from exc


def read_part(archive: zipfile.ZipFile, name: str, settings: Settings, what: str) -> bytes:
    """One member's bytes; CorruptInputError if missing or broken, LimitExceededError if a bomb."""
    try:
        info = archive.getinfo(name)
    except KeyError as exc:
        raise CorruptInputError(f"{what} has no {name}") from exc
    ratio = info.file_size / max(1, info.compress_size)
    bomb = info.file_size > 1_000_000 and ratio > settings.max_compression_ratio
    if info.file_size > settings.max_file_bytes or bomb:
        raise (DecompressionBombError if bomb else LimitExceededError)(
            f"{what}: {name} expands to {info.file_size} bytes (ratio {ratio:.0f}); limits are "
            f"max_file_bytes={settings.max_file_bytes}, max_compression_ratio={settings.max_compression_ratio}"
        )
    try:
        return archive.read(info)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, RuntimeError) as exc:
        raise CorruptInputError(f"{what}: {name} cannot be decompressed: {exc}") from exc


def read_pictures(archive: zipfile.ZipFile, names: Iterable[str], settings: Settings, what: str
                  ) -> list[EmbeddedPicture]:
    """The pictures a unit shows, each part once in the order given, within the same limits as
    any part; a part that is missing or cannot be read is left out (the text still reads)."""
    present = set(archive.namelist())
    pictures: list[EmbeddedPicture] = []
    for name in dict.fromkeys(names):
        if name not in present:
            continue
        try:
            pictures.append(EmbeddedPicture(name, read_part(archive, name, settings, what)))
        except CorruptInputError:
            continue
    return pictures
