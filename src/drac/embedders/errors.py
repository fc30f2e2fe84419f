"""The errors of `drac.embedders`."""

from __future__ import annotations

from drac.errors import DracError


class EmbedderUnavailable(DracError):
    """The configured embedder cannot be used here; the message says what to install or set."""


class ModelFileError(DracError, ValueError):
    """The file is not a model file this reader understands (or is cut short)."""
