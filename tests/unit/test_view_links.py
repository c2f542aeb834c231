"""An archive's view through the catalog: a copy per expiry window and page version whose member
links outlive every URL handed out for it (S3 on moto; the table is a fake of one item)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest
from botocore.config import Config
from moto import mock_aws
from test_report_page import page, report

from papersift.catalog import Catalog, member_links_of, view_copy_days
from papersift.report import MemberReport
from papersift.report_page import render_report_page
from papersift.settings import Settings

BUCKET = "papersift-documents"
ARCHIVE = "d" + "a" * 40
MEMBERS = ("d" + "1" * 40, "d" + "2" * 40)
#: a window start for 900-s windows (a multiple of 900 seconds since the epoch)
WINDOW_START = datetime.fromtimestamp(900 * 1_990_000, UTC)


class _Table:
    def __init__(self, item: dict[str, Any]) -> None:
        self.item = item

    def get_item(self, **_: Any) -> dict[str, Any]:
        return {"Item": self.item}


@pytest.fixture
def s3() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1", config=Config(signature_version="s3v4"))  # as the API
        client.create_bucket(Bucket=BUCKET)
        archive = report([page(1)], doc_id=ARCHIVE, detected_type="zip", members=[
            MemberReport(path=f"m{n}.txt", status="clean", doc_id=member) for n, member in enumerate(MEMBERS)])
        client.put_object(Bucket=BUCKET, Key=f"results/{ARCHIVE}/report.html",
                          Body=render_report_page(archive).encode("utf-8"))
        yield client


def catalog(s3: Any, at: datetime) -> Catalog:
    item = {"doc_id": ARCHIVE, "status": "clean", "member_count": 2}
    return Catalog(s3=s3, table=_Table(item), sfn=None, bucket=BUCKET, state_machine_arn="", settings=Settings(),
                   clock=lambda: at)


def member_expiries(s3: Any, key: str) -> set[int]:
    copy = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read().decode("utf-8")
    assert sorted(member_links_of(copy)) == sorted(MEMBERS)
    return {int(parse_qs(urlsplit(href.replace("&amp;", "&")).query)["X-Amz-Expires"][0])
            for href in copy.split('href="')[1:] if "X-Amz-Expires" in href.split('"')[0]}


def copy_key(url: str) -> str:
    return urlsplit(url).path.split(f"/{BUCKET}/", 1)[-1].lstrip("/")


def test_a_copy_is_reused_within_its_window_and_its_member_links_outlive_any_url_of_it(s3: Any) -> None:
    first = catalog(s3, WINDOW_START + timedelta(seconds=100)).result_link(ARCHIVE, "view")
    key = copy_key(first.url)
    assert key.startswith(f"views/{ARCHIVE}/1990000-") and key.endswith("/report.html")
    assert member_expiries(s3, key) == {900 - 100 + 900}, "until the window's end plus one link lifetime"
    later = catalog(s3, WINDOW_START + timedelta(seconds=899)).result_link(ARCHIVE, "view")
    assert copy_key(later.url) == key and later.size == first.size, "the same window: the same copy"
    assert later.expires_in == 900 <= 900 - 100 + 900 - (899 - 100), "its URL ends before the copy's links"
    next_window = catalog(s3, WINDOW_START + timedelta(seconds=900)).result_link(ARCHIVE, "view")
    assert copy_key(next_window.url) != key


def test_a_rerun_page_gets_a_new_copy_within_the_same_window(s3: Any) -> None:
    at = WINDOW_START + timedelta(seconds=10)
    key = copy_key(catalog(s3, at).result_link(ARCHIVE, "view").url)
    s3.put_object(Bucket=BUCKET, Key=f"results/{ARCHIVE}/report.html", Body=s3.get_object(
        Bucket=BUCKET, Key=f"results/{ARCHIVE}/report.html")["Body"].read() + b"\n")
    assert copy_key(catalog(s3, at).result_link(ARCHIVE, "view").url) != key


@pytest.mark.parametrize(("seconds", "days"), [(900, 1), (43_200, 1), (43_201, 2), (604_800, 14)])
def test_view_copies_are_kept_two_link_lifetimes_in_whole_days(seconds: int, days: int) -> None:
    assert view_copy_days(Settings(api_download_url_seconds=seconds)) == days
