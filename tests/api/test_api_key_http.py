"""The API in its api_key mode, through real HTTP: the key on every route, and the stage throttle.

A server of its own (a few seconds), configured through Settings exactly as the stack is.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from api_client import ApiClient

from papersift.settings import Settings
from papersift_cli.api_server import LocalApi

pytestmark = pytest.mark.slow
KEY = "local-test-key-0123456789"


@pytest.fixture(scope="module")
def api() -> Iterator[LocalApi]:
    settings = Settings(api_auth="api_key", api_throttle_rate=0.5, api_throttle_burst=4)
    with LocalApi(settings, api_keys=[KEY]) as served:
        yield served


def test_requests_without_the_api_key_or_with_another_are_refused_and_with_it_answered(api: LocalApi) -> None:
    anonymous = ApiClient(api.url).call("GET", "/documents", sign=False)
    assert (anonymous.status_code, anonymous.json()["error"]["code"]) == (403, "not_authenticated")
    wrong = ApiClient(api.url, headers={"x-api-key": "guessed"}).call("GET", "/documents", sign=False)
    assert (wrong.status_code, wrong.json()["error"]["code"]) == (403, "invalid_api_key")
    keyed = ApiClient(api.url, headers={"x-api-key": KEY})
    assert keyed.call("GET", "/documents", sign=False).status_code == 200


def test_past_the_burst_requests_are_throttled_with_429(api: LocalApi) -> None:
    keyed = ApiClient(api.url, headers={"x-api-key": KEY})
    statuses = [keyed.call("GET", "/documents", sign=False) for _ in range(6)]
    throttled = [r for r in statuses if r.status_code == 429]
    assert throttled, [r.status_code for r in statuses]
    assert throttled[0].json() == {"error": {"code": "throttled", "message": "Too Many Requests", "field": None}}
