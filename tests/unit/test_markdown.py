"""Text written into document.md reads as the text it is, not as Markdown structure."""

from __future__ import annotations

import pytest

from papersift.markdown import plain_text


@pytest.mark.parametrize(("line", "written"), [
    ("# comment", "\\# comment"),
    ("###### six", "\\###### six"),
    ("> quoted", "\\> quoted"),
    ("```python", "\\```python"),
    ("~~~", "\\~~~"),
    ("<script>alert(1)</script>", "\\<script>alert(1)</script>"),
    ("| a | b |", "\\| a | b |"),
    ("===", "\\==="),
    ("-", "\\-"),
    ("* * *", "\\* * *"),
    ("    indented code", "indented code"),
    ("  # indented heading", "\\# indented heading"),
])
def test_a_line_start_markdown_reads_as_structure_is_escaped(line: str, written: str) -> None:
    assert plain_text(line) == written


@pytest.mark.parametrize("line", ["#hashtag", "C# and F#", "a > b", "x < y", "- a list item", "1. first",
                                  "*emphasis* stays", "a---b", "2 < 3"])
def test_text_that_markdown_reads_as_text_is_left_as_it_is(line: str) -> None:
    assert plain_text(line) == line


def test_every_line_of_a_paragraph_is_looked_at() -> None:
    assert plain_text("first\n# second\nthird") == "first\n\\# second\nthird"
