"""An email's (or an Outlook message's) own text: the headers people read (From, To, Cc, Date, Subject), then the body.

The body is the plain text, or the HTML read as text (formats.markup) where a part has no plain
alternative. Attachments are not part of it: they are members of the email, read as documents
of their own by the unpack step (archives.attachments), as an archive's members are.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from papersift.content import PageContent
from papersift.formats._units import text_unit
from papersift.formats.markup import read_html
from papersift.formats.rtf import rtf_to_text
from papersift.mail import MailParts, parse_message, parse_outlook
from papersift.settings import Settings

ENGINE = "email"


def extract_email(data: bytes, settings: Settings) -> list[PageContent]:
    """The whole message as one unit: its header lines, a blank line, its body parts' text."""
    return [_message_unit(parse_message, data)]


def extract_outlook(data: bytes, settings: Settings) -> list[PageContent]:
    """An Outlook .msg message, as an email is read."""
    return [_message_unit(parse_outlook, data)]


def _message_unit(parse: Callable[[bytes], MailParts], data: bytes) -> PageContent:
    started = time.perf_counter()
    parts = parse(data)
    texts: list[str] = []
    truncated = ""
    for body in parts.bodies:
        if body.subtype == "html":
            text, _markdown, _tables, cut = read_html(body.text)
            truncated = truncated or cut
        elif body.subtype == "rtf":
            text = rtf_to_text(body.text.encode("latin-1"))
        else:
            text = body.text.replace("\r\n", "\n")
        if text.strip():
            texts.append(text.strip())
    header_lines = "\n".join(f"{name}: {value}" for name, value in parts.headers)
    text = "\n\n".join(part for part in (header_lines, *texts) if part)
    return text_unit(1, text + "\n", ENGINE, started, truncated=truncated,
                     truncated_code="nesting_too_deep" if "depth" in truncated.lower() else "")
