"""Every exception drac raises for a reason of its own derives from DracError, so a caller
catches drac's errors with one clause (the old bases stay where callers catch them). A Ctrl-C
(IngestInterrupted, a KeyboardInterrupt) is no error and stays out of `except Exception`.
Each package defines its exceptions in its own `errors` module, nowhere else."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import drac
from drac.errors import DracError

# The process-containment wire protocol's own errors, which never leave the parent's
# pool (it turns them into DocumentError).
INTERNAL = {
    "drac.documents.sandbox.containment.wire.WireError",
    "drac.documents.sandbox.containment.wire.Timeout",
}
# Frameworks the integrations adapt to, which the core does not install.
OPTIONAL = ("drac.integrations",)
# Exception classes that live beside their code rather than in their package's errors module.
ELSEWHERE = {
    # the containment wire protocol: parent and worker share the module that frames the
    # messages, and these never leave the parent's pool
    "drac.documents.sandbox.containment.wire.WireError": "the wire protocol's own",
    "drac.documents.sandbox.containment.wire.Timeout": "the wire protocol's own",
    # private signals caught in the module that raises them
    "drac.aws.smoke._Failed": "a smoke check's private early exit",
    "drac.clients.http_json._Retryable": "the HTTP client's private retry signal",
}


def _drac_modules(*, optional: bool) -> list[object]:
    """Every importable drac module (the integrations only when `optional` and installed)."""
    modules = []
    for module_info in pkgutil.walk_packages(drac.__path__, "drac."):
        if module_info.name.startswith(OPTIONAL):
            if not optional:
                continue
            try:
                modules.append(importlib.import_module(module_info.name))
            except ImportError:  # a framework the core does not install
                continue
        else:
            modules.append(importlib.import_module(module_info.name))
    return modules


def test_every_public_exception_class_derives_from_drac_error() -> None:
    outside = []
    for module_info in pkgutil.walk_packages(drac.__path__, "drac."):
        if module_info.name.startswith(OPTIONAL):
            continue
        module = importlib.import_module(module_info.name)
        for name, value in vars(module).items():
            if not (inspect.isclass(value) and issubclass(value, Exception)):
                continue
            qualified = f"{value.__module__}.{value.__qualname__}"
            if value.__module__ != module.__name__ or name.startswith("_") or qualified in INTERNAL:
                continue
            if not issubclass(value, DracError):
                outside.append(qualified)
    assert not outside, f"not DracError: {outside}"


def test_every_exception_class_is_defined_in_its_packages_errors_module() -> None:
    misplaced = []
    for module in _drac_modules(optional=True):
        for value in vars(module).values():
            if not (inspect.isclass(value) and issubclass(value, BaseException)):
                continue
            defined_in = value.__module__
            qualified = f"{defined_in}.{value.__qualname__}"
            if not defined_in.startswith("drac.") or defined_in.endswith(".errors"):
                continue
            if qualified not in ELSEWHERE:
                misplaced.append(qualified)
    assert not misplaced, f"move to the package's errors.py: {sorted(set(misplaced))}"


def test_the_errors_modules_import_no_heavy_code() -> None:
    """An errors module is a leaf: it imports drac's base errors and types, never a runtime,
    a client or the CLI, so any module can import it without a cycle."""
    for path in sorted((Path(drac.__file__).parent).rglob("errors.py")):
        text = path.read_text("utf-8")
        for forbidden in ("import boto3", "import click", "from drac.cli", "from drac.api"):
            assert forbidden not in text, f"{path}: {forbidden}"
