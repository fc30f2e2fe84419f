"""Settings every test starts from."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_embedder_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """BM25 only, and no embedding at ingest, unless a test sets DRAC_EMBEDDER itself: the
    embedded default embedder would otherwise run in every test that ingests or searches
    (its own tests ask for it: tests/unit/embedders, tests/integration/cli/test_cli_search.py)."""
    monkeypatch.setenv("DRAC_EMBEDDER", "none")
