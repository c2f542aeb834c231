"""Password-protected Office files: OOXML packages encrypted into an OLE2 container
(ECMA-376 Standard/Agile) and legacy RC4 / CryptoAPI .doc, .xls and .ppt.

Decryption yields the plain file, which ``formats.extract_encrypted_office`` types again and
hands to its real extractor, so an encrypted workbook reads exactly like an unencrypted one.
Only the decrypting is here: the formats import it (legacy .doc/.xls/.ppt decrypt in place),
so this module imports no format back. Passwords never appear in messages or reports.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import msoffcrypto
from msoffcrypto import exceptions as crypto_errors

from papersift.errors import CorruptInputError, EncryptedInputError, UnsupportedFormatError

#: what Excel encrypts a "protected" workbook with when the user gave no password
EXCEL_DEFAULT_PASSWORD = "VelvetSweatshop"
ENGINE = "msoffcrypto"


def _office_file(data: bytes) -> object:
    try:
        return msoffcrypto.OfficeFile(io.BytesIO(data))
    except crypto_errors.FileFormatError as exc:
        raise UnsupportedFormatError(f"not an Office file msoffcrypto can open: {exc}") from exc
    except (OSError, ValueError, IndexError, KeyError, crypto_errors.ParseError) as exc:
        raise CorruptInputError(f"Office container is damaged: {exc}") from exc


def is_encrypted_office(data: bytes) -> bool:
    """True when ``data`` is an Office file whose content needs a password."""
    try:
        office = _office_file(data)
        return bool(office.is_encrypted())  # type: ignore[attr-defined]
    except (UnsupportedFormatError, CorruptInputError):
        return False
    except Exception:  # msoffcrypto parses record streams with bare struct/index errors
        return False


def decrypt_office(data: bytes, passwords: Sequence[str]) -> bytes:
    """The plain file inside ``data``, trying each password then Excel's default one.

    Raises EncryptedInputError when none opens it, CorruptInputError when the container or
    its encryption header is damaged, UnsupportedFormatError for an unknown cipher.
    """
    candidates = [p for p in dict.fromkeys([*passwords, EXCEL_DEFAULT_PASSWORD]) if p]
    probe = _office_file(data)
    try:
        encrypted = bool(probe.is_encrypted())  # type: ignore[attr-defined]
    except Exception as exc:  # damaged record streams surface as struct/index errors
        raise CorruptInputError(f"cannot read the Office encryption header: {exc}") from exc
    if not encrypted:
        return data
    supplied = len([p for p in dict.fromkeys(passwords) if p])
    for password in candidates:
        office = _office_file(data)
        out = io.BytesIO()
        try:
            if type(office).__name__ == "OOXMLFile":
                office.load_key(password=password, verify_password=True)  # type: ignore[attr-defined]
            else:
                office.load_key(password=password)  # type: ignore[attr-defined]
            office.decrypt(out)  # type: ignore[attr-defined]
        except crypto_errors.InvalidKeyError:
            continue
        except crypto_errors.DecryptionError as exc:
            if "unsupported" in str(exc).lower():
                raise UnsupportedFormatError(f"Office encryption method not supported: {exc}") from exc
            raise CorruptInputError(f"Office file could not be decrypted: {exc}") from exc
        except (crypto_errors.ParseError, OSError, ValueError, IndexError, KeyError) as exc:
            raise CorruptInputError(f"Office file could not be decrypted: {exc}") from exc
        plain = out.getvalue()
        if plain:
            return plain
    raise EncryptedInputError(
        f"Office file is password-protected and none of the {supplied} supplied password(s) "
        "nor Excel's default password opens it"
    )

