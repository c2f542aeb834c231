"""Ruled tables through `papersift run --tables`: a marker and a Markdown table in document.md,
the table counted on its page in report.json; without the flag, no table at all."""

from __future__ import annotations

import json
from pathlib import Path

from pdf_factory import table_pdf

from papersift_cli.main import main


def test_ruled_revenue_table_becomes_a_markdown_table_only_when_tables_are_asked_for(tmp_path: Path) -> None:
    (tmp_path / "inputs").mkdir()
    (tmp_path / "inputs" / "revenue.pdf").write_bytes(table_pdf())
    with_tables, without = tmp_path / "with", tmp_path / "without"
    assert main(["run", str(tmp_path / "inputs"), "--out", str(with_tables), "--tables", "--quiet"]) == 0
    assert main(["run", str(tmp_path / "inputs"), "--out", str(without), "--quiet"]) == 0

    markdown = (with_tables / "revenue.pdf" / "document.md").read_text(encoding="utf-8")
    assert "<!-- table page=1 index=0 -->" in markdown
    rows = [" ".join(line.split()) for line in markdown.splitlines() if line.lstrip().startswith("|")]
    assert "| Region | Revenue | Growth |" in rows, markdown
    assert "| North | 1,200 | 4% |" in rows
    assert "| East | 1,430 | 7% |" in rows
    assert any(set(row.replace(" ", "")) <= set("|-:") for row in rows), "no header separator row"
    report = json.loads((with_tables / "revenue.pdf" / "report.json").read_text(encoding="utf-8"))
    assert report["status"] == "clean", report["reason"]
    assert report["pages"][0]["tables"] >= 1

    plain = (without / "revenue.pdf" / "document.md").read_text(encoding="utf-8")
    assert "<!-- table" not in plain
    assert "Quarterly figures for all regions" in plain
    report = json.loads((without / "revenue.pdf" / "report.json").read_text(encoding="utf-8"))
    assert report["pages"][0]["tables"] == 0
