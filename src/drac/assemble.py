"""Rebuild chunk text verbatim from stored elements (stage 4, second half).

Only stored element text and the breadcrumb built from stored headings reach a chunk: the
planner's answer contributes element IDs and nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import TypeAdapter

from drac.errors import DocumentError
from drac.ids import chunk_id_for
from drac.models import Chunk, DocumentRecord, Element, PlanVersion, Strategy
from drac.provenance import BoxStatus, union_by_page

# Validating a plan's chunks in one call costs less than one by one.
_CHUNKS = TypeAdapter(list[Chunk])
BREADCRUMB_SEPARATOR = " >> "
BREADCRUMB_MAX_CHARS = 300
_ELISION = "…"


def common_chain(elements: Sequence[Element]) -> tuple[str, ...]:
    """Longest ancestor-heading chain shared by all the given elements."""
    if not elements:
        return ()
    chain = elements[0].ancestors
    for element in elements[1:]:
        ancestors = element.ancestors
        if ancestors == chain or ancestors[: len(chain)] == chain:
            continue  # shares the whole chain so far
        length = 0
        for mine, theirs in zip(chain, ancestors, strict=False):
            if mine != theirs:
                break
            length += 1
        chain = chain[:length]
    return chain


def breadcrumb_for(chain: Sequence[str], by_id: Mapping[str, Element]) -> str:
    """Join the chain's heading titles with ' >> ', eliding middle levels past 300 chars."""
    return join_titles([by_id[heading].title for heading in chain])


def join_titles(titles: Sequence[str]) -> str:
    """The breadcrumb of these heading titles (empty ones left out), as breadcrumb_for."""
    titles = [title for title in titles if title]
    crumb = BREADCRUMB_SEPARATOR.join(titles)
    if len(crumb) <= BREADCRUMB_MAX_CHARS:
        return crumb
    middle = titles[1:-1]
    while middle:
        middle.pop(0)
        crumb = BREADCRUMB_SEPARATOR.join([titles[0], _ELISION, *middle, titles[-1]])
        if len(crumb) <= BREADCRUMB_MAX_CHARS:
            return crumb
    return crumb[: BREADCRUMB_MAX_CHARS - 1] + _ELISION


def layout(content: Sequence[Element], by_id: Mapping[str, Element]) -> tuple[str, str, list[str]]:
    """Return (breadcrumb, body, element ids used) for content elements in document order.

    Headings below the shared chain are written into the body before the first element under
    them; a table's header and separator lines precede its first row in the chunk, and rows of
    one table are joined by single newlines so each piece is still a valid table.
    """
    chain, body, used = _body(content, by_id)
    return breadcrumb_for(chain, by_id), body, used


def _body(
    content: Sequence[Element], by_id: Mapping[str, Element]
) -> tuple[tuple[str, ...], str, list[str]]:
    """The shared heading chain, the body and the element ids used (see `layout`)."""
    chain = common_chain(content)
    used: list[str] = list(chain)
    emitted: set[str] = set(chain)
    parts: list[str] = []
    previous_table: str | None = None
    previous_ancestors: tuple[str, ...] | None = None
    for element in content:
        if element.ancestors != previous_ancestors:  # else its headings are written already
            for heading in element.ancestors:
                if heading not in emitted:
                    emitted.add(heading)
                    used.append(heading)
                    parts.append(by_id[heading].text)
                    previous_table = None
            previous_ancestors = element.ancestors
        if element.table_id is not None and element.table_id == previous_table:
            parts[-1] = parts[-1] + "\n" + element.text
        elif element.table_header is not None:
            parts.append(element.table_header + "\n" + element.text)
        else:
            parts.append(element.text)
        previous_table = element.table_id
        used.append(element.id)
    return chain, "\n\n".join(parts), used


def layout_ids(content: Sequence[Element]) -> tuple[str, ...]:
    """The element ids `layout` reports as used for these content elements (same order)."""
    chain = common_chain(content)
    used: list[str] = list(chain)
    emitted: set[str] = set(chain)
    previous: tuple[str, ...] | None = None
    for element in content:
        if element.ancestors != previous:  # else its headings are written already
            for heading in element.ancestors:
                if heading not in emitted:
                    emitted.add(heading)
                    used.append(heading)
            previous = element.ancestors
        used.append(element.id)
    return tuple(used)


def chunk_text(content: Sequence[Element], by_id: Mapping[str, Element]) -> str:
    """The exact text a chunk of these content elements would be embedded as."""
    breadcrumb, body, _ = layout(content, by_id)
    return f"{breadcrumb}\n\n{body}" if breadcrumb else body


def content_of(
    ids: Sequence[str], by_id: Mapping[str, Element], order: Mapping[str, int]
) -> list[Element]:
    """The content (non-heading) elements named by ids, in document order."""
    wanted = {i for i in ids if i in by_id and not by_id[i].is_heading}
    return [by_id[i] for i in sorted(wanted, key=order.__getitem__)]


def assemble_chunks(
    record: DocumentRecord, elements: Sequence[Element], plan: PlanVersion
) -> list[Chunk]:
    """Build the chunks of one plan version from the document's stored elements."""
    by_id = {element.id: element for element in elements}
    order = {element.id: index for index, element in enumerate(elements)}
    breadcrumbs: dict[tuple[str, ...], str] = {}
    titles: dict[str, str] = {}
    chunks: list[dict[str, object]] = []
    for ids in plan.chunk_ids_arrays:
        content = content_of(ids, by_id, order)
        if not content:
            continue
        chain, body, used = _body(content, by_id)
        breadcrumb = breadcrumbs.get(chain)
        if breadcrumb is None:
            for heading in chain:
                if heading not in titles:
                    titles[heading] = by_id[heading].title
            breadcrumb = breadcrumbs[chain] = join_titles([titles[h] for h in chain])
        chunks.append(
            {
                "document_id": record.document_id,
                "source": record.source,
                "chunk_id": chunk_id_for(record.document_id, plan.version, used),
                "plan_version": plan.version,
                "text": f"{breadcrumb}\n\n{body}" if breadcrumb else body,
                "breadcrumb": breadcrumb,
                "element_ids": tuple(used),
                "pages": tuple(sorted({element.page for element in content})),
                "tenant": record.tenant,
                **_provenance([by_id[i] for i in used[len(chain) :]]),
            }
        )
    return _CHUNKS.validate_python(chunks)


def _provenance(written: Sequence[Element]) -> dict[str, object]:
    """The boxes of the elements written into a chunk's body (a table row's with its table's
    header, which the body repeats), per page, and the elements not (fully) found on their
    page; nothing when the document has no boxes."""
    located = [element for element in written if element.boxes is not None]
    if not located:
        return {}
    groups = [(*element.boxes.header, *element.boxes.pages) for element in located if element.boxes]
    return {
        "boxes": union_by_page(groups),
        "unaligned": tuple(
            element.id
            for element in located
            if element.boxes and element.boxes.status is not BoxStatus.ALIGNED
        ),
    }


def check_hard_limit(record: DocumentRecord, chunks: Sequence[Chunk], strategy: Strategy) -> None:
    """Raise DocumentError when a chunk breaks the strategy's hard limit (check before storing).

    Only a single element larger than the limit can cause it: planning splits everything else.
    """
    largest = max((len(chunk.text) for chunk in chunks), default=0)
    if largest > strategy.hard_limit_chars:
        raise DocumentError(
            f"{record.source}: hard limit {strategy.hard_limit_chars} is below this document's"
            f" largest single-element chunk ({largest} characters); use a larger limit"
        )
