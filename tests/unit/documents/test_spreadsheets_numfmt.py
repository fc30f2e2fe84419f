"""Cell values shown as the sheet's number format shows them."""

from datetime import date, datetime, time, timedelta

import pytest

from drac.documents.spreadsheets.numfmt import format_cell


@pytest.mark.parametrize(
    ("value", "code", "shown"),
    [
        (1234567.891, "#,##0.00", "1,234,567.89"),
        (1234567.891, "#,##0", "1,234,568"),
        (0.125, "0.0%", "12.5%"),
        (0.125, "0%", "13%"),
        (2.675, "0.00", "2.68"),  # half away from zero, as Excel rounds, not binary 2.67
        (3.14159, "0.000", "3.142"),
        (7, "000", "007"),
        (0.5, "#.00", ".50"),
        (-1234.5, "#,##0.00", "-1,234.50"),
        (-1234.5, "#,##0.00;(#,##0.00)", "(1,234.50)"),
        (0, '#,##0;-#,##0;"-"', "-"),
        (1234.5, '"$"#,##0.00', "$1,234.50"),
        (-5, "$#,##0", "-$5"),
        (1234.5, "[$€-407] #,##0.00", "€ 1,234.50"),
        (1234, "[Red]#,##0", "1,234"),
        (1500000, '#,##0,,"M"', "2M"),
        (1500, "#,##0.0,", "1.5"),
        (12345.678, "0.00E+00", "1.23E+04"),
        (0.000123, "0.0E+00", "1.2E-04"),
        (5, '"Qty: "0', "Qty: 5"),
        (-0.001, "0.00", "0.00"),
        (123, ";;;", ""),
        (42, "General", "42"),
        (0.1 + 0.2, "General", "0.3"),
        (1e20, "General", "1E+20"),
        (2.5, "# ?/?", "2.5"),  # fractions fall back to General
        (1234, "[>=1000]#,##0;0", "1234"),  # conditions fall back to General
    ],
)
def test_numbers_follow_their_format(value: float, code: str, shown: str) -> None:
    assert format_cell(value, code) == shown


@pytest.mark.parametrize(
    ("value", "code", "shown"),
    [
        (datetime(2024, 1, 15, 14, 5, 9), "yyyy-mm-dd", "2024-01-15"),
        (datetime(2024, 1, 15), "mm-dd-yy", "1/15/2024"),  # built-in 14, en-US short date
        (datetime(2024, 1, 15), "d-mmm-yy", "15-Jan-24"),
        (datetime(2024, 1, 15), "dddd, mmmm d, yyyy", "Monday, January 15, 2024"),
        (datetime(2024, 1, 15, 14, 5), "h:mm AM/PM", "2:05 PM"),
        (datetime(2024, 1, 15, 14, 5, 9), "yyyy-mm-dd hh:mm:ss", "2024-01-15 14:05:09"),
        (datetime(2024, 1, 15, 14, 5, 9, 500000), "mm:ss.0", "05:09.5"),
        (timedelta(hours=30, minutes=5), "[h]:mm:ss", "30:05:00"),
        (time(9, 30), "h:mm", "9:30"),
        (date(2024, 3, 1), "mmm yyyy", "Mar 2024"),
        (datetime(2024, 3, 1), "General", "2024-03-01"),
    ],
)
def test_dates_and_times_follow_their_format(value: object, code: str, shown: str) -> None:
    assert format_cell(value, code) == shown


def test_text_and_booleans_are_shown_as_such() -> None:
    assert format_cell("a | b", "@") == "a | b"
    assert format_cell("kg", '0;-0;0;"per "@') == "per kg"
    assert format_cell(True) == "TRUE" and format_cell(False) == "FALSE"
    assert format_cell(None, "0.00") == ""
