"""Build the two Lambda layers at synth time, without Docker.

- The **core layer** is the `drac` package copied from `src/drac` (its one home) into
  `python/drac`, where Lambda puts layer code on `sys.path`.
- The **deps layer** holds the third-party packages the functions import: the package's core
  dependencies plus its `aws` extra, as declared in `pyproject.toml` (declared once), installed
  with `pip install --platform manylinux2014_x86_64 --only-binary=:all:` for the Lambda
  Python 3.12 runtime whatever the build machine is. boto3, botocore and s3transfer are left
  out: the runtime provides them, and a second copy would shadow the runtime's and mismatch.

Both results are cached under `layers/build/` keyed by what they are built from, so only the
first synth pays for the download.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DIR = ROOT / "src" / "drac"
PYPROJECT = ROOT / "pyproject.toml"
BUILD_ROOT = ROOT / "layers" / "build"
PLATFORM = "manylinux2014_x86_64"
PYTHON_VERSION = "3.12"
RUNTIME_PROVIDED = frozenset({"boto3", "botocore", "s3transfer"})
"""Distributions the Lambda Python runtime ships; the deps layer must not carry its own."""
LOCAL_ONLY = frozenset({"click", "rich", "httpx", "tenacity"})
"""Core dependencies only the local runtime uses (the `drac` command and its
OpenAI-compatible clients); no Lambda imports them (tests import every handler and check)."""

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_IGNORED = ("__pycache__", "*.pyc", "*.egg-info")


def canonical(name: str) -> str:
    """A distribution name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def dist_name(info: Path) -> str:
    """The canonical distribution name of a `<name>-<version>.dist-info` folder."""
    return canonical(info.name.split("-", 1)[0])


def layer_requirements(pyproject: Path = PYPROJECT) -> list[str]:
    """The deps layer's requirements: core dependencies and the `aws` extra, minus what the
    Lambda runtime provides and what only the local runtime uses."""
    project = tomllib.loads(pyproject.read_text("utf-8"))["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["aws"]]
    kept = []
    for requirement in wanted:
        match = _NAME.match(requirement)
        if match and canonical(match.group(1)) not in RUNTIME_PROVIDED | LOCAL_ONLY:
            kept.append(requirement)
    return kept


def core_layer_dir(package: Path = PACKAGE_DIR, cache_root: Path = BUILD_ROOT) -> Path:
    """Return a folder holding `python/drac`, a copy of the package (rebuilt when it changes)."""
    files = sorted(
        path for path in package.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    )
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    target = cache_root / "core" / digest.hexdigest()[:16]
    if (target / ".complete").exists():
        return target
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(package, target / "python" / "drac", ignore=shutil.ignore_patterns(*_IGNORED))
    (target / ".complete").write_text("ok")
    return target


def deps_layer_dir(pyproject: Path = PYPROJECT, cache_root: Path = BUILD_ROOT) -> Path:
    """Return a folder holding `python/<packages>` for the layer requirements, building it if
    needed. Raises RuntimeError with pip's output when the packages cannot be installed."""
    requirements = layer_requirements(pyproject)
    key = hashlib.sha256(
        "\n".join([*requirements, PLATFORM, PYTHON_VERSION, *sorted(RUNTIME_PROVIDED)]).encode()
    ).hexdigest()[:16]
    target = cache_root / "deps" / key
    if (target / ".complete").exists():
        return target
    staging = cache_root / "deps" / f"{key}.staging"
    shutil.rmtree(staging, ignore_errors=True)
    command = [
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--platform", PLATFORM, "--implementation", "cp", "--python-version", PYTHON_VERSION,
        "--only-binary=:all:", "--target", str(staging / "python"), *requirements,
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(
            "could not build the Lambda dependency layer (pip needs to reach PyPI once; "
            f"the result is cached in {cache_root}):\n{result.stderr[-4000:]}"
        )
    _remove_runtime_provided(staging / "python")
    for pycache in (staging / "python").rglob("__pycache__"):
        shutil.rmtree(pycache, ignore_errors=True)
    (staging / ".complete").write_text(key)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target


def _remove_runtime_provided(site: Path) -> None:
    """Delete the runtime-provided distributions a dependency pulled in (aws-xray-sdk pulls
    botocore): their packages and their metadata."""
    for info in site.glob("*.dist-info"):
        if dist_name(info) in RUNTIME_PROVIDED:
            shutil.rmtree(info)
    for package in RUNTIME_PROVIDED:
        shutil.rmtree(site / package, ignore_errors=True)
