"""One ingest's thread budget: its conversion jobs and its embedder threads share the cores
this process may run on, so embedding alongside conversion never oversubscribes them.

The rule: the budget holds `budget_size(cores, jobs)` tokens. A document being converted holds
one (its LibreOffice, pdfium or OCR worker runs on that core), and so does LibreOffice
converting a batch of the run's office documents ahead, while a document waiting for that
batch lends its own back (`ThreadBudget.lent`); the embedder takes, for each
batch of texts, as many of the free tokens as it has threads, at least one (it waits for
one). Tokens are handed out in the order they were asked for, so neither side starves.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")

SIGNAL_POLL_S = 0.25
"""How often a main thread waiting for other threads wakes. Linux may hand a Ctrl-C to any
thread of the process; Python then only sets a flag, and a main thread blocked on a lock does
not see it until that lock is released (it once waited for a LibreOffice batch's timeout)."""


def join(thread: threading.Thread) -> None:
    """Wait for `thread` to end, seeing a Ctrl-C within SIGNAL_POLL_S."""
    while thread.is_alive():
        thread.join(SIGNAL_POLL_S)


def result_of(future: Future[T]) -> T:
    """The future's result (or its exception raised), waited for seeing a Ctrl-C within
    SIGNAL_POLL_S."""
    while True:
        try:
            return future.result(timeout=SIGNAL_POLL_S)
        except TimeoutError:
            if future.done():  # the work itself raised TimeoutError
                raise


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least one."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity on this platform
        return max(1, os.cpu_count() or 1)


def budget_size(cores: int, jobs: int) -> int:
    """Tokens of an ingest's budget: the cores, or the jobs asked for when more (a vision
    model's conversion jobs mostly wait on the network, and `--jobs` is the user's choice)."""
    return max(1, cores, jobs)


def grant(free: int, wanted: int) -> int:
    """Threads the embedder may run now: as many as it wants of the free tokens, never
    fewer than one (it is given one only once one is free)."""
    return max(1, min(free, wanted))


class ThreadBudget:
    """Tokens shared by an ingest's conversion jobs and its embedder, first asked, first
    served."""

    def __init__(self, size: int) -> None:
        self.size = max(1, size)
        self._free = self.size
        self._waiting: deque[object] = deque()
        self._changed = threading.Condition()
        self._held = threading.local()  # how many jobs this thread is in

    @property
    def in_use(self) -> int:
        """Tokens held now."""
        with self._changed:
            return self.size - self._free

    @contextmanager
    def job(self) -> Iterator[None]:
        """Hold one token for the block (one document's conversion, or a LibreOffice batch)."""
        taken = self._acquire(1)
        self._held.jobs = getattr(self._held, "jobs", 0) + 1
        try:
            yield
        finally:
            self._held.jobs -= 1
            self._release(taken)

    @contextmanager
    def lent(self) -> Iterator[None]:
        """Give back the token this thread's job holds for the block, and take one again after
        it: for a job that waits on another thread needing a token (a document waiting for
        the PDF its batch is making). Outside a job, nothing is given back."""
        if getattr(self._held, "jobs", 0) < 1:
            yield
            return
        self._release(1)
        try:
            yield
        finally:
            self._acquire(1)

    @contextmanager
    def threads(self, wanted: int) -> Iterator[int]:
        """Hold `grant(free, wanted)` tokens for the block and give their number."""
        taken = self._acquire(max(1, wanted))
        try:
            yield taken
        finally:
            self._release(taken)

    def _acquire(self, wanted: int) -> int:
        ticket = object()
        with self._changed:
            self._waiting.append(ticket)
            try:
                while self._waiting[0] is not ticket or self._free < 1:
                    self._changed.wait()
            finally:
                self._waiting.remove(ticket)
                self._changed.notify_all()
            taken = grant(self._free, wanted)
            self._free -= taken
            return taken

    def _release(self, taken: int) -> None:
        with self._changed:
            self._free += taken
            self._changed.notify_all()
