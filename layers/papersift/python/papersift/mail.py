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
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage, Message

from papersift.errors import CorruptInputError, NestingTooDeepError

#: the headers that make an email's first lines, in this order
SHOWN_HEADERS = ("From", "To", "Cc", "Date", "Subject")
#: MIME nesting read (multiparts in multiparts); a forwarded message is an attachment, not a level
MAX_MIME_DEPTH = 64


@dataclass
class BodyPart:
    #: "plain" or "html"
    subtype: str
    text: str


@dataclass
class Attachment:
    """A part that is a file of its own: its name as the message gives it (or made from its
    type), and how to get its bytes."""

    name: str
    part: Message

    def payload(self) -> bytes:
        """The decoded bytes (a forwarded message: the message as it was sent)."""
        if self.part.get_content_type() == "message/rfc822":
            inner = self.part.get_payload()
            inner = inner[0] if isinstance(inner, list) and inner else inner
            if isinstance(inner, Message):
                return inner.as_bytes(policy=policy.default.clone(linesep="\r\n", max_line_length=0))
        data = self.part.get_payload(decode=True)
        return data if isinstance(data, bytes) else b""


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
            parts.attachments.append(Attachment(_file_name(part, len(parts.attachments) + 1), part))


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

