"""The errors of `drac.local`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from drac.errors import WorkspaceError

if TYPE_CHECKING:
    from drac.local.schema_check import ForeignObject


class UntrustedWorkspaceError(WorkspaceError):
    """A workspace drac found by itself but cannot show to be the user's own."""


class LinkInWorkspaceError(WorkspaceError):
    """A path inside a workspace is (or passes through) a symbolic link."""


class WorkspaceUnusableError(WorkspaceError):
    """The database cannot be used at all (damaged, or its disk full): no command that
    needs it can go on, for any document."""


class DiskFullError(WorkspaceUnusableError):
    """The disk holding the workspace has no space left."""


class DamagedFile(WorkspaceError, KeyError):
    """A file of the workspace is missing or unreadable; the message names it and the fix.
    (A KeyError too: callers that treat an absent artifact as absent still can.)"""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ForeignSchemaError(WorkspaceError):
    """The database holds objects drac does not make; the message names each one."""

    def __init__(self, path: str, found: list[ForeignObject]) -> None:
        self.found = found
        names = "; ".join(str(item) for item in found)
        super().__init__(
            f"{path} holds what drac does not make: {names}. drac will not open it (a database "
            "that came with the documents could rewrite or copy what you ingest); move the "
            "workspace aside and ingest your documents into a new one"
        )
