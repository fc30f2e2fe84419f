"""The errors of `drac.aws.stages`."""

from __future__ import annotations

from drac.errors import DracError


class MustWait(DracError):
    """This message cannot be handled yet; it comes back after a growing wait."""


class KbTransformError(DracError):
    """The event or a batch cannot be transformed; nothing was written."""


class WaitedTooLong(DracError):
    """An upload waited MAX_WAITS times: it stops waiting and fails like any other error."""


class MetadataWaits(MustWait):
    """The document is being ingested or re-planned; its new metadata waits its turn."""


class PipelineFull(MustWait):
    """Too many documents are being ingested; this message waits its turn."""
