"""Which earlier batch a new version may reuse, and how its Markdown is moved to new pages."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from drac.documents.vision.batches import BatchResult, failed_batch
from drac.documents.vision.incremental import (
    EarlierVersion,
    StoredBatch,
    convert_or_reuse,
    is_reused,
    page_digest,
    prompt_digest,
    reusable_batch,
    stored_batch,
)
from drac.ports import MemoryLedger, ModelReply, VisionModel

EARLIER = "d0123456789abcdef012"


@dataclass(frozen=True)
class Page:
    number: int
    png: bytes
    text_chars: int = 10
    text_layer: str = ""


class CountingVision(VisionModel):
    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    def convert(self, system: str, prompt: str, images: Sequence[bytes]) -> ModelReply:
        self.calls += 1
        return ModelReply(text="<!-- Page 1 -->\n\nFresh answer.", model=self.name)


def _stored(
    pages: list[int], pngs: list[bytes], markdown: str, model: str = "counting"
) -> StoredBatch:
    return StoredBatch(
        pages=pages,
        digests=[page_digest(png) for png in pngs],
        model=model,
        prompt=prompt_digest(),
        markdown=markdown,
        warnings=[f"pages {pages[0]}-{pages[-1]}: a short page"],
    )


def _earlier(*batches: StoredBatch) -> EarlierVersion:
    return EarlierVersion(document_id=EARLIER, batches=list(batches))


TWO = "<!-- Page 6 -->\n\nSix.\n\n<!-- Page 7 -->\n\nSeven."


def test_a_batch_of_the_same_images_is_reused_under_its_new_page_numbers() -> None:
    earlier = _earlier(_stored([6, 7], [b"six", b"seven"], TWO))
    digests = [page_digest(b"six"), page_digest(b"seven")]
    reused = reusable_batch(earlier, [11, 12], digests, "counting")
    assert reused is not None and reused.pages == [11, 12]
    assert reused.markdown == "<!-- Page 11 -->\n\nSix.\n\n<!-- Page 12 -->\n\nSeven."
    assert reused.warnings == ["pages 11-12: a short page"]


def test_one_changed_image_or_another_order_or_model_or_prompt_is_never_reused() -> None:
    stored = _stored([6, 7], [b"six", b"seven"], TWO)
    earlier = _earlier(stored)
    six, seven = page_digest(b"six"), page_digest(b"seven")
    assert reusable_batch(earlier, [6, 7], [six, page_digest(b"seven!")], "counting") is None
    assert reusable_batch(earlier, [6, 7], [seven, six], "counting") is None
    assert reusable_batch(earlier, [6], [six], "counting") is None
    assert reusable_batch(earlier, [6, 7], [six, seven], "another-model") is None
    older_prompt = _earlier(stored.model_copy(update={"prompt": "0" * 16}))
    assert reusable_batch(older_prompt, [6, 7], [six, seven], "counting") is None
    assert reusable_batch(None, [6, 7], [six, seven], "counting") is None


def test_markdown_that_cannot_be_split_by_page_is_not_moved() -> None:
    six, seven = page_digest(b"six"), page_digest(b"seven")
    before_marker = _stored([6, 7], [b"six", b"seven"], "Lost text.\n\n" + TWO)
    assert reusable_batch(_earlier(before_marker), [6, 7], [six, seven], "counting") is not None
    assert reusable_batch(_earlier(before_marker), [8, 9], [six, seven], "counting") is None
    one_marker = _stored([6, 7], [b"six", b"seven"], "<!-- Page 6 -->\n\nSix and seven.")
    assert reusable_batch(_earlier(one_marker), [8, 9], [six, seven], "counting") is None


def test_a_failed_batch_is_not_kept_for_the_next_version() -> None:
    assert stored_batch(failed_batch([1, 2], "throttled"), ["a", "b"], "counting") is None
    kept = stored_batch(BatchResult(pages=[1], markdown="x"), ["a"], "counting")
    assert kept is not None and kept.digests == ["a"] and kept.prompt == prompt_digest()


def test_convert_or_reuse_calls_the_model_only_for_a_changed_batch() -> None:
    vision, ledger = CountingVision(), MemoryLedger()
    earlier = _earlier(_stored([1], [b"one"], "<!-- Page 1 -->\n\nStored answer."))
    result, kept = convert_or_reuse(vision, [Page(1, b"one")], 1, "d1", ledger, earlier)
    assert vision.calls == 0 and result.markdown == "<!-- Page 1 -->\n\nStored answer."
    assert [is_reused(e) for e in ledger.entries] == [True]
    assert kept is not None and kept.markdown == result.markdown
    result, _ = convert_or_reuse(vision, [Page(1, b"one, edited")], 1, "d1", ledger, earlier)
    assert vision.calls == 1 and "Fresh answer." in result.markdown
    assert [is_reused(e) for e in ledger.entries] == [True, False]
