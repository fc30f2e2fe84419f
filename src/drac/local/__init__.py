"""The local runtime: a workspace folder with SQLite, the embedded default."""

from drac.local.workspace import DEFAULT_WORKSPACE, FileArtifactStore, Workspace

__all__ = ["DEFAULT_WORKSPACE", "FileArtifactStore", "Workspace"]
