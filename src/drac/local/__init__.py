"""The local runtime: a workspace folder with SQLite, the embedded default."""

from drac.local.trust import DEFAULT_WORKSPACE
from drac.local.workspace import FileArtifactStore, Workspace

__all__ = ["DEFAULT_WORKSPACE", "FileArtifactStore", "Workspace"]
