"""Where each artifact of a document lives in the artifacts bucket."""

from __future__ import annotations

PAGES = "pages"
DOCUMENTS = "documents"
RUNS = "runs"


def page_key(document_id: str, page: int) -> str:
    """PNG of one rendered page (expired by a lifecycle rule)."""
    return f"{PAGES}/{document_id}/{page:05d}.png"


def page_meta_key(document_id: str, batch: int) -> str:
    """JSON with the text-layer size of each page of one batch (for the conversion checks),
    written by the render slice that rendered the batch."""
    return f"{PAGES}/{document_id}/batches/{batch:05d}.json"


def page_text_key(document_id: str, page: int) -> str:
    """The text layer of one rendered page, as pdfium read it (conversion checks)."""
    return f"{PAGES}/{document_id}/{page:05d}.txt"


def page_ocr_key(document_id: str, page: int) -> str:
    """The words OCR read of one scanned page (no text layer), one row a line: what the
    vision model's answer for the page is checked against."""
    return f"{PAGES}/{document_id}/{page:05d}.ocr.txt"


def verification_key(document_id: str) -> str:
    """What checking a vision model's pages against their text found (the summary)."""
    return f"{DOCUMENTS}/{document_id}/verification.json"


def batch_key(document_id: str, batch: int) -> str:
    """One converted batch: its Markdown (or error markers), warnings and failure, as JSON."""
    return f"{DOCUMENTS}/{document_id}/batches/{batch:05d}.json"


def warnings_key(document_id: str) -> str:
    """Every conversion warning of the document (its record keeps the first ones)."""
    return f"{DOCUMENTS}/{document_id}/warnings.json"


def pdf_key(document_id: str) -> str:
    """The normalised PDF of a non-PDF source."""
    return f"{DOCUMENTS}/{document_id}/source.pdf"


def markdown_key(document_id: str) -> str:
    """The document's converted Markdown (the audit trail of the one conversion)."""
    return f"{DOCUMENTS}/{document_id}/document.md"


def section_key(document_id: str, run_id: str, index: int) -> str:
    """One section of a planning run with the elements it needs (so planning a section reads
    only its own elements)."""
    return f"{RUNS}/{document_id}/{run_id}/sections/{index:05d}.json"


def section_plan_key(document_id: str, run_id: str, index: int) -> str:
    """The validated plan of one section in one planning run."""
    return f"{RUNS}/{document_id}/{run_id}/plans/{index:05d}.json"


def chunk_range_key(document_id: str, version: int, index: int) -> str:
    """Chunks number [index * range size, ...) of a plan version, as JSON Lines, to index."""
    return f"{RUNS}/{document_id}/v{version:05d}/chunks/{index:05d}.jsonl"


def chunk_metadata_key(document_id: str, version: int) -> str:
    """The document's metadata as a plan version's chunks are indexed with it."""
    return f"{RUNS}/{document_id}/v{version:05d}/metadata.json"


def plan_body_key(document_id: str, version: int) -> str:
    """The JSON body of a plan version (the plans table keeps a pointer to it)."""
    return f"plans/{document_id}/v{version:05d}.json"


def manifest_key(run_id: str) -> str:
    """The re-plan manifest (JSON array of documents) read by the Distributed Map."""
    return f"{RUNS}/replan/{run_id}/manifest.json"


def earlier_version_key(document_id: str) -> str:
    """JSON naming the version the document's key held before (its batches may be reused)."""
    return f"{DOCUMENTS}/{document_id}/earlier.json"


def reuse_key(document_id: str, digest: str) -> str:
    """One converted batch with its pages' digests, for the next version of the document,
    named by the digest of those page digests, the model and the prompt (so a batch is found
    wherever it now falls in the document)."""
    return f"{DOCUMENTS}/{document_id}/reuse/{digest}.json"


def numbered_batch_key(document_id: str, batch: int) -> str:
    """Where a converted batch was kept by number before `reuse_key` (documents ingested
    then have only these; ConvertBatch falls back to the one of its own number)."""
    return f"{DOCUMENTS}/{document_id}/batches/{batch:05d}.reuse.json"
