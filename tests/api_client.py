"""A caller of the papersift API over real HTTP, signing requests with SigV4 the way the AWS SDKs do."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import requests
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

#: statuses of a document whose run has not recorded a result
IN_PROGRESS = frozenset({"awaiting_upload", "queued", "running"})


class ApiClient:
    def __init__(self, base_url: str, access_key: str = "testing", secret_key: str = "testing",
                 region: str = "us-east-1", headers: Mapping[str, str] | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.credentials = Credentials(access_key, secret_key)
        self.region = region
        self.headers = dict(headers or {})
        self.session = requests.Session()

    def call(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None, sign: bool = True,
             headers: Mapping[str, str] | None = None) -> requests.Response:
        data = raw if raw is not None else (json.dumps(body).encode("utf-8") if body is not None else b"")
        all_headers = {**self.headers, **({"Content-Type": "application/json"} if data else {}), **(headers or {})}
        url = self.base_url + path
        if sign:
            request = AWSRequest(method=method, url=url, data=data, headers=all_headers)
            SigV4Auth(self.credentials, "execute-api", self.region).add_auth(request)
            all_headers = dict(request.headers.items())
        return self.session.request(method, url, data=data, headers=all_headers, timeout=60)

    def json(self, method: str, path: str, body: Any = None, expect: int = 200) -> dict[str, Any]:
        response = self.call(method, path, body)
        assert response.status_code == expect, (response.status_code, response.text)
        return dict(response.json())

    def wait_finished(self, doc_id: str, timeout: float = 120.0) -> dict[str, Any]:
        """Poll GET /documents/{id} until its run has recorded a result and, with the export step
        on, its export is no longer pending (the run ends with that step)."""
        deadline = time.monotonic() + timeout
        while True:
            document = self.json("GET", f"/documents/{doc_id}")
            pending = (document.get("export") or {}).get("status") == "pending"
            if (document["status"] not in IN_PROGRESS and not pending) or time.monotonic() > deadline:
                return document
            time.sleep(0.2)
