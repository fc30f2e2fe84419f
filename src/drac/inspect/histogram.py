"""A histogram of chunk sizes against the strategy's target and hard limit, as inline SVG."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

WIDTH, HEIGHT = 560, 170
_LEFT, _RIGHT, _TOP, _BOTTOM = 36, 24, 30, 30
BINS = 24


def bin_width(largest: int, bins: int = BINS) -> int:
    """A round bin width (a multiple of 50 characters) so `bins` bins reach `largest`."""
    return max(50, math.ceil(largest / bins / 50) * 50)


def size_histogram(sizes: Sequence[int], target: int, hard_limit: int) -> str:
    """SVG markup: chunk counts per size bin, a dashed line at the target, a red one at the
    hard limit."""
    largest = max([hard_limit, *sizes])
    width = bin_width(largest + 1)
    counts = [0] * (largest // width + 2)  # a free bin past the limit keeps its label inside
    for size in sizes:
        counts[size // width] += 1
    span = len(counts) * width
    tallest = max(counts) or 1
    plot_w, plot_h = WIDTH - _LEFT - _RIGHT, HEIGHT - _TOP - _BOTTOM

    def x(chars: float) -> float:
        return _LEFT + plot_w * chars / span

    parts = [
        f'<svg class="histogram" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}"'
        ' role="img" aria-label="chunk sizes in characters">',
        f'<line x1="{_LEFT}" y1="{_TOP + plot_h}" x2="{WIDTH - _RIGHT}" y2="{_TOP + plot_h}"'
        ' class="axis"/>',
        f'<text x="{_LEFT - 6}" y="{_TOP + 4}" class="tick" text-anchor="end">{tallest}</text>',
        f'<text x="{_LEFT - 6}" y="{_TOP + plot_h}" class="tick" text-anchor="end">0</text>',
    ]
    for index, count in enumerate(counts):
        if not count:
            continue
        height = plot_h * count / tallest
        parts.append(
            f'<rect class="bar" x="{x(index * width) + 1:.1f}" y="{_TOP + plot_h - height:.1f}"'
            f' width="{max(1.0, x(width) - _LEFT - 2):.1f}" height="{height:.1f}">'
            f"<title>{index * width}-{(index + 1) * width - 1} chars: {count} chunk(s)</title>"
            "</rect>"
        )
    step = bin_width(span, 6)
    for chars in range(0, span + 1, step):
        parts.append(
            f'<text x="{x(chars):.1f}" y="{HEIGHT - 12}" class="tick" text-anchor="middle">'
            f"{chars:,}</text>"
        )
    for value, css, label, y in (
        (target, "target", "target", 11),
        (hard_limit, "limit", "hard limit", 24),
    ):
        parts.append(
            f'<line class="{css}" x1="{x(value):.1f}" y1="{y - 9}" x2="{x(value):.1f}"'
            f' y2="{_TOP + plot_h}"/><text class="{css}-label" x="{x(value) - 3:.1f}"'
            f' y="{y}" text-anchor="end">{escape(label)} {value:,}</text>'
        )
    parts.append(
        f'<text x="{WIDTH - _RIGHT}" y="{HEIGHT - 1}" class="tick" text-anchor="end">'
        "characters per chunk (breadcrumb included)</text></svg>"
    )
    return "".join(parts)
