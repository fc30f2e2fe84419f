"""The errors of `drac.api`."""

from __future__ import annotations

from drac.errors import DracError


class ModelSetupError(DracError):
    """The models asked for cannot be built (no backend for the llm planner, no AWS region)."""


class IngestInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run: `done` of `total` documents had finished; the documents in
    progress were abandoned (nothing of an unfinished document is stored)."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__(f"{done} of {total} document(s) finished")
        self.done = done
        self.total = total
