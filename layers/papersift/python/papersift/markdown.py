"""Plain text written into document.md so that Markdown reads it as the text it is: a line of a
document that starts like a Markdown block (``# This file was generated``, ``> quoted``, a fence,
a rule of dashes, an HTML tag) would otherwise turn into a heading, a quote or a code block and
swallow what follows. Only the line starts that change the structure are escaped, so the text
stays readable as it is for chunkers and people; inline marks (``*``, ``_``) are left alone."""

from __future__ import annotations

import re

#: a line start Markdown reads as a block: an ATX heading, a block quote, a code fence, an HTML
#: block, a table row; or a line of marks alone (a setext underline, a thematic break)
_BLOCK_START = re.compile(r"^(?=#{1,6}(?:\s|$)|>|```|~~~|<[A-Za-z/!?]|\||(?:=+|-+|(?:[-*_] *){3,}) *$)", re.MULTILINE)
#: spaces or tabs at a line start: four make an indented code block, fewer are not shown
_INDENT = re.compile(r"^[ \t]+", re.MULTILINE)


#: the characters a line must start with for either pattern to change it
_MAY_CHANGE = frozenset(" \t#>`~<|=-*_")


def plain_text(text: str) -> str:
    """``text`` with its lines' indentation taken off and the line starts Markdown would read as
    structure backslash-escaped. A line that starts otherwise, most of a document, is passed
    without either pattern (document.md writes every paragraph through here)."""
    if "\n" not in text and text[:1] not in _MAY_CHANGE:
        return text
    return _BLOCK_START.sub("\\\\", _INDENT.sub("", text))
