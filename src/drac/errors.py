"""Errors that name what went wrong in words a user can act on."""

from __future__ import annotations


class DracError(Exception):
    """Base of drac's own errors."""


class DocumentError(DracError):
    """A document cannot be processed (corrupt, encrypted, empty, unsupported, too large).

    The message states the reason; callers prefix the file name.
    """


class PlanningError(DracError):
    """A planner answer could not be used."""


class WorkspaceError(DracError):
    """The local workspace is missing, locked or inconsistent."""
