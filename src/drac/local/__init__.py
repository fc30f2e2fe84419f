"""The local runtime: a workspace folder with SQLite, the embedded default.

Its names are imported when first asked for, so a command that needs one module of it
(`drac render` needs `files.shown_path`) does not load the workspace and its database."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from drac.local.trust import DEFAULT_WORKSPACE
    from drac.local.workspace import FileArtifactStore, Workspace

__all__ = ["DEFAULT_WORKSPACE", "FileArtifactStore", "Workspace"]
_MODULE_OF = {
    "DEFAULT_WORKSPACE": "drac.local.trust",
    "FileArtifactStore": "drac.local.workspace",
    "Workspace": "drac.local.workspace",
}


def __getattr__(name: str) -> object:
    """The package's names, imported when first asked for."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'drac.local' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
