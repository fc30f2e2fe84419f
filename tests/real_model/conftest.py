"""llama.cpp's own server with Gemma 3 270M (a base model, text only), started once per test
session on 127.0.0.1 at a free port and stopped after it (tests marked `real_model`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from real_server import RunningServer, start_server


@pytest.fixture(scope="session")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """One model server for the session's real-model tests."""
    server = start_server(tmp_path_factory.mktemp("model-server"))
    try:
        yield server
    finally:
        server.stop()
