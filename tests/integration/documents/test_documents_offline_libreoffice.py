"""The offline converter on PDFs LibreOffice makes of tiny HTML (its fonts, bold and tables)."""

from __future__ import annotations

import pytest

from drac.documents.normalise import libreoffice_to_pdf
from drac.documents.offline import offline_markdown
from drac.evaluation.fidelity import score_conversion

pytestmark = pytest.mark.libreoffice

SOURCE = """# Service Guide

## Opening Hours

Our centres open at nine and close at six on working days, and stay closed on holidays.

- Bring the **original invoice** with you.
- Back up your data before the visit.

## Contacts

| City | Phone | Hours |
| --- | --- | --- |
| Pune | 020-1234 | 9-6 |
| Delhi | 011-5678 | 10-7 |
"""

HTML = """<html><body>
<h1>Service Guide</h1>
<h2>Opening Hours</h2>
<p>Our centres open at nine and close at six on working days, and stay closed on holidays.</p>
<ul><li>Bring the <b>original invoice</b> with you.</li><li>Back up your data before the
visit.</li></ul>
<h2>Contacts</h2>
<table border="1"><thead><tr><th>City</th><th>Phone</th><th>Hours</th></tr></thead>
<tbody><tr><td>Pune</td><td>020-1234</td><td>9-6</td></tr>
<tr><td>Delhi</td><td>011-5678</td><td>10-7</td></tr></tbody></table>
</body></html>"""


def test_headings_lists_and_a_thead_table_come_back_from_libreoffices_pdf():
    pdf = libreoffice_to_pdf(HTML.encode(), ".html", timeout_s=120)
    markdown = "\n\n".join(page.markdown for page in offline_markdown(pdf))
    score = score_conversion(SOURCE, markdown)
    assert score.unprintable == 0
    assert score.word_recall == 1.0, markdown
    assert (score.headings, score.headings_found) == (3, 3), markdown
    assert (score.list_items, score.list_items_kept) == (2, 2), markdown
    assert score.table_cells_found == score.table_cells == 4, markdown


FLIGHTS_SOURCE = """## Outbound Flights

| Flight No. | Destination City | Departure (BOM) | Arrival (Local) | Aircraft Type | Travel Time |
| --- | --- | --- | --- | --- | --- |
| CW241 | New York (JFK) | 01:10 | 07:30 | Boeing 787-9 | 15h 50m |
| CW245 | San Francisco (SFO) | 00:25 | 06:25 | Airbus A350-1000 | 16h 30m |
| CW247 | Los Angeles (LAX) | 23:50 | 05:20 | Boeing 787-10 | 16h 00m |

**Available Colors**: Cloud Gray, Midnight Ocean, Sage Green, Coral Pink, Arctic White
"""


def _flights_html() -> str:
    """The corpus' HTML shape: centred header cells over narrow columns, wrapped body cells."""
    widths = (14, 19, 16, 16, 20, 13)
    header, *rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in FLIGHTS_SOURCE.splitlines()
        if line.startswith("|") and "---" not in line
    ]
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>\n" for row in rows)
    return (
        "<html><body><h2>Outbound Flights</h2><table><colgroup>"
        + "".join(f'<col style="width: {w}%" />' for w in widths)
        + "</colgroup><thead><tr>"
        + "".join(f"<th>{cell}</th>" for cell in header)
        + f"</tr></thead><tbody>{body}</tbody></table>"
        "<p><strong>Available Colors</strong>: Cloud Gray, Midnight Ocean, Sage Green,"
        " Coral Pink, Arctic White</p></body></html>"
    )


def test_a_table_of_centred_headers_and_wrapped_cells_keeps_every_cell_in_its_column():
    pdf = libreoffice_to_pdf(_flights_html().encode(), ".html", timeout_s=120)
    markdown = "\n\n".join(page.markdown for page in offline_markdown(pdf))
    score = score_conversion(FLIGHTS_SOURCE, markdown)
    assert score.table_cells == 15
    assert score.table_cells_found == 15, markdown
    assert score.paragraphs_split == 0, markdown  # the text after the table is no row of it
    assert "| CW245 | San Francisco (SFO) | 00:25 | 06:25 | Airbus A350-1000 | 16h 30m |" in (
        markdown
    ), markdown
