"""The errors of `drac.documents.sandbox.containment`."""

from __future__ import annotations

from drac.errors import DocumentError


class BudgetExceeded(DocumentError):
    """The document used its whole CPU budget; it fails alone, with this reason."""
