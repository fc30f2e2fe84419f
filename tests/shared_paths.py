"""Where the project's shared folder (evaluation corpus, reference embedder) is.

It sits beside the repository (`../shared`), or where DRAC_SHARED points. Tests that need it
call `require()`: on CI its absence is a failure, elsewhere a skip with the reason.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DRAC_SHARED") or REPO.parent / "shared")
CORPUS = SHARED / "corpus" / "rag-multi-corpus"
VELVERA = CORPUS / "Velvera Technologies"
CLOUDWAY = CORPUS / "CloudWay-24"
MINILM = SHARED / "models" / "all-MiniLM-L6-v2"


def require(path: Path) -> Path:
    """Return path if it exists; otherwise fail on CI and skip elsewhere."""
    if not path.exists():
        message = f"shared data not found at {path} (set DRAC_SHARED)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message, allow_module_level=True)
    return path
