"""Functions the containment tests run in a worker (registered by name, as the worker needs)."""

from __future__ import annotations

import ctypes
import os
import socket
from collections.abc import Iterator

from drac.documents.sandbox.containment.tasks import contained_task


@contained_task
def echo(value: object) -> dict[str, object]:
    """The value back, with bytes (the pipe's two halves)."""
    return {"value": value, "bytes": b"\x00\xff"}


@contained_task
def connect(port: int) -> str:
    """Try to reach a listener on 127.0.0.1; what happened."""
    with socket.socket() as client:
        client.settimeout(3)
        try:
            client.connect(("127.0.0.1", port))
        except OSError as exc:
            return f"refused: {exc}"
    return "connected"


@contained_task
def read(path: str) -> str:
    """A file's text, or why it could not be read."""
    try:
        with open(path) as file:
            return file.read()
    except OSError as exc:
        return f"denied: {exc}"


@contained_task
def allocate(gib: int) -> int:
    """Touch `gib` GiB of memory."""
    return len(bytearray(gib * 1024**3))


@contained_task
def spin() -> None:
    """Use CPU until killed."""
    from drac.documents.sandbox.containment import step

    step("spinning on page 3")
    while True:
        pass


@contained_task
def segfault() -> None:
    """Read address 0."""
    ctypes.string_at(0)


@contained_task
def abort() -> None:
    """Abort, as pdfium does when an allocation fails."""
    os.abort()


@contained_task
def count(n: int) -> Iterator[int]:
    """0 .. n-1, one item at a time."""
    yield from range(n)


@contained_task
def grow_then_abort(gib: float) -> None:
    """Take `gib` GiB of memory in 64 MiB steps, then abort: pdfium's death when a large
    allocation fails below the limit it is about to cross."""
    import time

    blocks = []
    for _ in range(int(gib * 16)):
        blocks.append(bytearray(64 * 1024**2))
        time.sleep(0.01)
    os.abort()


@contained_task
def environment() -> dict[str, str]:
    """The worker's environment."""
    return dict(os.environ)


@contained_task
def burn(seconds: float) -> float:
    """Use `seconds` of CPU, then return the CPU this process has used in all."""
    import time

    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return time.process_time()


@contained_task
def burn_pages(pages: int, seconds: float) -> Iterator[int]:
    """Stream `pages` page numbers, each after a step that uses `seconds` of CPU."""
    from drac.documents.sandbox.containment import step

    for number in range(1, pages + 1):
        step(f"reading page {number}")
        burn(seconds)
        yield number


def not_a_task() -> str:
    """A function no `@contained_task` registers: no worker may run it."""
    return "ran"
