"""The API through real HTTP on loopback: `papersift serve`'s server, handler and embedded AWS.

One server for the whole module (LocalApi: moto, the stack's resources, the API Lambda's own
handler behind werkzeug, IAM SigV4 checked on every request).
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest
import requests
from api_client import ApiClient
from archive_factory import zip_bytes
from botocore.exceptions import ClientError
from pdf_factory import encrypted_pdf, text_pdf
from readme_session import run_readme_curl_session

from papersift.catalog import Catalog
from papersift.settings import Settings
from papersift_cli.api_server import LocalApi

pytestmark = pytest.mark.slow
INLINE_LIMIT = 200_000
PASSWORD = "Tr0ub4dor&3-lighthouse"
UNKNOWN_ID = "d" + "0" * 40


@pytest.fixture(scope="module")
def api() -> Iterator[LocalApi]:
    with LocalApi(Settings(api_inline_max_bytes=INLINE_LIMIT), log_level="DEBUG") as served:
        yield served


@pytest.fixture(scope="module")
def client(api: LocalApi) -> ApiClient:
    return ApiClient(api.url)


def inline(client: ApiClient, name: str, data: bytes, **fields: Any) -> str:
    body = {"file_name": name, "content_base64": base64.b64encode(data).decode("ascii"), **fields}
    return str(client.json("POST", "/documents:extract", body, expect=202)["doc_id"])


def fetch(link: dict[str, Any]) -> bytes:
    """A presigned result URL, fetched without any credentials, as a browser would."""
    response = requests.get(link["url"], timeout=30)
    assert response.status_code == 200, response.text
    return response.content


def error_of(response: requests.Response) -> dict[str, Any]:
    assert response.headers["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"} and {"code", "message", "field"} <= set(body["error"]), body
    assert "Traceback" not in response.text
    return dict(body["error"])


def test_presigned_upload_runs_the_pipeline_and_text_report_and_view_can_be_fetched(
        api: LocalApi, client: ApiClient) -> None:
    submitted = client.json("POST", "/documents", {"file_name": "harbour memo.pdf",
                                                   "options": {"clean_text": True}}, expect=201)
    doc_id, upload = submitted["doc_id"], submitted["upload"]
    assert submitted["status"] == "awaiting_upload"
    assert client.json("GET", f"/documents/{doc_id}")["status"] == "awaiting_upload"
    pdf = text_pdf(["The harbour master inspected the lighthouse.", "Second page: the budget for buoys."])
    put = requests.put(upload["url"], data=pdf, headers=upload["headers"], timeout=30)
    assert put.status_code == 200, put.text

    document = client.wait_finished(doc_id)
    assert (document["status"], document["trusted"], document["page_count"]) == ("clean", True, 2)
    assert document["pages"] == {"clean": 2} and document["source_name"] == "harbour memo.pdf"
    text = fetch(client.json("GET", f"/documents/{doc_id}/text")).decode("utf-8")
    assert text.split("\f") == ["The harbour master inspected the lighthouse.", "Second page: the budget for buoys."]
    report_link = client.json("GET", f"/documents/{doc_id}/report")
    assert report_link["report"]["status"] == "clean", "a small report comes inline"
    assert api.aws.results.read(f"results/{doc_id}/text.clean.txt"), "the upload's options reached the run"
    assert json.loads(fetch(report_link)) == report_link["report"]
    assert b"harbour master" in fetch(client.json("GET", f"/documents/{doc_id}/markdown"))
    view = client.json("GET", f"/documents/{doc_id}/view")
    assert view["content_type"] == "text/html; charset=utf-8"
    assert b'id="page-strip"' in fetch(view)
    assert document["export"] is None, "the export step is off by default"
    response = client.call("GET", f"/documents/{doc_id}/export")
    assert response.status_code == 404 and "export_parquet" in error_of(response)["message"], response.text


def test_passwords_open_the_file_and_appear_in_no_url_item_report_history_or_log(
        api: LocalApi, client: ApiClient, capfd: pytest.CaptureFixture[str]) -> None:
    submitted = client.json("POST", "/documents", {"file_name": "sealed.pdf", "passwords": ["wrong", PASSWORD]},
                            expect=201)
    upload, doc_id = submitted["upload"], submitted["doc_id"]
    options_header = upload["headers"]["x-amz-meta-papersift-options"]
    assert PASSWORD not in upload["url"] and options_header not in upload["url"], "signed as a header, not a query"
    sealed = encrypted_pdf(text_pdf(["Sealed tender for the bridge repairs."]), user_password=PASSWORD)
    assert requests.put(upload["url"], data=sealed, headers=upload["headers"], timeout=30).status_code == 200
    document = client.wait_finished(doc_id)
    assert document["status"] == "clean", document["reason"]

    s3, sfn = api.aws.client("s3"), api.aws.client("stepfunctions")
    item = api.aws.results.items()[doc_id]
    report = client.json("GET", f"/documents/{doc_id}/report")["report"]
    page = fetch(client.json("GET", f"/documents/{doc_id}/view")).decode("utf-8")
    arn = f"{api.aws.state_machine_arn.replace(':stateMachine:', ':execution:')}:{doc_id}"
    history = json.dumps(sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"], default=str)
    responses = json.dumps([client.json("GET", f"/documents/{doc_id}"), client.json("GET", "/documents")])
    logs = "".join(capfd.readouterr())
    for where, text in (("item", json.dumps(item, default=str)), ("report", json.dumps(report)), ("page", page),
                        ("history", history), ("responses", responses), ("logs", logs)):
        assert PASSWORD not in text and options_header not in text, f"a password leaked into the {where}"
    results = s3.list_objects_v2(Bucket=api.aws.bucket, Prefix=f"results/{doc_id}/")["Contents"]
    assert all("papersift-options" not in s3.head_object(Bucket=api.aws.bucket, Key=o["Key"])["Metadata"]
               for o in results)


def test_inline_extract_stores_the_file_and_runs_it_like_a_drop(client: ApiClient) -> None:
    doc_id = inline(client, "notes.txt", b"Field notes: the heron returned to the marsh.\n")
    document = client.wait_finished(doc_id)
    assert (document["status"], document["detected_type"]) == ("clean", "txt")
    assert "heron returned" in fetch(client.json("GET", f"/documents/{doc_id}/text")).decode("utf-8")


def test_inline_file_over_the_limit_is_413_naming_the_field(client: ApiClient) -> None:
    body = {"file_name": "big.txt", "content_base64": base64.b64encode(b"x" * (INLINE_LIMIT + 1)).decode()}
    response = client.call("POST", "/documents:extract", body)
    assert response.status_code == 413
    error = error_of(response)
    assert (error["code"], error["field"]) == ("payload_too_large", "content_base64")


def test_listing_pages_newest_first_through_every_document_and_filters_by_status(
        api: LocalApi, client: ApiClient) -> None:
    api.aws.reset_documents()
    waiting = [client.json("POST", "/documents", {"file_name": f"w{n}.pdf"}, expect=201)["doc_id"] for n in range(5)]
    finished = inline(client, "done.txt", b"A finished document about orchards.\n")
    client.wait_finished(finished)

    seen: list[dict[str, Any]] = []
    token: str | None = None
    while True:
        page = client.json("GET", "/documents?limit=2" + (f"&next={token}" if token else ""))
        assert len(page["items"]) <= 2
        seen += page["items"]
        token = page["next"]
        if not token:
            break
    assert sorted(i["doc_id"] for i in seen) == sorted([*waiting, finished]), "every document exactly once"
    stamps = [i["updated_at"] for i in seen]
    assert stamps == sorted(stamps, reverse=True), "newest first"
    submitted = client.json("GET", "/documents?status=submitted&limit=100")["items"]
    assert sorted(i["doc_id"] for i in submitted) == sorted(waiting)
    assert [i["doc_id"] for i in client.json("GET", "/documents?status=clean")["items"]] == [finished]


def test_listing_refuses_bad_parameters_naming_them(client: ApiClient) -> None:
    for query, field in (("limit=0", "limit"), ("limit=101", "limit"), ("status=shiny", "status"),
                         ("next=bm90LWEta2V5", "next")):
        response = client.call("GET", f"/documents?{query}")
        assert response.status_code == 400, query
        assert error_of(response)["field"] == field
    token = client.json("GET", "/documents?limit=1")["next"]
    assert token, "there are documents from the earlier tests"
    wrong = client.call("GET", f"/documents?status=clean&next={token}")
    assert (wrong.status_code, error_of(wrong)["field"]) == (400, "next"), "a token of another listing"


def test_a_pdfs_attachments_are_listed_with_their_kind_and_deleted_with_it(api: LocalApi, client: ApiClient) -> None:
    from attachment_factory import pdf_with_attachments

    pdf = pdf_with_attachments("A cover page that holds a note.", {"note.txt": b"The note speaks of bridges.\n"})
    doc_id = inline(client, "holder.pdf", pdf)
    document = client.wait_finished(doc_id)
    assert document["member_count"] == 1 and document["page_count"] == 1
    (member,) = document["members"]
    assert (member["path"], member["kind"], member["status"]) == ("attachments/note.txt", "pdf_attachment", "clean")
    deleted = client.json("DELETE", f"/documents/{doc_id}")
    assert deleted["deleted_documents"] == 2
    for gone in (doc_id, member["doc_id"]):
        assert client.call("GET", f"/documents/{gone}").status_code == 404


class _MemberLinks(HTMLParser):
    """doc_id -> href of each member link of a report.html, as a browser's tokenizer reads them."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.hrefs: dict[str, str] = {}
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "a" and found.get("data-member-doc"):
            self.hrefs[str(found["data-member-doc"])] = str(found.get("href"))


def test_an_archives_view_links_each_member_to_its_own_page_from_the_presigned_url(
        api: LocalApi, client: ApiClient) -> None:
    """A relative member link from a presigned URL is an unsigned request S3 refuses: the view the
    API hands out links each member by a presigned GET, a browser follows it to the member's page."""
    archive = zip_bytes({"a/first.txt": b"The first member speaks of rivers.\n",
                         "second.txt": b"The second member speaks of hills.\n"})
    doc_id = inline(client, "two members.zip", archive)
    document = client.wait_finished(doc_id)
    members = {m["path"]: m["doc_id"] for m in document["members"]}
    assert set(members) == {"a/first.txt", "second.txt"}

    view = client.json("GET", f"/documents/{doc_id}/view")
    page = fetch(view).decode("utf-8")
    assert view["size"] == len(page.encode("utf-8"))
    stored_key = f"results/{doc_id}/report.html"
    relative = _MemberLinks(api.aws.results.read(stored_key).decode("utf-8")).hrefs
    stored_url = api.aws.client("s3").generate_presigned_url("get_object", Params={"Bucket": api.aws.bucket,
                                                                                  "Key": stored_key})
    assert requests.get(urljoin(stored_url, relative[members["second.txt"]]), timeout=30).status_code == 403, \
        "the stored page's relative link, followed from a presigned URL, is refused"
    links = _MemberLinks(page).hrefs
    assert set(links) == set(members.values())
    for path, member in members.items():
        followed = requests.get(links[member], timeout=30)
        assert followed.status_code == 200, followed.text
        assert followed.headers["Content-Type"] == "text/html; charset=utf-8"
        assert "<title>" in followed.text and path.rpartition("/")[2] in followed.text
        assert f"results/{member}/report.html" in links[member] and "X-Amz-Signature=" in links[member]
    again = client.json("GET", f"/documents/{doc_id}/view")
    assert again["url"].split("?")[0] == view["url"].split("?")[0], "the copy is reused within its window"
    single = inline(client, "plain.txt", b"No members here.\n")
    client.wait_finished(single)
    assert f"/results/{single}/report.html" in client.json("GET", f"/documents/{single}/view")["url"]


def test_delete_removes_results_work_files_members_and_items_of_an_archive(api: LocalApi, client: ApiClient) -> None:
    archive = zip_bytes({"a/first.txt": b"The first member speaks of rivers.\n",
                         "second.txt": b"The second member speaks of hills.\n"})
    doc_id = inline(client, "bundle.zip", archive)
    document = client.wait_finished(doc_id)
    assert f"/views/{doc_id}/" in client.json("GET", f"/documents/{doc_id}/view")["url"], "a copy to delete"
    assert document["member_count"] == 2 and {m["path"] for m in document["members"]} == {"a/first.txt",
                                                                                          "second.txt"}
    members = [m["doc_id"] for m in document["members"]]
    assert all(client.json("GET", f"/documents/{m}")["status"] == "clean" for m in members)

    deleted = client.json("DELETE", f"/documents/{doc_id}")
    assert deleted["deleted_documents"] == 3 and deleted["deleted_objects"] > 6
    for gone in (doc_id, *members):
        response = client.call("GET", f"/documents/{gone}")
        assert (response.status_code, error_of(response)["code"]) == (404, "not_found")
    versions = api.aws.client("s3").list_object_versions(Bucket=api.aws.bucket)
    keys = [v["Key"] for v in versions.get("Versions", []) + versions.get("DeleteMarkers", [])]
    assert not [k for k in keys if any(i in k for i in (doc_id, *members))], "every version is gone"
    assert not {doc_id, *members} & set(api.aws.results.items())


def test_delete_during_the_run_is_409_and_works_once_it_finished(api: LocalApi, client: ApiClient) -> None:
    entered, release = threading.Event(), threading.Event()
    plan = api.aws.handlers["plan"]

    def slow_plan(event: Any, context: Any) -> Any:
        entered.set()
        release.wait(60)
        return plan(event, context)

    api.aws.handlers["plan"] = slow_plan
    try:
        doc_id = inline(client, "slow.txt", b"A document that takes its time.\n")
        assert entered.wait(60)
        assert client.json("GET", f"/documents/{doc_id}")["status"] == "running"
        response = client.call("DELETE", f"/documents/{doc_id}")
        assert (response.status_code, error_of(response)["code"]) == (409, "document_running")
    finally:
        release.set()
        api.aws.handlers["plan"] = plan
    finished = client.wait_finished(doc_id)
    assert finished["status"] == "clean", finished["reason"]
    assert client.json("DELETE", f"/documents/{doc_id}")["deleted_documents"] == 1


def test_unknown_documents_are_404_and_malformed_ids_or_bodies_400_naming_the_field(client: ApiClient) -> None:
    for path in (f"/documents/{UNKNOWN_ID}", f"/documents/{UNKNOWN_ID}/text", f"/documents/{UNKNOWN_ID}/view"):
        response = client.call("GET", path)
        assert (response.status_code, error_of(response)["code"]) == (404, "not_found"), path
    assert client.call("DELETE", f"/documents/{UNKNOWN_ID}").status_code == 404
    cases: list[tuple[str, str, Any, str]] = [
        ("GET", "/documents/not-an-id", None, "doc_id"),
        ("GET", f"/documents/{UNKNOWN_ID}/pdf", None, "kind"),
        ("POST", "/documents", {"file_name": "a.pdf", "colour": "blue"}, "colour"),
        ("POST", "/documents", {"file_name": "../etc/passwd"}, "file_name"),
        ("POST", "/documents", {}, "file_name"),
        ("POST", "/documents", {"file_name": "a.pdf", "options": {"ocr_mode": "always"}}, "options.ocr_mode"),
        ("POST", "/documents", {"file_name": "a.pdf", "passwords": ["x" * 300]}, "passwords.0"),
        ("POST", "/documents:extract", {"file_name": "a.txt", "content_base64": "***"}, "content_base64"),
    ]
    for method, path, body, field in cases:
        response = client.call(method, path, body)
        assert response.status_code == 400, (path, body, response.text)
        error = error_of(response)
        assert (error["code"], error["field"]) == ("bad_request", field), error
    assert "x" * 300 not in client.call("POST", "/documents", cases[6][2]).text, "the value is never echoed"
    broken = client.call("POST", "/documents", raw=b'{"file_name": ')
    assert broken.status_code == 400 and error_of(broken)["code"] == "bad_request"


def test_failures_inside_answer_500_or_429_with_a_code_and_never_a_trace(
        client: ApiClient, monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(*args: Any) -> Any:
        raise RuntimeError("internal detail that must not leak")

    monkeypatch.setattr(Catalog, "describe", crash)
    response = client.call("GET", f"/documents/{UNKNOWN_ID}")
    assert (response.status_code, error_of(response)["code"]) == (500, "internal")
    assert "internal detail" not in response.text

    def busy(*args: Any) -> Any:
        raise ClientError({"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "slow down"}},
                          "Query")

    monkeypatch.setattr(Catalog, "list_documents", busy)
    response = client.call("GET", "/documents")
    assert (response.status_code, error_of(response)["code"]) == (429, "throttled")
    assert response.json() == {"error": {"code": "throttled", "message": "a back end is busy: retry with backoff",
                                         "field": None}}


ROUTES = [("POST", "/documents"), ("POST", "/documents:extract"), ("GET", "/documents"),
          ("GET", f"/documents/{UNKNOWN_ID}"), ("DELETE", f"/documents/{UNKNOWN_ID}")] + [
    ("GET", f"/documents/{UNKNOWN_ID}/{kind}") for kind in ("text", "markdown", "report", "view", "export")]


def test_anonymous_and_badly_signed_requests_are_refused_on_every_route(api: LocalApi) -> None:
    anonymous, impostor = ApiClient(api.url), ApiClient(api.url, secret_key="not-the-secret")
    for method, path in ROUTES:
        response = anonymous.call(method, path, {"file_name": "a.pdf"}, sign=False)
        assert (response.status_code, error_of(response)["code"]) == (403, "not_authenticated"), path
        response = impostor.call(method, path, {"file_name": "a.pdf"})
        assert (response.status_code, error_of(response)["code"]) == (403, "invalid_signature"), path
    stranger = ApiClient(api.url, access_key="AKIDSTRANGER").call("GET", "/documents")
    assert (stranger.status_code, error_of(stranger)["code"]) == (403, "access_denied")


def test_a_body_changed_after_signing_is_refused(api: LocalApi, client: ApiClient) -> None:
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    signed = AWSRequest(method="POST", url=api.url + "/documents", data=b'{"file_name": "a.pdf"}',
                        headers={"Content-Type": "application/json"})
    SigV4Auth(client.credentials, "execute-api", "us-east-1").add_auth(signed)
    response = requests.post(api.url + "/documents", data=b'{"file_name": "b.pdf"}', headers=dict(signed.headers),
                             timeout=30)
    assert (response.status_code, error_of(response)["code"]) == (403, "invalid_signature")


def test_the_readme_curl_session_submits_uploads_polls_and_fetches_the_text(
        api: LocalApi, tmp_path: Path) -> None:
    """The README's session, run as written (curl --aws-sigv4 and jq) against this server; the same
    session against the `papersift serve` command is in test_serve_command.py."""
    run_readme_curl_session(api.url, tmp_path)


def test_a_body_that_is_not_json_is_400_naming_the_body_never_a_character_offset(client: ApiClient) -> None:
    for raw in (b'{"file_name": ', b"not json at all", b'{"file_name": "a.pdf",}'):
        response = client.call("POST", "/documents", raw=raw)
        error = error_of(response)
        assert (response.status_code, error["code"], error["field"]) == (400, "bad_request", "body"), raw
        assert error["message"].startswith("body: not valid JSON"), error


def test_a_body_that_is_not_utf8_is_400_naming_the_body(client: ApiClient) -> None:
    for path in ("/documents", "/documents:extract"):
        response = client.call("POST", path, raw=b'{"file_name": "caf\xe9.pdf"}')
        error = error_of(response)
        assert (response.status_code, error["code"], error["field"]) == (400, "bad_request", "body"), path
        assert "UTF-8" in error["message"]


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x", "application/xml",
                                          "application/json; charset=iso-8859-1"])
def test_a_body_of_another_media_type_is_415(client: ApiClient, content_type: str) -> None:
    response = client.call("POST", "/documents", {"file_name": "a.pdf"}, headers={"Content-Type": content_type})
    error = error_of(response)
    assert (response.status_code, error["code"]) == (415, "unsupported_media_type"), response.text
    assert "application/json" in error["message"]


def test_json_with_a_utf8_charset_or_without_a_content_type_is_taken(client: ApiClient) -> None:
    for headers in ({"Content-Type": "application/json; charset=UTF-8"}, {"Content-Type": "Application/JSON"},
                    {"Content-Type": ""}):
        response = client.call("POST", "/documents", {"file_name": "a.pdf"}, headers=headers)
        assert response.status_code == 201, (headers, response.text)


def test_a_second_delete_of_a_document_is_404_like_its_get(client: ApiClient) -> None:
    doc_id = inline(client, "twice.txt", b"A document deleted twice.\n")
    client.wait_finished(doc_id)
    assert client.json("DELETE", f"/documents/{doc_id}")["deleted_documents"] == 1
    assert client.call("GET", f"/documents/{doc_id}").status_code == 404
    again = client.call("DELETE", f"/documents/{doc_id}")
    assert (again.status_code, error_of(again)["code"]) == (404, "not_found")
    waiting = client.json("POST", "/documents", {"file_name": "never-uploaded.pdf"}, expect=201)["doc_id"]
    assert client.json("DELETE", f"/documents/{waiting}")["deleted_documents"] == 1
    assert client.call("DELETE", f"/documents/{waiting}").status_code == 404


@pytest.mark.parametrize(("name", "problem"), [
    ("bell\x07.pdf", "U+0007"), ("del\x7f.pdf", "U+007F"), ("c1\x85.pdf", "U+0085"), ("line\u2028.pdf", "U+2028"),
    ("invoice\u202etxt.exe", "U+202E"), ("zero\u200bwidth.pdf", "U+200B"), ("private\ue000.pdf", "U+E000"),
    ("\U0001f4c4" * 255, "bytes of UTF-8"), ("a" * 256, "at most 255"), ("..", "'..'"), ("a\\b.pdf", "'/'"),
])
def test_a_file_name_s3_or_a_file_system_would_refuse_or_that_hides_characters_is_400(
        client: ApiClient, name: str, problem: str) -> None:
    for path, extra in (("/documents", {}), ("/documents:extract", {"content_base64": "eA=="})):
        response = client.call("POST", path, {"file_name": name, **extra})
        error = error_of(response)
        assert (response.status_code, error["code"], error["field"]) == (400, "bad_request", "file_name"), error
        assert problem in error["message"], error


def test_a_file_name_is_taken_in_nfc_up_to_255_bytes(api: LocalApi, client: ApiClient) -> None:
    decomposed = "Re\u0301sume\u0301.pdf"
    submitted = client.json("POST", "/documents", {"file_name": decomposed}, expect=201)
    assert client.json("GET", f"/documents/{submitted['doc_id']}")["source_name"] == "R\u00e9sum\u00e9.pdf"
    longest = "\U0001f4c4" * 62 + "a.pdf"  # 248 + 5 bytes
    submitted = client.json("POST", "/documents", {"file_name": longest}, expect=201)
    key = api.aws.results.items()[submitted["doc_id"]]["source_key"]
    assert key.endswith("/" + longest) and len(key.encode("utf-8")) <= 1024


def test_a_presigned_url_takes_one_upload_and_refuses_a_second_with_412(api: LocalApi, client: ApiClient) -> None:
    submitted = client.json("POST", "/documents", {"file_name": "once.txt"}, expect=201)
    upload = submitted["upload"]
    assert upload["headers"]["If-None-Match"] == "*"
    assert "if-none-match" in upload["url"].lower(), "the condition is signed in: a client cannot leave it out"
    first = requests.put(upload["url"], data=b"The first upload.\n", headers=upload["headers"], timeout=30)
    assert first.status_code == 200, first.text
    second = requests.put(upload["url"], data=b"A second upload.\n", headers=upload["headers"], timeout=30)
    assert second.status_code == 412 and "PreconditionFailed" in second.text
    document = client.wait_finished(submitted["doc_id"])
    assert "first upload" in fetch(client.json("GET", f"/documents/{document['doc_id']}/text")).decode("utf-8")


def test_an_upload_with_urllib_s_default_form_content_type_is_stored_as_sent(api: LocalApi, client: ApiClient) -> None:
    """urllib sends a PUT body as application/x-www-form-urlencoded unless told: S3 stores it all the
    same, and so must the embedded S3 (it hung a minute on a binary body, stored an empty one else)."""
    import os
    import time
    import urllib.request

    submitted = client.json("POST", "/documents", {"file_name": "form-typed.bin"}, expect=201)
    upload = submitted["upload"]
    data = os.urandom(1 << 20)
    request = urllib.request.Request(upload["url"], data=data, method="PUT", headers=upload["headers"])
    started = time.monotonic()
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200
    assert time.monotonic() - started < 10
    key = api.aws.results.items()[submitted["doc_id"]]["source_key"]
    stored = api.aws.client("s3").get_object(Bucket=api.aws.bucket, Key=key)
    assert stored["Body"].read() == data
    assert stored["ContentType"] == "application/x-www-form-urlencoded"
