"""Pages of price plans with a text layer (the ground truth verification checks against), and
what a faithful vision model writes for each: shared by the verification and escalation tests,
each with plans of its own."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pdfs import Text, text_page

Row = tuple[str, str, str]


def price_page(number: int, plans: Mapping[int, Sequence[Row]]) -> tuple:
    """Page `number`: a heading, a sentence and the table of its plans (plan, price, seats)."""
    lines = [
        Text(f"Price plans of region {number}", 72, 720, 16),
        Text("Prices are yearly and include support by Acme Services.", 72, 690),
        *(Text(cell, 72 + 150 * i, 660, 10) for i, cell in enumerate(("Plan", "Price", "Seats"))),
    ]
    for row, values in enumerate(plans[number]):
        lines.extend(Text(cell, 72 + 150 * i, 640 - 20 * row) for i, cell in enumerate(values))
    return text_page(lines)


def honest_answer(number: int, rows: Sequence[Row]) -> str:
    """What a faithful model writes for page `number` with these rows (the method's one
    sentence per row)."""
    sentences = "\n".join(
        f"- Plan {plan}: Price {price}; Seats {seats}." for plan, price, seats in rows
    )
    return (
        f"<!-- Page {number} -->\n\n## Price plans of region {number}\n\n"
        "Prices are yearly and include support by Acme Services.\n\n" + sentences
    )
