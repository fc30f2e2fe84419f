"""The Lambda layers and the normalise image are built from declared packages only."""

from __future__ import annotations

import re
import subprocess
import tomllib
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement

from infra.layers import (
    CORE,
    DEPS,
    LAYERS_DIR,
    LOCAL_ONLY,
    PYPROJECT,
    RUNTIME_PROVIDED,
    canonical,
    core_layer_dir,
    definition,
    deps_layer_dir,
    dist_name,
    layer_requirements,
    pinned_requirements,
)
from tests.infrastructure.conftest import ROOT

# The Lambda runtime the layer is built for (python3.12, Amazon Linux 2023, x86_64).
LAMBDA_ENVIRONMENT = {
    **default_environment(),
    "python_version": "3.12",
    "python_full_version": "3.12.0",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "x86_64",
    "os_name": "posix",
}


def _distributions(site: Path) -> dict[str, list[Requirement]]:
    """Installed distribution name -> its unconditional requirements, from dist-info METADATA."""
    found: dict[str, list[Requirement]] = {}
    for info in site.glob("*.dist-info"):
        metadata = Parser().parsestr((info / "METADATA").read_text("utf-8"))
        requires = []
        for line in metadata.get_all("Requires-Dist") or []:
            requirement = Requirement(line)
            environment = {**LAMBDA_ENVIRONMENT, "extra": ""}
            if requirement.marker is None or requirement.marker.evaluate(environment):
                requires.append(requirement)
        found[canonical(metadata["Name"])] = requires
    return found


def test_deps_layer_holds_exactly_the_runtime_dependencies() -> None:
    site = deps_layer_dir() / "python"
    installed = _distributions(site)
    top = {canonical(Requirement(r).name) for r in layer_requirements()}
    # every declared dependency is there, and none of the runtime's own SDK
    assert top <= set(installed), top - set(installed)
    assert not set(installed) & RUNTIME_PROVIDED
    assert not any((site / name).exists() for name in RUNTIME_PROVIDED)
    # everything there is needed: reachable from the declared dependencies (with extras)
    needed: set[str] = set()
    pending = [Requirement(r) for r in layer_requirements()]
    while pending:
        requirement = pending.pop()
        name = canonical(requirement.name)
        if name in RUNTIME_PROVIDED or name in needed:
            continue
        needed.add(name)
        info = next(i for i in site.glob("*.dist-info") if dist_name(i) == name)
        metadata = Parser().parsestr((info / "METADATA").read_text("utf-8"))
        for line in metadata.get_all("Requires-Dist") or []:
            child = Requirement(line)
            if child.marker is None or any(
                child.marker.evaluate({**LAMBDA_ENVIRONMENT, "extra": extra})
                for extra in ["", *requirement.extras]
            ):
                pending.append(child)
    assert set(installed) == needed, {"unneeded": set(installed) - needed}


def test_deps_layer_holds_exactly_the_pinned_distributions() -> None:
    """What the built layer holds is its definition: each pinned name at its pinned version,
    nothing else."""
    site = deps_layer_dir() / "python"
    held = {}
    for info in site.glob("*.dist-info"):
        metadata = Parser().parsestr((info / "METADATA").read_text("utf-8"))
        held[canonical(metadata["Name"])] = metadata["Version"]
    assert held == pinned_requirements()


def test_pins_satisfy_what_pyproject_declares() -> None:
    pins = pinned_requirements()
    for line in layer_requirements():
        requirement = Requirement(line)
        name = canonical(requirement.name)
        assert name in pins, f"{name} is declared but not pinned in layers/deps"
        assert requirement.specifier.contains(pins[name], prereleases=True), (line, pins[name])
    assert not set(pins) & (RUNTIME_PROVIDED | LOCAL_ONLY)


def test_a_pin_that_is_not_exact_is_refused(tmp_path: Path) -> None:
    (tmp_path / "layer.toml").write_text('requirements = "requirements.txt"\n')
    (tmp_path / "requirements.txt").write_text("# pinned\npydantic==2.14.4\nrequests>=2\n")
    with pytest.raises(ValueError, match="'requests>=2' is not pinned"):
        pinned_requirements(tmp_path)


def test_layer_definitions_are_checked_in_and_only_their_build_is_ignored() -> None:
    layers = sorted(p.name for p in LAYERS_DIR.iterdir() if p.is_dir() and p.name != "build")
    assert layers == ["core", "deps"]
    files = [CORE / "layer.toml", DEPS / "layer.toml", DEPS / definition(DEPS)["requirements"]]
    for path in files:
        relative = str(path.relative_to(ROOT))
        ignored = subprocess.run(["git", "check-ignore", "-q", relative], cwd=ROOT, check=False)
        assert ignored.returncode == 1, f"{relative} is ignored by git"
    build = subprocess.run(
        ["git", "check-ignore", "-q", "layers/build/deps/x"], cwd=ROOT, check=False
    )
    assert build.returncode == 0
    assert definition(DEPS)["platform"] == "manylinux2014_x86_64"
    assert definition(DEPS)["python_version"] == "3.12"  # functions.RUNTIME


def test_layer_requirements_come_from_pyproject_core_and_aws_extra() -> None:
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    left_out = RUNTIME_PROVIDED | LOCAL_ONLY
    expected = [r for r in project["dependencies"] if Requirement(r).name not in left_out]
    assert layer_requirements() == [*expected, *project["optional-dependencies"]["aws"]]
    assert {Requirement(r).name for r in project["dependencies"]} >= LOCAL_ONLY | {"boto3"}


def test_core_layer_is_the_package_under_python() -> None:
    spec = definition(CORE)
    layer = core_layer_dir() / spec["destination"]
    source = ROOT / spec["source"]
    assert spec["destination"] == "python/drac" and spec["source"] == "src/drac"
    copied = {p.relative_to(layer) for p in layer.rglob("*") if p.is_file()}
    expected = {
        p.relative_to(source)
        for p in source.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert copied == expected
    assert (layer / "prompts" / "conversion.md").is_file()


def _apt_packages(text: str) -> set[str]:
    return set(re.findall(r"\blibreoffice-[a-z-]+\b", text))


def test_normalise_image_installs_the_libreoffice_packages_the_tests_use() -> None:
    dockerfile = (ROOT / "functions/normalise/Dockerfile").read_text()
    setup = (ROOT / "scripts/setup.sh").read_text()
    in_image = _apt_packages(dockerfile)
    assert in_image == _apt_packages(setup) != set()
    assert all(name.endswith("-nogui") for name in in_image)
    # from distribution packages, not a vendor download; a Lambda runtime client; $HOME writable
    assert "http" not in dockerfile.split("FROM", 1)[1]
    assert "awslambdaric" in dockerfile and "ENV HOME=/tmp" in dockerfile
    assert re.search(r"^FROM python:3\.12-slim-bookworm$", dockerfile, re.MULTILINE)
    assert 'pip install --no-cache-dir "/build[aws]"' in dockerfile
