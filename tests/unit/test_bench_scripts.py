"""The benchmark scripts still match the package: every drac name they import (also inside
functions, where a rename would only show when the benchmark is next run) exists."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
SCRIPTS = sorted(BENCH.glob("*.py"))


def _drac_imports(path: Path) -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "drac":
            found.extend((node.module or "", alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend((alias.name, None) for alias in node.names
                         if alias.name.split(".")[0] == "drac")
    return found


def test_there_are_benchmarks_to_check() -> None:
    assert len(SCRIPTS) >= 8


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_drac_name_a_benchmark_imports_exists(script: Path) -> None:
    missing = []
    for module_name, name in _drac_imports(script):
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            missing.append(f"{module_name}: {exc}")
            continue
        if name is not None and not hasattr(module, name):
            try:
                importlib.import_module(f"{module_name}.{name}")
            except ImportError:
                missing.append(f"{module_name}.{name}")
    assert not missing, missing
