"""The optional frameworks the integration tests need (scripts/setup.sh installs them): on CI
their absence is a failure, elsewhere a skip with the reason."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest


def require_module(name: str, extra: str) -> ModuleType:
    """The module, else fail (CI) or skip saying which extra installs it."""
    try:
        return importlib.import_module(name)
    except ImportError:
        message = f"{name} is not installed: pip install 'drac[{extra}]'"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message, allow_module_level=True)
        raise
