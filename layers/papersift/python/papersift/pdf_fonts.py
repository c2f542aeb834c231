"""What a page's fonts say about how far any engine can map its glyphs to Unicode.

A text layer is only as good as the font's mapping from codes to characters. Where a font
has no ToUnicode map, the engines fall back on what the font dictionary implies, and that can
be nothing (glyph names like ``/g18``), something only some engines know (a predefined CJK
CMap), or a guess (a subset TrueType font without a ``cmap`` table, whose codes pdfium reads as
WinAnsi). This evidence picks the rung that can decode a page, and corroborates verdicts the
dictionaries cannot give (CJK, Cyrillic, Greek, Hebrew, very short pages).

Cheap by construction: pdfium names the fonts the page's text objects use (and how many
characters each draws); pypdf, already open for the batch, reads only those fonts'
dictionaries; each font dictionary is classified once per batch.
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

import pypdfium2.raw as pdfium_c

from papersift import tex_glyphs

#: kinds of doubt about a font's Unicode mapping
NONSTANDARD_NAMES = "nonstandard_glyph_names"  # /Differences names no Unicode (/g18, /glyph3)
#: Type0 through a predefined CMap, or Identity over a registered CJK collection (Adobe-Japan1,
#: -GB1, -CNS1, -Korea1): the CIDs map to Unicode only through the collection's CMaps, which
#: pdfminer carries and pdfium may lack
PREDEFINED_CMAP = "predefined_cmap"
IDENTITY_WITHOUT_UNICODE = "identity_without_unicode"  # Type0 Identity-H/V, no collection: glyph ids
TRUETYPE_WITHOUT_CMAP = "truetype_without_cmap"  # embedded TrueType with no cmap table
#: an embedded TrueType font with no /Encoding: its codes reach glyphs through the program's own
#: cmap, so they say nothing about characters (a subset's codes are numbered as the tool chose),
#: yet every engine reads them as if they were standard ones ('"7+%-' for 'Phone')
BUILTIN_ENCODING = "builtin_encoding"
#: doubts no text engine can resolve: only OCR reads such glyphs
UNDECODABLE = frozenset({NONSTANDARD_NAMES, TRUETYPE_WITHOUT_CMAP})
#: doubts that leave the text unverified: nothing in the file maps the codes to Unicode, so the
#: characters the engines give are a guess that only the words (or the rendered page) can confirm
UNVERIFIED = UNDECODABLE | {IDENTITY_WITHOUT_UNICODE, BUILTIN_ENCODING}
#: ... of which the fonts whose codes are a program's own numbering (a subsetter's, glyph ids), that
#: every engine reads as if they were ASCII: the ones that turn a word into punctuation and figures
CODE_NUMBERED = frozenset({TRUETYPE_WITHOUT_CMAP, IDENTITY_WITHOUT_UNICODE, BUILTIN_ENCODING})

#: form XObjects nest; deeper than this is not worth walking for fonts
MAX_FORM_DEPTH = 4
_UNI_NAME = re.compile(r"uni(?:[0-9A-F]{4})+|u[0-9A-F]{4,6}")
_SUBSET_TAG = re.compile(r"^[A-Z]{6}\+")
_CJK_COLLECTIONS = frozenset({"Japan1", "GB1", "CNS1", "Korea1", "KR"})
#: TeX's math and symbol font families (Computer Modern, Latin Modern, AMS, Euler, txfonts,
#: pxfonts, newtx, mathabx, stmaryrd, wasy, lasy, rsfs, esint) and Mathematica's: their codes follow
#: TeX's own encodings (OMX, OMS, OML, U), which carry no Unicode map, so pdfium writes some as raw codes
_MATH_FONT = re.compile(
    r"^(?:cm(?:ex|sy|mi|bsy|mib)|lm(?:ex|sy|mi|mathextension|mathsymbols|mathitalic)|ms(?:am|bm)"
    r"|eu(?:fm|fb|sm|sb|ex|rm|rb)|rsfs|stmary|wasy|lasy|(?:tx|px|ntx|npx|zpl)(?:sy|ex|mi|ms)"
    r"|math[abcux]\d|esint|msym|mtsy|mtex|mtmi|mathematica\d)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class FontEvidence:
    #: characters the page's text objects draw (pdfium's count)
    glyphs: int = 0
    #: ... of those, drawn with a font whose Unicode mapping is doubtful
    doubtful_glyphs: int = 0
    #: the doubts found (see the module constants), and the fonts they concern
    kinds: tuple[str, ...] = ()
    fonts: tuple[str, ...] = ()
    #: characters drawn with fonts no text engine can decode (a subset of ``doubtful_glyphs``)
    undecodable_glyphs: int = 0
    #: characters pdfium itself found no Unicode for (``FPDFText_HasUnicodeMapError``)
    unmapped_chars: int = 0
    #: characters drawn in vertical writing (a Type0 font through a -V CMap): read in columns
    vertical_glyphs: int = 0
    #: characters drawn with fonts whose codes nothing in the file maps to Unicode (``UNVERIFIED``)
    unverified_glyphs: int = 0
    #: each doubtful font (base name) with its doubt, for the page's report
    doubts: tuple[tuple[str, str], ...] = ()
    #: characters drawn with fonts embedded in the file (what the dictionaries are asked about)
    embedded_glyphs: int = 0
    #: ... of which with TrueType programs (the fonts whose codes may reach glyphs through the
    #: program's own cmap, with nothing in the file naming their characters)
    truetype_glyphs: int = 0
    #: characters drawn with fonts a dictionary of which (by base name) carries a ToUnicode map:
    #: a map every engine reads alike, where pdfminer's CJK CMaps add nothing (0: not asked)
    to_unicode_glyphs: int = 0

    @property
    def doubtful_share(self) -> float:
        return self.doubtful_glyphs / self.glyphs if self.glyphs else 0.0

    @property
    def undecodable_share(self) -> float:
        return self.undecodable_glyphs / self.glyphs if self.glyphs else 0.0

    @property
    def unverified_share(self) -> float:
        return self.unverified_glyphs / self.glyphs if self.glyphs else 0.0

    @property
    def to_unicode_share(self) -> float:
        return self.to_unicode_glyphs / self.glyphs if self.glyphs else 0.0

    @property
    def truetype_share(self) -> float:
        return self.truetype_glyphs / self.glyphs if self.glyphs else 0.0

    @property
    def vertical_share(self) -> float:
        return self.vertical_glyphs / self.glyphs if self.glyphs else 0.0

    @property
    def unmapped_share(self) -> float:
        return min(self.unmapped_chars / self.glyphs, 1.0) if self.glyphs else 0.0

    def summary(self) -> list[str]:
        """The doubtful fonts as the page report lists them: 'Vera (builtin_encoding)'."""
        return [f"{name} ({kind})" for name, kind in self.doubts]

    def describe(self) -> str:
        kinds, fonts = ", ".join(self.kinds), ", ".join(self.fonts)
        return f"{self.doubtful_share:.0%} of its glyphs are in fonts with {kinds} ({fonts})"


@dataclass(frozen=True)
class UsedFont:
    chars: int  # characters the page draws with it
    program_without_cmap: bool  # an embedded TrueType program with no cmap table
    embedded: bool = False  # the file carries the font's program
    truetype: bool = False  # ... and it is a TrueType program


def bare(function: Any, restype: Any = ctypes.c_int) -> Any:
    """A pypdfium2 binding called without ctypes' conversion of its arguments: about half the cost
    of a call (0.2 against 0.4-0.6 µs), which on the line pass (pdf_engines' ``_line_geometry``,
    some ten calls a line) is a third of its time, and on a walk of a page's text objects (one call
    or two an object) half of it. Its caller passes each argument as C takes it: a handle as the
    ctypes pointer pdfium gave, a structure by ``ctypes.byref``, an ``int`` parameter as a Python
    int, any wider integer as its ctypes type."""
    unconverted = type(function)(ctypes.cast(function, ctypes.c_void_p).value)
    unconverted.restype = restype
    return unconverted


_TEXT_OBJECT_FONT = bare(pdfium_c.FPDFTextObj_GetFont, pdfium_c.FPDFTextObj_GetFont.restype)
_TEXT_OBJECT_TEXT = bare(pdfium_c.FPDFTextObj_GetText, ctypes.c_ulong)
_NO_BUFFER = ctypes.c_ulong(0)  # FPDFTextObj_GetText's buffer length: asking the text's length
_HAS_UNICODE_MAP_ERROR = bare(pdfium_c.FPDFText_HasUnicodeMapError)


#: pdfium's FPDFTextObj_GetText (the text, or only its length) scans the whole text page for the
#: characters of the one object asked: reading every object of a page costs objects x characters
#: visits (8,000 objects of 24,000 characters: 0.6 s; 4,000 of a tax form's ~40 ms; growing with
#: the square), so a page past this many (~0.3 s) is not read object by object (a map's tens of
#: thousands of labels, a hostile page: minutes)
MAX_OBJECT_TEXT_VISITS = 100_000_000


def object_texts_affordable(raw_page: Any, textpage: Any) -> bool:
    """Whether the page's text objects can each be asked their text within MAX_OBJECT_TEXT_VISITS."""
    c = pdfium_c
    return c.FPDFPage_CountObjects(raw_page) * c.FPDFText_CountChars(textpage) <= MAX_OBJECT_TEXT_VISITS


def fonts_in_use(raw_page: Any, textpage: Any) -> tuple[dict[str, UsedFont], int]:
    """Base font name -> what the page draws with it, over its text objects (forms included),
    and how many of the page's characters pdfium found no Unicode for."""
    c = pdfium_c
    chars: dict[str, int] = {}
    without_cmap: dict[str, bool] = {}
    embedded: dict[str, bool] = {}
    truetype: dict[str, bool] = {}
    #: font handle's address -> its base name: a page's text objects share a few handles, and
    #: naming one (a buffer, a regex) costs more than the rest of an object's work
    names: dict[int, str] = {}
    address = ctypes.c_void_p.from_buffer
    get_font, get_text, no_buffer = _TEXT_OBJECT_FONT, _TEXT_OBJECT_TEXT, _NO_BUFFER  # one call per object
    for obj in _text_objects(raw_page, False, 0):
        font = get_font(obj)
        if not font:
            continue
        key = address(font).value or 0
        name = names.get(key)
        if name is None:
            # pdfium keeps some fonts' subset tag (KXRNCQ+AokinMincho): dropped, as base_font_name
            # drops it from the dictionaries' names, so the two sides meet
            name = names[key] = _base_name(font)
            if name not in without_cmap:  # a name's facts are its first handle's
                without_cmap[name], truetype[name] = _truetype_program(font)
                embedded[name] = bool(c.FPDFFont_GetIsEmbedded(font))
        # the text's length in UTF-16 bytes, NUL included: a character count without decoding it;
        # an object counts at least once, also where pdfium could not read its text
        chars[name] = chars.get(name, 0) + max(get_text(obj, textpage, None, no_buffer) // 2 - 1, 1)
    has_error = _HAS_UNICODE_MAP_ERROR
    unmapped = sum(has_error(textpage, i) == 1 for i in range(c.FPDFText_CountChars(textpage)))
    return {name: UsedFont(n, without_cmap[name], embedded[name], truetype[name]) for name, n in chars.items()}, \
        unmapped


#: symbol and dingbat fonts by name: their glyphs are no letters, whatever their map says
_SYMBOL_FONT = re.compile(r"symbol|dingbat|wingding|webding|^mt-?extra", re.IGNORECASE)
#: monospaced (code) fonts by name, for those whose descriptor does not say FixedPitch
_MONOSPACE_FONT = re.compile(r"courier|mono|^cmtt|^lmtt|typewriter|consol|menlo|inconsolata|code", re.IGNORECASE)
_FIXED_PITCH_FLAG = 1  # /FontDescriptor /Flags bit 1


def is_symbol_font(name: str) -> bool:
    """Whether a base font name is a symbol or dingbat font's (Symbol, ZapfDingbats, Wingdings)."""
    return _SYMBOL_FONT.search(name) is not None


def is_monospace_font(name: str) -> bool:
    """Whether a base font name is a code font's by its name (Courier, DejaVuSansMono, CMTT10)."""
    return _MONOSPACE_FONT.search(name) is not None


def font_texts(raw_page: Any, textpage: Any) -> list[tuple[str, str, bool]]:
    """(base font name, text, monospaced) of each of the page's text objects (forms included) that
    has text, in content order: the page's text told apart by the font that draws it. Monospaced:
    the descriptor says FixedPitch, or the name is a code font's (Courier, *Mono, CMTT): what
    code, registers and identifiers are set in. None on a page whose objects cost too much to read
    (``object_texts_affordable``)."""
    found: list[tuple[str, str, bool]] = []
    if not object_texts_affordable(raw_page, textpage):
        return found
    names: dict[int, tuple[str, bool]] = {}
    address = ctypes.c_void_p.from_buffer
    get_font, get_text = _TEXT_OBJECT_FONT, _TEXT_OBJECT_TEXT
    buffer = (ctypes.c_ushort * 256)()
    length = ctypes.c_ulong(ctypes.sizeof(buffer))
    for obj in _text_objects(raw_page, False, 0):
        font = get_font(obj)
        if not font:
            continue
        # one call an object (each scans the whole page): pdfium writes the text where it fits and
        # says its size (bytes, the NUL included) either way; asked again only when it did not fit
        size = get_text(obj, textpage, buffer, length)
        if size <= 2:
            continue
        if size > length.value:
            buffer = (ctypes.c_ushort * (size // 2 + 1))()
            length = ctypes.c_ulong(ctypes.sizeof(buffer))
            get_text(obj, textpage, buffer, length)
        key = address(font).value or 0
        named = names.get(key)
        if named is None:
            name = _base_name(font)
            fixed = bool(pdfium_c.FPDFFont_GetFlags(font) & _FIXED_PITCH_FLAG) or is_monospace_font(name)
            named = names[key] = (name, fixed)
        found.append((named[0], ctypes.string_at(buffer, size - 2).decode("utf-16-le", "replace"), named[1]))
    return found


def sampled_fonts_in_use(textpage: Any, samples: int) -> tuple[dict[str, UsedFont], int]:
    """:func:`fonts_in_use` estimated from at most ``samples`` characters spread over the page:
    what each font draws, in sampled characters, and how many of those pdfium found no Unicode
    for. The cost does not grow with the page (a page of a tax form draws 4,000 text objects,
    ~40 ms to walk), for the pages whose words vouch for little but whose text is sound."""
    c = pdfium_c
    count = c.FPDFText_CountChars(textpage)
    step = max(count // samples, 1)
    chars: dict[str, int] = {}
    seen: dict[int, tuple[str, bool, bool, bool]] = {}  # font handle -> name, without cmap, embedded, truetype
    unmapped = 0
    for index in range(step // 2, count, step):
        if c.FPDFText_GetUnicode(textpage, index) <= 32 or c.FPDFText_IsGenerated(textpage, index) == 1:
            continue
        obj = c.FPDFText_GetTextObject(textpage, index)
        font = c.FPDFTextObj_GetFont(obj) if obj else None
        if not font:
            continue
        key = ctypes.cast(font, ctypes.c_void_p).value or 0
        if key not in seen:
            without_cmap, truetype = _truetype_program(font)
            seen[key] = (_base_name(font), without_cmap, bool(c.FPDFFont_GetIsEmbedded(font)), truetype)
        name = seen[key][0]
        chars[name] = chars.get(name, 0) + 1
        unmapped += c.FPDFText_HasUnicodeMapError(textpage, index) == 1
    facts = {name: (without, embedded, truetype) for name, without, embedded, truetype in seen.values()}
    return {name: UsedFont(n, *facts[name]) for name, n in chars.items()}, unmapped


def _truetype_program(font: Any) -> tuple[bool, bool]:
    """(no ``cmap`` in its table directory, is TrueType) for a font's embedded program (pdfium
    hands over the decoded program, so no stream is decoded in Python)."""
    c = pdfium_c
    if not c.FPDFFont_GetIsEmbedded(font):
        return False, False
    size = ctypes.c_size_t()
    if not c.FPDFFont_GetFontData(font, None, 0, ctypes.byref(size)) or size.value < 12:
        return False, False
    program = (ctypes.c_uint8 * size.value)()
    c.FPDFFont_GetFontData(font, program, size.value, ctypes.byref(size))
    head = bytes(program)
    if head[:4] not in (b"\x00\x01\x00\x00", b"true"):  # not TrueType (CFF, Type 1)
        return False, False
    return b"cmap" not in _table_tags(head), True


def _text_objects(parent: Any, is_form: bool, depth: int) -> Iterator[Any]:
    c = pdfium_c
    count, get = (c.FPDFFormObj_CountObjects, c.FPDFFormObj_GetObject) if is_form else (
        c.FPDFPage_CountObjects, c.FPDFPage_GetObject)
    for i in range(count(parent)):
        obj = get(parent, i)
        kind = c.FPDFPageObj_GetType(obj)
        if kind == c.FPDF_PAGEOBJ_TEXT:
            yield obj
        elif kind == c.FPDF_PAGEOBJ_FORM and depth < MAX_FORM_DEPTH:
            yield from _text_objects(obj, True, depth + 1)


def font_dictionaries(page: Any, until_found: AbstractSet[str] = frozenset()) -> Iterator[Any]:
    """The font dictionaries of a pypdf page, then of the forms it draws; the forms (whose
    images pypdf would read to tell them from forms) only while a name in ``until_found``
    has not come up."""
    missing = set(until_found)
    seen: set[int] = set()
    stack = [(page.get("/Resources"), 0)]
    while stack:
        resources, depth = stack.pop()
        resources = _resolve(resources)
        if not isinstance(resources, Mapping) or id(resources) in seen:
            continue
        seen.add(id(resources))
        fonts = _resolve(resources.get("/Font"))
        if isinstance(fonts, Mapping):
            for ref in fonts.values():
                font = _resolve(ref)
                if isinstance(font, Mapping):
                    missing.discard(base_font_name(font))
                    yield font
        xobjects = _resolve(resources.get("/XObject"))
        if missing and isinstance(xobjects, Mapping) and depth < MAX_FORM_DEPTH:
            for ref in xobjects.values():
                xobject = _resolve(ref)
                if isinstance(xobject, Mapping) and xobject.get("/Subtype") == "/Form":
                    stack.append((xobject.get("/Resources"), depth + 1))


def font_doubt(font: Mapping[str, Any], program_without_cmap: bool) -> str | None:
    """The kind of doubt about one font dictionary's Unicode mapping, or None; whether its
    embedded TrueType program lacks a cmap is pdfium's finding (:class:`UsedFont`)."""
    if "/ToUnicode" in font:
        return None
    subtype = font.get("/Subtype")
    encoding = _resolve(font.get("/Encoding"))
    if subtype == "/Type0":
        descendant = _descendant(font)
        if encoding not in ("/Identity-H", "/Identity-V") and isinstance(encoding, str):
            return PREDEFINED_CMAP
        if descendant is not None and _collection(descendant) in _CJK_COLLECTIONS:
            return PREDEFINED_CMAP
        return TRUETYPE_WITHOUT_CMAP if program_without_cmap else IDENTITY_WITHOUT_UNICODE
    if isinstance(encoding, Mapping):
        differences = _resolve(encoding.get("/Differences")) or []
        names = [str(item)[1:] for item in differences if isinstance(item, str) and str(item).startswith("/")]
        if any(not _standard_glyph_name(name) for name in names if name != ".notdef"):
            return NONSTANDARD_NAMES
    if subtype == "/TrueType" and program_without_cmap:
        return TRUETYPE_WITHOUT_CMAP
    if subtype == "/TrueType" and encoding is None and _embeds_program(font):
        # no /Encoding: the codes go through the program's own cmap (a symbolic font's, or a
        # subset's renumbered one); a font the file does not embed is drawn with a system font
        # through the standard encoding, whose codes do mean characters
        return BUILTIN_ENCODING
    return None


def is_math_font(name: str) -> bool:
    """Whether a base font name (subset tag allowed) is one of TeX's math or symbol fonts, whose
    unmapped codes are delimiters and symbols, not a broken layer."""
    return _MATH_FONT.match(_SUBSET_TAG.sub("", name)) is not None


#: what pdfium writes for a glyph it found no Unicode for, and text never holds: the glyph's code
#: as a C0 or C1 control character. Not tab, line feed, form feed or carriage return (those codes
#: cannot be told from pdfium's own line breaks), nor U+0002 (pdfium's mark for a hyphen it kept
#: at a line end, which every reading drops)
RAW_CODE = re.compile(r"[\x00\x01\x03-\x08\x0b\x0e-\x1f\x7f-\x9f]")
_ASCII_RAW_CODES = bytes(c for c in range(128) if RAW_CODE.match(chr(c)))  # RAW_CODE as a byte table
#: how far from where the text puts a raw code its character is looked for among pdfium's (the
#: text skips characters outside the page box and adds line breaks of its own)
RAW_CODE_REACH = 48
RAW_CODE_MAX_REACH = 1024
#: up to this many raw codes on a page are looked up one by one (a handful of pdfium calls each);
#: more are first checked against the page's fonts (a few calls per text object)
RAW_CODES_LOOKED_UP = 64


@dataclass(frozen=True)
class MathGlyphs:
    """The raw codes of TeX math fonts on a page, read as the symbols they draw."""

    mapped: int  # turned into their characters
    dropped: int  # unknown symbols, dropped from the text
    fonts: tuple[str, ...]

    def describe(self) -> str:
        count = self.mapped + self.dropped
        dropped = f", {self.dropped} unknown dropped" if self.dropped else ""
        return (f"{count} glyph code{'s' if count > 1 else ''} of math fonts ({', '.join(self.fonts)}) read as "
                f"symbols{dropped}")


def holds_raw_codes(text: str) -> bool:
    """Whether pdfium's text of a page holds glyph codes it found no Unicode for (a byte-table pass
    on ASCII text, the common case, is many times cheaper than the regex)."""
    if text.isascii():
        encoded = text.encode("ascii")
        return len(encoded.translate(None, _ASCII_RAW_CODES)) != len(encoded)
    return RAW_CODE.search(text) is not None


def draws_with_math_font(raw_page: Any, known: dict[int, bool]) -> bool:
    """Whether any text object of the page (forms included) uses one of TeX's math fonts: a page
    without one has no math glyphs to read, however many raw codes its text holds (a broken font's
    page is nothing but raw codes, and costs a search each). ``known``: font handle's address ->
    is a math font, kept for the batch (pdfium keeps one handle per font of a document)."""
    get_font = pdfium_c.FPDFTextObj_GetFont
    return any(draws_math(get_font(obj), known) for obj in _text_objects(raw_page, False, 0))


def draws_math(font: Any, known: dict[int, bool]) -> bool:
    """Whether pdfium's font handle ``font`` is one of TeX's math fonts (:func:`is_math_font` of its
    base name); ``known`` caches the answer by the handle's address for the batch."""
    if not font:
        return False
    key = ctypes.cast(font, ctypes.c_void_p).value or 0
    if key not in known:
        known[key] = is_math_font(_base_name(font))
    return known[key]


def read_math_glyphs(textpage: Any, text: str,
                     glyph_name: Callable[[str, Any, int], str | None]) -> tuple[str, MathGlyphs | None]:
    """``text`` (pdfium's text of ``textpage``) with the raw codes that TeX math fonts drew read as
    their symbols (tex_glyphs.math_glyph) or dropped; raw codes of other fonts stay, for the verdict
    to judge. ``glyph_name(base_font, font_handle, code)``: the glyph's name in that font, asked
    only for the math fonts' raw codes. None when no math font drew one."""
    located = _locate_raw_codes(textpage, text)
    fonts: dict[int, tuple[str, Any]] = {}  # font handle's address -> (base font name, the handle)
    glyphs: dict[tuple[str, int], str | None] = {}  # (font, code) -> its character; None: not a math font

    def glyph(code: int, index: int) -> str | None:
        name, font = _font_of(textpage, index, fonts)
        key = (name, code)
        if key not in glyphs:
            math = bool(name) and is_math_font(name)
            glyphs[key] = tex_glyphs.math_glyph(name, code, glyph_name(name, font, code)) if math else None
        return glyphs[key]

    if located is not None:
        replacements = {position: glyph(code, index) for position, code, index in located}
    else:
        # the text is not in pdfium's character order (glyphs turned on the page): a code is read
        # only where every glyph on the page drawing it is the same math symbol
        by_code: dict[int, set[str | None]] = {}
        get = pdfium_c.FPDFText_GetUnicode
        for index in range(pdfium_c.FPDFText_CountChars(textpage)):
            code = get(textpage, index)
            if code < 0xA0 and RAW_CODE.match(chr(code)):
                by_code.setdefault(code, set()).add(glyph(code, index))
        unanimous = {code: found.pop() for code, found in by_code.items() if len(found) == 1}
        replacements = {m.start(): unanimous.get(ord(m.group())) for m in RAW_CODE.finditer(text)}
    read = {position: char for position, char in replacements.items() if char is not None}
    if not read:
        return text, None
    parts: list[str] = []
    last = 0
    for position in sorted(read):
        parts += [text[last:position], read[position]]
        last = position + 1
    parts.append(text[last:])
    math_fonts = sorted({name for (name, _), char in glyphs.items() if char is not None})
    dropped = sum(not char for char in read.values())
    return "".join(parts), MathGlyphs(mapped=len(read) - dropped, dropped=dropped, fonts=tuple(math_fonts))


def _locate_raw_codes(textpage: Any, text: str) -> list[tuple[int, int, int]] | None:
    """(position in ``text``, code, pdfium character index) of each raw code in the text, found by a
    search outwards from where the text puts it, in pdfium's character order; None when one is not
    found there (the text was read in another order). A few calls a code, not one per character."""
    get = pdfium_c.FPDFText_GetUnicode
    count = pdfium_c.FPDFText_CountChars(textpage)
    # the text leaves out characters (outside the page box) and adds line breaks of its own: a
    # code is looked for as far from its place as the two differ in length, and a little more
    reach = RAW_CODE_REACH + min(abs(count - len(text)), RAW_CODE_MAX_REACH)
    scale = count / max(len(text), 1)
    located: list[tuple[int, int, int]] = []
    low = 0
    for match in RAW_CODE.finditer(text):
        code = ord(match.group())
        # where the last code was found says where this one is: the drift is local
        guess = match.start() + located[-1][2] - located[-1][0] if located else round(match.start() * scale)
        for index in _outward(max(guess, low), low, count, reach):
            if get(textpage, index) == code:
                break
        else:
            return None
        located.append((match.start(), code, index))
        low = index + 1
    return located


def _outward(guess: int, low: int, count: int, reach: int) -> Iterator[int]:
    """Indices from ``guess`` outwards, within ``[low, count)`` and ``reach`` of it."""
    for step in range(reach):
        for index in (guess + step, guess - step) if step else (guess,):
            if low <= index < count:
                yield index


def _font_of(textpage: Any, index: int, fonts: dict[int, tuple[str, Any]]) -> tuple[str, Any]:
    """(base font name, subset tag stripped, and pdfium's handle) of character ``index``'s font;
    ("", None) when pdfium has none."""
    c = pdfium_c
    obj = c.FPDFText_GetTextObject(textpage, index)
    font = c.FPDFTextObj_GetFont(obj) if obj else None
    if not font:
        return "", None
    key = ctypes.cast(font, ctypes.c_void_p).value or 0
    if key not in fonts:
        fonts[key] = (_base_name(font), font)
    return fonts[key]


def token_fonts(textpage: Any, tokens: Sequence[str]) -> dict[str, str]:
    """Token -> base font name (subset tag stripped) of its first character where pdfium's text
    holds it (its text search, case and whole words aside); tokens it does not find are left out."""
    c = pdfium_c
    found: dict[str, str] = {}
    fonts: dict[int, tuple[str, Any]] = {}
    for token in tokens:
        if token in found:
            continue
        units = token.encode("utf-16-le")
        needle = (ctypes.c_ushort * (len(units) // 2 + 1))(*memoryview(units).cast("H"), 0)
        search = c.FPDFText_FindStart(textpage, needle, 0, 0)
        if not search:
            continue
        try:
            if c.FPDFText_FindNext(search):
                name, _ = _font_of(textpage, c.FPDFText_GetSchResultIndex(search), fonts)
                if name:
                    found[token] = name
        finally:
            c.FPDFText_FindClose(search)
    return found


def _raw_base_name(font: Any) -> str:
    """pdfium's base font name of a font handle, as it gives it (a subset tag kept where it has one)."""
    size = pdfium_c.FPDFFont_GetBaseFontName(font, None, 0)
    buffer = ctypes.create_string_buffer(max(size, 1))
    pdfium_c.FPDFFont_GetBaseFontName(font, buffer, size)
    return buffer.value.decode("latin-1")


def _base_name(font: Any) -> str:
    """pdfium's base font name of a font handle, subset tag stripped."""
    return _SUBSET_TAG.sub("", _raw_base_name(font))


#: an entry of a Type 1 program's own encoding: ``dup 18 /parenleftbigg put``
_PROGRAM_ENCODING = re.compile(rb"dup\s+(\d+)\s*/([^\s/\[\]{}()<>]+)\s+put")


def program_glyph_names(font: Any) -> dict[int, str]:
    """Code -> glyph name of an embedded Type 1 program's own encoding (its clear-text part, before
    ``eexec``): what pdfium draws a code with when the font dictionary names no other encoding, as
    TeX's fonts from pdfTeX and dvipdfm do. Empty for other programs (CFF, TrueType) and for one
    in StandardEncoding. pdfium hands over the program: no stream is decoded in Python."""
    c = pdfium_c
    if not font or not c.FPDFFont_GetIsEmbedded(font):
        return {}
    size = ctypes.c_size_t()
    if not c.FPDFFont_GetFontData(font, None, 0, ctypes.byref(size)) or size.value < 16:
        return {}
    program = (ctypes.c_uint8 * size.value)()
    c.FPDFFont_GetFontData(font, program, size.value, ctypes.byref(size))
    data = bytes(program)
    if not data.startswith((b"%!", b"\x80\x01")):  # not a Type 1 program
        return {}
    clear = data[: data.find(b"eexec")] if b"eexec" in data else data
    return {int(code): name.decode("latin-1") for code, name in _PROGRAM_ENCODING.findall(clear) if int(code) < 256}


def differences_of(font: Mapping[str, Any]) -> dict[int, str]:
    """Code -> glyph name of a simple font's /Encoding /Differences (empty without one)."""
    encoding = _resolve(font.get("/Encoding"))
    if not isinstance(encoding, Mapping):
        return {}
    names: dict[int, str] = {}
    code = 0
    for item in _resolve(encoding.get("/Differences")) or []:
        item = _resolve(item)
        if isinstance(item, int):
            code = item
        elif isinstance(item, str) and item.startswith("/"):
            names[code] = item[1:]
            code += 1
    return names


def writes_vertically(font: Mapping[str, Any]) -> bool:
    encoding = _resolve(font.get("/Encoding"))
    return font.get("/Subtype") == "/Type0" and isinstance(encoding, str) and encoding.endswith("-V")


def base_font_name(font: Mapping[str, Any]) -> str:
    """The name pdfium reports for a font dictionary: no subset tag, and a Type0 font's name
    without the ``-<CMap>`` suffix its /BaseFont carries."""
    name = _SUBSET_TAG.sub("", str(font.get("/BaseFont", ""))[1:])
    encoding = _resolve(font.get("/Encoding"))
    if font.get("/Subtype") == "/Type0" and isinstance(encoding, str) and name.endswith("-" + encoding[1:]):
        name = name[: -len(encoding)]
    return name


#: what a font dictionary's /Encoding says, as the page report names it (DictionaryFacts.encoding)
ENCODING_BUILTIN = "builtin"  # none: the codes go through the font program's own encoding
ENCODING_STANDARD = "standard"  # a named simple encoding (WinAnsi, MacRoman, Standard, ...)
ENCODING_DIFFERENCES = "differences"  # a simple encoding with /Differences
ENCODING_IDENTITY_H = "identity_h"
ENCODING_IDENTITY_V = "identity_v"
ENCODING_PREDEFINED_CMAP = "predefined_cmap"  # a Type0 font through a named CMap (UniJIS-UCS2-H)
ENCODING_EMBEDDED_CMAP = "embedded_cmap"  # a Type0 font through a CMap stream in the file
_SYMBOLIC_FLAG = 1 << 2  # /FontDescriptor /Flags bit 3


@dataclass(frozen=True)
class ProgramFacts:
    """What pdfium says of one of a document's fonts (its handle): read once per batch."""

    name: str  # base font name, subset tag stripped
    subset: bool  # pdfium's name kept a subset tag (ABCDEF+); it drops the tag of most subsets
    embedded: bool  # the file carries the program (a Type 3 font's glyphs always are)
    type3: bool  # glyphs drawn by content streams: embedded, and no program pdfium can hand over
    symbolic: bool  # the descriptor's symbolic flag (pdfium's flags)
    math: bool  # one of TeX's math or symbol fonts (is_math_font)


def program_facts(font: Any) -> ProgramFacts:
    """The :class:`ProgramFacts` of a pdfium font handle (a few calls; no program is copied)."""
    c = pdfium_c
    raw_name = _raw_base_name(font)
    name = _SUBSET_TAG.sub("", raw_name)
    embedded = bool(c.FPDFFont_GetIsEmbedded(font))
    program = ctypes.c_size_t()
    type3 = embedded and not (c.FPDFFont_GetFontData(font, None, 0, ctypes.byref(program)) and program.value)
    return ProgramFacts(name=name, subset=name != raw_name, embedded=embedded, type3=type3,
                        symbolic=bool(c.FPDFFont_GetFlags(font) & _SYMBOLIC_FLAG), math=is_math_font(name))


def sampled_font_handles(raw_page: Any, textpage: Any, samples: int) -> dict[int, tuple[Any, int, int]]:
    """Font handle's address -> (the handle, sampled characters it draws, ... of which pdfium found
    no Unicode for), over at most ``samples`` characters spread over the page: the fonts the page's
    text uses, at a cost that does not grow with the page (fonts drawing only a few of a long
    page's characters may go unseen). A page of which pdfium read no character (a CMap it lacks)
    has its text objects' fonts listed with no characters."""
    c = pdfium_c
    count = c.FPDFText_CountChars(textpage)
    step = max(count // samples, 1)
    found: dict[int, tuple[Any, int, int]] = {}
    if count <= 0:
        for obj in _text_objects(raw_page, False, 0):
            font = c.FPDFTextObj_GetFont(obj)
            if font:
                found.setdefault(ctypes.cast(font, ctypes.c_void_p).value or 0, (font, 0, 0))
        return found
    text_object, font_of, unmapped_at = c.FPDFText_GetTextObject, c.FPDFTextObj_GetFont, c.FPDFText_HasUnicodeMapError
    address = ctypes.c_void_p.from_buffer  # the handle's address, a third of ctypes.cast's cost
    for index in range(step // 2, count, step):
        obj = text_object(textpage, index)
        font = font_of(obj) if obj else None
        if not font:
            continue
        key = address(font).value or 0
        _, chars, unmapped = found.get(key, (font, 0, 0))
        found[key] = (font, chars + 1, unmapped + (unmapped_at(textpage, index) == 1))
    return found


@dataclass(frozen=True)
class DictionaryFacts:
    """What one font dictionary says about itself (pypdf), read once per document."""

    name: str  # base_font_name
    subset: bool  # the /BaseFont carries a subset tag
    subtype: str  # Type1, TrueType, Type0, Type3, MMType1 ...
    encoding: str  # one of the ENCODING_ kinds
    cmap: str  # the predefined CMap's or named encoding's name ('' when none)
    to_unicode: bool
    vertical: bool  # vertical writing (a Type0 font through a -V CMap)


def dictionary_facts(font: Mapping[str, Any]) -> DictionaryFacts:
    """The :class:`DictionaryFacts` of a pypdf font dictionary."""
    subtype = str(font.get("/Subtype", ""))[1:]
    kind, cmap = _encoding_kind(subtype, _resolve(font.get("/Encoding")))
    return DictionaryFacts(name=base_font_name(font),
                           subset=_SUBSET_TAG.match(str(font.get("/BaseFont", ""))[1:]) is not None,
                           subtype=subtype, encoding=kind, cmap=cmap, to_unicode="/ToUnicode" in font,
                           vertical=writes_vertically(font))


@dataclass(frozen=True, eq=False)
class FontUse:
    """One font a page's text uses, for the page report: what pdfium says of it, how many of the
    sampled characters it draws and leaves without Unicode, and what its dictionary says (None when
    the document's font dictionaries were not read: pypdf is opened only where the ladder needs it).
    Compared by identity: PdfHandle keeps one for each font and counts, and hashing the facts on
    every page would cost more than finding them."""

    program: ProgramFacts
    sampled_chars: int
    unmapped_chars: int
    dictionary: DictionaryFacts | None


def _encoding_kind(subtype: str, encoding: Any) -> tuple[str, str]:
    if subtype == "Type0":
        if encoding in ("/Identity-H", "/Identity-V"):
            return (ENCODING_IDENTITY_H if encoding == "/Identity-H" else ENCODING_IDENTITY_V), ""
        if isinstance(encoding, str):
            return ENCODING_PREDEFINED_CMAP, str(encoding)[1:]
        return ENCODING_EMBEDDED_CMAP, ""
    if isinstance(encoding, str):
        return ENCODING_STANDARD, str(encoding)[1:]
    if isinstance(encoding, Mapping):
        base = _resolve(encoding.get("/BaseEncoding"))
        base_name = str(base)[1:] if isinstance(base, str) else ""
        return (ENCODING_DIFFERENCES if "/Differences" in encoding else ENCODING_STANDARD), base_name
    return ENCODING_BUILTIN, ""


def _embeds_program(font: Mapping[str, Any]) -> bool:
    descriptor = _resolve(font.get("/FontDescriptor"))
    return isinstance(descriptor, Mapping) and any(key in descriptor for key in ("/FontFile2", "/FontFile3"))


def _collection(descendant: Mapping[str, Any]) -> str:
    info = _resolve(descendant.get("/CIDSystemInfo"))
    return str(_resolve(info.get("/Ordering", ""))) if isinstance(info, Mapping) else ""


def _descendant(font: Mapping[str, Any]) -> Mapping[str, Any] | None:
    descendants = _resolve(font.get("/DescendantFonts"))
    if isinstance(descendants, list) and descendants:
        first = _resolve(descendants[0])
        return first if isinstance(first, Mapping) else None
    return None


def _table_tags(program: bytes) -> list[bytes]:
    if len(program) < 12:
        return []
    tables = int.from_bytes(program[4:6], "big")
    return [program[12 + 16 * i : 16 + 16 * i] for i in range(min(tables, (len(program) - 12) // 16))]


def _standard_glyph_name(name: str) -> bool:
    """A glyph name that maps to Unicode by the Adobe Glyph List rules (AGL names, uniXXXX,
    uXXXXXX, ligatures joined by ``_``, suffixes after ``.``), or one of TeX's math glyph names
    (``parenleftbigg``: tex_glyphs reads those)."""
    from pdfminer.glyphlist import glyphname2unicode

    base = name.split(".", 1)[0]
    if not base:
        return False
    return all(part in glyphname2unicode or _UNI_NAME.fullmatch(part) is not None
               or tex_glyphs.character_of(part) is not None for part in base.split("_"))


def _resolve(value: Any) -> Any:
    return value.get_object() if hasattr(value, "get_object") else value
