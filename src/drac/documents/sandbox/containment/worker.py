"""The contained side: a worker process that imports what it needs, seals itself off
(`policy.apply_policy`), then runs one call at a time for drac, sending back results,
streamed items and the step it is at, over its standard input and output."""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import json
import math
import os
import pickle
import resource
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from drac.documents.sandbox.containment import policy, tasks, wire

PR_SET_PDEATHSIG = 1


class _Job:
    """The call being run: where its answers go and the CPU it may still use."""

    def __init__(self, out: int, cpu_s: float, step_cpu_s: float) -> None:
        self.out = out
        self.step_cpu_s = step_cpu_s
        self.cpu_end = _cpu_used() + cpu_s
        self.step("")

    def step(self, text: str) -> None:
        """Start the next step: re-arm the CPU limit, tell drac (unless it is the first) with
        the CPU used so far, which drac charges to the document's budget."""
        now = _cpu_used()
        _set_cpu_limit(min(self.cpu_end, now + self.step_cpu_s))
        if text:
            wire.send(self.out, {"kind": "step", "text": text, "cpu": now})


_JOB: _Job | None = None


def step(text: str) -> None:
    """Say that the work enters a new step (e.g. "reading page 3"): drac names it when the
    work fails, and the step's CPU budget starts again. A no-op outside a worker."""
    if _JOB is not None:
        _JOB.step(text)


def in_worker() -> bool:
    """True inside a contained worker process."""
    return _WORKER


_WORKER = False


def main(argv: list[str]) -> int:
    """Run the worker: argv[0] is its JSON configuration (see `pool._spawn`)."""
    global _WORKER
    _WORKER = True
    config = json.loads(argv[0])
    out = os.dup(1)
    os.dup2(2, 1)  # whatever a parser prints must not corrupt the protocol
    _die_with_parent()
    for module in config["preload"]:
        importlib.import_module(module)
    protections = policy.apply_policy(
        memory_bytes=int(config["memory_bytes"]),
        readable=config["readable"],
        network_namespace=bool(config["network_namespace"]),
        landlock=bool(config["landlock"]),
    )
    wire.send(out, {"kind": "ready", "protections": protections, "cpu": _cpu_used()})
    while True:
        try:
            request = wire.receive(0)
        except wire.WireError:
            return 0  # drac closed the pipe: it is done with this worker
        _serve(out, request)


def _serve(out: int, request: dict[str, Any]) -> None:
    global _JOB
    _JOB = _Job(out, float(request["cpu_s"]), float(request["step_cpu_s"]))
    try:
        function = _resolve(str(request["target"]))
        args, kwargs = pickle.loads(request["value"])  # from drac itself: trusted
        result = function(*args, **kwargs)
        if request.get("stream"):
            for item in _items(result):
                wire.send(out, {"kind": "item", "cpu": _cpu_used()}, item)
            result = None
        _JOB = None
        _set_cpu_limit(math.inf)
        wire.send(out, {"kind": "done", **_memory()}, result)
    except MemoryError:
        _fail(out, "memory", "")
    except Exception as exc:  # every failure goes back to drac, named
        from drac.errors import DocumentError

        kind = "document" if isinstance(exc, DocumentError) else "bug"
        _fail(out, kind, str(exc) if kind == "document" else f"{type(exc).__name__}: {exc}")


def _fail(out: int, kind: str, message: str) -> None:
    global _JOB
    _JOB = None
    _set_cpu_limit(math.inf)
    wire.send(out, {"kind": "error", "error": kind, "message": message, **_memory()})


def _items(result: object) -> Iterator[object]:
    if not isinstance(result, Iterable):
        raise TypeError(f"a streamed call returned {type(result).__name__}, not an iterable")
    yield from result


def _resolve(target: str) -> Callable[..., Any]:
    return tasks.resolve(target)  # only a registered task, never any importable function


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _set_cpu_limit(seconds: float) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = hard if math.isinf(seconds) else math.ceil(seconds)
    if hard != resource.RLIM_INFINITY and soft != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _memory() -> dict[str, float]:
    """This process's address space and CPU time now (drac retires a worker that grew too
    large, and counts the next call's CPU from here)."""
    try:
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[0])
        vm_bytes = pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        vm_bytes = 0
    return {"vm_bytes": vm_bytes, "cpu": _cpu_used()}


def _die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
