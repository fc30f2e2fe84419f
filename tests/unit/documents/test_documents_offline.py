from pdfs import Text, make_pdf

from drac.documents.offline.pages import offline_markdown


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


def test_a_table_becomes_a_pipe_table_with_its_header():
    cells = [("Flight", "Destination", "Time"), ("CW241", "New York", "15h 50m")]
    lines = []
    for row, values in enumerate(cells):
        for column, value in enumerate(values):
            lines.append(Text(value, 72 + 150 * column, 700 - 20 * row))
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert (
        "| Flight | Destination | Time |\n| --- | --- | --- |\n| CW241 | New York | 15h 50m |"
        in (markdown)
    )


def test_wrapped_header_cells_and_wrapped_first_cells_are_joined():
    """The layout of the corpus' baggage tables: cells wrap onto two lines."""
    lines = [
        Text("Cabin Baggage", 72, 740, 12, "Helvetica-Bold"),
        Text("Class", 72, 700),
        Text("Number of", 140, 712),
        Text("Bags", 140, 700),
        Text("Max Weight", 220, 700),
        Text("CloudLux", 72, 683),
        Text("(First)", 72, 671),
        Text("2", 140, 683),
        Text("10 kg each", 220, 683),
        Text("CloudSaver", 72, 659),
        Text("1", 140, 659),
        Text("7 kg", 220, 659),
        Text("In addition: one small personal item is permitted on every flight.", 72, 630),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "| Class | Number of Bags | Max Weight |" in markdown
    assert "| CloudLux (First) | 2 | 10 kg each |" in markdown
    assert "| CloudSaver | 1 | 7 kg |" in markdown
    assert "\n\nIn addition: one small personal item is permitted on every flight." in markdown


def test_cells_on_one_line_are_split_at_wide_gaps_only():
    lines = [
        Text("Item", 72, 700),
        Text("Price", 200, 700),
        Text("Charger 65W", 72, 686),
        Text("3,499", 200, 686),
        Text("Hub 100W", 72, 672),
        Text("7,999", 200, 672),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "| Charger 65W | 3,499 |" in markdown  # the word gap in "Charger 65W" is no cell gap


def test_prose_is_not_taken_for_a_table():
    lines = [
        Text("A paragraph line that runs across the page in the usual way.", 72, 700),
        Text("Its next line follows at normal spacing and the same margin.", 72, 688),
        Text("A lone note", 72, 660),
        Text("with words far to the right", 300, 660),
        Text("Then ordinary prose continues below it for a while longer.", 72, 640),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "|" not in markdown
    for text in (
        "usual way.",
        "same margin.",
        "A lone note",
        "far to the right",
        "a while longer.",
    ):
        assert text in markdown


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


def test_a_table_whose_columns_were_not_recovered_stays_prose():
    """Most body cells empty means the columns overlapped; no pipe table then, no text lost."""
    lines = [
        Text("Award", 72, 700),
        Text("Organization", 160, 700),
        Text("Year", 300, 700),
        Text("Red Dot", 72, 686),
        Text("Red Dot GmbH 2025 Germany", 160, 686),
        Text("iF Design", 72, 672),
        Text("iF International 2024 Germany", 160, 672),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "|" not in markdown
    for text in ("Award", "Organization", "Year", "Red Dot GmbH 2025", "iF International 2024"):
        assert text in markdown


def test_line_end_hyphens_are_joined_or_kept_as_the_document_shows():
    lines = [
        Text("Our terms are transparent. The warranty terms are written to be trans-", 72, 700),
        Text("parent, and our Delhi office is at Delhi-", 72, 688),
        Text("110009 near the high-", 72, 676),
        Text("traffic road. No fee is high, and traffic fines are not ours.", 72, 664),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "\x02" not in markdown and "\ufffe" not in markdown
    assert "written to be transparent, and our Delhi office is at Delhi-110009" in markdown
    # both parts are words of the document on their own: a real compound
    assert "near the high-traffic road." in markdown


def test_a_line_end_hyphen_whose_part_is_no_word_of_its_own_joins_the_word():
    # the document's habit votes for real hyphens (two compounds, no word written whole),
    # but "The-aters", "Emer-gency" and "Recogni-tion" hold parts that are no words on
    # their own: the line broke the word; "high-traffic" is two words the document uses
    lines = [
        Text("Movie The-", 72, 700, size=18),
        Text("aters on Board", 72, 680, size=18),
        Text("Our Walk-in lounges sit near the high-", 72, 650),
        Text("traffic gates. Each seat has Auto Emer-", 72, 638),
        Text("gency Braking and Face Recogni-", 72, 626),
        Text("tion at the gate. The fee is high and the traffic light is green.", 72, 614),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "Movie Theaters on Board" in markdown, markdown
    assert "Auto Emergency Braking and Face Recognition at the gate." in markdown
    assert "near the high-traffic gates." in markdown and "Walk-in" in markdown


def test_a_typeset_document_joins_its_wrapped_words():
    lines = [
        Text("Seats are designed for rest and cabins are designed for", 72, 700),
        Text("calm. Every seat is de-", 72, 688),
        Text("signed for comfort and every cabin is pro-", 72, 676),
        Text("portioned for space.", 72, 664),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "Every seat is designed for comfort and every cabin is proportioned for" in markdown


def test_a_text_string_past_the_readers_limit_is_warned_about():
    text = " ".join(f"w{i:05d}" for i in range(6000))  # 41,999 characters in one string
    page = offline_markdown(make_pdf([(612, 792, [Text(text, 10, 700, 1)])]))[0]
    assert any("32,767 bytes" in warning and "page 1" in warning for warning in page.warnings)
    short = offline_markdown(make_pdf([(612, 792, [Text("w00001 w00002", 10, 700)])]))[0]
    assert short.warnings == ()


def test_a_bold_numbered_line_is_a_heading_and_a_bold_sentence_stays_one_paragraph():
    lines = [
        Text("Boarding Process", 72, 740, 14, "Helvetica-Bold"),
        Text("Body text of the guide sets the body size of the document here.", 72, 720),
        Text("2. Baggage Drop", 72, 690, 12, "Helvetica-Bold"),
        Text("Proceed to the designated baggage drop counter for your class.", 72, 672),
        Text(
            "For additional queries or assistance, visit the site or contact",
            72,
            640,
            10,
            "Helvetica-Bold",
        ),
        Text("our customer support.", 72, 628, 10, "Helvetica-Bold"),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "\n## 2. Baggage Drop\n" in markdown
    assert (
        "**For additional queries or assistance, visit the site or contact our customer"
        " support.**" in markdown
    )
    assert "# For additional" not in markdown


def test_a_bold_line_that_goes_on_with_an_open_sentence_is_no_heading():
    # the corpus' flights PDF: "... seamless connectivity with" then, on the next line,
    # the sentence's bold end; a bold line after a finished sentence is still a heading
    lines = [
        Text("Body text of the guide sets the body size of the document here.", 72, 740),
        Text("Enjoy world-class service and seamless connectivity with", 72, 720),
        Text("CloudWay 24 - Seamless Skies, Global Reach!", 72, 708, 10, "Helvetica-Bold"),
        Text("The timings below are local to each city.", 72, 680),
        Text("Baggage Rules", 72, 668, 10, "Helvetica-Bold"),
        Text("Each passenger may check in two bags.", 72, 656),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert (
        "Enjoy world-class service and seamless connectivity with **CloudWay 24 - Seamless"
        " Skies, Global Reach!**" in markdown
    ), markdown
    assert "# CloudWay" not in markdown
    assert "\n## Baggage Rules\n" in markdown or "\n# Baggage Rules\n" in markdown, markdown


def test_bullets_set_apart_from_their_text_stay_a_list_not_a_table():
    lines = [
        Text("Steps to Modify Your Trip", 72, 740, 14, "Helvetica-Bold"),
        Text("•", 90, 720),
        Text("Navigate to the section from the homepage or main menu.", 110, 720),
        Text("•", 90, 706),
        Text("Select the booking you wish to modify.", 110, 706),
        Text("•", 90, 692),
        Text("Complete the payment.", 110, 692),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "|" not in markdown
    assert (
        "- Navigate to the section from the homepage or main menu.\n"
        "- Select the booking you wish to modify.\n- Complete the payment."
    ) in markdown


def test_a_table_with_centred_two_line_headers_keeps_its_header_and_columns():
    lines = [
        Text("Models and prices of the audio range are listed in this table.", 72, 740),
        Text("Model", 92, 700, 10, "Helvetica-Bold"),
        Text("Engine", 200, 700, 10, "Helvetica-Bold"),
        Text("Price", 300, 706, 10, "Helvetica-Bold"),
        Text("(INR)", 298, 696, 10, "Helvetica-Bold"),
        Text("Velvera Buds", 58, 676),
        Text("V6 Twin", 180, 676),
        Text("8,999", 290, 676),
        Text("Velvera Pods", 58, 660),
        Text("V8 Single", 180, 660),
        Text("9,499", 290, 660),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "| **Model** | **Engine** | **Price (INR)** |" in markdown or (
        "| Model | Engine | Price (INR) |" in markdown
    ), markdown
    assert "| Velvera Buds | V6 Twin | 8,999 |" in markdown
    assert "| Velvera Pods | V8 Single | 9,499 |" in markdown


def test_a_header_cell_overflowing_into_the_next_is_still_two_cells():
    lines = [
        Text("Tablet storage and features are listed in the table below.", 72, 740),
        Text("Model", 72, 700),
        Text("Storage/RAM", 150, 700),
        Text("Features", 198, 700),  # drawn over the end of "Storage/RAM"
        Text("Pad 11", 72, 686),
        Text("128GB", 150, 686),
        Text("Wi-Fi", 198, 686),
        Text("Pad 13", 72, 672),
        Text("256GB", 150, 672),
        Text("5G", 198, 672),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "| Model | Storage/RAM | Features |" in markdown, markdown
    assert "| Pad 11 | 128GB | Wi-Fi |" in markdown


def test_a_table_continued_on_the_next_page_keeps_its_header_there():
    page_one = [
        Text("The engine options of each model are listed below with prices.", 72, 740),
        Text("Model", 72, 120, 10, "Helvetica-Bold"),
        Text("Engine", 200, 120, 10, "Helvetica-Bold"),
        Text("Price", 320, 120, 10, "Helvetica-Bold"),
        Text("Alto", 72, 104),
        Text("1.0 Petrol", 200, 104),
        Text("4,99,000", 320, 104),
        Text("Brezza", 72, 88),
        Text("1.5 Hybrid", 200, 88),
        Text("9,99,000", 320, 88),
    ]
    page_two = [
        Text("Ciaz", 72, 740),
        Text("1.5 Petrol", 200, 740),
        Text("8,99,000", 320, 740),
        Text("Dzire", 72, 724),
        Text("1.2 CNG", 200, 724),
        Text("6,99,000", 320, 724),
        Text("Prices include taxes and are valid until the end of the year.", 72, 690),
    ]
    pages = offline_markdown(make_pdf([(612, 792, page_one), (612, 792, page_two)]))
    assert "| Brezza | 1.5 Hybrid | 9,99,000 |" in pages[0].markdown
    header = "| Model | Engine | Price |"
    assert header in pages[0].markdown, pages[0].markdown
    second = pages[1].markdown
    assert f"{header}\n| --- | --- | --- |\n| Ciaz | 1.5 Petrol | 8,99,000 |\n" in second, second
    assert "| Dzire | 1.2 CNG | 6,99,000 |\n\nPrices include taxes" in second


def test_a_caption_right_above_a_table_stays_text_above_it():
    lines = [
        Text("The fleet of the airline is described model by model below.", 72, 760),
        Text("1. Airbus A350 (Wide-body)", 72, 730, 13, "Helvetica-Bold"),
        Text("Variant", 72, 714),
        Text("Seats", 200, 714),
        Text("Range", 300, 714),
        Text("A350-", 72, 700),
        Text("900", 72, 690),
        Text("320", 200, 700),
        Text("15,000 km", 300, 700),
        Text("A350-1000", 72, 674),
        Text("366", 200, 674),
        Text("16,100 km", 300, 674),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "1. Airbus A350 (Wide-body)\n\n| Variant | Seats | Range |" in markdown, markdown
    assert "| A350-900 | 320 | 15,000 km |" in markdown


def test_a_table_right_after_a_list_and_a_bold_caption_keeps_its_header():
    lines = [
        Text("The series comes in two models, with the shared specifications below.", 72, 760),
        Text("•", 72, 740),
        Text("Nexus 1 (256GB / 512GB)", 90, 740),
        Text("•", 72, 726),
        Text("Nexus 1 Pro (512GB / 1TB)", 90, 726),
        Text("Shared Specifications", 72, 706, 10, "Helvetica-Bold"),
        Text("Component", 72, 692),
        Text("Specification", 200, 692),
        Text("Launch Year", 72, 678),
        Text("2024", 200, 678),
        Text("Chipset", 72, 664),
        Text("PrimeChip v2.7", 200, 664),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "- Nexus 1 (256GB / 512GB)\n- Nexus 1 Pro (512GB / 1TB)" in markdown, markdown
    assert "Shared Specifications\n\n| Component | Specification |" in markdown, markdown
    assert "| Launch Year | 2024 |\n| Chipset | PrimeChip v2.7 |" in markdown


def test_narrow_cells_centred_under_wide_header_cells_stay_in_their_columns():
    lines = [
        Text("Flights from Mumbai to Canada are listed below with local times.", 72, 760),
        Text("Flight No.", 72, 720, 10, "Helvetica-Bold"),
        Text("Departure (Mumbai, IST)", 140, 720, 10, "Helvetica-Bold"),
        Text("Arrival (Local, Canada)", 270, 720, 10, "Helvetica-Bold"),
        Text("City", 400, 720, 10, "Helvetica-Bold"),
        # each time centred under its header: it starts right of the header's start
        Text("CW24201", 72, 704),
        Text("01:30", 186, 704),
        Text("07:30", 312, 704),
        Text("Toronto", 400, 704),
        Text("CW24203", 72, 688),
        Text("10:45", 186, 688),
        Text("13:10", 312, 688),
        Text("Vancouver", 400, 688),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "| CW24201 | 01:30 | 07:30 | Toronto |" in markdown, markdown
    assert "| CW24203 | 10:45 | 13:10 | Vancouver |" in markdown, markdown


def test_a_row_cut_by_a_page_break_is_completed_on_the_page_of_its_key():
    """LibreOffice breaks a tall row across pages and repeats the header at the next top."""
    header = [("Flight", 72), ("Origin City", 150), ("Aircraft", 300)]

    def header_at(y: float) -> list[Text]:
        return [Text(text, x, y, 10, "Helvetica-Bold") for text, x in header]

    page_one = [
        Text("Inbound flights to Mumbai are listed below by flight number.", 72, 740),
        *header_at(150),
        Text("CW244", 72, 134),
        Text("Chicago (ORD)", 150, 134),
        Text("Airbus A350", 300, 134),
        Text("CW246", 72, 118),
        Text("San", 150, 118),
        Text("Airbus A350-", 300, 118),
    ]
    page_two = [
        *header_at(740),
        Text("Francisco (SFO)", 150, 724),  # the cut row's rest: no key cell on this page
        Text("1000", 300, 724),
        Text("CW248", 72, 708),
        Text("Los Angeles (LAX)", 150, 708),
        Text("Boeing 787-10", 300, 708),
    ]
    pages = offline_markdown(make_pdf([(612, 792, page_one), (612, 792, page_two)]))
    assert pages[0].markdown.endswith("| CW246 | San Francisco (SFO) | Airbus A350-1000 |"), pages[
        0
    ].markdown
    second = pages[1].markdown
    assert (
        "| Flight | Origin City | Aircraft |\n| --- | --- | --- |\n"
        "| CW248 | Los Angeles (LAX) | Boeing 787-10 |"
    ) in second, second
    assert "Francisco" not in second


def test_small_tables_under_numbered_captions_stay_apart_with_their_captions_as_text():
    """A DOCX of model tables (the corpus' build_your_own): each "N. Name" caption starts where
    the table's first column does and runs past the second's start."""
    lines = [Text("Example configurations are listed one bundle at a time.", 72, 760)]
    y = 730.0
    for number, (name, series) in enumerate(
        [
            ("Power User Creator Bundle", "Velvera One Pro"),
            ("Pocket-Friendly Urban Explorer", "Edge"),
        ],
        start=1,
    ):
        lines.append(Text(f"{number}. {name}", 72, y))
        lines += [Text("Attribute", 72, y - 16), Text("Configuration", 190, y - 16)]
        lines += [Text("Series", 72, y - 34), Text(series, 190, y - 34)]
        lines += [Text("Warranty", 72, y - 52), Text(f"{number} Years", 190, y - 52)]
        y -= 92
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    table = "| Attribute | Configuration |\n| --- | --- |\n"
    assert f"1. Power User Creator Bundle\n\n{table}| Series | Velvera One Pro |" in markdown, (
        markdown
    )
    assert (
        f"| Warranty | 1 Years |\n\n2. Pocket-Friendly Urban Explorer\n\n{table}| Series | Edge |"
        in (markdown)
    ), markdown


def test_a_paragraph_a_page_break_cuts_mid_sentence_stays_one_on_its_first_page():
    page_one = [
        Text("Security by Design", 72, 740, 14, "Helvetica-Bold"),
        Text("Security considerations are integrated into the initial design phase", 72, 100),
    ]
    page_two = [
        Text("rather than added as subsequent layers of the product.", 72, 740),
        Text("A new paragraph starts here and ends here.", 72, 700),
    ]
    pages = offline_markdown(make_pdf([(612, 792, page_one), (612, 792, page_two)]))
    assert pages[0].markdown.endswith(
        "integrated into the initial design phase rather than added as subsequent layers of"
        " the product."
    ), pages[0].markdown
    assert pages[1].markdown == "<!-- Page 2 -->\n\nA new paragraph starts here and ends here."


def test_a_page_ending_a_sentence_keeps_the_next_pages_first_paragraph():
    page_one = [Text("The first page ends its sentence here.", 72, 100)]
    page_two = [Text("and this line starts in lower case on its own page.", 72, 740)]
    pages = offline_markdown(make_pdf([(612, 792, page_one), (612, 792, page_two)]))
    assert pages[1].markdown.endswith("and this line starts in lower case on its own page.")


def test_a_heading_set_in_parts_above_a_table_does_not_take_its_header():
    lines = [
        Text("Outbound Flights:", 72, 740, 12, "Helvetica-Bold"),
        Text("Mumbai to Major South East", 190, 740, 12, "Helvetica-Bold"),
        Text("Asian", 380, 740, 12, "Helvetica-Bold"),
        Text("Cities", 72, 726, 12, "Helvetica-Bold"),
        Text("Flight", 72, 704),
        Text("No.", 72, 692),
        Text("Departure", 130, 692),
        Text("Arrival City", 190, 692),
        Text("Travel", 280, 704),
        Text("Time", 280, 692),
        Text("CW24101", 72, 676),
        Text("09:00", 130, 676),
        Text("Singapore (SIN)", 190, 676),
        Text("5h 30m", 280, 676),
        Text("CW24105", 72, 662),
        Text("23:30", 130, 662),
        Text("Bangkok (BKK)", 190, 662),
        Text("4h 10m", 280, 662),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "| Flight No. | Departure | Arrival City | Travel Time |" in markdown, markdown
    assert "| CW24101 | 09:00 | Singapore (SIN) | 5h 30m |" in markdown
    assert "| CW24105 | 23:30 | Bangkok (BKK) | 4h 10m |" in markdown


def test_hyphens_in_numbers_count_once_for_a_documents_hyphenation_habit():
    # a column of store codes wrapped at their hyphens is one habit, not one vote each
    lines = [
        Text(
            "Every store is designed for calm, every seat comfortable. Our store was de-", 72, 700
        ),
        Text("signed by our team and its seats are com-", 72, 688),
        Text("fortable. Visit the Bengaluru store VL-", 72, 676),
        Text("001, the Mumbai store VL-", 72, 664),
        Text("002 or the Delhi store VL-", 72, 652),
        Text("003 to book a visit to the experi-", 72, 640),
        Text("ence center of your city.", 72, 628),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "store was designed by our team and its seats are comfortable." in markdown, markdown
    assert "store VL-001, the Mumbai store VL-002 or the Delhi store VL-003 to book" in markdown
    assert "a visit to the experience center" in markdown


def test_a_header_cell_of_more_lines_than_the_first_keeps_its_column():
    # the header row is aligned at its bottom: "Service Center Site Name" starts two lines
    # above "Center ID", whose cell has two
    lines = [
        Text("Velvera Authorized Service Centers", 72, 760, 10, "Helvetica-Bold"),
        Text("Center", 72, 712),
        Text("ID", 72, 700),
        Text("Service", 120, 736),
        Text("Center", 120, 724),
        Text("Site", 120, 712),
        Text("Name", 120, 700),
        Text("Contact", 220, 724),
        Text("Number", 220, 712),
        Text("Since", 300, 700),
        Text("VC-0472", 72, 684),
        Text("Akshara Tech", 120, 684),
        Text("020-45100899", 220, 684),
        Text("2019", 300, 684),
        Text("VC-0551", 72, 670),
        Text("Spectra Hub", 120, 670),
        Text("0522-4031286", 220, 670),
        Text("2020", 300, 670),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "| Center ID | Service Center Site Name | Contact Number | Since |" in markdown, markdown
    assert "| VC-0472 | Akshara Tech | 020-45100899 | 2019 |" in markdown
    assert "| VC-0551 | Spectra Hub | 0522-4031286 | 2020 |" in markdown


def test_a_dash_alone_on_a_cells_line_goes_on_the_cell_not_a_new_row():
    lines = [
        Text("Service Center", 72, 720),
        Text("Coverage Area", 160, 720),
        Text("Turnaround", 260, 720),
        Text("Bengaluru", 72, 704),
        Text("– Koramangala", 71, 692),
        Text("Karnataka", 160, 704),
        Text("3-5 days", 260, 704),
        Text("Mumbai", 72, 676),
        Text("–", 71, 664),
        Text("Andheri East", 72, 652),
        Text("Maharashtra", 160, 676),
        Text("2-4 days", 260, 676),
        Text("Delhi – Karol Bagh", 72, 636),
        Text("NCR, Haryana", 160, 636),
        Text("3-7 days", 260, 636),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "| Service Center | Coverage Area | Turnaround |" in markdown, markdown
    assert "| Mumbai – Andheri East | Maharashtra | 2-4 days |" in markdown
    assert "| Delhi – Karol Bagh | NCR, Haryana | 3-7 days |" in markdown


def test_a_cell_running_into_the_next_column_with_no_gap_is_cut_at_that_columns_start():
    # LaTeX sets a word wider than its column over the next one: "Pune" ends where the State
    # column starts (Helvetica 10: "Pune" is 23.35 points wide), with no gap or space between
    state = 150 + 23.35
    lines = [
        Text("Store", 72, 720),
        Text("City", 150, 720),
        Text("State", state, 720),
        Text("Channel", 250, 720),
        Text("VL-001", 72, 704),
        Text("Goa", 150, 704),
        Text("Goa", state, 704),
        Text("Retail", 250, 704),
        Text("VL-002", 72, 690),
        Text("PuneMaharashtra", 150, 690),
        Text("eShop", 250, 690),
        Text("VL-003", 72, 676),
        Text("Delhi", 150, 676),
        Text("Delhi NCR", state, 676),
        Text("Retail", 250, 676),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "| Store | City | State | Channel |" in markdown, markdown
    assert "| VL-002 | Pune | Maharashtra | eShop |" in markdown, markdown
    assert "| VL-003 | Delhi | Delhi NCR | Retail |" in markdown


def test_a_word_running_over_the_next_columns_start_stays_one_word():
    # "Turnaround" is wider than its column: its "n" (after "Turnarou", 40.57 points in
    # Helvetica 10) starts where the Mode column does; a word going on is not a new cell
    mode = 150 + 40.57
    lines = [Text("Center", 72, 720), Text("Turnaround", 150, 720), Text("Mode", mode, 720)]
    for n, (center, mode_text) in enumerate((("Pune", "Walk"), ("Kochi", "Mail"), ("Goa", "Walk"))):
        y = 690 - 14 * n
        lines += [Text(center, 72, y), Text("Fast", 150, y), Text(mode_text, mode, y)]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "| Center | Turnaround | Mode |" in markdown, markdown
    assert "| Kochi | Fast | Mail |" in markdown


def test_a_cell_run_up_to_the_next_one_in_a_table_row_is_cut_where_that_column_starts():
    # one text "4400mAh 42,999" whose price starts at the Price column (Helvetica 10:
    # "4400mAh " is 45.58 points wide), a word space from the battery: in a row of other
    # cells, the word after a space that starts at a column starts a cell
    lines = [Text("Model", 72, 720), Text("Battery", 150, 720), Text("Price", 200, 720)]
    lines += [Text("Edge 128GB", 72, 704), Text("4400mAh 42,999", 200 - 45.58, 704)]
    rows = (("Edge Pro", "4600", "54,999"), ("Edge Lite", "4000", "39,999"))
    for n, (model, battery, price) in enumerate(rows):
        y = 690 - 14 * n
        lines += [Text(model, 72, y), Text(battery, 150, y), Text(price, 200, y)]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "| Model | Battery | Price |" in markdown, markdown
    assert "| Edge 128GB | 4400mAh | 42,999 |" in markdown, markdown
    assert "| Edge Pro | 4600 | 54,999 |" in markdown


def test_a_lists_indent_under_a_heading_does_not_cut_a_table_row_above_it():
    # the list's text starts where "further" does in the table's last row ("Need " is 26.68
    # points wide in Helvetica 10); it is no column of the table, which a heading ends
    lines = [Text("Issue", 72, 720), Text("Suggested Action", 250, 720)]
    lines += [Text("No power", 72, 704), Text("Hold power for 8 seconds", 250, 704)]
    lines += [Text("No Wi-Fi", 72, 690), Text("Restart the router", 250, 690)]
    lines += [Text("Need further help", 72, 676), Text("Visit velvera.com/support", 250, 676)]
    lines.append(Text("Accessory Usage", 72, 640, 12, "Helvetica-Bold"))
    for n, item in enumerate(("Attach the pencil.", "Align the keyboard.", "Clean the screen.")):
        lines += [Text("•", 86, 620 - 14 * n), Text(item, 72 + 26.68, 620 - 14 * n)]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "| Need further help | Visit velvera.com/support |" in markdown, markdown
    assert "- Attach the pencil." in markdown


def test_a_table_whose_last_column_only_some_rows_fill_stays_a_table():
    lines = [Text("Country", 72, 720), Text("Validity", 160, 720), Text("Notes", 250, 720)]
    rows = (("Schengen", "6 months", "Covers most of Europe"), ("France", "6 months", ""))
    rows += (("Germany", "6 months", ""), ("Spain", "3 months", ""))
    for n, row in enumerate(rows):
        columns = zip(row, (72, 160, 250), strict=True)
        lines += [Text(text, x, 704 - 14 * n) for text, x in columns if text]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "| Country | Validity | Notes |" in markdown, markdown
    assert "| Schengen | 6 months | Covers most of Europe |" in markdown
    assert "| Spain | 3 months |  |" in markdown


def test_a_price_running_into_the_next_columns_price_is_cut_at_its_currency_sign():
    usd = 200 + 30.58  # "42,999" is 30.58 points wide in Helvetica 10
    lines = [Text("Model", 72, 720), Text("INR", 200, 720), Text("USD", usd, 720)]
    lines += [Text("Edge 128GB", 72, 704), Text("42,999$519", 200, 704)]
    lines += [Text("Edge Pro", 72, 690), Text("5,999", 200, 690), Text("$72", usd, 690)]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "| Model | INR | USD |" in markdown, markdown
    assert "| Edge 128GB | 42,999 | $519 |" in markdown, markdown


def test_a_word_broken_over_three_lines_is_joined_like_one_broken_over_two():
    lines = [
        Text("Every device is designed with care. Each one was de-", 72, 700),
        Text("signed in Pune and checked by our lead tech-", 72, 688),
        Text("ni-", 72, 676),
        Text("cian before it ships.", 72, 664),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "was designed in Pune and checked by our lead technician before it ships." in (
        markdown
    ), markdown


def test_a_table_under_a_bold_heading_after_prose_with_bold_runs_keeps_its_header():
    # the prose line's bold run sets its parts apart like cells; the region it starts is no
    # table, but the table under the heading is
    lines = [
        Text("Built for professionals, the", 72, 760),
        Text("Nexus Pro Series", 205, 760, 10, "Helvetica-Bold"),
        Text("delivers top specs for work and play,", 300, 760),
        Text("photography, and development tasks.", 72, 748),
        Text("Shared Specifications", 72, 722, 10, "Helvetica-Bold"),
        Text("Component", 72, 700),
        Text("Specification", 180, 700),
        Text("Launch Year", 72, 686),
        Text("2024", 180, 686),
        Text("Chipset", 72, 672),
        Text("PrimeChip Ultra", 180, 672),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "| Component | Specification |" in markdown, markdown
    assert "| Chipset | PrimeChip Ultra |" in markdown


def test_a_lists_text_indent_right_under_a_table_does_not_cut_its_rows():
    # "Start " is 23.9 points wide in Helvetica 10: "Series" starts where the list's text does
    lines = [Text("Series", 72, 720), Text("Updates", 200, 720), Text("Support", 300, 720)]
    rows = (("One Series", "4 Years", "2030"), ("Start Series", "1 Year", "2027"))
    for n, row in enumerate(rows):
        lines += [Text(text, x, 704 - 14 * n) for text, x in zip(row, (72, 200, 300), strict=True)]
    for n, item in enumerate(("Updates: every year", "Patches: every month")):
        lines += [Text("-", 86, 660 - 14 * n), Text(item, 72 + 23.9, 660 - 14 * n)]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "| Start Series | 1 Year | 2027 |" in markdown, markdown


def test_a_number_run_up_to_the_next_columns_number_on_a_cells_own_line_is_cut():
    # LaTeX writes a row cell by cell, so a cell whose neighbours wrap is a line of its own:
    # "5000mAh " (45.58 points in Helvetica 10) runs up to the Display column's "6.5in"
    battery, display = 200 - 45.58, 200
    lines = [Text("Model", 72, 720), Text("Battery", battery, 720), Text("Display", display, 720)]
    lines.append(Text("Price", 300, 720))
    lines += [Text("Core", 72, 704), Text("Max", 72, 692), Text("5000mAh 6.5in", battery, 704)]
    lines += [Text("(IPS)", display, 692), Text("$99", 300, 704)]
    lines += [Text("Core", 72, 676), Text("Mini", 72, 664), Text("4000mAh", battery, 676)]
    lines += [Text("6.1in", display, 676), Text("(LCD)", display, 664), Text("$79", 300, 676)]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]))[0].markdown
    assert "| Model | Battery | Display | Price |" in markdown, markdown
    assert "| Core Max | 5000mAh | 6.5in (IPS) | $99 |" in markdown, markdown


def test_a_pdf_libreoffice_made_of_a_file_keeps_its_line_end_hyphens_unless_written_whole():
    # LibreOffice hyphenates no word by itself: "fuel-efficient" at a line end is real, even
    # where neither part is a word of the document elsewhere; a word written whole is joined
    lines = [
        Text("Our transparent pricing and the most fuel-", 72, 700),
        Text("efficient fleet. The fares are trans-", 72, 688),
        Text("parent and fair.", 72, 676),
    ]
    markdown = offline_markdown(make_pdf([(612, 792, lines)]), hyphenated=False)[0].markdown
    assert "the most fuel-efficient fleet. The fares are transparent and fair." in markdown
