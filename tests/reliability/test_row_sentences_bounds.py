"""A hostile table against the row-sentence rewrite (issue 17): every row repeats its headers,
so the rewritten text is bounded by the document's own size; and the scan stays linear."""

from __future__ import annotations

import time

from drac.documents.row_sentences import rows_as_sentences

LIMIT = 1200


def test_a_table_whose_sentences_would_grow_the_document_without_bound_is_kept_as_it_is():
    """Each row repeats every header: 1,000 columns of 100-character names over 1,000 one-letter
    rows would write 100 MB from 2 MB. It stays a pipe table; a small table is still written."""
    columns = 1000
    header = "|" + "|".join(f"{n:0100d}" for n in range(columns)) + "|"
    rows = "\n".join("|" + "x|" * columns for _ in range(1000))
    hostile = f"{header}\n|{'-|' * columns}\n{rows}\n"
    markdown = f"{hostile}\n| K | V |\n|---|---|\n| a | 1 |\n"
    out, stats, kept = rows_as_sentences(markdown, LIMIT)
    assert kept == 1 and stats.rows == 1
    assert out == f"{hostile}\nK: a; V: 1.\n"


def test_lines_of_pipes_and_backslashes_cost_linear_time():
    """Lines that look like table rows, escapes and pipes everywhere, and no table: 8 times the
    input must cost well under 64 times the time."""
    line = "|" + "\\\\|" * 2000 + "\\|"
    timings = []
    for count in (50, 400):
        markdown = "text\n" + (line + "\n") * count
        started = time.perf_counter()
        out, stats, _ = rows_as_sentences(markdown, LIMIT)
        timings.append(time.perf_counter() - started)
        assert out is markdown and stats.rows == 0
    assert timings[1] < 16 * timings[0] + 0.05, f"{timings[1] / timings[0]:.0f}x the time"
