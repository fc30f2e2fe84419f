"""drac as the chunker of an Amazon Bedrock Knowledge Base: the custom transformation Lambda's
core (a data source with chunking strategy NONE calls it at POST_CHUNKING).

The contract is AWS's ("Use a custom transformation Lambda function to define how your data is
ingested", Amazon Bedrock User Guide,
https://docs.aws.amazon.com/bedrock/latest/userguide/kb-custom-transformation.html):

- the input event names the intermediate bucket (`bucketName`) and, per source file
  (`inputFiles[]`: `originalFileLocation`, `fileMetadata`), the objects the knowledge base wrote
  there (`contentBatches[].key`);
- each of those objects is JSON `{"fileContents": [{"contentBody", "contentType",
  "contentMetadata"}, ...]}`; with chunking NONE "each document is treated a single text
  chunk" (User Guide, "How content chunking works for knowledge bases"), so an entry is the
  knowledge base's parsed text (Markdown from the advanced parsers) of a whole file;
- the function writes chunked files of the same format back into the same bucket and returns
  `{"outputFiles": [{"originalFileLocation", "fileMetadata", "contentBatches": [{"key"}]}]}`;
  chunk-level metadata overrides file-level metadata on a collision.

Every chunk's text is drac's: the breadcrumb and the stored elements verbatim
(`drac.assemble`). Everything is computed before anything is written, so a malformed batch or
an invocation running out of time writes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from drac.assemble import assemble_chunks
from drac.aws.stages.errors import KbTransformError
from drac.clock import utc_now
from drac.errors import DocumentError
from drac.ids import digest_of
from drac.ingest import parse_document
from drac.models import Chunk, DocumentRecord, PlanVersion, Strategy
from drac.parsing import PAGE_MARKER
from drac.planning import plan_section
from drac.ports import Ledger, MemoryLedger, TextModel

OUTPUT_SUFFIX = ".drac.json"
"""Appended to a batch's key to name the chunked file written beside it (same prefix, so the
function's grant on the intermediate prefix covers both)."""
RESERVE_MS = 30_000
"""Time kept back for writing the chunked files and answering (the rules planner's budget)."""


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class ContentBatch(_Open):
    """One object the knowledge base wrote to the intermediate bucket."""

    key: str = Field(min_length=1)


class InputFile(_Open):
    """One source file of the ingestion job and its content batches."""

    original_file_location: dict[str, Any] = Field(alias="originalFileLocation")
    file_metadata: dict[str, Any] = Field(default_factory=dict, alias="fileMetadata")
    content_batches: list[ContentBatch] = Field(alias="contentBatches")


class TransformEvent(_Open):
    """The event a knowledge base sends its custom transformation function."""

    bucket_name: str = Field(alias="bucketName", min_length=3)
    input_files: list[InputFile] = Field(alias="inputFiles")


class FileContent(_Open):
    """One entry of a batch object's `fileContents`."""

    content_body: str = Field(alias="contentBody")
    content_type: str = Field(default="TEXT", alias="contentType")
    content_metadata: dict[str, Any] = Field(default_factory=dict, alias="contentMetadata")


class BatchFile(BaseModel):
    """A batch object: `{"fileContents": [...]}`."""

    model_config = ConfigDict(extra="allow")

    fileContents: list[FileContent]  # AWS's field name


class Transformed(BaseModel):
    """What one invocation writes (key -> JSON body) and the event it answers with."""

    writes: dict[str, bytes]
    response: dict[str, Any]
    chunks: int


def parse_event(event: Any, prefix: str = "") -> TransformEvent:
    """Validate the input event; every batch key must lie under `prefix`.

    Raises KbTransformError naming what is wrong.
    """
    try:
        parsed = TransformEvent.model_validate(event)
    except ValidationError as exc:
        raise KbTransformError(f"not a knowledge base transformation event: {exc}") from exc
    for file in parsed.input_files:
        for batch in file.content_batches:
            if not batch.key.startswith(prefix) or batch.key.endswith(OUTPUT_SUFFIX):
                raise KbTransformError(
                    f"batch key {batch.key!r} is outside the intermediate prefix {prefix!r}"
                )
    return parsed


def read_batch(key: str, body: bytes) -> BatchFile:
    """Parse one batch object. Raises KbTransformError naming the key when malformed."""
    try:
        return BatchFile.model_validate(json.loads(body))
    except (ValueError, ValidationError) as exc:
        raise KbTransformError(
            f"batch {key!r} is not a knowledge base content file: {exc}"
        ) from exc


def chunk_content(
    content: FileContent,
    document_id: str,
    source: str,
    strategy: Strategy,
    *,
    text_model: TextModel | None = None,
    ledger: Ledger | None = None,
    deadline: Callable[[], None] = lambda: None,
) -> list[Chunk]:
    """drac's chunks of one parsed file (none when it holds no text); `deadline` is called
    before each section is planned and raises when the invocation has no time left."""
    try:
        parsed = parse_document(content.content_body, strategy)
    except DocumentError:
        return []  # no text content: nothing to index
    ledger = ledger or MemoryLedger()
    plans = []
    for section in parsed.sections:
        deadline()
        plans.append(
            plan_section(
                section,
                parsed.elements,
                strategy,
                text_model=text_model,
                ledger=ledger,
                document_id=document_id,
            )
        )
    plan = PlanVersion(
        document_id=document_id,
        version=1,
        strategy=strategy,
        sections=tuple(plans),
        created_at=utc_now(),
    )
    record = DocumentRecord(document_id=document_id, source=source, sha256=document_id)
    return assemble_chunks(record, parsed.elements, plan)


def chunk_entries(content: FileContent, chunks: Sequence[Chunk], paged: bool) -> list[dict]:
    """The chunks as `fileContents` entries: the knowledge base's own metadata of the content
    with drac's added (pages only when the content carried page markers)."""
    entries = []
    for index, chunk in enumerate(chunks):
        metadata: dict[str, Any] = {
            **content.content_metadata,
            "drac_chunk_id": chunk.chunk_id,
            "drac_chunk_index": index,
            "drac_breadcrumb": chunk.breadcrumb,
        }
        if paged and chunk.pages:
            metadata["drac_page_start"] = min(chunk.pages)
            metadata["drac_page_end"] = max(chunk.pages)
        entries.append(
            {
                "contentBody": chunk.text,
                "contentType": content.content_type,
                "contentMetadata": metadata,
            }
        )
    return entries


def transform(
    event: Any,
    read: Callable[[str], bytes],
    strategy: Strategy,
    *,
    prefix: str = "",
    text_model: TextModel | None = None,
    ledger: Ledger | None = None,
    remaining_ms: Callable[[], int] = lambda: 900_000,
    reserve_ms: int = RESERVE_MS,
) -> Transformed:
    """Chunk every batch of the event with drac; return the files to write and the response.

    Raises KbTransformError (nothing is written) when the event or a batch is malformed, or
    when fewer than `reserve_ms` remain before a section is planned.
    """
    parsed = parse_event(event, prefix)

    def deadline() -> None:
        left = remaining_ms()
        if left < reserve_ms:
            raise KbTransformError(
                f"{left} ms left in this invocation, under the {reserve_ms} ms kept to write"
                " the chunks: nothing was written; raise the function's timeout (at most 900 s)"
                " or split the source file"
            )

    writes: dict[str, bytes] = {}
    output_files = []
    total = 0
    for file in parsed.input_files:
        location = json.dumps(file.original_file_location, sort_keys=True)
        batches = []
        for batch in file.content_batches:
            deadline()
            body = read(batch.key)
            entries: list[dict] = []
            for position, content in enumerate(read_batch(batch.key, body).fileContents):
                document_id = digest_of([location, batch.key, str(position)])
                chunks = chunk_content(
                    content,
                    document_id,
                    batch.key,
                    strategy,
                    text_model=text_model,
                    ledger=ledger,
                    deadline=deadline,
                )
                paged = PAGE_MARKER.search(content.content_body) is not None
                entries.extend(chunk_entries(content, chunks, paged))
            total += len(entries)
            out_key = batch.key + OUTPUT_SUFFIX
            writes[out_key] = json.dumps({"fileContents": entries}).encode()
            batches.append({"key": out_key})
        output_files.append(
            {
                "originalFileLocation": file.original_file_location,
                "fileMetadata": file.file_metadata,
                "contentBatches": batches,
            }
        )
    return Transformed(writes=writes, response={"outputFiles": output_files}, chunks=total)
