"""Servers that fail (issue 20): one that refuses connections is given up on in seconds and
then at once, a timeout names the setting that bounds it."""

from __future__ import annotations

import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from drac.clients.http_json import UNREACHABLE_ATTEMPTS, Backoff
from drac.clients.openai_compat import OpenAICompatTextModel
from drac.errors import ModelCallError, ModelUnreachable


def closed_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_refused_connection_is_tried_three_times_then_never_again() -> None:
    sleeps: list[float] = []
    model = OpenAICompatTextModel(
        "m", base_url=f"http://127.0.0.1:{closed_port()}/v1", backoff=Backoff(attempts=6),
        sleep=sleeps.append,
    )  # fmt: skip
    with pytest.raises(ModelUnreachable, match=r"unreachable.*failed after 3 attempts") as first:
        model.complete("s", "p")
    assert len(sleeps) == UNREACHABLE_ATTEMPTS - 1 == 2
    assert first.value.retry == "transient"  # Step Functions may still retry later
    with pytest.raises(ModelUnreachable):  # at once: no attempt, no wait
        model.complete("s", "p")
    assert len(sleeps) == 2


class _Slow(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        time.sleep(1.0)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *_args: object) -> None:
        pass


def test_a_timeout_names_its_setting() -> None:
    httpd = HTTPServer(("127.0.0.1", 0), _Slow)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        model = OpenAICompatTextModel(
            "m", base_url=f"http://127.0.0.1:{httpd.server_address[1]}/v1", timeout_s=0.2,
            backoff=Backoff(attempts=1),
        )  # fmt: skip
        timed_out = r"no answer within 0.2 s \(DRAC_MODEL_TIMEOUT_S\)"
        with pytest.raises(ModelCallError, match=timed_out):
            model.complete("s", "p")
    finally:
        httpd.shutdown()
        httpd.server_close()
