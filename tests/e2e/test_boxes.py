"""Boxes in the cloud: Render stores each page's text-layer words, Parse places the elements
on them (DynamoDB), the OpenSearch documents and the retrieval API's answer carry each
chunk's boxes, and they are the boxes the local runtime computes for the same elements."""

from __future__ import annotations

import json
from typing import Any

from drac.documents.pdf.boxes import place_elements
from drac.ids import document_id_for
from drac.provenance import BoxStatus
from tests.e2e.conftest import ACME_ROLE, upload


def test_cloud_chunks_carry_the_boxes_of_their_elements(cloud: Any) -> None:
    deployed, _bedrock, opensearch, pdf = cloud
    upload(deployed, pdf, "incoming/acme/store_locations.pdf")
    deployed.settle()
    document_id = document_id_for(pdf, "acme")

    elements = deployed.runtime.elements.get_elements(document_id)
    assert elements and all(element.boxes is not None for element in elements)
    content = [e for e in elements if not e.is_heading]
    aligned = [e for e in content if e.boxes and e.boxes.status is BoxStatus.ALIGNED]
    assert len(aligned) >= 0.9 * len(content)
    # one code path: the same elements placed locally on the same PDF get the same boxes
    bare = [element.model_copy(update={"boxes": None}) for element in elements]
    assert [e.boxes for e in place_elements(bare, pdf)] == [e.boxes for e in elements]

    indexed = opensearch.chunks(document_id)
    assert indexed
    by_id = {element.id: element for element in elements}
    for doc in indexed:
        assert doc["boxes"], doc["chunk_id"]
        # the pages of its elements (a heading written in the body may be on an earlier one)
        near = {n for i in doc["element_ids"] for n in (by_id[i].page, by_id[i].page + 1)}
        assert {entry["page"] for entry in doc["boxes"]} <= near
        drawn = {tuple(box) for entry in doc["boxes"] for box in entry["boxes"]}
        expected = {
            box
            for element_id in doc["element_ids"]
            if (boxes := by_id[element_id].boxes) is not None and not by_id[element_id].is_heading
            for entry in boxes.pages
            for box in entry.boxes
        }
        assert expected <= drawn

    answer = deployed.invoke_url(
        deployed.model.function_for("retrieve"), deployed.caller(ACME_ROLE),
        {"query": "store opening hours", "mode": "bm25"},
    )  # fmt: skip
    assert answer["statusCode"] == 200
    chunks = json.loads(answer["body"])["chunks"]
    assert chunks
    stored = {doc["chunk_id"]: doc for doc in indexed}
    for chunk in chunks:
        assert chunk["boxes"] == stored[chunk["chunk_id"]]["boxes"]
        assert chunk["text"] == stored[chunk["chunk_id"]]["text"]
        assert chunk["unaligned"] == stored[chunk["chunk_id"]].get("unaligned", [])
