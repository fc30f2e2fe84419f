"""drac's side of containment: a pool of reusable worker processes, one call at a time each,
and the named reason when a call fails."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import pickle
import queue
import resource
import select
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

from drac.documents.sandbox.containment import wire
from drac.documents.sandbox.containment.budget import Budget
from drac.documents.sandbox.containment.budget import current as current_budget
from drac.documents.sandbox.containment.policy import parser_environment
from drac.errors import DocumentError

GIB = 1024**3
_CRASH_SIGNALS = {signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS, signal.SIGTRAP, signal.SIGILL}
_MEMORY_SHARE = 0.5
"""A crash after the call took the worker's address space to this share of its limit is
reported as the limit: pdfium aborts when an allocation fails, and the failing request is
often hundreds of megabytes (a buffer doubling), so the last size seen is well below it."""
_WATCH_INTERVAL_S = 0.1
_RETIRE_SHARE = 0.5
"""A worker whose address space stays above this share of its limit after a call is
retired (its heap would leave the next document too little)."""
_MAX_IDLE = 4
_START_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Limits:
    """What one contained call may use: address space, CPU (for the whole call, and per step
    the work announces), wall-clock time, and the files it may read besides its imports."""

    memory_bytes: int = 2 * GIB
    cpu_s: float = 300.0
    step_cpu_s: float = 60.0
    wall_s: float = 600.0
    """For a call: the whole call; for a stream: each item (time the caller spends between
    items does not count)."""
    readable: tuple[str, ...] = ()
    preload: tuple[str, ...] = ()
    """Modules the worker imports before it seals itself (later imports must be readable)."""
    network_namespace: bool = True
    landlock: bool = True
    """Each layer can be turned off, so a test can show that every other layer holds alone."""

    def describe_memory(self) -> str:
        """The memory limit in words ("2 GiB")."""
        return f"{self.memory_bytes / GIB:g} GiB"


@dataclass
class _Worker:
    process: subprocess.Popen[bytes]
    protections: tuple[str, ...]
    cpu: float
    key: tuple[Any, ...]
    alive: bool = True
    peak_before: int = 0
    """The worker's address-space high-water mark (bytes) when its current call began."""
    largest_seen: int = 0
    """The largest address space (bytes) the current call was seen to give the worker."""
    fresh: bool = True
    """Started for the current call (its start-up CPU is that call's document's)."""

    @property
    def to_worker(self) -> int:
        assert self.process.stdin is not None
        return self.process.stdin.fileno()

    @property
    def from_worker(self) -> int:
        assert self.process.stdout is not None
        return self.process.stdout.fileno()

    def kill(self) -> tuple[int, resource.struct_rusage | None]:
        """Kill the worker (if still running) and reap it: its wait status and usage."""
        self.alive = False
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.process.pid, signal.SIGKILL)
        return self._reap()

    def _reap(self) -> tuple[int, resource.struct_rusage | None]:
        try:
            _, status, usage = os.wait4(self.process.pid, 0)
        except ChildProcessError:
            self.process.wait()
            return self.process.returncode, None
        self.process.returncode = (
            -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        )
        self._close_pipes()
        return status, usage

    def _close_pipes(self) -> None:
        for pipe in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                if pipe:
                    pipe.close()

    def died(self) -> tuple[int, resource.struct_rusage | None]:
        """Wait briefly for a worker whose pipe closed, kill it if it lingers, reap it."""
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            try:
                pid, status, usage = os.wait4(self.process.pid, os.WNOHANG)
            except ChildProcessError:
                break
            if pid:
                self.alive = False
                self.process.returncode = (
                    -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
                )
                self._close_pipes()
                return status, usage
            time.sleep(0.01)
        return self.kill()


@dataclass
class Pool:
    """Idle workers by configuration; a caller takes one for a call and gives it back."""

    idle: dict[tuple[Any, ...], list[_Worker]] = field(default_factory=dict)
    starting: dict[tuple[Any, ...], list[_Worker]] = field(default_factory=dict)
    """Workers started ahead of their calls (`start_ahead`), not yet known to be ready."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    _spawns: queue.Queue[tuple[Limits, queue.Queue[Any]]] = field(default_factory=queue.Queue)
    _spawner: threading.Thread | None = None

    def take(self, limits: Limits) -> _Worker:
        """An idle worker for `limits`, or a new one."""
        key = _key(limits)
        with self.lock:
            workers = self.idle.get(key, [])
            while workers:
                worker = workers.pop()
                if worker.process.poll() is None:
                    return worker
                worker.kill()
            started = self.starting.get(key, [])
            ahead = started.pop(0) if started else None
        if ahead is not None:
            return _ready(ahead)
        return self._start(limits)

    def start_ahead(self, limits: Limits, count: int) -> None:
        """Start workers for `limits` without waiting for them to be ready, so that `count`
        are idle or starting when the calls come (a caller overlaps their start-up with its
        own work); the next `take` waits for one. A worker that cannot start is left to
        the call that needs it, which names why."""
        key = _key(limits)
        with self.lock:
            missing = count - len(self.idle.get(key, ())) - len(self.starting.get(key, ()))
        for _ in range(max(0, min(missing, _MAX_IDLE))):
            try:
                worker = self._launch_from_spawner(limits)
            except DocumentError:
                return
            with self.lock:
                self.starting.setdefault(key, []).append(worker)

    def give_back(self, worker: _Worker, vm_bytes: int, limits: Limits) -> None:
        """Keep a healthy worker for the next call (retire it when it grew too large)."""
        if not worker.alive or vm_bytes > _RETIRE_SHARE * limits.memory_bytes:
            worker.kill()
            return
        with self.lock:
            workers = self.idle.setdefault(worker.key, [])
            if len(workers) < _MAX_IDLE:
                workers.append(worker)
                return
        worker.kill()

    def close(self) -> None:
        """Stop every idle worker, and those started ahead."""
        with self.lock:
            groups = [*self.idle.values(), *self.starting.values()]
            workers = [worker for group in groups for worker in group]
            self.idle.clear()
            self.starting.clear()
        for worker in workers:
            worker.kill()

    def _start(self, limits: Limits) -> _Worker:
        """Start a worker from one long-lived thread: the death signal a worker asks for
        fires when the thread that started it ends, and that thread lives as long as drac."""
        # waited for here: workers of several threads start at once
        return _ready(self._launch_from_spawner(limits))

    def _launch_from_spawner(self, limits: Limits) -> _Worker:
        """A worker launched by the spawner thread (not yet ready: see `_ready`)."""
        with self.lock:
            if self._spawner is None:
                self._spawner = threading.Thread(
                    target=self._spawn_loop, name="drac-containment", daemon=True
                )
                self._spawner.start()
        answer: queue.Queue[Any] = queue.Queue(maxsize=1)
        self._spawns.put((limits, answer))
        result = answer.get()
        if isinstance(result, BaseException):
            raise result
        worker: _Worker = result
        return worker

    def _spawn_loop(self) -> None:
        while True:
            limits, answer = self._spawns.get()
            try:
                answer.put(_launch(limits))
            except BaseException as exc:  # handed to the waiting caller
                answer.put(exc)


_POOL = Pool()
atexit.register(_POOL.close)


def _key(limits: Limits) -> tuple[Any, ...]:
    return (
        limits.memory_bytes,
        limits.readable,
        limits.preload,
        limits.network_namespace,
        limits.landlock,
    )


def import_paths() -> list[str]:
    """Folders the worker may read code from: the standard library, site-packages and every
    folder on sys.path that holds a package (not the current folder, not a bare temp dir)."""
    folders = {sysconfig.get_path(name) for name in ("stdlib", "platstdlib", "purelib", "platlib")}
    folders |= {sys.prefix, sys.base_prefix, sys.exec_prefix}
    here = Path(__file__).resolve().parents[4]  # the folder holding the drac package
    folders.add(str(here))
    for entry in sys.path:
        if (
            entry
            and entry != "/"
            and Path(entry).is_dir()
            and any(Path(entry).glob("*/__init__.py"))
        ):
            folders.add(entry)
    return sorted(folder for folder in folders if folder and folder != "/")


_BOOT = (
    "import sys; sys.path[:0] = __import__('json').loads(sys.argv[1]); "
    "from drac.documents.sandbox.containment.worker import main; sys.exit(main(sys.argv[2:]))"
)


def _launch(limits: Limits) -> _Worker:
    """Start a worker process (it is not ready yet: see `_ready`)."""
    readable = [*import_paths(), *limits.readable]
    config = {
        "memory_bytes": limits.memory_bytes,
        "preload": list(limits.preload),
        "readable": readable,
        "network_namespace": limits.network_namespace,
        "landlock": limits.landlock,
    }
    paths = [entry for entry in sys.path if entry]
    command = [sys.executable, "-I", "-c", _BOOT, json.dumps(paths), json.dumps(config)]
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=parser_environment(os.environ),
        )
    except OSError as exc:
        raise DocumentError(f"cannot start a contained worker: {exc}") from exc
    return _Worker(process, (), 0.0, _key(limits))


def _ready(worker: _Worker) -> _Worker:
    """Wait for a started worker's first frame: the protections it applied."""
    try:
        ready = wire.receive(worker.from_worker, time.monotonic() + _START_TIMEOUT_S)
    except wire.WireError as exc:
        status, _ = worker.kill()
        raise DocumentError(f"a contained worker did not start ({_status_words(status)})") from exc
    worker.protections = tuple(ready.get("protections", ()))
    worker.cpu = float(ready.get("cpu", 0.0))
    return worker


def run(
    target: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    limits: Limits,
    what: str,
    stream: bool,
) -> Iterator[Any]:
    """Run `target` ("module:function") in a worker; yield its items (a stream) or its one
    result. Raises DocumentError naming the reason when the call fails or the worker dies,
    BudgetExceeded when the document's CPU budget (`budget.current()`) runs out."""
    budget = current_budget()
    capped = False
    if budget is not None:
        budget.check(f"before {what.removeprefix('while ')}")
        cpu_s = budget.cap(limits.cpu_s)
        capped = cpu_s < limits.cpu_s
        limits = replace(limits, cpu_s=cpu_s, step_cpu_s=min(limits.step_cpu_s, cpu_s))
    worker = _POOL.take(limits)
    worker.peak_before = _address_space(worker.process.pid).peak
    worker.largest_seen = 0
    # a worker started for this call (OCR's are, each call) charges its start-up too
    meter = _Meter(budget, 0.0 if worker.fresh else worker.cpu, limits if capped else None)
    worker.fresh = False
    doing = what
    finished = False
    try:
        request = {"kind": "call", "target": target, "stream": stream, "cpu_s": limits.cpu_s,
                   "step_cpu_s": limits.step_cpu_s}  # fmt: skip
        try:
            wire.send(worker.to_worker, request, pickle.dumps((args, kwargs)))
        except OSError as exc:
            worker.kill()
            raise DocumentError(f"the contained worker was gone before {what}") from exc
        deadline = time.monotonic() + limits.wall_s
        while True:
            try:
                frame = _receive_watching(worker, deadline)
            except wire.Timeout:
                meter.died(worker.kill()[1])
                meter.check(doing)
                raise DocumentError(f"took more than {limits.wall_s:g} s {doing}") from None
            except wire.WireError:
                status, usage = worker.died()
                meter.died(usage, status)
                meter.check(doing)
                raise DocumentError(_death_reason(status, usage, worker, limits, doing)) from None
            if meter.reported(frame):  # spent: a stream's other calls may have used it
                worker.kill()
                meter.check(doing)
            kind = frame.get("kind")
            if kind == "step":
                doing = f"while {frame.get('text', '')}"
            elif kind == "item":
                yield frame["value"]
                deadline = time.monotonic() + limits.wall_s
            elif kind == "done":
                finished = True
                worker.cpu = float(frame.get("cpu", worker.cpu))
                _POOL.give_back(worker, int(frame.get("vm_bytes", 0)), limits)
                meter.check(doing)  # the call that spent the budget is the one named
                if not stream:
                    yield frame["value"]
                return
            elif kind == "error":
                finished = True
                worker.cpu = float(frame.get("cpu", worker.cpu))
                _POOL.give_back(worker, int(frame.get("vm_bytes", 0)), limits)
                meter.check(doing)
                raise DocumentError(_error_reason(frame, limits, doing))
            else:
                worker.kill()
                raise DocumentError(f"the contained worker sent a bad answer {doing}")
    finally:
        if not finished and worker.alive:
            with contextlib.suppress(Exception):  # also at interpreter shutdown
                meter.died(worker.kill()[1])  # an abandoned stream: the worker is mid-call


@dataclass
class _Meter:
    """Charges the CPU a worker reports (with each step, item and answer, and from its
    usage when it dies) to the document's budget, once each second of it."""

    budget: Budget | None
    counted: float
    """The worker's CPU time already charged (or used before this call)."""
    capped: Limits | None = None
    """The call's limits when its CPU limit is what was left of the budget."""

    def reported(self, frame: dict[str, Any]) -> bool:
        """Charge up to the frame's CPU figure; whether the budget is now spent."""
        if self.budget is None or "cpu" not in frame:
            return False
        self._charge_to(float(frame["cpu"]))
        return frame.get("kind") in ("step", "item") and self.budget.spent()

    def died(self, usage: resource.struct_rusage | None, status: int = 0) -> None:
        """Charge what a worker that is gone used, from its usage; a worker its CPU limit
        stopped (SIGXCPU) when that limit was the budget's spends the budget."""
        start = self.counted
        if usage is not None:
            self._charge_to(usage.ru_utime + usage.ru_stime)
        limits = self.capped
        if (
            self.budget is not None
            and limits is not None
            and os.WIFSIGNALED(status)
            and os.WTERMSIG(status) == signal.SIGXCPU
            and (limits.step_cpu_s >= limits.cpu_s or self.counted - start >= limits.cpu_s - 1)
        ):
            self.budget.charge_capped(limits.cpu_s, limits.cpu_s)

    def check(self, doing: str) -> None:
        """Raise BudgetExceeded when the budget is spent."""
        if self.budget is not None:
            self.budget.check(doing)

    def _charge_to(self, cpu: float) -> None:
        if self.budget is not None and cpu > self.counted:
            self.budget.charge(cpu - self.counted)
            self.counted = cpu


def protections(limits: Limits | None = None) -> tuple[str, ...]:
    """The protections a worker has in force on this platform (starts one if needed)."""
    limits = limits or Limits()
    worker = _POOL.take(limits)
    try:
        return worker.protections
    finally:
        _POOL.give_back(worker, 0, limits)


def start_ahead(limits: Limits, count: int) -> None:
    """Start up to `count` workers for `limits` now, without waiting for them: the next calls
    under these limits take them (ready by then, or waited for)."""
    _POOL.start_ahead(limits, count)


def _error_reason(frame: dict[str, Any], limits: Limits, doing: str) -> str:
    message = str(frame.get("message", ""))
    if frame.get("error") == "memory":
        return f"exceeded the {limits.describe_memory()} memory limit {doing}"
    if frame.get("error") == "bug":
        return f"the parser failed {doing} ({message})"
    return message


class _AddressSpace(NamedTuple):
    size: int
    peak: int


def _address_space(pid: int) -> _AddressSpace:
    """A live process's address space and its high-water mark, in bytes (0 where /proc
    cannot tell: not Linux, or the process is gone)."""
    found = {"VmSize:": 0, "VmPeak:": 0}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                name, _, value = line.partition("\t")
                if name in found:
                    found[name] = int(value.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return _AddressSpace(found["VmSize:"], found["VmPeak:"])


def _receive_watching(worker: _Worker, deadline: float) -> dict[str, Any]:
    """The worker's next frame (as `wire.receive`), watching its address space meanwhile.

    The kernel keeps no memory figure of a dead process that is its own: wait4's maxrss
    starts at the parent's peak (Linux carries it across vfork and exec), so how close a
    crashed worker came to its limit is only known from looking while it ran."""
    while True:
        _watch(worker)
        wait = min(_WATCH_INTERVAL_S, deadline - time.monotonic())
        if wait <= 0 or select.select([worker.from_worker], [], [], wait)[0]:
            return wire.receive(worker.from_worker, deadline)


def _watch(worker: _Worker) -> None:
    space = _address_space(worker.process.pid)
    raised = space.peak if space.peak > worker.peak_before else 0
    worker.largest_seen = max(worker.largest_seen, space.size, raised)


def _death_reason(
    status: int, usage: resource.struct_rusage | None, worker: _Worker, limits: Limits, doing: str
) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number == signal.SIGXCPU:
            used = (usage.ru_utime + usage.ru_stime - worker.cpu) if usage else 0.0
            budget = limits.cpu_s if used >= limits.cpu_s - 1 else limits.step_cpu_s
            return f"used more than {budget:g} s of CPU {doing}"
        if number in _CRASH_SIGNALS and worker.largest_seen >= _MEMORY_SHARE * limits.memory_bytes:
            return f"exceeded the {limits.describe_memory()} memory limit {doing}"
        if number == signal.SIGKILL:
            return f"was killed (SIGKILL: the machine ran out of memory?) {doing}"
        return f"crashed ({_signal_name(number)}) {doing}"
    return f"the parser exited unexpectedly ({_status_words(status)}) {doing}"


def _status_words(status: int) -> str:
    if status < 0:
        return _signal_name(-status)
    if os.WIFSIGNALED(status):
        return _signal_name(os.WTERMSIG(status))
    return f"status {os.WEXITSTATUS(status)}" if os.WIFEXITED(status) else f"status {status}"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
