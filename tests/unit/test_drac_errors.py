"""Every exception drac raises for a reason of its own derives from DracError, so a caller
catches drac's errors with one clause (the old bases stay where callers catch them). A Ctrl-C
(IngestInterrupted, a KeyboardInterrupt) is no error and stays out of `except Exception`."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

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
