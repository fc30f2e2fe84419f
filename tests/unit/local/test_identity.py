"""Document identity in the local runtime: one document, many paths; the latest write wins."""

from __future__ import annotations

from pathlib import Path

import pytest

from drac.ids import ContentDigest, document_id_for
from drac.local import Workspace
from drac.local.pipeline import IngestSettings, ingest_file
from drac.models import DocumentStatus

A = "# Alpha\n\nThe alpha warranty lasts two years.\n"
B = "# Beta\n\nThe beta warranty lasts five years.\n"


@pytest.fixture
def workspace(tmp_path: Path):
    ws = Workspace(tmp_path / "ws")
    yield ws
    ws.close()


def ingest(path: Path, workspace: Workspace, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    outcome = ingest_file(path, workspace, IngestSettings())
    assert outcome.status in ("INDEXED", "UNCHANGED"), outcome.error
    return outcome.document_id or ""


def hits(workspace: Workspace, query: str) -> list[str]:
    return [hit.chunk.document_id for hit in workspace.index.search(query, k=10)]


def test_document_ids_are_unambiguous_between_tenant_and_content() -> None:
    content = b"# X\n\ntext\n"
    assert document_id_for(b"acme\0" + content, None) != document_id_for(content, "acme")
    assert document_id_for(content, None) == document_id_for(content, "")
    assert document_id_for(content, "acme") != document_id_for(content, "acm")
    streamed = ContentDigest("acme")
    for piece in (content[:3], content[3:]):
        streamed.update(piece)
    assert streamed.document_id == document_id_for(content, "acme")
    assert streamed.size == len(content)


def test_same_bytes_under_two_paths_is_one_document_with_two_sources(
    workspace: Workspace, tmp_path: Path
) -> None:
    first = ingest(tmp_path / "a" / "doc.md", workspace, A)
    second = ingest(tmp_path / "b" / "doc.md", workspace, A)
    assert first == second
    assert workspace.registry.sources_of(first) == sorted(
        str((tmp_path / folder / "doc.md").resolve()) for folder in ("a", "b")
    )
    # editing one path keeps the other's text searchable
    changed = ingest(tmp_path / "b" / "doc.md", workspace, B)
    assert changed != first
    assert hits(workspace, "alpha") == [first]
    assert hits(workspace, "beta") == [changed]
    assert workspace.get_document(first).status is DocumentStatus.INDEXED


def test_removing_one_source_keeps_the_document_while_another_holds_it(
    workspace: Workspace, tmp_path: Path
) -> None:
    document = ingest(tmp_path / "a.md", workspace, A)
    ingest(tmp_path / "copy.md", workspace, A)
    assert workspace.remove_source(str((tmp_path / "a.md").resolve())) is None
    assert hits(workspace, "alpha") == [document]
    assert workspace.remove_source(str((tmp_path / "copy.md").resolve())) == document
    assert hits(workspace, "alpha") == []
    assert workspace.get_document(document).status is DocumentStatus.DELETED
    assert workspace.index.stored_chunks() == []


def test_a_path_updated_a_b_a_ends_with_a(workspace: Workspace, tmp_path: Path) -> None:
    path = tmp_path / "doc.md"
    first = ingest(path, workspace, A)
    second = ingest(path, workspace, B)
    assert workspace.get_document(first).status is DocumentStatus.DELETED
    again = ingest(path, workspace, A)
    assert again == first
    assert workspace.get_document(first).status is DocumentStatus.INDEXED
    assert workspace.get_document(second).status is DocumentStatus.DELETED
    assert hits(workspace, "warranty") == [first]
    assert {doc for doc, _ in workspace.index.stored_chunks()} == {first}


def test_an_older_write_of_a_path_cannot_win(workspace: Workspace, tmp_path: Path) -> None:
    path = str(tmp_path / "doc.md")
    assert workspace.add_source(path, "d-new", "00000000000000000002") is True
    assert workspace.add_source(path, "d-old", "00000000000000000001") is False
    assert workspace.registry.source_document(path) == "d-new"
