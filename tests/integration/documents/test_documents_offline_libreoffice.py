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
