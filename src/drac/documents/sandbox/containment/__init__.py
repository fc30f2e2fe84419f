"""The one way drac runs an untrusted-input parser (pdfium, openpyxl, OCR; LibreOffice
through `lo_guard`, which applies the same `policy`): in a reusable worker process with an
address-space limit, a CPU-time limit (per call and per announced step), a wall-clock
timeout, no network and no files but its own where the platform allows. A crash, an abort
or a limit kill fails that call alone with a named reason (DocumentError); the next call
gets a healthy worker.

    result = contained_call(function, data, limits=Limits(), what="...")
    for item in contained_stream(generator, data, ...): ...

The function runs in the worker, so it must be a module-level function registered with
`@contained_task` (`tasks.py`: the worker finds it by that name and runs nothing else); its
arguments travel pickled (drac to worker), its result as JSON plus bytes (pydantic models as
their fields).
Inside it, `step("reading page 3")` names what it is doing and restarts the step's CPU budget.

A caller that knows it will soon make calls under some limits can `start_ahead(limits, n)`:
n workers start at once, and its own work overlaps their start-up.

Inside `with document_budget(seconds):` every call (and every LibreOffice run) is charged to
one CPU budget for the document, and given no more than what is left (`budget.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from drac.documents.sandbox.containment.budget import document_budget
from drac.documents.sandbox.containment.errors import BudgetExceeded
from drac.documents.sandbox.containment.pool import GIB, Limits, protections, start_ahead
from drac.documents.sandbox.containment.pool import run as _run
from drac.documents.sandbox.containment.tasks import contained_task, registered_name
from drac.documents.sandbox.containment.worker import in_worker, step

__all__ = [
    "GIB",
    "BudgetExceeded",
    "Limits",
    "contained_call",
    "contained_stream",
    "contained_task",
    "document_budget",
    "in_worker",
    "protections",
    "start_ahead",
    "step",
]


def contained_call(
    task: Callable[..., Any], *args: Any, limits: Limits, what: str, **kwargs: Any
) -> Any:
    """Run the registered task `task` (`@contained_task`) with the arguments in a contained
    worker and return its result; DocumentError names why it failed.

    `what` says what the call does before it names a step ("while opening the PDF")."""
    for value in _run(registered_name(task), args, kwargs, limits, what, stream=False):
        return value
    raise AssertionError("a finished call always has a result")


def contained_stream(
    task: Callable[..., Any], *args: Any, limits: Limits, what: str, **kwargs: Any
) -> Iterator[Any]:
    """Run the registered generator function `task` in a contained worker, yielding its items
    as they come (the worker waits while the caller is busy); closing the iterator early
    stops it."""
    name = registered_name(task)  # refused at once, not at the first item
    return _run(name, args, kwargs, limits, what, stream=True)
