"""A document's CPU budget: the CPU seconds every contained call made for one document may
use in all, summed across its pages, its workers and the threads converting it.

    with document_budget(300.0):
        convert(...)          # every contained call and LibreOffice run inside is charged

The containment layer asks `current()` for the budget in force, gives a call no more CPU than
is left (`cap`), and charges what the call used (`charge`) as it reports its steps and when
it ends. Once nothing is left the document fails with `BudgetExceeded`, which names the
budget and what the document was doing; the other documents of the run have budgets of
their own (a context variable: each thread, and each task started with the context copied,
sees the budget of the document it works for).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from drac.documents.sandbox.containment.errors import BudgetExceeded

DOCUMENT_CPU_S = 60.0
"""The default budget of any document (`Settings.document_cpu_s`, DRAC_DOCUMENT_CPU_S):
RELIABILITY.md says how it was chosen from the corpus' most expensive document."""
DOCUMENT_CPU_S_PER_MIB = 120.0
"""What a document's budget grows by per MiB of the file (`Settings.document_cpu_s_per_mib`):
OCR reads an honest scanned page (26 KiB or more, even in black and white) in 2 to 3 s, so a
scan is never refused for its pages; a small file gets little."""
_MIB = 1024 * 1024


def budget_for(size_bytes: int, base_s: float | None, per_mib_s: float) -> float | None:
    """The CPU budget of a document of `size_bytes`: `base_s` plus `per_mib_s` a MiB (None:
    no budget)."""
    if base_s is None:
        return None
    return base_s + per_mib_s * max(0, size_bytes) / _MIB


CAP_SLACK_S = 0.5
"""A run within this much of its CPU cap counts as stopped by it (see `charge_capped`)."""
MIN_CALL_CPU_S = 1.0
"""RLIMIT_CPU counts whole seconds: a call is never given less than this, so the budget may
be passed by at most this much (and by what calls running at once use, see `cap`)."""


class Budget:
    """CPU seconds one document may still use (thread-safe: a document's batches may run
    contained calls from several threads at once)."""

    def __init__(self, total_s: float) -> None:
        if total_s <= 0:
            raise ValueError("a CPU budget must be positive")
        self.total_s = float(total_s)
        self._used = 0.0
        self._lock = threading.Lock()

    @property
    def used_s(self) -> float:
        """CPU seconds charged so far."""
        with self._lock:
            return self._used

    def remaining_s(self) -> float:
        """CPU seconds left (never below 0)."""
        with self._lock:
            return max(0.0, self.total_s - self._used)

    def charge(self, seconds: float) -> None:
        """Add the CPU seconds a call (or a step of one) used."""
        if seconds > 0:
            with self._lock:
                self._used += seconds

    def charge_capped(self, seconds: float, cap_s: float) -> None:
        """Charge a run that was given `cap_s` CPU seconds; one that used (nearly) all of them
        was stopped by the cap (RLIMIT_CPU counts each process alone, and a process may catch
        SIGXCPU and abort), so the budget is spent."""
        self.charge(seconds)
        if seconds >= cap_s - CAP_SLACK_S:
            with self._lock:
                self._used = max(self._used, self.total_s)

    def spent(self) -> bool:
        """Whether the whole budget is used."""
        return self.remaining_s() <= 0

    def cap(self, seconds: float) -> float:
        """The CPU a call may be given: its own limit, or what is left when that is less
        (at least MIN_CALL_CPU_S). Calls running at once each get what was left when they
        started; what they used is charged as they report each step."""
        return min(seconds, max(self.remaining_s(), MIN_CALL_CPU_S))

    def reason(self, doing: str) -> str:
        """Why the document fails: its budget, what it used, what it was doing."""
        return (
            f"the document used its {self.total_s:.0f} s CPU budget {doing} "
            f"({self.used_s:.1f} s of CPU in its parsers; DRAC_DOCUMENT_CPU_S and "
            "DRAC_DOCUMENT_CPU_S_PER_MIB set the budget)"
        ).replace("  ", " ")

    def check(self, doing: str) -> None:
        """Raise BudgetExceeded naming `doing` when nothing is left."""
        if self.spent():
            raise BudgetExceeded(self.reason(doing))


_CURRENT: contextvars.ContextVar[Budget | None] = contextvars.ContextVar(
    "drac_document_budget", default=None
)


def current() -> Budget | None:
    """The budget of the document being converted here (None: no budget in force)."""
    return _CURRENT.get()


@contextmanager
def charged_to(budget: Budget | None) -> Iterator[Budget | None]:
    """Charge every contained call made inside to `budget` (None: to no budget)."""
    token = _CURRENT.set(budget)
    try:
        yield budget
    finally:
        _CURRENT.reset(token)


@contextmanager
def document_budget(total_s: float | None) -> Iterator[Budget | None]:
    """Charge every contained call made inside (in this thread, and in tasks started with
    this context copied) to one budget of `total_s` CPU seconds; None: no budget."""
    with charged_to(Budget(total_s) if total_s is not None else None) as budget:
        yield budget
