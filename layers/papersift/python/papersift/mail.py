"""An RFC 822 / MIME message split into what papersift reads of it: the headers people look at,
the body (the plain text, or the HTML when a part has no plain alternative) and the attachments.

One place decides which part is body and which is an attachment, because two readers need the
answer: the email's own text (``formats.email``) and its members (``archives.attachments``).
The standard library's parser with ``policy.default`` decodes RFC 2047 headers and RFC 2231
file names; a part's payload is decoded (base64, quoted-printable) only when it is asked for.
"""

from __future__ import annotations

import email
import mimetypes
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email import policy
from email.message import EmailMessage, Message
from email.utils import format_datetime

from papersift.errors import CorruptInputError, NestingTooDeepError

#: the headers that make an email's first lines, in this order
SHOWN_HEADERS = ("From", "To", "Cc", "Date", "Subject")
#: MIME nesting read (multiparts in multiparts); a forwarded message is an attachment, not a level
MAX_MIME_DEPTH = 64


@dataclass
class BodyPart:
    #: "plain", "html" or "rtf" (Outlook's rich text, decompressed; formats.eml reads it as RTF)
    subtype: str
    text: str


@dataclass
class Attachment:
    """A part that is a file of its own: its name as the message gives it (or made from its
    type), and how to get its bytes (decoded only when asked for)."""

    name: str
    payload: Callable[[], bytes]


def _part_payload(part: Message) -> Callable[[], bytes]:
    """The decoded bytes of a MIME part (a forwarded message: the message as it was sent)."""

    def payload() -> bytes:
        if part.get_content_type() == "message/rfc822":
            inner = part.get_payload()
            inner = inner[0] if isinstance(inner, list) and inner else inner
            if isinstance(inner, Message):
                return inner.as_bytes(policy=policy.default.clone(linesep="\r\n", max_line_length=0))
        data = part.get_payload(decode=True)
        return data if isinstance(data, bytes) else b""

    return payload


@dataclass
class MailParts:
    headers: list[tuple[str, str]] = field(default_factory=list)
    bodies: list[BodyPart] = field(default_factory=list)
    attachments: list[Attachment] = field(default_factory=list)


def parse_message(data: bytes) -> MailParts:
    """Split ``data`` into headers, body parts and attachments (see the module's docstring)."""
    try:
        message = email.message_from_bytes(data, policy=policy.default)
    except RecursionError:
        raise NestingTooDeepError("the email's MIME parts nest deeper than Python's parser reads") from None
    if not isinstance(message, EmailMessage) or (not message.keys() and not message.get_payload()):
        raise CorruptInputError("no email headers or body could be parsed")
    parts = MailParts(headers=[(name, _header(message, name)) for name in SHOWN_HEADERS if message.get(name)])
    _split(message, parts)
    return parts


def _header(message: EmailMessage, name: str) -> str:
    try:
        return " ".join(str(message.get(name, "")).split())
    except (ValueError, IndexError, TypeError):  # a header the policy cannot parse: as written
        return " ".join(str(message.get_all(name, [""])[0]).split())


def _split(message: Message, parts: MailParts) -> None:
    """Walk the MIME tree (with a stack: a hostile message may nest deeply), keeping for each
    multipart/alternative the plain text (else the HTML), inline text as body, the rest as files."""
    stack: list[tuple[Message, int]] = [(message, 0)]
    while stack:
        part, depth = stack.pop()
        if depth > MAX_MIME_DEPTH:
            raise NestingTooDeepError(f"the email's MIME parts nest deeper than {MAX_MIME_DEPTH} levels")
        ctype = part.get_content_type()
        if part.is_multipart() and ctype != "message/rfc822":
            children = [p for p in part.get_payload() if isinstance(p, Message)]
            if ctype == "multipart/alternative":
                children = _preferred(children)
            stack.extend((child, depth + 1) for child in reversed(children))
            continue
        if _is_body(part):
            parts.bodies.append(BodyPart(part.get_content_subtype(), _text_of(part)))
        else:
            parts.attachments.append(Attachment(_file_name(part, len(parts.attachments) + 1), _part_payload(part)))


def _preferred(alternatives: list[Message]) -> list[Message]:
    """The alternative read: plain text when there is one, else HTML, else the last (richest)."""
    for subtype in ("text/plain", "text/html"):
        for alternative in alternatives:
            if alternative.get_content_type() == subtype and not _is_attachment(alternative):
                return [alternative]
    return alternatives[-1:]


def _is_attachment(part: Message) -> bool:
    return part.get_content_disposition() == "attachment"


def _is_body(part: Message) -> bool:
    return part.get_content_type() in ("text/plain", "text/html") and not _is_attachment(part) \
        and not part.get_filename()


def _text_of(part: Message) -> str:
    data = part.get_payload(decode=True)
    if not isinstance(data, bytes):
        return ""
    charset = part.get_content_charset() or "utf-8"
    try:
        return data.decode(charset, errors="replace")
    except LookupError:  # a charset Python does not know: UTF-8, what most such mail is
        return data.decode("utf-8", errors="replace")


def _file_name(part: Message, number: int) -> str:
    try:
        name = part.get_filename()
    except (ValueError, IndexError, TypeError):
        name = None
    if name and name.strip():
        return name.strip()
    ctype = part.get_content_type()
    if ctype == "message/rfc822":
        return f"attachment-{number}.eml"
    return f"attachment-{number}{mimetypes.guess_extension(ctype) or '.bin'}"



# -- Outlook .msg (MS-OXMSG: properties as OLE2 streams) ------------------------------------------

#: property ids of what is read (MS-OXPROPS): strings are streams ``__substg1.0_<id><type>``
_SUBJECT, _SENDER_NAME, _SENDER_EMAIL, _SENDER_SMTP = "0037", "0C1A", "0C1F", "5D01"
_DISPLAY_TO, _DISPLAY_CC, _BODY, _HTML_BODY, _TRANSPORT_HEADERS = "0E04", "0E03", "1000", "1013", "007D"
#: PidTagRtfCompressed: the body of a message written in Outlook's rich text, often its only body
_RTF_BODY = "1009"
_ATTACH_DATA, _ATTACH_LONG_NAME, _ATTACH_NAME, _ATTACH_DISPLAY_NAME = "3701", "3707", "3704", "3001"
#: PidTagClientSubmitTime as a fixed-size property of the message's property stream (PtypTime)
_SUBMIT_TIME_TAG = 0x00390040
_ATTACHMENT_STORAGE = re.compile(r"__attach_version1\.0_#[0-9A-Fa-f]{8}")


def parse_outlook(data: bytes) -> MailParts:
    """An Outlook message split as ``parse_message`` splits an email: olefile (BSD) reads the
    OLE2 storage, the properties are read as MS-OXMSG lays them out. A body kept only as
    compressed RTF (MS-OXRTFCP) is decompressed by compressed_rtf (MIT) and read as RTF."""
    import olefile  # only an Outlook message pays for the import

    try:
        ole = olefile.OleFileIO(data)
    except Exception as exc:  # olefile raises bare OSError/struct errors on damage
        raise CorruptInputError(f"the Outlook message cannot be opened: {exc}") from None
    with ole:
        def string(prop: str, storage: str = "") -> str:
            for kind, codec in (("001F", "utf-16-le"), ("001E", "cp1252")):
                path = f"{storage}__substg1.0_{prop}{kind}"
                if ole.exists(path):
                    return ole.openstream(path).read().decode(codec, errors="replace").rstrip("\x00")
            return ""

        sender = string(_SENDER_NAME)
        address = string(_SENDER_SMTP) or string(_SENDER_EMAIL)
        shown = f"{sender} <{address}>" if sender and address and "@" in address else (sender or address)
        headers = [("From", shown), ("To", string(_DISPLAY_TO)), ("Cc", string(_DISPLAY_CC)),
                   ("Date", _submit_time(ole) or _transport_date(string(_TRANSPORT_HEADERS))),
                   ("Subject", string(_SUBJECT))]
        parts = MailParts(headers=[(name, " ".join(value.split())) for name, value in headers if value.strip()])
        body = string(_BODY)
        html = string(_HTML_BODY) or _binary(ole, f"__substg1.0_{_HTML_BODY}0102").decode("utf-8", "replace")
        rtf = "" if body.strip() or html.strip() else _rtf_body(_binary(ole, f"__substg1.0_{_RTF_BODY}0102"))
        if body.strip():
            parts.bodies.append(BodyPart("plain", body))
        elif html.strip():
            parts.bodies.append(BodyPart("html", html))
        elif rtf:
            parts.bodies.append(BodyPart("rtf", rtf))
        storages = sorted({entry[0] for entry in ole.listdir(streams=True, storages=True)
                           if _ATTACHMENT_STORAGE.fullmatch(entry[0])})
        for number, storage in enumerate(storages, 1):
            prefix = storage + "/"
            name = string(_ATTACH_LONG_NAME, prefix) or string(_ATTACH_NAME, prefix) \
                or string(_ATTACH_DISPLAY_NAME, prefix) or f"attachment-{number}.bin"
            content = _binary(ole, f"{prefix}__substg1.0_{_ATTACH_DATA}0102")
            embedded = ole.exists(f"{prefix}__substg1.0_{_ATTACH_DATA}000D")
            parts.attachments.append(Attachment(name.strip(), _stored(content, embedded)))
    return parts


def _rtf_body(compressed: bytes) -> str:
    """A compressed RTF body decompressed, as Latin-1 (which round-trips every byte: RTF says its own code page);
    empty when there is none or it does not decompress (the headers and attachments still stand)."""
    if not compressed:
        return ""
    from compressed_rtf import decompress

    try:
        return decompress(compressed).decode("latin-1")
    except Exception:  # compressed_rtf raises bare Exception on a bad header or CRC
        return ""


def _binary(ole: object, path: str) -> bytes:
    if not ole.exists(path):  # type: ignore[attr-defined]
        return b""
    data: bytes = ole.openstream(path).read()  # type: ignore[attr-defined]
    return data


def _stored(content: bytes, embedded: bool) -> Callable[[], bytes]:
    def payload() -> bytes:
        if embedded:  # an .msg inside the .msg is a storage, not a file's bytes
            raise ValueError("an Outlook message attached inside the message is not read")
        return content

    return payload


def _submit_time(ole: object) -> str:
    """PidTagClientSubmitTime from the message's fixed-size properties (32-byte header, then 16-byte
    entries: tag, flags, value), as an RFC 5322 date."""
    raw = _binary(ole, "__properties_version1.0")
    for offset in range(32, len(raw) - 15, 16):
        tag, _flags, value = struct.unpack_from("<IIQ", raw, offset)
        if tag == _SUBMIT_TIME_TAG and value:
            try:
                return format_datetime(datetime(1601, 1, 1, tzinfo=UTC) + timedelta(microseconds=value // 10))
            except (OverflowError, ValueError):
                return ""
    return ""


def _transport_date(headers: str) -> str:
    if not headers:
        return ""
    return " ".join(str(email.message_from_string(headers, policy=policy.default).get("Date", "")).split())
