"""Run one LibreOffice command under a memory limit, and take it down with drac.

drac starts this file as a script (`python -I -S lo_guard.py PARENT_PID LIMIT WORKDIR
POLICY_JSON -- COMMAND...`, standard library only) in a session of its own. The guard
applies the containment policy (`containment/policy.py`, loaded by path: the address space
capped with RLIMIT_AS, no core files, a private network namespace, and Landlock letting
LibreOffice read only the system paths POLICY_JSON names and write only WORKDIR, each where
the platform allows; all inherited by every LibreOffice process), prints the layers in force
as its first line on stderr, starts the command in a process group of its own, and waits.
Whichever ends first decides:

- the command exits: the guard kills whatever the command left in its group, exits with the
  command's status (128 + N when signal N killed it);
- drac dies (PR_SET_PDEATHSIG on Linux, else noticed within a second by polling the parent
  pid) or drac sends SIGTERM (a timeout): the guard kills the command's whole group at once;
  when drac is gone it also removes WORKDIR, the conversion's temporary folder.

With "cpu_s" in POLICY_JSON each LibreOffice process may use at most that many CPU seconds
(RLIMIT_CPU: what is left of the document's CPU budget). The guard is its command's
subreaper, so every LibreOffice process ends as its descendant; when they are all reaped it
prints the CPU they used as its last line on stderr (CPU_PREFIX), which drac charges to the
document's budget.

The death signal is SIGUSR1, which drac never sends: Linux sends it when the *thread* that
started the guard ends, and when drac exits from another thread (Ctrl-C) that thread may be
torn down first, the guard re-parented to a sibling thread, its parent pid still drac's. Told
apart from drac's SIGTERM by its number, it always means drac is going.

A guard is needed because `soffice` is a script that execs `oosplash`, which forks
`soffice.bin`: a death signal set on the direct child would not reach the real converter.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import json
import math
import os
import resource
import shutil
import signal
import sys
import time
import urllib.parse
from collections.abc import Callable
from types import ModuleType
from typing import Any

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
_STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
_DEATH_SIGNAL = signal.SIGUSR1
_WATCHED = {signal.SIGCHLD, _DEATH_SIGNAL, *_STOP_SIGNALS}
POLL_S = 1.0
CANNOT_START = 127
"""The guard's status when the command cannot be executed (as a shell's)."""
PROTECTIONS_PREFIX = "drac-guard: protections: "
CPU_PREFIX = "drac-guard: cpu: "
_REAP_S = 2.0
"""How long the guard waits for the killed leftovers of its command to be reaped."""
_SOCKET_DIRS = ("/tmp", "/var/tmp")
"""Where LibreOffice makes its single-instance socket whenever the folder looks writable."""
_POLICY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "containment", "policy.py")


def main(argv: list[str]) -> int:
    """Run the command after `--` in argv as described in the module docstring; its status."""
    parent, memory_bytes, workdir, paths, command = _arguments(argv)
    signal.pthread_sigmask(signal.SIG_BLOCK, _WATCHED)
    _die_with_parent()
    _adopt_orphans()
    if os.getppid() != parent:  # drac died before the death signal was armed
        _remove(workdir)
        return 1
    policy = _load_policy()
    # The guard keeps the right to remove WORKDIR: Landlock is applied in the child only.
    applied = policy.apply_policy(memory_bytes=memory_bytes, readable=[], landlock=False)

    def seal() -> None:
        applied.extend(
            policy.restrict_files(
                [*paths["readable"], os.path.dirname(os.path.realpath(command[0]))],
                [workdir, os.devnull, *paths["writable"]],
                sockets=_SOCKET_DIRS,  # LibreOffice's IPC socket (it ignores TMPDIR for it)
            )
        )
        os.write(2, f"{PROTECTIONS_PREFIX}{', '.join(applied)}\n".encode())
        _limit_cpu(paths.get("cpu_s"))

    child = _start(_private_caches(command, workdir), seal)
    while True:
        status = os.waitid(os.P_PID, child, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        if status is not None:
            break
        received = signal.sigtimedwait(_WATCHED, POLL_S)
        signo = received.si_signo if received is not None else None
        orphaned = os.getppid() != parent or signo == _DEATH_SIGNAL
        if orphaned or signo in _STOP_SIGNALS:
            _kill_group(child)
            os.waitpid(child, 0)
            if orphaned:
                _remove(workdir)
            _report_cpu()
            return 128 + signal.SIGKILL
    _kill_group(child)  # leftovers of a finished command; the unreaped child keeps its pgid
    os.waitpid(child, 0)
    _report_cpu()
    if status.si_code == os.CLD_EXITED:
        return status.si_status
    return 128 + status.si_status


def _arguments(argv: list[str]) -> tuple[int, int, str, dict[str, Any], list[str]]:
    """PARENT_PID MEMORY_BYTES WORKDIR POLICY_JSON -- COMMAND...; POLICY_JSON is
    {"readable": [...], "writable": [...], "cpu_s": seconds or absent} (paths besides
    WORKDIR, and the CPU each LibreOffice process may use)."""
    if len(argv) < 6 or argv[4] != "--":
        raise SystemExit(
            "usage: lo_guard.py PARENT_PID MEMORY_BYTES WORKDIR POLICY_JSON -- COMMAND..."
        )
    policy = json.loads(argv[3])
    paths: dict[str, Any] = {
        key: [str(path) for path in policy.get(key, [])] for key in ("readable", "writable")
    }
    cpu_s = policy.get("cpu_s")
    paths["cpu_s"] = float(cpu_s) if isinstance(cpu_s, (int, float)) and cpu_s > 0 else None
    return int(argv[0]), int(argv[1]), argv[2], paths, argv[5:]


def _limit_cpu(seconds: float | None) -> None:
    """Cap the CPU time of the command and of every process it starts (each its own)."""
    if seconds is None:
        return
    soft = max(1, math.ceil(seconds))
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _adopt_orphans() -> None:
    """Become the subreaper of what the command starts (Linux), so LibreOffice processes
    whose parent died are reaped here and their CPU counted."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _report_cpu() -> None:
    """Reap the command's leftovers (killed with its group), then print the CPU seconds
    every reaped process used as the last line on stderr."""
    deadline = time.monotonic() + _REAP_S
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.01)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    with contextlib.suppress(OSError):
        os.write(2, f"\n{CPU_PREFIX}{usage.ru_utime + usage.ru_stime:.3f}\n".encode())


def _private_caches(command: list[str], workdir: str) -> list[str]:
    """LibreOffice with its shared and bundled extension caches in the work folder: run as
    root it would write them into its installation (which Landlock forbids, so it aborts)."""
    if not os.path.basename(command[0]).startswith(("soffice", "libreoffice")):
        return command
    uri = "file://" + urllib.parse.quote(os.path.join(workdir, "uno-cache"))
    return [
        command[0],
        f"-env:UNO_SHARED_PACKAGES_CACHE={uri}/shared",
        f"-env:BUNDLED_EXTENSIONS_USER={uri}/bundled",
        *command[1:],
    ]


def _load_policy() -> ModuleType:
    """The containment policy, by path (this script runs without drac on its path)."""
    spec = importlib.util.spec_from_file_location("drac_containment_policy", _POLICY)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load the containment policy from {_POLICY}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _die_with_parent() -> None:
    """Ask Linux for the death signal when drac's spawning thread ends (elsewhere: polling
    only)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, _DEATH_SIGNAL, 0, 0, 0)


def _start(command: list[str], seal: Callable[[], None]) -> int:
    pid = os.fork()
    if pid == 0:  # the guard is single-threaded: fork then exec is safe here
        try:
            os.setpgid(0, 0)
            seal()
            signal.pthread_sigmask(signal.SIG_SETMASK, set())
            os.execvp(command[0], command)
        except OSError as exc:
            os.write(2, f"{command[0]}: {exc}\n".encode())
        os._exit(CANNOT_START)
    with contextlib.suppress(OSError):  # also here, so no kill can precede the child's own
        os.setpgid(pid, pid)
    return pid


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _remove(workdir: str) -> None:
    if workdir:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
