"""The container image of the unpack, extract, OCR and export functions, built here and run as Lambda
runs it: its own entry point (awslambdaric) fed through the Runtime API, as a non-root user,
its handlers reading and writing a moto S3 on loopback."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from archive_factory import have
from image_env import BUCKET, TABLE, Aws, container, container_functions, invoke
from scan_factory import LINES, image_bytes, text_image

from papersift.settings import Settings
from papersift.steps.contracts import ExtractResult, RunInput, UnpackRequest, UnpackResult
from papersift.steps.plan import plan_document
from papersift.storage import S3ObjectStore

pytestmark = [pytest.mark.image, pytest.mark.slow]

LEGACY = Path(__file__).resolve().parents[1] / "fixtures" / "legacy"
# Tesseract models the OCR step chooses from: the configured Latin languages, orientation and
# script detection, and the models OSD's script names pick (issue 7).
TESSERACT_MODELS = {"eng", "por", "spa", "deu", "fra", "osd", "ara", "jpn", "jpn_vert", "chi_sim"}
# Binaries the core calls: archives/tools.py and patool, pdf_engines.py, formats/legacy.py, OCR.
BINARIES = ("7z", "unar", "lsar", "bsdtar", "cabextract", "arj", "lha", "zstd", "pdftotext", "pdftoppm",
            "pdfinfo", "antiword", "catdoc", "tesseract")


@pytest.mark.parametrize("function", container_functions())
def test_each_served_handler_loads_under_the_runtime_interface_client(images: dict[str, str], aws: Aws,
                                                                        function: str) -> None:
    """The image's entry point imports functions/<name>/app.py (module-level clients, settings from
    the environment) and asks the Runtime API for work; an import error would be an init error."""
    invoked = invoke(images[function], function, [], aws)
    assert invoked.init_error is None, f"{function} did not start: {invoked.init_error}\n{invoked.log}"
    assert invoked.polled, f"{function}'s runtime never asked for an event:\n{invoked.log}"


def test_image_holds_every_tesseract_model_the_ocr_step_chooses_from(images: dict[str, str]) -> None:
    with container(images[container_functions()[0]]) as ctr:
        listed = ctr.output(["tesseract", "--list-langs"]).split("\n")[1:]
    wanted = TESSERACT_MODELS | set(Settings().ocr_languages)
    assert wanted <= {lang.strip() for lang in listed}, f"missing: {sorted(wanted - set(listed))}"


def test_image_holds_every_binary_the_core_calls(images: dict[str, str]) -> None:
    script = "import shutil, sys; print(' '.join(b for b in sys.argv[1:] if shutil.which(b) is None))"
    with container(images[container_functions()[0]]) as ctr:
        missing = ctr.output(["python3", "-c", script, *BINARIES]).split()
    assert missing == [], f"not in the image: {missing}"


def test_tesseract_in_the_image_reads_a_generated_scanned_page(images: dict[str, str]) -> None:
    """pytesseract, the Tesseract binary and its English model in the image, on a page with no text layer."""
    script = ("import io, sys, pytesseract; from PIL import Image; "
              "print(pytesseract.image_to_string(Image.open(io.BytesIO(sys.stdin.buffer.read())), lang='eng'))")
    with container(images[container_functions()[0]]) as ctr:
        page = image_bytes(text_image(skew=1.5))
        text = ctr.output(["python3", "-c", script], stdin=page, env={"HOME": "/tmp"})
    words = " ".join(text.split())
    for line in LINES:
        assert line in words, f"{line!r} not in {words!r}"


@pytest.mark.skipif(not have("7z"), reason="the 7z fixture is made with p7zip on the host")
def test_unpack_handler_in_the_image_opens_a_7z_archive_and_uploads_its_members(
        images: dict[str, str], aws: Aws, tmp_path: Path) -> None:
    """7z archives are read by the 7z binary: the image must carry it and the handler must find it."""
    (tmp_path / "src" / "minutes").mkdir(parents=True)
    (tmp_path / "src" / "minutes" / "2019.txt").write_text("Minutes of the 2019 tender board.\n")
    (tmp_path / "src" / "budget.csv").write_text("item,value\nroads,52000\n")
    subprocess.run(["7z", "a", "-bd", "-y", str(tmp_path / "papers.7z"), "."], cwd=tmp_path / "src",
                   check=True, capture_output=True)
    document = RunInput.for_object(BUCKET, "incoming/papers.7z")
    aws.s3.upload_file(str(tmp_path / "papers.7z"), BUCKET, document.key)
    plan = plan_document(S3ObjectStore(aws.s3, BUCKET), document, Settings())
    assert (plan.status, plan.kind) == ("archive", "7z")

    request = UnpackRequest(**document.ref.model_dump(), plan=plan)
    unpacked = UnpackResult.model_validate(
        invoke(images["unpack"], "unpack", [request.model_dump(mode="json")], aws).result())

    assert (unpacked.status, unpacked.member_count) == ("ok", 2), unpacked
    assert sorted(item.archive_path or "" for item in unpacked.items) == ["budget.csv", "minutes/2019.txt"]
    (minutes,) = [item for item in unpacked.items if item.archive_path == "minutes/2019.txt"]
    assert minutes.key.startswith(f"members/{document.doc_id}/")
    member = aws.s3.get_object(Bucket=BUCKET, Key=minutes.key)["Body"].read()
    assert member == b"Minutes of the 2019 tender board.\n"


def test_extract_handler_in_the_image_reads_a_legacy_doc_with_antiword(images: dict[str, str], aws: Aws) -> None:
    """Word 97-2003 files are read by antiword (catdoc as fallback): binaries only the image has in Lambda."""
    document = RunInput.for_object(BUCKET, "incoming/edital.doc")
    aws.s3.put_object(Bucket=BUCKET, Key=document.key, Body=(LEGACY / "edital.doc").read_bytes())
    plan = plan_document(S3ObjectStore(aws.s3, BUCKET), document, Settings())
    assert (plan.status, plan.kind, plan.batch_count) == ("ready", "doc", 1), plan

    batches = [batch.model_dump(mode="json") for batch in plan.batches]
    summary = ExtractResult.model_validate(invoke(images["extract"], "extract", batches, aws).result())

    assert summary.pages == 1, summary
    key = f"work/{document.doc_id}/pages/00001.json"
    page = json.loads(aws.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read())
    assert page["report"]["engine"] in ("antiword", "catdoc"), page["report"]
    assert "Edital de licitação nº 7/2026" in page["text"], page["text"][:300]


def test_ocr_handler_in_the_image_reads_a_scanned_page_the_extract_handler_sent_it(
        images: dict[str, str], aws: Aws) -> None:
    """The OCR step as it runs in Lambda: the extract handler (in the image) sends page 2 of a PDF
    whose second page is a scan, cutting it as a one-page PDF; the OCR plan lists it; the OCR
    handler (in the image) reads it with the image's Tesseract and writes the page."""
    from pdf_factory import native_and_scanned_pdf

    from papersift.steps.contracts import OcrPlanRequest, OcrResult
    from papersift.steps.ocr_plan import plan_ocr

    document = RunInput.for_object(BUCKET, "incoming/ofício assinado.pdf")
    aws.s3.put_object(Bucket=BUCKET, Key=document.key, Body=native_and_scanned_pdf())
    store = S3ObjectStore(aws.s3, BUCKET)
    plan = plan_document(store, document, Settings())
    batches = [batch.model_dump(mode="json") for batch in plan.batches]
    extracted = ExtractResult.model_validate(invoke(images["extract"], "extract", batches, aws).result())
    assert extracted.ocr_pages == 1, extracted
    (item,) = plan_ocr(store, OcrPlanRequest(**document.ref.model_dump(), plan=plan), Settings()).items
    assert item.page == 2 and item.input_key.endswith(".pdf")

    result = OcrResult.model_validate(invoke(images["ocr"], "ocr", [item.model_dump(mode="json")], aws).result())

    assert (result.status, result.engine) == ("ocr", "tesseract"), result
    page = json.loads(aws.s3.get_object(Bucket=BUCKET, Key=f"work/{document.doc_id}/ocr/pages/00002.json")
                      ["Body"].read())["page"]
    words = " ".join(page["text"].split())
    for line in LINES:
        assert line in words, f"{line!r} not in {words!r}"
    # an upright English scan read surely with the first configured model: no OSD, no second read
    assert page["report"]["ocr"]["model"] == "eng" and page["report"]["ocr"]["renderer"] == "pdfium"
    assert any("sure" in note for note in page["report"]["ocr"]["notes"]), page["report"]["ocr"]


def test_export_handler_in_the_image_writes_the_documents_parquet_and_records_it(
        images: dict[str, str], aws: Aws) -> None:
    """The export step as it runs in Lambda (Settings.export_parquet): the image's pyarrow writes a
    document's page records from its results to exports/<doc_id>.parquet, and the handler records
    that on the document's item."""
    import io

    import boto3
    import pyarrow.parquet as pq

    from papersift.export import COLUMN_NAMES
    from papersift.steps.contracts import ExportRequest, ExportResult

    dynamodb = boto3.client("dynamodb", endpoint_url=aws.endpoint_url, region_name="us-east-1",
                            aws_access_key_id="testing", aws_secret_access_key="testing")
    if TABLE not in dynamodb.list_tables()["TableNames"]:
        dynamodb.create_table(TableName=TABLE, KeySchema=[{"AttributeName": "doc_id", "KeyType": "HASH"}],
                              AttributeDefinitions=[{"AttributeName": "doc_id", "AttributeType": "S"}],
                              BillingMode="PAY_PER_REQUEST")
    document = RunInput.for_object(BUCKET, "incoming/relatório anual.pdf")
    report = {"doc_id": document.doc_id, "source": {"name": document.source_name, "bucket": BUCKET,
                                                     "key": document.key},
              "detected_type": "pdf", "status": "clean",
              "pages": [{"number": n, "status": "clean", "engine": "pdfium", "confidence": 1.0, "language": "pt"}
                        for n in (1, 2)]}
    prefix = f"results/{document.doc_id}/"
    aws.s3.put_object(Bucket=BUCKET, Key=prefix + "report.json", Body=json.dumps(report).encode())
    aws.s3.put_object(Bucket=BUCKET, Key=prefix + "text.txt", Body=b"Receitas do ano.\fDespesas do ano.")
    dynamodb.put_item(TableName=TABLE, Item={"doc_id": {"S": document.doc_id}, "status": {"S": "clean"}})

    request = ExportRequest(**document.ref.model_dump())
    result = ExportResult.model_validate(
        invoke(images["export"], "export", [request.model_dump(mode="json")], aws,
               Settings(export_parquet=True)).result())

    assert (result.status, result.key, result.rows) == ("written", f"exports/{document.doc_id}.parquet", 2), result
    body = aws.s3.get_object(Bucket=BUCKET, Key=result.key)["Body"].read()
    table = pq.read_table(io.BytesIO(body))
    assert table.column_names == list(COLUMN_NAMES)
    assert [(r["page"], r["text"], r["source_name"]) for r in table.to_pylist()] == [
        (1, "Receitas do ano.", "relatório anual.pdf"), (2, "Despesas do ano.", "relatório anual.pdf")]
    item = dynamodb.get_item(TableName=TABLE, Key={"doc_id": {"S": document.doc_id}})["Item"]
    assert (item["export_status"]["S"], item["export_key"]["S"]) == ("written", result.key)
