#!/usr/bin/env python3
"""Build the Lambda layers without Docker.

The core library layer is ``layers/papersift`` itself; its one built part, the word lists
compiled from pyspellchecker (``papersift.lexicon``), is brought up to date first (a no-op
when current). pip downloads manylinux wheels for the Lambda runtime (python3.12 on arm64, the
stack's Graviton functions) into ``build/layers/deps/python``, the directory the CDK stack turns
into the dependency LayerVersion.
A stamp file records the hash of the requirements and the pip arguments; while it matches,
the script returns at once and needs no network, which is why cdk.json can run it before
every synth.

Usage: scripts/build_layers.py [--force]
Environment: PAPERSIFT_SKIP_LAYER_BUILD=1 skips the build (the stack then synthesizes an
empty placeholder layer and warns that it must not be deployed).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from infra.deployment import MACHINE, RUNTIME

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "layers" / "papersift" / "python"
REQUIREMENTS = ROOT / "layers" / "requirements.txt"
CONSTRAINTS = ROOT / "constraints.txt"  # the locked versions (scripts/lock_dependencies.sh)
LAYER_DIR = ROOT / "build" / "layers" / "deps"
STAMP = LAYER_DIR / ".requirements.sha256"

PYTHON_VERSION = RUNTIME.removeprefix("python")  # the stack's runtime (infra/deployment.py)
# Lambda python3.12 runs on Amazon Linux 2023 (glibc 2.34): every manylinux tag up to 2.34 fits.
# MACHINE: the functions' architecture (infra/deployment.py); a wheel for another machine would
# import on none of them. The platforms are part of the stamp: a layer built for another
# architecture is rebuilt.
PLATFORMS = tuple(f"{tag}_{MACHINE}" for tag in ("manylinux2014", "manylinux_2_28", "manylinux_2_34"))


def pip_arguments(target: Path) -> list[str]:
    args = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile"]
    for platform in PLATFORMS:
        args += ["--platform", platform]
    args += [
        "--implementation",
        "cp",
        "--python-version",
        PYTHON_VERSION,
        "--only-binary=:all:",
        "--upgrade",
        "--target",
        str(target),
        "-r",
        str(REQUIREMENTS),
        "-c",
        str(CONSTRAINTS),
    ]
    return args


def fingerprint() -> str:
    digest = hashlib.sha256(REQUIREMENTS.read_bytes() + CONSTRAINTS.read_bytes())
    digest.update(" ".join((*PLATFORMS, PYTHON_VERSION)).encode())
    return digest.hexdigest()


def is_current() -> bool:
    return STAMP.is_file() and STAMP.read_text().strip() == fingerprint()


def build() -> None:
    """Install into a fresh temporary directory and swap it in, so a failed pip run never leaves
    a half-built layer that looks current."""
    staging = LAYER_DIR.with_name(LAYER_DIR.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    target = staging / "python"
    target.mkdir(parents=True)
    subprocess.run(pip_arguments(target), check=True)
    for junk in list(target.rglob("__pycache__")) + list(target.glob("*.dist-info/RECORD")):
        if junk.is_dir():
            shutil.rmtree(junk, ignore_errors=True)
    (staging / STAMP.name).write_text(fingerprint() + "\n")
    shutil.rmtree(LAYER_DIR, ignore_errors=True)
    staging.rename(LAYER_DIR)


def size_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def compile_word_lists() -> None:
    """The core layer's word lists, by the library's own compiler (no network needed)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(CORE), os.environ.get("PYTHONPATH"))))}
    subprocess.run([sys.executable, "-m", "papersift.lexicon"], env=env, check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--force", action="store_true", help="rebuild even when the stamp matches")
    args = parser.parse_args(argv)
    compile_word_lists()
    if os.environ.get("PAPERSIFT_SKIP_LAYER_BUILD") == "1":
        print("build_layers: skipped (PAPERSIFT_SKIP_LAYER_BUILD=1)", file=sys.stderr)
        return 0
    if is_current() and not args.force:
        return 0
    try:
        build()
    except subprocess.CalledProcessError as exc:
        print(
            f"build_layers: pip failed ({exc.returncode}); PyPI must be reachable to build the layer.\n"
            "To synthesize without it, set PAPERSIFT_SKIP_LAYER_BUILD=1 (the stack then warns that the "
            "placeholder layer must not be deployed).",
            file=sys.stderr,
        )
        return 1
    print(f"build_layers: {LAYER_DIR.relative_to(ROOT)} built, {size_mb(LAYER_DIR):.0f} MB unzipped", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
