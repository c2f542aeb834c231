"""A paged document's structure for document.md (issue 19): running headers, footers and page
numbers set apart, headings from the PDF's outline, the other lines joined into paragraphs and
list items with end-of-line hyphenation repaired where the evidence allows. Decided from evidence across the whole
document, never from one page; text.txt is never touched, only the Markdown and the page files'
``blocks``."""

from __future__ import annotations

import dataclasses
import importlib
import math
import operator
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

from papersift.markdown import plain_text

#: roles of the lines kept out of document.md's body
HEADER, FOOTER, PAGE_NUMBER, HEADING = "header", "footer", "page_number", "heading"
PARAGRAPH, LIST_ITEM = "paragraph", "list_item"
#: a table found on the page (pdfplumber), in place of the lines its cells were read as
TABLE = "table"
#: a paragraph that labels a table or figure (``Table 2: ...``, ``Fig. 3. ...``)
CAPTION = "caption"
#: text OCR read from a picture on the page (after the page's own text)
PICTURE_TEXT = "picture_text"
#: roles document.md writes as paragraphs
_PARAGRAPH_ROLES = frozenset({PARAGRAPH, CAPTION, PICTURE_TEXT})
#: a caption: a label, its number and a separator before the words (``Table 1: Revenue``,
#: ``Figure 3. The harbour``, ``Abb. 2 – Karte``); prose that names a table (``Table 2 shows``)
#: has no separator (a bold line that merely starts so is no heading: ``_CAPTION`` below)
_CAPTION_ROLE = re.compile(r"(?i)^(?:table|tab\.|figure|fig\.|chart|exhibit|plate|map|diagram|illustration|"
                           r"tabelle|abbildung|abb\.|tableau|figura|tabla|cuadro|tabella|grafico|afbeelding|tabel)"
                           r"\s*(?:\d{1,3}|[ivx]{1,6}|[a-z])(?:[.\-]\d{1,3})*\s*[:.\-–—|]\s+\S")
#: ... at most this long
MAX_CAPTION_CHARS = 400
#: lines kept as they are, one a line: a page of no prose (a table of figures, a form, a list of dates)
LINES = "lines"
SET_APART = frozenset({HEADER, FOOTER, PAGE_NUMBER})
#: a running line sits in the first or last this many lines of a page
EDGE_LINES = 2
#: ... and repeats on this share of the pages, or on this many pages where they lie close together
RUNNING_SHARE = 0.3
MIN_RUNNING_PAGES = 3
#: pages a section's running head spans at least half of (a head per section, not per document)
RUN_DENSITY = 0.5
#: outline entries read at most (a hostile outline may list millions)
MAX_OUTLINE_ENTRIES = 5000
#: ... and of each title this many characters (a title is a line or two, never a chapter)
MAX_TITLE_CHARS = 500
#: Markdown has six heading levels
MAX_HEADING_LEVEL = 6
#: a heading may be broken over this many lines of the page
MAX_HEADING_LINES = 3

_ROMAN = re.compile(r"(?i)^(?=[ivxlcdm]+$)m{0,3}(cm|cd|d?c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})$")
#: a run of digits, or a word of roman-numeral letters (``\d+|\b[ivxlcdmIVXLCDM]+\b``): written to
#: start with one class of characters, so that the regex engine skips any other character at C speed
#: (an alternation of classes is tried at every position), the word's boundary before it looked back at
_NUMBER_TOKEN = re.compile(r"[\divxlcdmIVXLCDM](?:(?<=\d)\d*|(?<!\w.)[ivxlcdmIVXLCDM]*\b)")
_BARE_NUMBER = re.compile(r"^[\s\-–—.·|()\[\]]*(\d{1,5}|[ivxlcdmIVXLCDM]{1,8})[\s\-–—.·|()\[\]]*$")
_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "«": '"', "»": '"', "‘": "'", "’": "'", "‐": "-",
                         "‑": "-", "–": "-", "—": "-", "\u00a0": " "})


@dataclass(frozen=True)
class OutlineEntry:
    """One entry of a PDF's outline (bookmarks): its title, nesting level (1 = top) and the page
    it points at (1-based; 0 when it points nowhere)."""

    title: str
    level: int
    page: int


@dataclass
class Block:
    """A line of a page with a role in the document's structure: ``line`` is its index among the
    page's body lines (``PageContent.body_lines``), ``lines`` how many it spans (a heading may be
    broken), ``level`` a heading's level, ``bbox`` its box on the page as displayed (fractions of
    the page: x0, y0, x1, y1 from the top left) where the engine gave one: an OCR'd page's from its
    layout, a PDF's text-layer page's from its lines' boxes (``box_blocks``); None elsewhere (DOCX,
    ODT, HTML, ... have no geometry)."""

    role: str
    text: str
    line: int
    lines: int = 1
    level: int = 0
    bbox: list[float] | None = None
    #: a table block's index among its page's tables (``PageContent.tables``)
    table: int | None = None


def _roman_value(token: str) -> int | None:
    if not token or not _ROMAN.match(token):
        return None
    values = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}
    total, previous = 0, 0
    for char in reversed(token.lower()):
        value = values[char]
        total += -value if value < previous else value
        previous = max(previous, value)
    return total


def _running_key(line: str) -> str:
    """The line with its numbers (digits, roman numerals) as one mark: a running head reads the
    same on every page but for the page number."""
    def mark(match: re.Match[str]) -> str:
        token = match.group(0)
        return "#" if token.isdigit() or _roman_value(token) is not None else token

    return " ".join(_NUMBER_TOKEN.sub(mark, line).casefold().split())


def _bare_number(line: str) -> int | None:
    """The number a line holds alone (``12``, ``- 12 -``, ``xii``), else None."""
    found = _BARE_NUMBER.match(line)
    if found is None:
        return None
    token = found.group(1)
    return int(token) if token.isdigit() else _roman_value(token)


#: the most digits of a page number
_PAGE_DIGITS = 5


def _end_number(line: str) -> int | None:
    """The page number a running head starts or ends with (``12  CHAPTER 4``, ``4.3. SECTION  13``):
    its first or last word, of digits alone, with more of the line beside it."""
    if not any(map(str.isalpha, line)):  # a row of figures is no head
        return None
    words = line.split(None, 1)
    if len(words) == 2 and len(words[0]) <= _PAGE_DIGITS and words[0].isdecimal():
        return int(words[0])
    words = line.rsplit(None, 1)
    if len(words) == 2 and len(words[1]) <= _PAGE_DIGITS and words[1].isdecimal():
        return int(words[1])
    return None


#: what ``_peel`` reads of an edge line: the number it holds alone, the page number it starts or
#: ends with, its running key (None: a row of figures, no running head)
_EdgeFacts = tuple[int | None, int | None, str | None]


def _edge_facts(line: str) -> _EdgeFacts:
    bare = _bare_number(line)
    if bare is not None:
        return bare, None, None
    key = _running_key(line)
    return None, _end_number(line), key if any(map(str.isalpha, key)) else None


def _edges(lines: Sequence[str], taken: dict[int, str], inner: bool) -> list[tuple[int, str]]:
    """(index, position) of a page's non-blank lines in its first and last ``EDGE_LINES``, lines
    already set apart aside; none on a page of fewer than three lines (a running line stands apart
    from a body). ``inner``: only at an edge that has lines set apart already (the next line of a
    head of several lines). Read from the two ends: a page's middle is never looked at."""
    top: list[int] = []
    for i, line in enumerate(lines):
        if line and not line.isspace() and i not in taken:
            top.append(i)
            if len(top) == EDGE_LINES:
                break
    if len(top) < EDGE_LINES:
        return []
    bottom: list[int] = []
    for i in range(len(lines) - 1, top[-1], -1):
        line = lines[i]
        if line and not line.isspace() and i not in taken:
            bottom.append(i)
            if len(bottom) == EDGE_LINES:
                break
    if len(top) + len(bottom) < EDGE_LINES + 1:
        return []
    bottom.reverse()
    if inner:
        first, last = top[0], bottom[-1]
        top = top if any(i < first for i in taken) else []
        bottom = bottom if any(i > last for i in taken) else []
    return [(i, HEADER) for i in top] + [(i, FOOTER) for i in bottom]


#: rounds of peeling: a head of three lines (title, subtitle, page number) comes off in two
PEEL_ROUNDS = 3


def running_lines(pages: Sequence[Sequence[str]]) -> list[dict[int, str]]:
    """Per page, the indices of its running header, footer and page-number lines with their role.

    A line near the top or bottom is a running head or foot when the same text (numbers aside)
    sits at that edge on ``RUNNING_SHARE`` of the pages, or on ``MIN_RUNNING_PAGES`` pages that
    fill at least half of the span between its first and last (a section's own head). A number
    alone is a page number when a neighbouring page carries one at the same edge that differs by
    as many as the pages do; so is a head or foot that starts or ends with such a number (a
    section's head on its pages, the page number with it). Lines found are peeled off and the
    edges looked at again, for heads of several lines."""
    found: list[dict[int, str]] = [{} for _ in pages]
    if len(pages) < MIN_RUNNING_PAGES:
        return found
    facts: dict[str, _EdgeFacts] = {}  # by the line's text: a running head is read once, not once a page
    for peel in range(PEEL_ROUNDS):
        if not _peel(pages, found, peel > 0, facts):
            break
    return found


def _peel(pages: Sequence[Sequence[str]], found: list[dict[int, str]], inner: bool,
          facts: dict[str, _EdgeFacts]) -> bool:
    """One round of ``running_lines``: adds what it finds to ``found``; whether it found any."""
    seen: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    # per edge, one page-number candidate a page: (line, value, role); a number alone before a head
    # that carries one, as a book prints a bare number on a chapter's first page and the number in
    # the running head on the others: the two are one series of page numbers
    numbers: dict[str, dict[int, tuple[int, int, str]]] = defaultdict(dict)
    for page_index, lines in enumerate(pages):
        for line_index, position in _edges(lines, found[page_index], inner):
            line = lines[line_index]
            read = facts.get(line)
            if read is None:
                read = facts[line] = _edge_facts(line)
            bare, value, key = read
            if bare is not None:
                held = numbers[position].get(page_index)
                if held is None or held[2] != PAGE_NUMBER:
                    numbers[position][page_index] = (line_index, bare, PAGE_NUMBER)
                continue
            if value is not None:
                numbers[position].setdefault(page_index, (line_index, value, position))
            if key is None:
                continue  # a row of figures repeats in form, not as a running head
            entries = seen[(position, key)]
            if not entries or entries[-1][0] != page_index:
                entries.append((page_index, line_index))
    added = False
    needed = max(MIN_RUNNING_PAGES, math.ceil(RUNNING_SHARE * len(pages)))
    for (position, _), entries in seen.items():
        span = entries[-1][0] - entries[0][0] + 1
        if len(entries) >= needed or (len(entries) >= MIN_RUNNING_PAGES and len(entries) >= RUN_DENSITY * span):
            for page_index, line_index in entries:
                added |= found[page_index].setdefault(line_index, position) == position
    for by_page in numbers.values():
        numbered = sorted(by_page)
        confirmed = [
            page for k, page in enumerate(numbered)
            if any(by_page[other][1] - by_page[page][1] == other - page
                   for other in numbered[max(0, k - 1):k + 2] if other != page and abs(other - page) <= 2)
        ]
        if len(confirmed) >= MIN_RUNNING_PAGES:
            for page in confirmed:
                line_index, _, role = by_page[page]
                found[page][line_index] = role
                added = True
    return added


def _heading_key(text: str) -> str:
    """Titles and lines compared without case, spacing, hyphens or typographic quote variants (an
    outline's "Nonregular files" is printed "Non-regular files")."""
    return "".join(text.translate(_QUOTES).casefold().split()).replace("-", "")


#: the words a page prints before a section's number or letter (``Appendix A``, ``Kapitel 3``)
_LABEL_WORDS = ("chapter|appendix|section|part|annex|lecture|lesson|unit|article|book|kapitel|anhang|"
                "abschnitt|teil|chapitre|annexe|partie|capítulo|capitulo|apéndice|apendice|sección|seccion|"
                "parte|capitolo|appendice|sezione|hoofdstuk|bijlage|rozdział|глава|приложение|раздел")
#: what a page may print before an outline title: its number (``2.``, ``IV``, ``3.1)``), its
#: label (``Appendix`` before an outline's ``A Copying``), or both
_NUMBERING = re.compile(rf"(?:{_LABEL_WORDS})|(?:(?:{_LABEL_WORDS})[.:]?)?"
                        r"(?:\d{1,3}|[ivxlcdm]{1,6}|[a-z])(?:[.:)]|\.\d{1,3})*[.:)\-]?")


#: a label before a colon (``10:``, ``chapter1:``, ``chapterten:``) is at most this long, and the
#: title after it at least this long, for a title and a line to match on what follows their labels
_LABEL_CHARS, _LABELLED_TITLE_CHARS = 20, 3


def _after_label(key: str) -> str:
    label, colon, rest = key.partition(":")
    return rest if colon and 0 < len(label) <= _LABEL_CHARS and len(rest) >= _LABELLED_TITLE_CHARS else ""


def _reads_as(joined: str, title: str, one_line: bool = True) -> bool:
    """The lines read as the title, or as the title after the number the page gives it, or (on
    ``one_line``) both name the same thing after their own label (``10: "Property"`` printed
    ``CHAPTER TEN: “Property”``; over two lines, a sentence's end before a title that has a
    colon would read as a label: ``them all.`` over ``-V/--version: version information``)."""
    if joined == title or (joined.endswith(title) and _NUMBERING.fullmatch(joined[: -len(title)]) is not None):
        return True
    rest = _after_label(title) if one_line else ""
    return bool(rest) and rest == _after_label(joined)


#: a title (an outline's, a tag's) that ends a sentence and runs past this many words is a
#: paragraph of prose an authoring tool made a heading of (a paragraph styled as one): no heading
MAX_TITLE_SENTENCE_WORDS = 12


def _prose(title: str) -> bool:
    return title.rstrip(_CLOSERS)[-1:] in ".!?" and len(title.split()) > MAX_TITLE_SENTENCE_WORDS


def outline_headings(pages: Sequence[Sequence[str]], outline: Sequence[OutlineEntry],
                     taken: Sequence[dict[int, str]]) -> list[list[Block]]:
    """Per page, the outline titles found among its lines as heading blocks: on the page the entry
    points at, else the next one; one to ``MAX_HEADING_LINES`` lines that read as the title (case,
    spacing and quote styles aside). Lines already set apart as running heads are never headings,
    nor a paragraph of prose the outline lists (``_prose``)."""
    found: list[list[Block]] = [[] for _ in pages]
    used: list[set[int]] = [set(t) for t in taken]
    for entry in outline:
        title = _heading_key(entry.title)
        if not title or entry.page < 1 or _prose(entry.title):
            continue
        for page_index in (entry.page - 1, entry.page):
            if page_index >= len(pages):
                break
            block = _find_title(pages[page_index], title, used[page_index])
            if block is not None:
                block.level = min(max(entry.level, 1), MAX_HEADING_LEVEL)
                used[page_index].update(range(block.line, block.line + block.lines))
                found[page_index].append(block)
                break
    return found


def _find_title(lines: Sequence[str], title: str, used: set[int]) -> Block | None:
    for start, line in enumerate(lines):
        if start in used or not line.strip():
            continue
        joined = ""
        for count in range(1, MAX_HEADING_LINES + 1):
            end = start + count
            if end > len(lines) or (end - 1) in used:
                break
            joined += _heading_key(lines[end - 1])
            if _reads_as(joined, title, one_line=count == 1):
                text = " ".join(" ".join(lines[start:end]).split())
                return Block(role=HEADING, text=text, line=start, lines=count)
            if not title.startswith(joined) and count > 1:
                break
    return None


# -- headings from a tagged PDF's structure tree ---------------------------------------------------

#: the tags hold up when at least this share of their headings (those that read as titles) are
#: found among their pages' lines ...
MIN_TAG_FOUND_SHARE = 0.5
#: ... and the headings make at most this share of the document's body lines (a tool that tags
#: every line a heading says nothing)
MAX_TAG_LINE_SHARE = 0.5


def tag_headings(pages: Sequence[Sequence[str]], tagged: Sequence[Sequence[OutlineEntry]],
                 taken: Sequence[dict[int, str]]) -> list[list[Block]] | None:
    """Per page, its tagged headings (``tagged``: per page, the heading elements of its structure
    tree, pdf_tags.page_headings) found among its lines as heading blocks at the tags' levels:
    one to ``MAX_HEADING_LINES`` lines that read as the element's text, as an outline title is
    found (``_find_title``), on the element's own page. Lines set apart are never headings, nor a
    tagged paragraph of prose (``_prose``). None when the tags do not hold up over the
    document (``MIN_TAG_FOUND_SHARE``, ``MAX_TAG_LINE_SHARE``): their headings are then left to
    the outline or the font sizes."""
    found: list[list[Block]] = [[] for _ in pages]
    used: list[set[int]] = [set(t) for t in taken]
    wanted = 0
    for page_index, entries in enumerate(tagged[: len(pages)]):
        for entry in entries:
            title = _heading_key(entry.title)
            if not title or _prose(entry.title):
                continue
            wanted += 1
            block = _find_title(pages[page_index], title, used[page_index])
            if block is not None:
                block.level = min(max(entry.level, 1), MAX_HEADING_LEVEL)
                used[page_index].update(range(block.line, block.line + block.lines))
                found[page_index].append(block)
    matched = sum(len(blocks) for blocks in found)
    if not matched or matched < MIN_TAG_FOUND_SHARE * wanted:
        return None
    body = sum(1 for lines, apart in zip(pages, taken, strict=True)
               for index, line in enumerate(lines) if index not in apart and line.strip())
    if sum(block.lines for blocks in found for block in blocks) > MAX_TAG_LINE_SHARE * body:
        return None
    return found


# -- headings from font sizes (a PDF without outline) ---------------------------------------------

#: a heading's characters stand at least this much taller than the body's (its most common height)
HEADING_SCALE = 1.15
#: heights within this many points are one size
SIZE_STEP = 0.5
#: a line of a heading holds at most this many characters (a title, never a sentence of prose)
MAX_HEADING_LINE_CHARS = 120
#: ... at least this many letters, and letters are at least this share of its non-space characters
#: (a figure of a table, a page number, a row of figures are no heading)
MIN_HEADING_LETTERS, MIN_LETTER_SHARE = 3, 0.6
#: a size is a heading size only when at most this share of its lines run long (a second body
#: text, an abstract set larger, is prose) ...
MAX_LONG_SHARE = 0.2
#: ... and it is no more common than the body: its lines at most this share of the body's
MAX_HEADING_SHARE = 0.25
#: a heading size other than the title's makes at least this many headings (see font_headings)
MIN_SECTION_RUNS = 2
#: heading sizes kept, largest first (further sizes are too fine a distinction to trust)
MAX_FONT_LEVELS = 4


#: a line ending so goes on, or ends a sentence: a title does neither
_NOT_TITLE_ENDS = (".", ",", ";", "-", "\u00ad", "\u2010")


def _size(height: float) -> float:
    return round(height / SIZE_STEP) * SIZE_STEP


def _heading_like(line: str) -> bool:
    """A short line of words: no figure alone, no row of figures, no sentence of prose."""
    if len(line) > MAX_HEADING_LINE_CHARS:
        return False
    if line.endswith(_NOT_TITLE_ENDS):
        return False
    letters = sum(map(str.isalpha, line))
    filled = len(line) - line.count(" ")
    return letters >= MIN_HEADING_LETTERS and letters >= MIN_LETTER_SHARE * filled


def _leads_in(lines: Sequence[str], heights: Sequence[float], start: int, size: float, body: float,
              sizes: Sequence[float]) -> bool:
    """The first non-blank line from ``start`` is set in the body's size (or smaller), or in a
    heading size below ``size``; true too where its size is unknown or the page ends."""
    for index in range(start, len(lines)):
        if lines[index].strip():
            height = heights[index] if index < len(heights) else 0.0
            after = _size(height)
            return height <= 0 or after < HEADING_SCALE * body or (after in sizes and after < size)
    return True


@dataclass(frozen=True)
class SizeCounts:
    """Per font size (``_size``'s steps) of a document's lines whose height is known: the
    characters set in it, its lines, and those of them too long for a heading. Counted once for
    ``font_headings`` and ``bold_headings`` alike."""

    chars: Counter[float]
    lines: Counter[float]
    long: Counter[float]

    @property
    def body(self) -> float:
        """The size most of the document's characters have (0: none known)."""
        return self.chars.most_common(1)[0][0] if self.chars else 0.0


def size_counts(pages: Sequence[Sequence[str]], heights: Sequence[Sequence[float]]) -> SizeCounts:
    chars: Counter[float] = Counter()
    lines_of: Counter[float] = Counter()
    long_of: Counter[float] = Counter()
    for lines, page_heights in zip(pages, heights, strict=True):
        for line, height in zip(lines, page_heights, strict=False):
            if height > 0:
                size, length = round(height / SIZE_STEP) * SIZE_STEP, len(line.strip())  # _size, inline
                chars[size] += length
                lines_of[size] += 1
                if length > MAX_HEADING_LINE_CHARS:
                    long_of[size] += 1
    return SizeCounts(chars, lines_of, long_of)


def font_headings(pages: Sequence[Sequence[str]], heights: Sequence[Sequence[float]],
                  taken: Sequence[dict[int, str]], counts: SizeCounts | None = None) -> list[list[Block]]:
    """Per page, the heading blocks its font sizes show: lines whose sampled characters stand
    ``HEADING_SCALE`` taller than the document's body text (the height most of its characters
    have), level by the rank of their size among the document's heading sizes (largest = 1).
    A size counts only when its lines read as titles across the document (``MAX_LONG_SHARE``,
    ``MAX_HEADING_SHARE``) and, but for the title's, recurs (``MIN_SECTION_RUNS``, on two
    pages), a line only when it reads as one (``_heading_like``) and leads into body text or a
    smaller heading (``_leads_in``); up to ``MAX_HEADING_LINES`` consecutive lines of one size
    make one heading, more are no heading. Lines set apart (``taken``) are never headings.
    ``heights``: per page, per line, the height of a character sampled from it
    (``PageContent.line_heights``), 0 or none where unknown; ``counts``: theirs, where counted
    already (``size_counts``)."""
    found: list[list[Block]] = [[] for _ in pages]
    counts = counts or size_counts(pages, heights)
    if not counts.chars:
        return found
    lines_of, long_of, body = counts.lines, counts.long, counts.body
    sizes = sorted((size for size in lines_of if size >= HEADING_SCALE * body
                    and long_of[size] <= MAX_LONG_SHARE * lines_of[size]
                    and lines_of[size] <= MAX_HEADING_SHARE * lines_of[body]), reverse=True)[:MAX_FONT_LEVELS]
    if not sizes:
        return found
    runs: list[tuple[int, list[int], float]] = []  # page, lines, size
    heading_sizes = frozenset(sizes)
    for page_index, (lines, page_heights) in enumerate(zip(pages, heights, strict=True)):
        run: list[int] = []
        run_size = 0.0
        known = min(len(page_heights), len(lines))
        apart = taken[page_index]
        for index in range(len(lines) + 1):
            height = page_heights[index] if index < known else 0.0
            size = round(height / SIZE_STEP) * SIZE_STEP if height > 0 else 0.0  # _size, inline: every line
            keep = size in heading_sizes and index not in apart and _heading_like(lines[index].strip())
            if keep and size == run_size:
                run.append(index)
                continue
            if run and len(run) <= MAX_HEADING_LINES:
                runs.append((page_index, run, run_size))
            if keep:
                run, run_size = [index], size
            elif run:
                run, run_size = [], 0.0
    # the title: the largest size on the first page that has any
    first = min((page_index for page_index, _, _ in runs), default=0)
    title = max((size for page_index, _, size in runs if page_index == first), default=0.0)
    # a section head leads into its section: the line after it is body text or a smaller head
    # (an author's name before an affiliation, a margin title before a page number are none)
    runs = [(page_index, run, size) for page_index, run, size in runs
            if (size == title and page_index == first)
            or _leads_in(pages[page_index], heights[page_index], run[-1] + 1, size, body, sizes)]
    # ... and a size makes section heads only where it recurs as they do: twice, on two pages
    # (or on a document's one page). A stamp, a logo's word set once in a size of its own is
    # none. The level is the rank among the sizes left (a size whose lines were all figures or
    # prose takes none).
    pages_of: dict[float, set[int]] = defaultdict(set)
    runs_of: Counter[float] = Counter()
    for page_index, _, size in runs:
        pages_of[size].add(page_index)
        runs_of[size] += 1
    runs = [run for run in runs if run[2] == title or (
        runs_of[run[2]] >= MIN_SECTION_RUNS and (len(pages_of[run[2]]) >= 2 or len(pages) == 1))]
    sizes_left = sorted({size for _, _, size in runs}, reverse=True)
    level_of = {size: min(rank + 1, MAX_HEADING_LEVEL) for rank, size in enumerate(sizes_left)}
    for page_index, run, size in runs:
        text = " ".join(" ".join(pages[page_index][i].strip() for i in run).split())
        if len(text) <= MAX_TITLE_CHARS:
            found[page_index].append(Block(role=HEADING, text=text, line=run[0], lines=len(run), level=level_of[size]))
    return found


# -- headings from bold type and section numbers (a PDF without outline) ---------------------------

#: a section number opening a line, then a capital: ``2.3.1``/``2.3.``/``2`` (arabic), ``IV.``
#: (roman), ``B.`` (letter), ``Chapter 4``/``Section 5`` (word)
_SECTION_NUMBER = re.compile(
    r"(?:(?P<arabic>\d{1,2}(?:\.\d{1,2}){0,4})\.?|(?P<roman>[IVXL]{1,5})\.|(?P<letter>[A-Z])\."
    r"|(?P<word>(?i:chapter|section|part|appendix|chapitre|kapitel|abschnitt|cap[ií]tulo|capitolo|sección)"
    r"\s+(?:\d{1,3}|[IVXL]{1,5})[.:]?))\s+(?=[^\W\d_])")
#: a caption is no heading (``Table 2: ...``, ``Fig. 3``)
_CAPTION = re.compile(r"(?i)^(?:table|tableau|tabelle|tabla|tabela|figure|fig\.|figura|abbildung|abb\.|chart|graph)"
                      r"\s*[\dIVX]")
#: a sentence ends inside the line (``Qualified loan. This is``): a run-in head and its prose
_INNER_SENTENCE = re.compile(r"[^\W\d_]{2}[.!?]\s+[^\W\d_]")
#: a line ending so goes on into the next (a heading broken over two lines)
_GOES_ON = re.compile(r"(?i)(?:&|\b(?:and|or|of|for|the|to|in|on|with|a|an|und|oder|der|die|das|von|für|et|ou|de|des"
                      r"|du|la|le|les|y|e|o|del|el|los|las))$")
#: a bold or numbered heading is no longer than this
MAX_BOLD_HEADING_CHARS = 80
#: bold is no evidence where more than this share of the document's lines are bold
MAX_BOLD_SHARE = 0.3
#: headings in a row at most (a title, a section's and its first subsection's)
MAX_HEADINGS_IN_A_ROW = 3


def _numbering(line: str, bold: bool) -> tuple[str, int] | None:
    """The kind of section number the line opens with and its depth (``2.3.1``: arabic, 3), when
    it counts: any kind on a bold line; on a plain one only a nested arabic number (``2.3``) or a
    word (``Chapter 4``), a list's ``1.``/``a.``/``I.`` being no section. ``("", 1)``: a bold line
    without a number. None: no evidence."""
    found = _SECTION_NUMBER.match(line)
    if found is None or not line[found.end()].isupper():
        return ("", 1) if bold else None
    if found.group("arabic"):
        depth = found.group("arabic").count(".") + 1
        return ("arabic", depth) if bold or depth > 1 else None
    kind = next(name for name in ("roman", "letter", "word") if found.group(name))
    return (kind, 1) if bold or kind == "word" else None


def _reads_as_prose(line: str) -> bool:
    """Mostly letters (a row of a table's figures is none)."""
    letters = sum(map(str.isalpha, line))
    return letters >= MIN_LETTER_SHARE * (len(line) - line.count(" "))


def bold_headings(pages: Sequence[Sequence[str]], heights: Sequence[Sequence[float]],
                  bold: Sequence[Sequence[int]], taken: Sequence[dict[int, str]],
                  below: int = 0, counts: SizeCounts | None = None) -> list[list[Block]]:
    """Per page, the heading blocks its bold type and section numbers show (a PDF without outline,
    beside ``font_headings``): a line not ``taken`` that reads as a title (``_heading_like``, at
    most ``MAX_BOLD_HEADING_CHARS``, no caption, no sentence inside it), set in the body's size or
    larger, bold (``bold``: per page, the indices of its bold lines) or opening with a nested
    section number (``_numbering``), standing alone: the line before it ends a sentence or falls
    short (or is set apart, or is a heading) and the line after it is body text (plain type, the body's
    size, a full line not going on in lower case), or a heading that is, ``MAX_HEADINGS_IN_A_ROW``
    at most. Only on pages of prose, bold only where it is rare (``MAX_BOLD_SHARE``), and a bold
    line without a number only once in the document (twice: a label, ``TIP``).
    Levels below ``below`` (the font sizes' headings): by the kind of number, in the order the
    document first uses them, an arabic number's depth nesting (``2.3`` under ``2``); a bold
    line without a number at the first level. ``counts``: as for ``font_headings``."""
    found: list[list[Block]] = [[] for _ in pages]
    body = (counts or size_counts(pages, heights)).body
    filled = sum(sum(map(bool, map(str.strip, lines))) for lines in pages)
    bold_count = sum(len(page) for page in bold)
    if not body or not filled:
        return found
    if bold_count > MAX_BOLD_SHARE * filled:
        bold = [() for _ in pages]
    picked: list[tuple[int, int, int, tuple[str, int]]] = []  # page, first line, last line, numbering
    for page_index, (lines, page_heights, page_bold) in enumerate(zip(pages, heights, bold, strict=False)):
        bolds = set(page_bold)
        apart = taken[page_index]
        size_of = [round(height / SIZE_STEP) * SIZE_STEP if height > 0 else 0.0  # _size, inline
                   for height in page_heights[: len(lines)]]
        size_of += [0.0] * (len(lines) - len(size_of))
        candidates: dict[int, tuple[str, int]] = {}
        for index, line in enumerate(lines):
            # the cheap questions first: most lines are neither bold nor numbered
            if index in apart or size_of[index] < body or not line:
                continue
            stripped = line.strip()
            if not stripped or len(stripped) > MAX_BOLD_HEADING_CHARS:
                continue
            numbering = _numbering(stripped, index in bolds)
            if numbering is None or not _heading_like(stripped) or stripped.endswith(":") \
                    or _CAPTION.match(stripped) or _INNER_SENTENCE.search(stripped):
                continue
            candidates[index] = numbering
        if not candidates:
            continue
        typical = _typical_length(_filled_lengths(lines))
        if typical < MIN_PROSE_CHARS:
            continue
        filled_lines = [i for i, line in enumerate(lines) if line.strip()]
        position_of = {index: position for position, index in enumerate(filled_lines)}
        # a heading broken over two lines: a candidate ending in a word that goes on (``Functions
        # &``, ``Retriever and``) and the plain bold line after it; one that goes on into
        # anything else is none
        runs: dict[int, int] = {}  # first line -> last line
        second: set[int] = set()
        for position, index in enumerate(filled_lines):
            if index not in candidates or index in second:
                continue
            last = index
            if _GOES_ON.search(lines[index].strip()):
                nxt = filled_lines[position + 1] if position + 1 < len(filled_lines) else -1
                if candidates.get(nxt) != ("", 1) or nxt not in bolds or size_of[nxt] != size_of[index]:
                    continue
                last = nxt
                second.add(nxt)
            runs[index] = last
        accepted: dict[int, int] = {}  # first line -> headings in a row from it
        for first in sorted(runs, reverse=True):
            at = position_of[runs[first]] + 1
            after = filled_lines[at] if at < len(filled_lines) else None
            if after is None or after in apart:
                continue  # the page's last line, or one before a running head or a larger heading
            if after in accepted:
                if accepted[after] >= MAX_HEADINGS_IN_A_ROW:
                    continue
                row = accepted[after] + 1
            else:
                following = lines[after].strip()
                if after in bolds or size_of[after] != body or len(following) < MIN_PROSE_CHARS \
                        or following[0].islower() or not _reads_as_prose(following):
                    continue
                row = 1
            before = filled_lines[position_of[first] - 1] if position_of[first] else None
            if before is not None and before not in apart and before not in candidates:
                previous = lines[before].strip()
                if before in bolds or not (previous.rstrip(_CLOSERS)[-1:] in _SENTENCE_ENDS
                                           or len(previous) < SHORT_LINE * typical):
                    continue
            accepted[first] = row
        picked.extend((page_index, first, runs[first], candidates[first]) for first in sorted(accepted))
    # a bold line without a number that the document sets more than once is a label (``TIP``,
    # ``Note``), no section's own title
    plain = Counter(_heading_key(pages[page_index][first]) for page_index, first, _, numbering in picked
                    if not numbering[0])
    picked = [(page_index, first, last, numbering) for page_index, first, last, numbering in picked
              if numbering[0] or plain[_heading_key(pages[page_index][first])] == 1]
    # levels: kinds of number in the order the document first uses them, deeper arabic after shallower
    order: list[tuple[str, int]] = []
    for _, _, _, numbering in picked:
        if numbering[0] and numbering not in order:
            order.append(numbering)
    first_of: dict[str, int] = {}
    for position, (kind, _) in enumerate(order):
        first_of.setdefault(kind, position)
    order.sort(key=lambda key: (first_of[key[0]], key[1]))
    rank = {key: position + 1 for position, key in enumerate(order)}
    for page_index, first, last, numbering in picked:
        level = min(below + rank.get(numbering, 1), MAX_HEADING_LEVEL)
        text = " ".join(" ".join(pages[page_index][first:last + 1]).split())
        found[page_index].append(Block(role=HEADING, text=text, line=first, lines=last - first + 1, level=level))
    return found


def page_blocks(pages: Sequence[Sequence[str]], outline: Sequence[OutlineEntry],
                breaks: Sequence[Sequence[Sequence[str]]] = (),
                heights: Sequence[Sequence[float]] = (),
                tagged: Sequence[Sequence[OutlineEntry]] = (),
                bold: Sequence[Sequence[int]] = (),
                placed: Sequence[Sequence[Block]] = ()) -> list[list[Block]]:
    """Per page, its blocks: :func:`iter_page_blocks`, all at once."""
    return list(iter_page_blocks(pages, outline, breaks, heights, tagged, bold, placed))


def iter_page_blocks(pages: Sequence[Sequence[str]], outline: Sequence[OutlineEntry],
                     breaks: Sequence[Sequence[Sequence[str]]] = (),
                     heights: Sequence[Sequence[float]] = (),
                     tagged: Sequence[Sequence[OutlineEntry]] = (),
                     bold: Sequence[Sequence[int]] = (),
                     placed: Sequence[Sequence[Block]] = ()) -> Iterator[list[Block]]:
    """Per page, its structure blocks in line order: running heads and page numbers, headings
    (from a tagged PDF's heading elements where they hold up, ``tagged``: per page, see
    ``tag_headings``, with the outline's titles they leave out; else from the outline where there
    is one; else from ``heights``: per page, its lines' sampled character heights, and ``bold``:
    per page, the indices of its bold lines, see ``bold_headings``), and the
    paragraphs and list items the other lines make; ``breaks``: per page, the words its text
    layer joined over a line-end hyphen; ``placed``: per page, blocks decided before (its tables,
    see ``table_blocks``), whose lines are no running head, heading or paragraph. What is decided
    over the whole document (running heads, headings, the hyphenated words) is decided before the
    first page is yielded; each page's paragraphs as it is asked for, so a caller that takes the
    pages one at a time never holds every page's blocks."""
    running = running_lines(pages)
    if any(placed):
        held = [{i for block in blocks for i in range(block.line, block.line + block.lines)} for blocks in placed]
        running = [{i: role for i, role in apart.items() if i not in lines} for apart, lines in
                   zip(running, held, strict=True)]
        apart_or_held = [{**apart, **dict.fromkeys(lines, TABLE)} for apart, lines in zip(running, held, strict=True)]
    else:
        apart_or_held = running
    headings = tag_headings(pages, tagged, apart_or_held) if any(tagged) else None
    if headings is not None and outline:
        # the outline adds the titles the tags left untagged (a numbered heading a word processor
        # tagged as a list or a paragraph), on the lines the tags left
        tagged_lines = [{**apart, **{i: HEADING for b in blocks for i in range(b.line, b.line + b.lines)}}
                        for apart, blocks in zip(apart_or_held, headings, strict=True)]
        for blocks, more in zip(headings, outline_headings(pages, outline, tagged_lines), strict=True):
            blocks.extend(more)
    elif headings is None and outline:
        headings = outline_headings(pages, outline, apart_or_held)
    elif headings is None and heights and any(heights):
        counts = size_counts(pages, heights)
        headings = font_headings(pages, heights, apart_or_held, counts)
        sized = [{**apart, **{i: HEADING for b in blocks for i in range(b.line, b.line + b.lines)}}
                 for apart, blocks in zip(apart_or_held, headings, strict=True)]
        below = max((b.level for blocks in headings for b in blocks), default=0)
        for blocks, more in zip(headings, bold_headings(pages, heights, bold or [() for _ in pages], sized, below,
                                                        counts), strict=True):
            blocks.extend(more)
    if headings is None:
        headings = [[] for _ in pages]
    breaks = breaks or [() for _ in pages]
    words = DocumentWords(pages, breaks)
    lengths = [_filled_lengths(lines) for lines in pages]
    placed = placed or [() for _ in pages]
    return _paragraph_pages(pages, running, headings, breaks, lengths, placed, words)


def _paragraph_pages(pages: Sequence[Sequence[str]], running: Sequence[dict[int, str]],
                     headings: Sequence[Sequence[Block]], breaks: Sequence[Sequence[Sequence[str]]],
                     lengths: Sequence[Sequence[int]], placed: Sequence[Sequence[Block]],
                     words: DocumentWords) -> Iterator[list[Block]]:
    """:func:`iter_page_blocks`'s pages, one at a time: each one's blocks in line order."""
    document_typical = None
    for lines, apart, titled, broken, page_lengths, fixed in zip(pages, running, headings, breaks, lengths, placed,
                                                                strict=True):
        blocks = [Block(role=role, text=lines[index].strip(), line=index) for index, role in apart.items()]
        blocks.extend(fixed)
        taken = set(apart) | {i for b in [*titled, *fixed] for i in range(b.line, b.line + b.lines)}
        if len(page_lengths) >= MIN_TYPICAL_LINES:
            typical = _typical_length(page_lengths)
        else:
            if document_typical is None:
                document_typical = _typical_length([n for page in lengths for n in page])
            typical = document_typical
        if typical < MIN_PROSE_CHARS:  # a page of lines (a table, a form): a caption is one of them
            captions = [Block(role=CAPTION, text=line.strip(), line=index) for index, line in enumerate(lines)
                        if index not in taken and len(line) <= MAX_CAPTION_CHARS and _CAPTION_ROLE.match(line.strip())]
            blocks.extend(captions)
            taken |= {block.line for block in captions}
        flowing = paragraphs(lines, taken, typical, words, breaks=broken)
        for block in flowing:
            if block.role == PARAGRAPH and len(block.text) <= MAX_CAPTION_CHARS and _CAPTION_ROLE.match(block.text):
                block.role = CAPTION
        yield sorted([*blocks, *titled, *flowing], key=_LINE_OF)


def box_blocks(blocks: Sequence[Block], boxes: Sequence[Sequence[float]]) -> None:
    """Give each block the union of its lines' boxes (``boxes``: per body line, x0, y0, x1, y1,
    empty where unknown); a block none of whose lines has a box keeps none."""
    for block in blocks:
        x0 = y0 = math.inf
        x1 = y1 = -math.inf
        for box in boxes[block.line:block.line + block.lines]:
            if box:  # min and max by comparisons: a call each costs more than the rest of the loop
                left, top, right, bottom = box
                if left < x0:
                    x0 = left
                if top < y0:
                    y0 = top
                if right > x1:
                    x1 = right
                if bottom > y1:
                    y1 = bottom
        if x0 != math.inf:
            block.bbox = [x0, y0, x1, y1]


#: a line is a table's when its box's centre lies within the table's box, give or take this much
#: of the page (pdfplumber's box and pdfium's lines are measured apart)
TABLE_MARGIN = 0.005


#: ... and when the table's cells hold every word of those lines (what the cells left out
#: would be lost from document.md)
TABLE_WORDS = 1.0


def table_blocks(tables: Sequence[tuple[int, Sequence[float], str]], boxes: Sequence[Sequence[float]],
                 lines: Sequence[str]) -> list[Block]:
    """A page's tables (index, box as fractions of the page as displayed, Markdown) as blocks in
    place of the lines their cells were read as (``boxes``: per body line of ``lines``, its box,
    empty where unknown): a table takes the lines whose centres lie in its box when they run
    together in the page's text and its cells hold their words; a line between them outside it
    (a column of text beside the table), or words the cells lack, leave the table out, to follow
    the page as before."""
    out: list[Block] = []
    used: set[int] = set()
    margin = TABLE_MARGIN
    for index, (x0, y0, x1, y1), markdown in tables:
        inside = [i for i, box in enumerate(boxes) if box and x0 - margin <= (box[0] + box[2]) / 2 <= x1 + margin
                  and y0 - margin <= (box[1] + box[3]) / 2 <= y1 + margin]
        if not inside or not markdown or used.intersection(inside):
            continue
        first, last = inside[0], inside[-1]
        if len(inside) != sum(1 for box in boxes[first:last + 1] if box):
            continue
        cells = Counter(markdown.replace("|", " ").split())
        words = Counter(word for line in lines[first:last + 1] for word in line.split())
        if sum((words & cells).values()) < TABLE_WORDS * sum(words.values()):
            continue
        out.append(Block(role=TABLE, text=markdown, line=first, lines=last - first + 1, bbox=[x0, y0, x1, y1],
                         table=index))
        used.update(inside)
    return out


def mark_picture_text(blocks: Sequence[Block], first_line: int) -> None:
    """The paragraphs, list items and line runs from ``first_line`` on are text OCR read from the
    page's pictures (ocr.pages puts it after the page's own): role picture_text."""
    for block in blocks:
        if block.line >= first_line and block.role in (PARAGRAPH, LIST_ITEM, LINES, CAPTION):
            block.role = PICTURE_TEXT


def set_apart_boxed(boxed: Sequence[Block], found: Sequence[Block]) -> list[Block]:
    """An OCR'd page's blocks (its engine's layout, with boxes), those that lines ``found`` set
    apart (running heads, footers, page numbers: the document's evidence, which one page's layout
    cannot give) cover whole taking their role; the boxes stay the engine's."""
    roles = {block.line: block.role for block in found if block.role in SET_APART}
    out = []
    for block in boxed:
        covered = [roles.get(index) for index in range(block.line, block.line + block.lines)]
        role = covered[0] if covered and None not in covered else None
        out.append(block if role is None else dataclasses.replace(block, role=role, level=0))
    return out


# -- paragraphs, list items and hyphenation ------------------------------------------------------

#: a page of fewer lines takes its typical line length from the whole document
MIN_TYPICAL_LINES = 6
#: a line's typical length: this share of the lines are no longer (the body's full lines)
TYPICAL_QUANTILE = 0.5
#: a line ending a sentence ends its paragraph when it is shorter than this share of the typical
SHORT_LINE = 0.9
#: a line shorter than this share of the typical ends its paragraph unless the next goes on in
#: lower case (a label, a title, a row of a table)
STUB_LINE = 0.5
#: a page whose typical line is shorter than this many characters holds no prose (a table, a form,
#: a list of dates): its lines stay as they are
MIN_PROSE_CHARS = 30
#: a list item's marker: a bullet, or an enumerator (``1.``, ``1)``, ``a)``, ``(iv)``) and a space
_LIST_MARKER = re.compile(r"^(?:[•\-–*▪◦●‣]|\d{1,3}[.)]|[a-z][.)]|\((?:\d{1,3}|[a-z]|[ivx]{1,6})\))\s+\S")
_MARKER_FIRST = frozenset("•-–*▪◦●‣(0123456789abcdefghijklmnopqrstuvwxyz")
#: what ends a sentence, and what may close it after (a quote, a bracket)
_SENTENCE_ENDS = frozenset(".!?:;")
_CLOSERS = "\"'”’)]"
#: a line broken in a word: letters, then a hyphen (pdfium's soft hyphens are gone by now)
_HYPHENS = ("-", "\u00ad", "\u2010")
#: a short line ending so goes on into the next: no stub
_NO_STUB_ENDS = (",", *_HYPHENS)
_BROKEN_WORD = re.compile(r"([^\W\d_]+)[-\u00ad\u2010]$")
_FIRST_WORD = re.compile(r"^([^\W\d_]+)")
#: the letters before a hyphen read for a compound (a word is shorter)
_MAX_PART = 64
#: a word as counted for ``prints_whole`` (``\w``: twice as fast as letters only, and a word with
#: a figure in it is never a broken word's whole) ...
_WORD = re.compile(r"\w+")
#: ... each found on its own up to this many words, then all of the text's words counted at once:
#: one count of them all costs as much as some 65 finds (mo__freeculture, 650,000 characters: 20 ms
#: against 0.3 ms a find), so a document never pays more than twice the cheaper of the two
MAX_WORDS_FOUND = 64
#: pdfium's mark where it joined a word over a line-end hyphen, and the letters after it; the
#: letters before it are read from the reversed text (``_LETTERS``): a pattern that starts with a
#: letter run is tried at every letter of the page, one that starts with the mark only at marks
_LAYER_BREAK = re.compile(r"[\x02\ufffe]([^\W\d_]*)")
_LETTERS = re.compile(r"[^\W\d_]+")
#: the word after a hyphen that leaves a prefix hanging (``pre- and post-``), in the dictionary
#: languages: the hyphen stays with a space after it
_CONJUNCTIONS = frozenset({"and", "or", "nor", "und", "oder", "bzw", "et", "ou", "y", "o", "e", "ni", "en"})


def _word_char(char: str) -> bool:
    """A character ``_WORD`` matches."""
    return char.isalnum() or char == "_"


class DocumentWords:
    """The document's own evidence for hyphenation: how often it prints each word whole (case
    aside; the words its text layer joined over a hyphen not counted), and the hyphenated
    compounds it prints within a line. Read from its pages on the first question only."""

    def __init__(self, pages: Sequence[Sequence[str]], breaks: Sequence[Sequence[Sequence[str]]] = ()) -> None:
        self._pages, self._breaks = pages, breaks
        self._asked: dict[str, int] = {}

    @cached_property
    def _text(self) -> str:
        return "\n".join(line for lines in self._pages for line in lines).casefold()

    @cached_property
    def _joined(self) -> Counter[str]:
        return Counter((head + tail).casefold() for page in self._breaks for head, tail in page)

    @cached_property
    def _compounds(self) -> frozenset[str]:
        # read from the lines that hold a hyphen (a compound never spans a line break), each
        # hyphen found with str.find (C speed) and the letters either side of it read by anchored
        # matches, those before it in the reversed line: a regex over the whole text (or one that
        # searches for a run of letters ending at the hyphen) tries every letter of it; a hyphen
        # with no letter or digit beside it (a dash, a rule of them) is passed at once
        pairs = set()
        for lines in self._pages:
            for line in lines:
                if "-" not in line:
                    continue
                line = line.casefold()
                backwards, size = line[::-1], len(line)
                at = line.find("-")
                while at >= 0:
                    if 0 < at < size - 1 and line[at - 1].isalnum() and line[at + 1].isalnum():
                        head = _LETTERS.match(backwards, size - at, size - at + _MAX_PART)
                        tail = _LETTERS.match(line, at + 1)
                        if head is not None and tail is not None:
                            pairs.add(f"{head.group()[::-1]}-{tail.group()}")
                    at = line.find("-", at + 1)
        return frozenset(pairs)

    @cached_property
    def _counts(self) -> Counter[str]:
        return Counter(_WORD.findall(self._text))

    def _count(self, word: str) -> int:
        """How often the text prints ``word`` (a run of word characters) as a word of its own.
        Asked of the words the word lists do not know, a handful a document: each is found with
        ``str.find`` (C speed) and its ends checked, where counting every word of the text once
        cost most of a long document's structure (pd__i1040nr: 12 of 27 ms); past
        ``MAX_WORDS_FOUND`` words, one count of all of them is cheaper."""
        if word in self._asked:
            return self._asked[word]
        if len(self._asked) >= MAX_WORDS_FOUND:  # many unknown words: one count of them all
            return self._counts[word]
        text, count, at = self._text, 0, self._text.find(word)
        while at >= 0:
            end = at + len(word)
            if not (at and _word_char(text[at - 1])) and not (end < len(text) and _word_char(text[end])):
                count += 1
            at = text.find(word, end)
        self._asked[word] = count
        return count

    def prints_whole(self, word: str) -> bool:
        """Whether the document prints ``word`` (case folded) whole, as a word of its own, other
        than where its text layer joined it."""
        return self._count(word) > self._joined[word]

    def prints_compound(self, compound: str) -> bool:
        return compound in self._compounds


def hyphen_breaks(raw: str) -> tuple[tuple[str, str], ...]:
    """The (before, after) letters around each mark pdfium puts where it joined a word broken
    over a hyphen at the end of a line (``\\x02`` in its bounded text, U+FFFE in its full text), as
    ``([^\\W\\d_]+)[\\x02\\ufffe]([^\\W\\d_]+)`` finds them from left to right: letters the break
    before took are not the next one's (``ab\\x02cd\\x02ef`` is one break), a mark without letters on
    both sides is none."""
    breaks = []
    backwards, size, taken = raw[::-1], len(raw), 0  # taken: where the last break's letters end
    for mark in _LAYER_BREAK.finditer(raw):
        head = _LETTERS.match(backwards, size - mark.start())  # the letters before the mark, reversed
        if head is None or not mark.group(1) or size - head.end() < taken:
            continue
        breaks.append((head.group()[::-1], mark.group(1)))
        taken = mark.end()
    return tuple(breaks)


def hyphenated(head: str, tail: str, words: DocumentWords, known: Callable[[str], bool]) -> str:
    """A word broken over a line-end hyphen, mended: whole where the document prints it whole or
    ``known`` (the word lists) has it and the document does not print it hyphenated as a compound;
    ``pre- and`` before a conjunction; else hyphenated (``well-known``)."""
    if tail.casefold() in _CONJUNCTIONS:
        return f"{head}- {tail}"
    whole = (head + tail).casefold()
    if not words.prints_compound(f"{head}-{tail}".casefold()) and (known(whole) or words.prints_whole(whole)):
        return head + tail
    return f"{head}-{tail}"


def _filled_lengths(lines: Sequence[str]) -> list[int]:
    """The lengths of the (stripped) non-blank lines, in C: every line of every page is measured."""
    return list(filter(None, map(len, map(str.strip, lines))))


_LINE_OF = operator.attrgetter("line")


def _typical_length(lengths: Sequence[int]) -> int:
    """The typical of the (stripped, non-blank) lines' lengths: the body's full lines."""
    ordered = sorted(lengths)
    return ordered[min(len(ordered) - 1, int(TYPICAL_QUANTILE * len(ordered)))] if ordered else 0


def is_list_item(line: str) -> bool:
    """A line (stripped) opening with a bullet or an enumerator."""
    if not line or line[0] not in _MARKER_FIRST:
        return False
    if line[0].isalnum() and ")" not in line[1:5] and "." not in line[1:5]:  # most lines: no regex asked
        return False
    return _LIST_MARKER.match(line) is not None


def ends_paragraph(line: str, typical: int) -> bool:
    """A line (stripped) clearly shorter than the page's typical line that ends a sentence."""
    return len(line) < SHORT_LINE * typical and line.rstrip(_CLOSERS)[-1:] in _SENTENCE_ENDS


def join_lines(first: str, second: str, words: DocumentWords, known: Callable[[str], bool]) -> str:
    """Two lines as one: a word broken by a hyphen at the end of the first and going on in lower
    case is mended (``hyphenated``); other lines (a dash after a space among them) join with a
    space, a hyphen after a figure or before a capital without one."""
    first, second = first.rstrip(), second.strip()
    if not first.endswith(_HYPHENS) or len(first) < 2 or first[-2].isspace():
        return f"{first} {second}"  # a dash set off by a space is punctuation
    broken, after = _BROKEN_WORD.search(first), _FIRST_WORD.match(second)
    if broken is not None and after is not None and second[0].islower():
        head, tail = broken.group(1), after.group(1)
        mended = hyphenated(head, tail, words, known)
        return f"{first[: broken.start()]}{mended}{second[after.end():]}"
    return f"{first}{second}"  # numbers (``1990-2000``), names (``Poincaré-Modell``), compounds


def known_word(word: str) -> bool:
    """Whether the word lists know ``word``: the dictionary evidence of hyphenation repair. The
    module is imported on first need only (assemble, which joins the paragraphs, has no other use
    for marisa-trie), and then found in ``sys.modules``: an import statement costs 0.7 µs a call,
    five times the lookup it guards, and this is asked of every word broken over a line."""
    words = sys.modules.get("papersift.lexicon") or importlib.import_module("papersift.lexicon")
    return bool(words.lexicon().knows(word))


def join_paragraph_lines(parts: Sequence[str], words: DocumentWords, known: Callable[[str], bool]) -> str:
    """A paragraph's (stripped) lines as one text, each line-end hyphen mended by ``join_lines``."""
    pieces = [parts[0]]
    for part in parts[1:]:
        if pieces[-1].endswith(_HYPHENS):
            pieces[-1] = join_lines(pieces[-1], part, words, known)
        else:
            pieces.append(part)
    return " ".join(pieces)


def _mended_breaks(breaks: Sequence[Sequence[str]], words: DocumentWords,
                   known: Callable[[str], bool]) -> dict[str, str]:
    """The page's words the text layer joined over a hyphen that read otherwise mended: joined -> mended."""
    out = {}
    for head, tail in breaks:
        mended = hyphenated(head, tail, words, known)
        if mended != head + tail:
            out[head + tail] = mended
    return out


def _mend_layer_breaks(text: str, mended: dict[str, str]) -> str:
    # a joined word is whole letters either side of the break (``hyphen_breaks``): a plain
    # replace finds it where a word-bounded regex would cost a scan per paragraph
    for joined, form in mended.items():
        if joined in text:
            text = text.replace(joined, form)
    return text


def paragraphs(lines: Sequence[str], taken: set[int], typical: int, words: DocumentWords,
               known: Callable[[str], bool] = known_word, breaks: Sequence[Sequence[str]] = ()) -> list[Block]:
    """The page's lines not ``taken`` (running heads, headings) as paragraph and list-item blocks:
    consecutive lines join until a blank or taken line, a list marker, a line that ends its
    paragraph (``ends_paragraph``), or a stub of a line (or one ending in a figure, a table's row)
    the next does not go on from in lower case.
    A page of no prose (``MIN_PROSE_CHARS``) keeps its lines as they are, in ``LINES`` blocks (so
    that every body line is in a block: a block export leaves none out). ``breaks``: the
    words the text layer joined over a hyphen (``hyphen_breaks``), mended the same way."""
    if typical < MIN_PROSE_CHARS:
        return line_runs(lines, taken)
    out: list[Block] = []
    parts: list[str] = []
    stub = False
    mended = _mended_breaks(breaks, words, known) if breaks else {}
    stub_length = STUB_LINE * typical

    def close() -> None:
        text = join_paragraph_lines(parts, words, known)
        out[-1].text = _mend_layer_breaks(text, mended) if mended else text
        out[-1].lines = len(parts)
        parts.clear()

    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or index in taken:
            if parts:
                close()
            continue
        listed = is_list_item(stripped)
        if not parts or listed or (stub and not stripped[0].islower()):
            if parts:
                close()
            out.append(Block(role=LIST_ITEM if listed else PARAGRAPH, text="", line=index))
        parts.append(stripped)
        if ends_paragraph(stripped, typical):
            close()
        stub = (len(stripped) < stub_length and not stripped.endswith(_NO_STUB_ENDS)) or stripped[-1].isdigit()
    if parts:
        close()
    return out


def line_runs(lines: Sequence[str], taken: set[int]) -> list[Block]:
    """The runs of consecutive non-blank lines not ``taken``, each a ``LINES`` block."""
    out: list[Block] = []
    for index, line in enumerate(lines):
        if index in taken or not line.strip():
            continue
        if out and out[-1].line + out[-1].lines == index:
            out[-1].text += "\n" + line.strip()
            out[-1].lines += 1
        else:
            out.append(Block(role=LINES, text=line.strip(), line=index))
    return out


def _list_markdown(text: str) -> str:
    """A list item as Markdown: a bullet as ``-``, ``1.`` and ``1)`` as they are (ordered lists),
    any other enumerator kept after a ``-``."""
    marker, _, rest = text.partition(" ")
    if marker in "•-–*▪◦●‣":
        return f"- {rest.strip()}"
    if marker[:-1].isdigit():
        return text
    return f"- {text}"


def markdown_body(lines: Sequence[str], blocks: Sequence[Block], page: int = 0) -> str:
    """A page's body lines as Markdown: running heads left out, headings as ``#`` lines and
    paragraphs set off by blank lines, list items one a line, tables in their place (marked as
    document.md marks a page's tables: ``page`` is its number); a line no block covers as it is."""
    by_line = {block.line: block for block in blocks}
    out: list[str] = []
    index = 0
    previous = ""
    while index < len(lines):
        block = by_line.get(index)
        if block is None:
            out.append(plain_text(lines[index]))
            index += 1
            previous = ""
            continue
        if block.role == HEADING:
            out.extend(["", f"{'#' * block.level} {block.text}", ""])
        elif block.role in _PARAGRAPH_ROLES:
            out.extend(["", plain_text(block.text), ""])
        elif block.role == LIST_ITEM:
            if previous != LIST_ITEM:
                out.append("")
            out.append(_list_markdown(block.text))
        elif block.role == LINES:
            out.extend(plain_text(line) for line in lines[index:index + block.lines])
        elif block.role == TABLE:
            out.extend(["", f"<!-- table page={page} index={block.table} -->", block.text, ""])
        if block.role in _PARAGRAPH_ROLES or block.role in (LIST_ITEM, HEADING, LINES, TABLE):
            previous = block.role
        index += block.lines
    return "\n".join(line for k, line in enumerate(out) if line or (k and out[k - 1])).strip("\n")
