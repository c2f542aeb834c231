"""Generate the sample drop for the README's main job: a few real-looking documents of
each common type plus the bad inputs a real dump always has."""

from __future__ import annotations

import io
import sys
import zipfile
from pathlib import Path

from docx import Document
from openpyxl import Workbook
from PIL import Image, ImageDraw, ImageFont
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

TENDER_LINES = [
    "EDITAL DE LICITAÇÃO Nº 12/2026 — PREGÃO ELETRÔNICO",
    "Objeto: aquisição de equipamentos de informática para as escolas municipais.",
    "Valor estimado da contratação: R$ 147.200,04 (cento e quarenta e sete mil reais).",
    "A sessão pública será realizada no dia 15 de dezembro de 2026, às 10 horas.",
]


def tender_pdf(pages: int = 12) -> bytes:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    for number in range(1, pages + 1):
        y = A4[1] - 72
        pdf.setFont("Helvetica-Bold", 13)
        pdf.drawString(72, y, f"Página {number} de {pages}")
        pdf.setFont("Helvetica", 11)
        for line in TENDER_LINES:
            y -= 20
            pdf.drawString(72, y, line)
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def scanned_pdf() -> bytes:
    """A page that is only a picture of text: no text layer, so it needs OCR."""
    image = Image.new("L", (1240, 400), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=36)
    draw.text((40, 60), "Scanned memo: the archive was digitised in 2019.", fill=0, font=font)
    draw.text((40, 140), "Every page of this memo is an image.", fill=0, font=font)
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A4)
    from reportlab.lib.utils import ImageReader

    pdf.drawImage(ImageReader(image), 36, A4[1] - 300, width=A4[0] - 72, height=230)
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def minutes_docx() -> bytes:
    doc = Document()
    doc.add_heading("Ata da reunião de abertura das propostas", level=1)
    doc.add_paragraph("Reuniram-se os membros da comissão para abrir as propostas recebidas.")
    table = doc.add_table(rows=3, cols=3)
    for row, values in zip(table.rows, [("Empresa", "Lote", "Valor"), ("Alfa Ltda", "1", "R$ 52.000,00"),
                                         ("Beta S.A.", "2", "R$ 95.200,04")], strict=True):
        for cell, value in zip(row.cells, values, strict=True):
            cell.text = value
    doc.add_paragraph("Nada mais havendo a tratar, a sessão foi encerrada.")
    buffer = io.BytesIO()
    doc.save(buffer)
    return buffer.getvalue()


def budget_xlsx() -> bytes:
    book = Workbook()
    sheet = book.active
    sheet.title = "Budget"
    sheet.append(["Item", "Quantity", "Unit price", "Total"])
    for item, qty, price in [("Laptop", 40, 3200.0), ("Projector", 12, 2100.0), ("Router", 8, 450.5)]:
        sheet.append([item, qty, price, qty * price])
    schedule = book.create_sheet("Schedule")
    schedule.append(["Milestone", "Date"])
    schedule.append(["Proposals due", "2026-12-15"])
    schedule.append(["Delivery", "2027-02-01"])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "edital-12-2026.pdf": tender_pdf(),
        "scanned-memo.pdf": scanned_pdf(),
        "ata-abertura.docx": minutes_docx(),
        "budget.xlsx": budget_xlsx(),
        "release-notes-utf16.txt": "Release notes\nOCR runs only where the text layer is missing.\n".encode("utf-16"),
        "broken.pdf": tender_pdf(2)[:700],
        "empty.txt": b"",
        "firmware.bin": bytes(range(256)) * 16,
        "report-without-extension": tender_pdf(1),
    }
    bundle = io.BytesIO()
    with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("anexos/ata-abertura.docx", files["ata-abertura.docx"])
        archive.writestr("anexos/planilha.xlsx", files["budget.xlsx"])
        archive.writestr("leia-me.txt", "Anexos do edital 12/2026.\n")
    files["anexos-edital.zip"] = bundle.getvalue()
    for name, data in files.items():
        (out / name).write_bytes(data)
    print(f"wrote {len(files)} sample files to {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "build/samples"))
