"""Build the third-party dependency layer without Docker.

`pip install --platform manylinux2014_x86_64 --only-binary=:all:` downloads wheels built for the
Lambda Python 3.12 runtime (Amazon Linux 2023, x86_64) whatever the build machine is, so `cdk
synth` needs neither Docker nor AWS credentials. The result is cached under `layers/deps/<hash>/`
keyed by the requirements file, so only the first synth pays for the download.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

PLATFORM = "manylinux2014_x86_64"
PYTHON_VERSION = "3.12"


def deps_layer_dir(requirements: Path, cache_root: Path) -> Path:
    """Return a folder holding `python/<packages>` for the requirements, building it if needed.

    Raises RuntimeError with pip's output when the packages cannot be installed.
    """
    key = hashlib.sha256(
        requirements.read_bytes() + f"{PLATFORM}|{PYTHON_VERSION}".encode()
    ).hexdigest()[:16]
    target = cache_root / key
    marker = target / ".complete"
    if marker.exists():
        return target
    staging = cache_root / f"{key}.staging"
    shutil.rmtree(staging, ignore_errors=True)
    command = [
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--platform", PLATFORM, "--implementation", "cp", "--python-version", PYTHON_VERSION,
        "--only-binary=:all:", "--target", str(staging / "python"), "-r", str(requirements),
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(
            "could not build the Lambda dependency layer (pip needs to reach PyPI once; "
            f"the result is cached in {cache_root}):\n{result.stderr[-4000:]}"
        )
    for pycache in (staging / "python").rglob("__pycache__"):
        shutil.rmtree(pycache, ignore_errors=True)
    (staging / ".complete").write_text(key)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target
