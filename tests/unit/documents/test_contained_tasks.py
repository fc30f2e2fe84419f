"""Every function a contained worker runs is registered by name and found by it; no string in
drac, its benchmarks or its tests names a task the registry does not hold."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path

import contained_tasks
import pytest

import drac
from drac.documents.sandbox.containment import GIB, Limits, contained_call
from drac.documents.sandbox.containment.pool import run
from drac.documents.sandbox.containment.tasks import TASKS, registered_name, resolve
from drac.errors import DocumentError

ROOT = Path(__file__).resolve().parents[3]
NAME = re.compile(r"""["']((?:drac|contained_tasks)[\w.]*:[A-Za-z_]\w*)["']""")
CALLS = {"contained_call", "contained_stream"}


def _import_drac() -> None:
    for info in pkgutil.walk_packages(drac.__path__, "drac."):
        if not info.name.startswith(("drac.integrations", "drac.api", "drac.cli")):
            importlib.import_module(info.name)


def _python_files() -> list[Path]:
    folders = ("src", "bench", "functions", "tests", "scripts")
    this = Path(__file__).resolve()  # it sends what no worker may run, on purpose
    found = [path for folder in folders for path in sorted((ROOT / folder).rglob("*.py"))]
    return [path for path in found if path != this]


def test_every_registered_task_resolves_by_its_name() -> None:
    _import_drac()
    assert "drac.documents.pdf.render:render_here" in TASKS
    assert "contained_tasks:echo" in TASKS
    for name, function in TASKS.items():
        module, _, attribute = name.partition(":")
        assert getattr(importlib.import_module(module), attribute) is function
        assert resolve(name) is function
        assert registered_name(function) == name


def test_every_function_handed_to_a_worker_is_a_registered_task() -> None:
    _import_drac()
    registered = {name.partition(":")[2] for name in TASKS}
    handed: list[str] = []
    for path in _python_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            called = (
                node.func.attr
                if isinstance(node.func, ast.Attribute)
                else getattr(node.func, "id", "")
            )
            if called not in CALLS:
                continue
            task = node.args[0]
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            assert not isinstance(task, ast.Constant | ast.JoinedStr), f"a string at {where}"
            if isinstance(task, ast.Name | ast.Attribute) and path.parts[-2] != "bench":
                name = task.id if isinstance(task, ast.Name) else task.attr
                if name not in {"task", "function", "target", "real"}:  # pass-through helpers
                    assert name in registered, f"{name} at {where} is no registered task"
                    handed.append(name)
    assert {"render_here", "offline_here", "ocr_page", "slide_text", "workbook_here"} <= set(handed)


def test_no_string_names_a_task_the_registry_does_not_hold() -> None:
    _import_drac()
    found = {
        (match.group(1), str(path.relative_to(ROOT)))
        for path in _python_files()
        for match in NAME.finditer(path.read_text(encoding="utf-8"))
    }
    unknown = sorted(item for item in found if item[0] not in TASKS)
    assert unknown == []


def test_a_worker_runs_no_function_that_is_not_registered() -> None:
    """Before, a worker imported and ran any "module:function" it was sent."""
    limits = Limits(memory_bytes=GIB, preload=("contained_tasks",))
    with pytest.raises(TypeError, match="not registered"):
        contained_call(contained_tasks.not_a_task, limits=limits, what="x")
    with pytest.raises(DocumentError, match="not registered"):
        list(run("contained_tasks:not_a_task", (), {}, limits, "while testing", stream=False))
    with pytest.raises(DocumentError, match="not registered"):
        list(run("os:getpid", (), {}, limits, "while testing", stream=False))
    assert contained_call(contained_tasks.echo, 1, limits=limits, what="x")["value"] == 1
