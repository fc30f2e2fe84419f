"""Several files ingested at once: one thread per document up to `jobs`, each failure kept
to its own document, outcomes in the order the files were given."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Protocol

from drac.api.errors import IngestInterrupted
from drac.local.cores import SIGNAL_POLL_S, ThreadBudget
from drac.local.errors import WorkspaceUnusableError
from drac.local.files import shown_path
from drac.local.outcome import Outcome

FileProgress = Callable[[int, int], None]
"""Told (done, total) conversion steps of one file."""

RunOne = Callable[[Path, FileProgress], Outcome]


class RunEvents(Protocol):
    """What a caller (the CLI's progress bars) hears while documents run."""

    def started(self, path: Path) -> FileProgress:
        """A document begins; the callback returned hears its progress."""
        ...

    def ended(self, path: Path) -> None:
        """A document ended (whatever its outcome)."""
        ...

    def finished(self, outcome: Outcome) -> None:
        """A document's outcome, as soon as it is known (in completion order)."""
        ...


class QuietEvents:
    """Events nobody listens to."""

    def started(self, path: Path) -> FileProgress:
        """No progress shown."""
        return _ignore

    def ended(self, path: Path) -> None:
        """Nothing to do."""

    def finished(self, outcome: Outcome) -> None:
        """Nothing to do."""


def _ignore(_done: int, _total: int) -> None:
    return None


def run_all(
    files: Sequence[Path],
    run: RunOne,
    jobs: int,
    events: RunEvents | None = None,
    budget: ThreadBudget | None = None,
) -> list[Outcome]:
    """Run `run` over the files, `jobs` at a time; the outcomes in the files' order. A bug in
    one document is that document's FAILED outcome; WorkspaceUnusableError (no document could
    be stored) stops the run. On Ctrl-C, IngestInterrupted at once, without waiting for the
    documents in progress. With a `budget`, each document holds one of its tokens while it
    runs (the embedder alongside holds the others)."""
    listener: RunEvents = events if events is not None else QuietEvents()
    outcomes: list[Outcome] = []

    def one(path: Path) -> Outcome:
        if budget is None:
            return held(path)
        with budget.job():
            return held(path)

    def held(path: Path) -> Outcome:
        report = listener.started(path)
        try:
            return run(path, report)
        except WorkspaceUnusableError:
            raise
        except Exception as exc:  # a bug in one document must not lose the others
            error = f"unexpected error ({type(exc).__name__}): {exc}"
            return Outcome(path=shown_path(path), status="FAILED", error=error)
        finally:
            listener.ended(path)

    pool = ThreadPoolExecutor(max_workers=jobs)
    interrupted = False
    try:
        pending: set[Future[Outcome]] = {pool.submit(one, path) for path in files}
        while pending:
            done, pending = wait(pending, timeout=SIGNAL_POLL_S, return_when=FIRST_COMPLETED)
            for future in done:
                outcome = future.result()
                outcomes.append(outcome)
                listener.finished(outcome)
    except KeyboardInterrupt:
        interrupted = True
        raise IngestInterrupted(len(outcomes), len(files)) from None
    finally:
        # on Ctrl-C the caller decides at once (the CLI exits): the threads are not waited for
        pool.shutdown(wait=not interrupted, cancel_futures=True)
    order = {shown_path(path): index for index, path in enumerate(files)}
    return sorted(outcomes, key=lambda o: order.get(o.path, -1))
