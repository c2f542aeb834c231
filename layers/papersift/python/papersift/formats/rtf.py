"""RTF -> text with a small tokenizer of our own.

striprtf 0.0.35 decodes ``\\'hh`` bytes with the document code page only and leaves
``\\u`` surrogate halves unpaired (Gothic letters come out as lone surrogates), so a
file that switches fonts between Latin and Shift-JIS text loses one of them. Here every
``\\'hh`` run is decoded with the charset of the font in force (``\\fN`` -> ``\\fcharset``
or ``\\cpg`` from the font table), falling back to ``\\ansicpg``.
"""

from __future__ import annotations

import codecs
import re
import time
from dataclasses import dataclass, replace

from papersift.content import PageContent
from papersift.errors import CorruptInputError, EmptyInputError
from papersift.formats._units import text_unit
from papersift.settings import Settings

ENGINE = "papersift-rtf"

#: Windows font charset (\fcharsetN) -> Python codec; 0/1 mean "the document code page"
_FONT_CHARSETS: dict[int, str] = {
    77: "mac_roman",
    128: "cp932",
    129: "cp949",
    130: "johab",
    134: "gbk",
    136: "cp950",
    161: "cp1253",
    162: "cp1254",
    163: "cp1258",
    177: "cp1255",
    178: "cp1256",
    186: "cp1257",
    204: "cp1251",
    222: "cp874",
    238: "cp1250",
    254: "cp437",
    255: "cp850",
}

#: destinations whose content is never document text
_SKIP_DESTINATIONS = frozenset(
    [
        "fonttbl",
        "colortbl",
        "stylesheet",
        "info",
        "pict",
        "object",
        "objdata",
        "themedata",
        "datastore",
        "listtable",
        "listoverridetable",
        "rsidtbl",
        "generator",
        "xmlnstbl",
        "latentstyles",
        "revtbl",
        "filetbl",
        "pgdsctbl",
        "fldinst",
        "bkmkstart",
        "bkmkend",
        "shppict",
        "nonshppict",
        "sp",
        "fchars",
        "lchars",
        "mmathPr",
        "wgrffmtfilter",
        "blipuid",
        "userprops",
        "docvar",
        "template",
        "operator",
        "author",
        "title",
        "xe",
        "tc",
        "pnseclvl",
    ]
)

#: control words that stand for text
_SPECIAL_TEXT: dict[str, str] = {
    "par": "\n",
    "line": "\n",
    "sect": "\n\n",
    "page": "\n\n",
    "tab": "\t",
    "cell": "\t",
    "nestcell": "\t",
    "row": "\n",
    "nestrow": "\n",
    "emdash": "\u2014",
    "endash": "\u2013",
    "bullet": "\u2022",
    "lquote": "\u2018",
    "rquote": "\u2019",
    "ldblquote": "\u201c",
    "rdblquote": "\u201d",
    "emspace": "\u2003",
    "enspace": "\u2002",
    "qmspace": "\u2005",
}

_TOKEN = re.compile(
    rb"\\([a-zA-Z]{1,32})(-?\d{1,10})? ?"  # control word with optional parameter
    rb"|\\'([0-9a-fA-F]{2})"  # hex byte
    rb"|\\([^a-zA-Z'])"  # control symbol
    rb"|([{}])"
    rb"|([\r\n]+)"
    rb"|([^\\{}\r\n]+)"
)


@dataclass(frozen=True)
class _State:
    skip: bool = False
    uc: int = 1
    codec: str | None = None  # None: the document code page
    in_fonttbl: bool = False


class _RtfReader:
    """Walks the token stream once; output pieces are str, pending bytes await their codec."""

    def __init__(self) -> None:
        self.doc_codec = "cp1252"
        self.font_codecs: dict[int, str | None] = {}
        self.font_def: int | None = None
        self.out: list[str] = []
        self.pending = bytearray()
        self.pending_codec = "cp1252"
        self.unicode_skip = 0

    def codec_of(self, state: _State) -> str:
        return state.codec or self.doc_codec

    def flush(self) -> None:
        if self.pending:
            self.out.append(bytes(self.pending).decode(self.pending_codec, errors="replace"))
            self.pending.clear()

    def add_bytes(self, raw: bytes, state: _State) -> None:
        codec = self.codec_of(state)
        if codec != self.pending_codec:
            self.flush()
            self.pending_codec = codec
        self.pending += raw

    def add_text(self, text: str) -> None:
        self.flush()
        self.out.append(text)

    def run(self, data: bytes) -> str:
        state = _State()
        stack: list[_State] = []
        destination_next = False
        pos, size = 0, len(data)
        while pos < size:
            match = _TOKEN.match(data, pos)
            if match is None:  # a lone backslash at the very end
                break
            pos = match.end()
            word, param, hexbyte, symbol, brace, newline, text = match.groups()
            if brace is not None:
                self.unicode_skip = 0
                if brace == b"{":
                    stack.append(state)
                elif stack:
                    state = stack.pop()
                destination_next = False
                continue
            if newline is not None:
                continue
            if word is not None:
                name = word.decode("ascii")
                number = int(param) if param is not None else None
                if name == "bin" and number:
                    pos += max(0, number)
                    continue
                if destination_next or name in _SKIP_DESTINATIONS:
                    if name == "fonttbl":
                        state = replace(state, skip=True, in_fonttbl=True)
                    else:
                        state = replace(state, skip=True)
                    destination_next = False
                    continue
                state = self.control_word(name, number, state)
                continue
            destination_next = False
            if symbol is not None:
                sym = symbol.decode("latin-1")
                if sym == "*":
                    destination_next = True
                elif state.skip:
                    pass
                elif sym in "\\{}":
                    self.emit_literal(sym.encode("latin-1"), state)
                elif sym == "~":
                    self.add_text("\u00a0")
                elif sym == "_":
                    self.add_text("\u2011")
                elif sym in "\r\n":
                    self.add_text("\n")
                continue
            if hexbyte is not None:
                if self.unicode_skip:
                    self.unicode_skip -= 1
                elif not state.skip:
                    self.add_bytes(bytes.fromhex(hexbyte.decode("ascii")), state)
                continue
            if text is not None:
                if self.unicode_skip:
                    dropped = min(self.unicode_skip, len(text))
                    text = text[dropped:]
                    self.unicode_skip -= dropped
                if text and not state.skip:
                    self.emit_literal(text, state)
        self.flush()
        joined = "".join(self.out)
        # \uN emits UTF-16 code units: pair the surrogates (U+10332 arrives as two of them)
        return joined.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")

    def emit_literal(self, raw: bytes, state: _State) -> None:
        self.add_bytes(raw, state)

    def control_word(self, name: str, number: int | None, state: _State) -> _State:
        if state.in_fonttbl:
            if name == "f" and number is not None:
                self.font_def = number
                self.font_codecs.setdefault(number, None)
            elif name == "fcharset" and number is not None and self.font_def is not None:
                self.font_codecs[self.font_def] = _FONT_CHARSETS.get(number)
            elif name == "cpg" and number is not None and self.font_def is not None:
                self.font_codecs[self.font_def] = _codepage_codec(number)
            return state
        if name == "ansicpg" and number is not None:
            self.doc_codec = _codepage_codec(number) or self.doc_codec
        elif name == "mac":
            self.doc_codec = "mac_roman"
        elif name == "pc":
            self.doc_codec = "cp437"
        elif name == "pca":
            self.doc_codec = "cp850"
        elif name == "uc" and number is not None:
            return replace(state, uc=max(0, number))
        elif name == "u" and number is not None:
            if not state.skip:
                self.add_text(chr(number % 65536))
            self.unicode_skip = state.uc
        elif name == "f" and number is not None:
            return replace(state, codec=self.font_codecs.get(number))
        elif name == "plain":
            return replace(state, codec=None)
        elif not state.skip and name in _SPECIAL_TEXT:
            self.add_text(_SPECIAL_TEXT[name])
        return state


def _codepage_codec(number: int) -> str | None:
    name = {10000: "mac_roman", 65001: "utf-8"}.get(number, f"cp{number}")
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def rtf_to_text(data: bytes) -> str:
    """Plain text of an RTF document; raises CorruptInputError if it is not RTF."""
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head:
        raise EmptyInputError("RTF file is empty")
    if not head.startswith(b"{\\rtf"):
        raise CorruptInputError("not an RTF document: it does not start with '{\\rtf'")
    text = _RtfReader().run(head)
    lines = [line.rstrip() for line in text.replace("\r", "").split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")


def extract_rtf(data: bytes, settings: Settings) -> list[PageContent]:
    """The whole RTF document as one unit."""
    started = time.perf_counter()
    text = rtf_to_text(data)
    return [text_unit(1, text, ENGINE, started)]
