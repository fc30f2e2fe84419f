"""`drac.api.running.run_all`: outcomes in the files' order, a bug kept to its document, a
damaged workspace stopping the run, and Ctrl-C answered without waiting for the documents in
progress."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from drac.api.errors import IngestInterrupted
from drac.api.running import FileProgress, QuietEvents, run_all
from drac.local.errors import WorkspaceUnusableError
from drac.local.outcome import Outcome

FILES = [Path(f"/docs/{name}.md") for name in ("a", "b", "c", "d")]


def ok(path: Path, progress: FileProgress) -> Outcome:
    progress(1, 1)
    return Outcome(path=str(path), status="INDEXED", chunks=1)


def test_outcomes_come_in_the_files_order_and_a_bug_fails_only_its_document() -> None:
    def run(path: Path, progress: FileProgress) -> Outcome:
        if path.stem == "b":
            raise RuntimeError("boom")
        return ok(path, progress)

    outcomes = run_all(FILES, run, jobs=3)
    assert [o.path for o in outcomes] == [str(p) for p in FILES]
    assert [o.status for o in outcomes] == ["INDEXED", "FAILED", "INDEXED", "INDEXED"]
    assert outcomes[1].error == "unexpected error (RuntimeError): boom"


def test_a_damaged_workspace_stops_the_run() -> None:
    def run(path: Path, progress: FileProgress) -> Outcome:
        raise WorkspaceUnusableError("disk full")

    with pytest.raises(WorkspaceUnusableError):
        run_all(FILES, run, jobs=2)


def test_ctrl_c_does_not_wait_for_the_documents_in_progress() -> None:
    release = threading.Event()
    seen: list[str] = []
    ended: list[str] = []

    def run(path: Path, progress: FileProgress) -> Outcome:
        if path.stem != "a":
            release.wait(10)  # a long document, still running when Ctrl-C comes
            ended.append(path.stem)
        return ok(path, progress)

    class Interrupting(QuietEvents):
        def finished(self, outcome: Outcome) -> None:
            seen.append(outcome.path)
            raise KeyboardInterrupt

    try:
        with pytest.raises(IngestInterrupted) as caught:
            run_all(FILES, run, jobs=2, events=Interrupting())
        assert ended == []  # returned while a document was still in progress
        assert (caught.value.done, caught.value.total) == (1, 4)
        assert seen == [str(FILES[0])]
    finally:
        release.set()


CTRL_C_IN_A_WORKER = """
import signal, sys, threading, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # as at a terminal (see test_interrupt)
from pathlib import Path
from drac.api.errors import IngestInterrupted
from drac.api.running import run_all
from drac.local.outcome import Outcome

release = threading.Event()
timed_out = []

def run(path, progress):
    time.sleep(1)  # the main thread is waiting for this document by now
    # Linux may deliver a Ctrl-C to any thread: here, to this one
    signal.pthread_kill(threading.get_ident(), signal.SIGINT)
    if not release.wait(30):
        timed_out.append(path)
    return Outcome(path=str(path), status="INDEXED")

try:
    run_all([Path("/docs/a.md")], run, jobs=1)
except IngestInterrupted:
    print("interrupted, document still running:", not timed_out)
finally:
    release.set()
"""


def test_ctrl_c_delivered_to_a_worker_thread_still_stops_the_run() -> None:
    # a process of its own: the main thread must be the interpreter's, and only its own
    # signal handler may run
    result = subprocess.run(
        [sys.executable, "-c", CTRL_C_IN_A_WORKER], capture_output=True, text=True, timeout=120
    )
    assert result.stdout.strip() == "interrupted, document still running: True", result.stderr
