"""Generated spreadsheets for the tests (openpyxl; no fixture files)."""

from __future__ import annotations

import io
import random
import re
import zipfile
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from openpyxl import Workbook

SALES_COLUMNS = [
    "Region", "Product", "Quarter", "Units", "Price", "Revenue", "Channel", "Status",
    "Notes", "Warehouse", "SKU", "Discount", "Returns", "Rep", "Segment", "Rating",
]  # fmt: skip
REGIONS = ["North", "South", "East", "West"]


def sales_rows(count: int = 120, seed: int = 13) -> list[list[Any]]:
    """The issue's sales sheet: 16 columns, a header row, then `count` rows; SKUs are unique."""
    rng = random.Random(seed)
    rows: list[list[Any]] = [list(SALES_COLUMNS)]
    for i in range(count):
        units = rng.randint(1, 999)
        price = round(rng.uniform(1, 99), 2)
        rows.append([
            rng.choice(REGIONS), f"Widget-{i}", f"Q{i % 4 + 1}", units, price,
            round(units * price, 2), rng.choice(["Online", "Retail", "Partner"]),
            rng.choice(["Open", "Shipped", "Returned"]), f"carrier {rng.choice('ABCDE')}",
            f"WH-{i % 5}", f"SKU{i:05d}", rng.choice([0, 0.05, 0.1, 0.15]),
            rng.randint(0, 9), f"Rep {rng.choice(['Ana', 'Ben', 'Chen', 'Dita'])}",
            rng.choice(["SMB", "Enterprise", "Public"]), rng.randint(1, 5),
        ])  # fmt: skip
    return rows


def xlsx(
    sheets: dict[str, Sequence[Sequence[Any]]],
    *,
    hidden: Iterable[str] = (),
    merges: dict[str, Sequence[str]] | None = None,
    formats: dict[str, dict[str, str]] | None = None,
    title: str | None = None,
) -> bytes:
    """A workbook with the given sheets (rows of values), hidden sheets, merged ranges and
    number formats per cell ({sheet: {"B2": "#,##0.00"}})."""
    book = Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(list(row))
        for ref in (merges or {}).get(name, ()):
            sheet.merge_cells(ref)
        for ref, code in (formats or {}).get(name, {}).items():
            sheet[ref].number_format = code
        if name in set(hidden):
            sheet.sheet_state = "hidden"
    if title:
        book.properties.title = title
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def rewritten(data: bytes, part: str, change: Callable[[bytes], bytes]) -> bytes:
    """The package with one part's bytes replaced by `change(bytes)`, the rest as they were."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            content = source.read(item.filename)
            target.writestr(item, change(content) if item.filename == part else content)
    return out.getvalue()


def with_cached_values(data: bytes, sheet_part: str, values: dict[str, str]) -> bytes:
    """The workbook with cached results written for formula cells, as Excel saves them
    (openpyxl writes formulas without results)."""

    def cache(content: bytes) -> bytes:
        text = content.decode()
        for ref, value in values.items():
            pattern = rf'(<c r="{ref}"[^>]*>\s*<f>[^<]*</f>)\s*<v\s*/>'
            text, count = re.subn(pattern, rf"\g<1><v>{value}</v>", text)
            assert count == 1, f"no formula cell {ref}"
        return text.encode()

    return rewritten(data, sheet_part, cache)


def patched(data: bytes, part: str, old: bytes, new: bytes) -> bytes:
    """The package with `old` replaced by `new` in one part (to damage it on purpose)."""

    def replace(content: bytes) -> bytes:
        assert old in content, f"{old!r} not in {part}"
        return content.replace(old, new)

    return rewritten(data, part, replace)
