"""The errors of `drac.clients`."""

from __future__ import annotations

from drac.errors import ModelCallError


class HttpStatusError(ModelCallError):
    """The server refused the request with a status that retrying cannot change (4xx, or a
    5xx whose body says a feature asked for is not supported); `body` holds the start of
    what it said, so a caller can adapt the request."""

    def __init__(self, message: str, *, status: int, body: str) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
