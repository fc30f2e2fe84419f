"""drac: document retrieval-aware chunking.

Convert each document to retrieval-friendly Markdown once, plan chunks as arrays of element IDs,
and rebuild chunk text verbatim from stored elements.

The Python API (`drac.api`) is loaded on first use, so `import drac` stays light:

    import drac

    with drac.Workspace.open("kb") as ws:
        ws.ingest(["handbook.pdf"])
        hits = ws.search("warranty claim", k=5)
"""

from __future__ import annotations

__version__ = "0.1.0"

TYPE_CHECKING = False  # not typing's: importing typing would double the cost of `import drac`
if TYPE_CHECKING:
    from typing import Any

    from drac.api import (
        ChunkView,
        Hit,
        IngestReport,
        Mode,
        ReplanReport,
        SearchResults,
        Workspace,
        WorkspaceStatus,
    )

__all__ = [
    "ChunkView",
    "Hit",
    "IngestReport",
    "Mode",
    "ReplanReport",
    "SearchResults",
    "Workspace",
    "WorkspaceStatus",
    "__version__",
]
_API_NAMES = frozenset(__all__) - {"__version__"}


def __getattr__(name: str) -> Any:
    """The API's names, imported when first asked for."""
    if name in _API_NAMES:
        import drac.api

        value = getattr(drac.api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'drac' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _API_NAMES)
