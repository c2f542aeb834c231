"""Image tests: the image scripts/build_image.sh builds, and a moto server its handlers talk to."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator

import boto3
import pytest
from image_env import (
    BUCKET,
    BUILD_SCRIPT,
    CHECKOUT_TAG,
    IMAGE_DIR,
    REPO,
    Aws,
    container_functions,
    free_port,
    remove_leftover_containers,
)


@pytest.fixture(scope="session")
def images() -> dict[str, str]:
    """Image id per container function, built (or found unchanged) by the script, tagged for this checkout."""
    if os.geteuid() != 0 and shutil.which("buildah") is None:
        pytest.skip("the image build needs buildah, which only root can install (scripts/build_image.sh)")
    env = {**os.environ, "PAPERSIFT_IMAGE_TAG": CHECKOUT_TAG}
    done = subprocess.run(["bash", str(BUILD_SCRIPT)], cwd=REPO, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, f"scripts/build_image.sh failed:\n{done.stderr[-6000:]}"
    remove_leftover_containers()
    return {fn: (IMAGE_DIR / f"{fn}.iid").read_text().strip() for fn in container_functions()}


@pytest.fixture(scope="module")
def aws() -> Iterator[Aws]:
    """A moto server on loopback with the test bucket; the host's boto3 and the image's both use it."""
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        endpoint = f"http://127.0.0.1:{port}"
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")
        s3.create_bucket(Bucket=BUCKET)
        yield Aws(endpoint, s3)
    finally:
        server.stop()
