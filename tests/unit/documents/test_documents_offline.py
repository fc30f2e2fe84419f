from drac_test_pdfs import Text, make_pdf

from drac.documents.offline import offline_markdown


def _sample_pdf() -> bytes:
    page_one = [
        Text("Annual Travel Policy", 72, 720, 20, "Helvetica-Bold"),
        Text("Eligibility", 72, 680, 14, "Helvetica-Bold"),
        Text("Employees may book travel after their probation period has", 72, 660),
        Text("ended, subject to approval.", 72, 648),
        Text("Required Documents", 72, 620, 10, "Helvetica-Bold"),
        Text("• A valid passport", 84, 600),
        Text("• A signed approval form", 84, 588),
        Text("– countersigned by a manager", 100, 576),
        Text("1. Submit the form", 84, 552),
        Text("2. Wait for confirmation", 84, 540),
        Text("3", 300, 40),  # page number in the bottom margin
    ]
    page_two = [
        Text("Refunds", 72, 720, 14, "Helvetica-Bold"),
        Text("Refunds are paid within 30 days.", 72, 700),
    ]
    return make_pdf([(612, 792, page_one), (612, 792, page_two), (612, 792)], scanned=[2])


def test_headings_lists_paragraphs_and_markers_are_recovered():
    pages = offline_markdown(_sample_pdf())
    assert [page.number for page in pages] == [1, 2, 3]
    one = pages[0].markdown
    assert one.startswith("<!-- Page 1 -->\n\n# Annual Travel Policy\n\n## Eligibility\n\n")
    assert (
        "Employees may book travel after their probation period has ended, subject to approval."
        in one
    )
    assert "### Required Documents" in one
    assert "- A valid passport\n- A signed approval form\n  - countersigned by a manager" in one
    assert "1. Submit the form\n2. Wait for confirmation" in one
    assert "\n3" not in one.split("confirmation", 1)[1]  # the page number is dropped
    assert pages[1].markdown.startswith("<!-- Page 2 -->\n\n## Refunds\n\nRefunds are paid")


def test_a_page_without_text_layer_is_marked_and_warned_about():
    pages = offline_markdown(_sample_pdf())
    scan = pages[2]
    assert not scan.has_text_layer
    assert scan.markdown.startswith("<!-- Page 3 -->")
    assert "needs a vision model" in scan.markdown
    assert scan.warnings and "page 3 has no text layer" in scan.warnings[0]
    assert pages[0].warnings == ()


def test_bold_runs_inside_a_line_are_kept_as_strong_emphasis():
    pdf = make_pdf(
        [
            (
                612,
                792,
                [
                    Text("Body text sets the body size here, it is long enough.", 72, 700),
                    Text("• ", 84, 680),
                ],
            )
        ]
    )
    assert "Body text sets the body size" in offline_markdown(pdf)[0].markdown


def test_table_rows_stay_together_on_one_line():
    cells = [("Flight", "Destination", "Time"), ("CW241", "New York", "15h 50m")]
    lines = []
    for row, values in enumerate(cells):
        for column, value in enumerate(values):
            lines.append(Text(value, 72 + 150 * column, 700 - 20 * row))
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "Flight Destination Time" in markdown
    assert "CW241 New York 15h 50m" in markdown


def test_a_long_run_in_a_large_font_is_a_paragraph_not_a_heading():
    """Slides set body text in a large font; only a short run may become a heading."""
    body = [
        Text(f"small table cell text number {i} with some words", 72, 700 - 12 * i, 10)
        for i in range(30)
    ]
    slide = [Text("Overview", 40, 560, 24)] + [
        Text(f"slide sentence {i} in a large font that goes on and on", 40, 520 - 22 * i, 18)
        for i in range(6)
    ]
    pages = offline_markdown(make_pdf([(612, 792, body), (720, 600, slide)]))
    slide_md = pages[1].markdown
    assert "# Overview" in slide_md
    assert "slide sentence 0" in slide_md
    assert not any(
        line.startswith("#") and "slide sentence" in line for line in slide_md.splitlines()
    )
