"""A new version of a file at the same path re-converts only the batches with a changed page;
every page's Markdown is still what a full conversion of the new version gives."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner
from page_model import ImageVision, document_pdf, labels

from drac.cli import cli
from drac.documents.vision.incremental import is_reused
from drac.local import Workspace
from drac.local.outcome import Outcome
from drac.local.pipeline import IngestSettings, ingest_file
from drac.local.versions import BATCHES_FILE
from drac.models import Element
from drac.ports import ModelReply

PAGES = 40
BATCH = 5  # the default batch size: 40 pages are 8 batches


@pytest.fixture
def workspace(tmp_path: Path):
    ws = Workspace(tmp_path / "ws")
    yield ws
    ws.close()


def _ingest(workspace: Workspace, path: Path, pdf: bytes, vision: ImageVision) -> Outcome:
    path.write_bytes(pdf)
    outcome = ingest_file(path, workspace, IngestSettings(), vision=vision)
    assert outcome.status == "INDEXED", outcome
    return outcome


def _fresh(tmp_path: Path, pdf: bytes) -> tuple[str, list[Element]]:
    """The Markdown and elements a full conversion of `pdf` gives (its own workspace)."""
    ws = Workspace(tmp_path / "fresh")
    try:
        outcome = _ingest(ws, tmp_path / "fresh.pdf", pdf, ImageVision())
        document_id = outcome.document_id or ""
        return ws.get_markdown(document_id), ws.get_elements(document_id)
    finally:
        ws.close()


def _versions(
    workspace: Workspace, tmp_path: Path, before: list[str], after: list[str]
) -> tuple[Outcome, Outcome, ImageVision]:
    path = tmp_path / "report.pdf"
    first = _ingest(workspace, path, document_pdf(before), ImageVision())
    vision = ImageVision()
    second = _ingest(workspace, path, document_pdf(after), vision)
    assert second.document_id != first.document_id
    return first, second, vision


def test_one_edited_page_of_forty_converts_one_batch_and_keeps_the_other_ids(
    workspace: Workspace, tmp_path: Path
) -> None:
    before = labels(PAGES)
    after = [*before[:16], "Page 17 rewritten", *before[17:]]
    first, second, vision = _versions(workspace, tmp_path, before, after)

    assert vision.calls == [[16, 17, 18, 19, 20]]  # one batch, the one holding page 17
    assert (first.reused_batches, second.reused_batches) == (0, PAGES // BATCH - 1)
    old = workspace.get_elements(first.document_id or "")
    new = workspace.get_elements(second.document_id or "")
    assert len(old) == len(new) == PAGES * 3
    unchanged = [(e.id, e.text, e.page) for e in old if e.page != 17]
    assert [(e.id, e.text, e.page) for e in new if e.page != 17] == unchanged
    edited_old = [e for e in old if e.page == 17]
    edited_new = [e for e in new if e.page == 17]
    assert [e.id for e in edited_new] == [e.id for e in edited_old]  # same structure, same ids
    assert all(a.text != b.text for a, b in zip(edited_old, edited_new, strict=True))
    markdown, elements = _fresh(tmp_path, document_pdf(after))
    assert workspace.get_markdown(second.document_id or "") == markdown
    assert new == elements
    # the plan cache's key: every section without page 17 hashes as before
    edited_ids = {e.id for e in edited_new}
    sections = zip(
        workspace.get_sections(first.document_id or ""),
        workspace.get_sections(second.document_id or ""),
        strict=True,
    )
    pairs = [
        (bool(edited_ids & set(a.element_ids)), a.content_hash == b.content_hash)
        for a, b in sections
    ]
    assert len(pairs) > 1 and all(same != touched for touched, same in pairs)


def test_the_ledger_shows_the_batches_reused_from_the_earlier_version(
    workspace: Workspace, tmp_path: Path
) -> None:
    before = labels(PAGES)
    after = [*before[:16], "Page 17 rewritten", *before[17:]]
    first, second, _ = _versions(workspace, tmp_path, before, after)
    entries = [e for e in workspace.ledger_entries() if e.document_id == second.document_id]
    reused = [e for e in entries if is_reused(e)]
    called = [e for e in entries if e.stage == "conversion" and not is_reused(e)]
    assert len(reused) == PAGES // BATCH - 1 and len(called) == 1
    assert all(e.input_tokens == e.output_tokens == 0 for e in reused)
    assert f"pages 1-5 unchanged since {first.document_id}" in {e.outcome[8:] for e in reused}
    assert called[0].input_tokens == 1000
    shown = CliRunner().invoke(cli, ["cost", "--workspace", str(workspace.root)]).output
    assert "no model call): 7; sent to the model: 1." in " ".join(shown.split())


def test_swapped_pages_convert_both_batches_again_never_reusing_a_changed_page(
    workspace: Workspace, tmp_path: Path
) -> None:
    before = labels(PAGES)
    after = list(before)
    after[2], after[32] = after[32], after[2]  # pages 3 and 33 trade places
    _, second, vision = _versions(workspace, tmp_path, before, after)
    assert sorted(vision.calls) == [[1, 2, 3, 4, 5], [31, 32, 33, 34, 35]]
    markdown, elements = _fresh(tmp_path, document_pdf(after))
    assert workspace.get_markdown(second.document_id or "") == markdown
    assert workspace.get_elements(second.document_id or "") == elements


def test_a_removed_page_shifts_every_batch_after_it_so_those_are_converted_again(
    workspace: Workspace, tmp_path: Path
) -> None:
    before = labels(PAGES)
    after = [*before[:12], *before[13:]]  # page 13 removed: 39 pages
    _, second, vision = _versions(workspace, tmp_path, before, after)
    assert sorted(vision.calls) == [list(range(n, min(n + 5, 40))) for n in range(11, 40, 5)]
    markdown, elements = _fresh(tmp_path, document_pdf(after))
    assert workspace.get_markdown(second.document_id or "") == markdown
    assert workspace.get_elements(second.document_id or "") == elements


def test_five_pages_put_in_front_reuse_every_old_batch_under_its_new_page_numbers(
    workspace: Workspace, tmp_path: Path
) -> None:
    before = labels(PAGES)
    after = [f"Preface {n}" for n in range(1, 6)] + before
    _, second, vision = _versions(workspace, tmp_path, before, after)
    assert vision.calls == [[1, 2, 3, 4, 5]]
    markdown, _ = _fresh(tmp_path, document_pdf(after))
    assert workspace.get_markdown(second.document_id or "") == markdown


def test_a_forced_ingest_of_the_same_file_converts_every_batch_again(
    workspace: Workspace, tmp_path: Path
) -> None:
    path = tmp_path / "report.pdf"
    pdf = document_pdf(labels(10))
    _ingest(workspace, path, pdf, ImageVision())
    vision = ImageVision()
    outcome = ingest_file(path, workspace, IngestSettings(force=True), vision=vision)
    assert outcome.status == "INDEXED" and len(vision.calls) == 2


def test_a_damaged_batches_file_only_costs_the_reuse(workspace: Workspace, tmp_path: Path) -> None:
    path = tmp_path / "report.pdf"
    first = _ingest(workspace, path, document_pdf(labels(10)), ImageVision())
    stored = workspace.artifacts.path(workspace.document_key(first.document_id or "", BATCHES_FILE))
    stored.write_text('[{"pages": [1], "digests": "not a list"')
    vision = ImageVision()
    _ingest(workspace, path, document_pdf([*labels(9), "Page 10 new"]), vision)
    assert len(vision.calls) == 2


class ExtraParagraphVision(ImageVision):
    """Writes one more paragraph on the given pages (the edit added one)."""

    def __init__(self, extra: set[int]) -> None:
        super().__init__()
        self.extra = extra

    def convert(self, system: str, prompt: str, images: Sequence[bytes]) -> ModelReply:
        reply = super().convert(system, prompt, images)
        text = reply.text
        for number in self.extra:
            text = text.replace(
                f"<!-- Page {number + 1} -->", f"An added paragraph.\n\n<!-- Page {number + 1} -->"
            )
        return reply.model_copy(update={"text": text})


def test_a_paragraph_added_on_one_page_moves_the_ids_after_it_not_before(
    workspace: Workspace, tmp_path: Path
) -> None:
    path = tmp_path / "report.pdf"
    before = labels(PAGES)
    first = _ingest(workspace, path, document_pdf(before), ImageVision())
    vision = ExtraParagraphVision({17})
    second = _ingest(
        workspace, path, document_pdf([*before[:16], "Page 17 longer", *before[17:]]), vision
    )
    assert vision.calls == [[16, 17, 18, 19, 20]]
    old = workspace.get_elements(first.document_id or "")
    new = workspace.get_elements(second.document_id or "")
    assert len(new) == len(old) + 1
    assert [(e.id, e.text) for e in new if e.page < 17] == [
        (e.id, e.text) for e in old if e.page < 17
    ]
    # the pages after it keep their text, their content ids move by the one added
    after_old = [e for e in old if e.page > 17]
    after_new = [e for e in new if e.page > 17]
    assert [e.text for e in after_new] == [e.text for e in after_old]
    assert [e.id for e in after_new if e.id.startswith("p")] == [
        f"p{int(e.id[1:]) + 1}" for e in after_old if e.id.startswith("p")
    ]
    assert [e.id for e in after_new if e.id.startswith("h")] == [
        e.id for e in after_old if e.id.startswith("h")
    ]


def test_a_third_version_reuses_batches_the_second_had_reused(
    workspace: Workspace, tmp_path: Path
) -> None:
    path = tmp_path / "report.pdf"
    pages = labels(10)
    _ingest(workspace, path, document_pdf(pages), ImageVision())
    pages[2] = "Page 3 edited"
    _ingest(workspace, path, document_pdf(pages), ImageVision())
    pages[7] = "Page 8 edited"
    vision = ImageVision()
    third = _ingest(workspace, path, document_pdf(pages), vision)
    assert vision.calls == [[6, 7, 8, 9, 10]]
    markdown, _ = _fresh(tmp_path, document_pdf(pages))
    assert workspace.get_markdown(third.document_id or "") == markdown


def test_a_version_of_another_tenant_at_the_same_path_reuses_nothing(
    workspace: Workspace, tmp_path: Path
) -> None:
    path = tmp_path / "report.pdf"
    pages = labels(10)
    path.write_bytes(document_pdf(pages))
    ingest_file(path, workspace, IngestSettings(tenant="acme"), vision=ImageVision())
    path.write_bytes(document_pdf([*pages[:9], "Page 10 new"]))
    vision = ImageVision()
    outcome = ingest_file(path, workspace, IngestSettings(tenant="beta"), vision=vision)
    assert outcome.status == "INDEXED" and len(vision.calls) == 2
