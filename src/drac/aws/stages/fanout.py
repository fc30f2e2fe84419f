"""Fan-out over many items within Step Functions' limits.

`States.ArrayRange` returns at most 1,000 items, so a Map over more items iterates over groups
of at most 1,000 (an outer Map), each expanded by ArrayRange (an inner Map). Every iteration
adds about seven events to the execution's history, which may not exceed 25,000 events, so a
document is refused beyond `MAX_ITEMS` items of one kind, with the setting to raise named.
"""

from __future__ import annotations

from pydantic import BaseModel

GROUP_SIZE = 1000
MAX_ITEMS = 2500
CONVERT_GROUP_SIZE = 100
"""Conversion batches per child execution of the convert machine: a batch costs about seven
history events and each retry three more, so 100 batches that all use their 40 retries stay
near 12,700 events, under the 25,000-event limit, however large the document."""

SCAN_PAGES_PER_READ = 20
"""Scanned pages one ReadScans invocation reads by OCR, at least: about 75 s at the measured
3.7 s of CPU a page (BENCHMARKS.md, "ReadScans")."""
MAX_SCAN_GROUPS = 50
"""ReadScans invocations of one document at most. They run in the ingest's own history beside
the render slices: 50 groups that all use their 40 retries add about 6,500 events to the
slices' 13,000, under the 25,000-event limit. A 5,000-page document is read in groups of 100
pages (about 6 minutes at the measured rate, inside the function's 15)."""


def scan_group_pages(page_count: int) -> int:
    """Scanned pages per ReadScans invocation for a document of `page_count` pages: at least
    SCAN_PAGES_PER_READ, and enough that its scans make at most MAX_SCAN_GROUPS groups."""
    return max(SCAN_PAGES_PER_READ, -(-page_count // MAX_SCAN_GROUPS))


class ItemGroup(BaseModel):
    """Items `first` to `last` (inclusive) of a fan-out."""

    first: int
    last: int


def item_groups(count: int, size: int = GROUP_SIZE) -> list[ItemGroup]:
    """Split item numbers 0 .. count-1 into groups of at most `size`."""
    return [
        ItemGroup(first=start, last=min(start + size, count) - 1) for start in range(0, count, size)
    ]


SLICE_PAGES = 50
"""Pages one Render invocation renders (whole batches, so each batch's pages are rendered
by one slice): at the dense-page speed measured in BENCHMARKS.md ("Rendering dense pages")
a slice takes seconds, far inside the function's timeout and the pdfium worker's CPU limit."""
MAX_SLICES = 100
"""Render slices of one document at most (they run in the ingest's own history: 100 slices
that all use their 40 retries add about 13,000 events). A document with more batches than
100 slices of SLICE_PAGES hold gets larger slices."""
MAX_BATCH_SIZE = 20
"""The largest `batchSize` setting (Settings.batch_size)."""
MAX_SLICE_PAGES = -(-MAX_ITEMS // MAX_SLICES) * MAX_BATCH_SIZE
"""The most pages a slice can hold: 2,500 batches of 20 pages in 100 slices."""


def render_slices(batches: int, batch_size: int) -> list[ItemGroup]:
    """Split batch numbers 0 .. batches-1 into render slices of whole batches: about
    SLICE_PAGES pages each, at most MAX_SLICES slices."""
    per_slice = max(-(-SLICE_PAGES // batch_size), -(-batches // MAX_SLICES), 1)
    return item_groups(batches, per_slice)
