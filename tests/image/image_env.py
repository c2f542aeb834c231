"""Running the container image as Lambda runs it, with buildah instead of a container engine.

`podman run` cannot start containers here (crun may not set rlimits); `buildah from` + `buildah
run --isolation chroot` can, sharing the host's loopback, so a handler in the image reaches a
moto server and the Runtime API stand-in (lambda_runtime.py) on 127.0.0.1. Every working
container is removed after use.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import subprocess
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lambda_runtime import Invocation, RuntimeApi

from papersift.settings import Settings

REPO = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO / "scripts" / "build_image.sh"
IMAGE_DIR = REPO / "build" / "image"
BUCKET = "papersift-image-test"
TABLE = "papersift-image-test"
# Lambda runs container images as a non-root user: /var/task and /opt are then read-only, /tmp
# is writable, as there. (993:990 is the sandbox user Lambda uses.)
LAMBDA_USER = "993:990"
# Images and working containers of this checkout carry this name: builds and test runs from other
# worktrees on the machine neither move the tag nor prune the image under a running test, and
# containers a killed run left behind can be told from another checkout's.
CHECKOUT_TAG = "test-" + hashlib.sha256(str(REPO).encode()).hexdigest()[:12]


def container_functions() -> list[str]:
    """The functions scripts/build_image.sh builds by default (the stack's container functions)."""
    listed = subprocess.run(["bash", str(BUILD_SCRIPT), "--list"], capture_output=True, text=True, check=True)
    return listed.stdout.split()


def _buildah(*args: str, timeout: float = 120) -> str:
    done = subprocess.run(["buildah", *args], capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"buildah {' '.join(args)} failed: {done.stderr}"
    return done.stdout


@dataclass
class Container:
    """A working container of an image; commands run as the Lambda user unless ``user`` says otherwise."""

    name: str
    config: dict[str, Any]

    def argv(self, command: list[str], env: Mapping[str, str], user: str) -> list[str]:
        flags = ["--isolation", "chroot", "--user", user]
        for key, value in env.items():
            flags += ["--env", f"{key}={value}"]
        return ["buildah", "run", *flags, self.name, "--", *command]

    def run(self, command: list[str], *, env: Mapping[str, str] = {}, stdin: bytes | None = None,
            user: str = LAMBDA_USER, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(self.argv(command, env, user), input=stdin, capture_output=True, timeout=timeout)

    def output(self, command: list[str], **kwargs: Any) -> str:
        done = self.run(command, **kwargs)
        assert done.returncode == 0, f"{command} failed in the image:\n{done.stderr.decode(errors='replace')}"
        return done.stdout.decode()

    @property
    def entrypoint(self) -> list[str]:
        """What Lambda runs: the image's ENTRYPOINT followed by its CMD."""
        return [*(self.config.get("Entrypoint") or []), *(self.config.get("Cmd") or [])]


@contextlib.contextmanager
def container(image_id: str) -> Iterator[Container]:
    config = json.loads(_buildah("inspect", "--type", "image", image_id))["OCIv1"]["config"]
    name = _buildah("from", "--pull=false", "--name", f"papersift-{CHECKOUT_TAG}-{uuid.uuid4().hex[:8]}",
                    image_id).strip()
    try:
        yield Container(name, config)
    finally:
        _buildah("rm", name)


def remove_leftover_containers() -> None:
    """Working containers of this checkout that a killed test run could not remove."""
    for name in _buildah("containers", "--format", "{{.ContainerName}}").split():
        if name.startswith(f"papersift-{CHECKOUT_TAG}-"):
            _buildah("rm", name)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Aws:
    """A moto server on loopback and a host-side S3 client of it."""

    endpoint_url: str
    s3: Any


def lambda_environment(function: str, aws: Aws, settings: Settings) -> dict[str, str]:
    """What the stack and Lambda set for a container function, pointed at the moto server."""
    return {
        **settings.to_env(),
        "AWS_LAMBDA_FUNCTION_NAME": f"papersift-{function}",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "3008",
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_ENDPOINT_URL": aws.endpoint_url,
        "BUCKET_NAME": BUCKET,
        "TABLE_NAME": TABLE,
        "POWERTOOLS_SERVICE_NAME": "papersift",
        "POWERTOOLS_METRICS_NAMESPACE": "PapersiftImageTest",
        "POWERTOOLS_TRACE_DISABLED": "true",  # no X-Ray daemon here
        "HOME": "/tmp",
    }


@dataclass
class Invoked:
    invocations: list[Invocation]
    init_error: dict[str, Any] | None
    polled: bool
    log: str

    def result(self, index: int = 0) -> Any:
        inv = self.invocations[index]
        assert self.init_error is None, f"the handler did not start: {self.init_error}\n{self.log}"
        assert inv.error is None, f"the handler failed: {inv.error}\n{self.log}"
        return inv.response


def invoke(image_id: str, function: str, events: list[dict[str, Any]], aws: Aws,
           settings: Settings | None = None, timeout: float = 300) -> Invoked:
    """Run the image as Lambda does (its entry point, the Lambda user, the function's environment)
    and hand it ``events`` through the Runtime API, one after another in one warm environment."""
    env = lambda_environment(function, aws, settings or Settings())
    with RuntimeApi(f"papersift-{function}", events) as api, container(image_id) as ctr:
        env["AWS_LAMBDA_RUNTIME_API"] = api.address
        process = subprocess.Popen(ctr.argv(ctr.entrypoint, env, LAMBDA_USER), stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        finished = api.wait(timeout)
        try:
            # after the last event /next answers 500 and the runtime client exits
            output = process.communicate(timeout=60 if finished else 1)[0]
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output = process.communicate()[0]
        log = output.decode(errors="replace")
        assert finished, f"no result within {timeout} s:\n{log}"
        return Invoked(api.invocations, api.init_error, api.polled.is_set(), log)
