"""What an OCR engine read from one picture of a page: the one result type of both engines."""

from __future__ import annotations

from dataclasses import dataclass, field

from papersift.content import Table

TESSERACT = "tesseract"
TEXTRACT = "textract"
#: a box as fractions of a page or picture: x0, y0, x1, y1 from the top left
Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class OcrReading:
    """One engine's reading of one page picture.

    ``text`` holds the lines in reading order, joined by ``\\n``; blocks (paragraphs, columns)
    are separated by an empty line. ``confidence`` is the mean word confidence on 0..1 (None
    when no word was found), which the page's verdict weighs beside the text itself.
    """

    engine: str
    text: str
    #: mean word confidence, 0..1; None when the engine found no words
    confidence: float | None
    #: words the engine recognised (with a confidence)
    words: int
    seconds: float
    #: the model(s) that produced the text, as Tesseract names them ("eng", "deu", "jpn_vert",
    #: "eng+por"); None for Textract, which does not say
    language: str | None = None
    #: the script Tesseract's orientation and script detection (OSD) named: Latin, Arabic, Han, ...
    script: str | None = None
    #: degrees (0, 90, 180, 270) the picture was turned clockwise to read it upright
    orientation: int = 0
    #: degrees of small-angle skew corrected before recognition
    skew: float = 0.0
    #: the Textract operation that read the page: DetectDocumentText or AnalyzeDocument
    api: str | None = None
    #: tables the engine found (Textract AnalyzeDocument with TABLES)
    tables: tuple[Table, ...] = field(default_factory=tuple)
    #: what the engine decided on the way and why, for the page's report ("re-read with deu:
    #: confidence 0.91 against 0.78 with eng+por+spa", "OSD found too few characters")
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: per paragraph of ``text`` (runs of lines between blank lines), the box around its words as
    #: fractions of the page (x0, y0, x1, y1 from the top left); empty when the engine gave none
    boxes: tuple[Box, ...] = field(default_factory=tuple)
    #: per box, the role its paragraph has in the page's structure (papersift.structure's roles;
    #: a heading as ``heading:LEVEL``); empty when every one is a paragraph (Tesseract)
    roles: tuple[str, ...] = field(default_factory=tuple)


def reading_to_dict(reading: OcrReading) -> dict[str, object]:
    """JSON of a reading, so a retried OCR step reuses what an engine already read."""
    out = dict(vars(reading))
    out["tables"] = [dict(vars(table)) for table in reading.tables]
    out["notes"] = list(reading.notes)
    out["boxes"] = [list(box) for box in reading.boxes]
    out["roles"] = list(reading.roles)
    return out


def reading_from_dict(data: dict[str, object]) -> OcrReading:
    values = dict(data)
    tables = values.pop("tables", [])
    notes = values.pop("notes", [])
    boxes = values.pop("boxes", [])
    roles = values.pop("roles", [])
    assert isinstance(tables, list) and isinstance(notes, list) and isinstance(boxes, list)
    assert isinstance(roles, list)
    return OcrReading(**values, tables=tuple(Table(**table) for table in tables),  # type: ignore[arg-type]
                      notes=tuple(str(note) for note in notes),
                      boxes=tuple((float(x0), float(y0), float(x1), float(y1)) for x0, y0, x1, y1 in boxes),
                      roles=tuple(str(role) for role in roles))
