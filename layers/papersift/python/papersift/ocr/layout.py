"""An OCR'd page's structure blocks from the engine's layout: one paragraph block a paragraph of
the reading's text (its lines joined, end-of-line hyphenation mended as ``structure`` mends a PDF's),
with the box the engine gave it. text.txt keeps the reading's lines as they are."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from papersift.ocr.reading import OcrReading
from papersift.structure import HEADING, LINES, PARAGRAPH, Block, DocumentWords, join_lines


def _known(word: str) -> bool:
    from papersift.lexicon import lexicon  # the word lists are mapped on first need only

    return lexicon().knows(word)


def paragraph_blocks(reading: OcrReading, lines: Sequence[str], known: Callable[[str], bool] = _known) -> list[Block]:
    """The runs of non-blank ``lines`` (the page's body lines: the reading's text) as blocks
    boxed by ``reading.boxes``, one box a run, each of its role in ``reading.roles`` (a paragraph
    where the engine names none; a ``lines`` block keeps its lines); none when the engine gave no boxes or they
    do not match the runs one for one (the page's text is then not the reading's)."""
    runs: list[tuple[int, int]] = []
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        if runs and sum(runs[-1]) == index:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((index, 1))
    if not reading.boxes or len(runs) != len(reading.boxes):
        return []
    roles = reading.roles if len(reading.roles) == len(reading.boxes) else (PARAGRAPH,) * len(runs)
    words = DocumentWords([lines])
    out = []
    for (start, count), box, role in zip(runs, reading.boxes, roles, strict=True):
        role, _, level = role.partition(":")
        if role == LINES:  # kept as they are, one a line (a list, a table's text)
            text = "\n".join(line.strip() for line in lines[start:start + count])
        else:
            text = lines[start].strip()
            for line in lines[start + 1:start + count]:
                text = join_lines(text, line, words, known)
        out.append(Block(role=role, text=text, line=start, lines=count,
                         level=int(level) if role == HEADING and level.isdigit() else 0, bbox=list(box)))
    return out
