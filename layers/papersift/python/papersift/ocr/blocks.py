"""An OCR'd page's structure blocks from the engine's layout: one paragraph block a paragraph of
the reading's text (its lines joined, end-of-line hyphenation mended as ``structure`` mends a PDF's),
with the box the engine gave it. text.txt keeps the reading's lines as they are."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from papersift.ocr.reading import OcrReading
from papersift.structure import (
    HEADING,
    LINES,
    PARAGRAPH,
    Block,
    DocumentWords,
    join_paragraph_lines,
    known_word,
    line_runs,
)


def paragraph_blocks(reading: OcrReading, lines: Sequence[str],
                     known: Callable[[str], bool] = known_word) -> list[Block]:
    """The runs of non-blank ``lines`` (the page's body lines: the reading's text) as blocks
    boxed by ``reading.boxes``, one box a run, each of its role in ``reading.roles`` (a paragraph
    where the engine names none; a ``lines`` block keeps its lines); none when the engine gave no
    boxes or they do not match the runs one for one (the page's text is then not the reading's)."""
    runs = line_runs(lines, set())
    if not reading.boxes or len(runs) != len(reading.boxes):
        return []
    roles = reading.roles if len(reading.roles) == len(reading.boxes) else (PARAGRAPH,) * len(runs)
    words = DocumentWords([lines])
    out = []
    for run, box, role in zip(runs, reading.boxes, roles, strict=True):
        role, _, level = role.partition(":")
        # a lines block keeps its lines as they are, one a line (a list, a table's text)
        text = run.text if role == LINES else join_paragraph_lines(run.text.split("\n"), words, known)
        out.append(Block(role=role, text=text, line=run.line, lines=run.lines,
                         level=int(level) if role == HEADING and level.isdigit() else 0, bbox=list(box)))
    return out
