"""The errors of `drac.integrations`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from drac.errors import DracError

if TYPE_CHECKING:
    from drac.local.outcome import Outcome


class OutsideAllowedFolder(DracError):
    """A path to ingest lies outside the folder the user allowed."""


class DracIngestError(DracError):
    """Documents an integration was given failed to ingest; `outcomes` holds each failure."""

    def __init__(self, message: str, outcomes: Sequence[Outcome]) -> None:
        super().__init__(message)
        self.outcomes = list(outcomes)

    @classmethod
    def of(cls, failed: Sequence[Outcome]) -> DracIngestError:
        """The error naming the first few failed files and their reasons."""
        reasons = "; ".join(f"{o.path}: {o.error}" for o in failed[:5])
        return cls(f"{len(failed)} document(s) failed to ingest: {reasons}", failed)
