"""The table builders' shared parts: columns from positions, rows joined, pipe tables."""

from __future__ import annotations

from drac.documents.table_grid import (
    escape_pipes,
    joined_rows,
    pipe_row,
    pipe_table,
    position_groups,
)


def test_positions_group_within_the_spread_of_each_groups_first() -> None:
    # 10.0-12.0 is one group (2.0 from its first), 12.5 starts the next: the spread is
    # measured from a group's first position, not from its last (no chaining)
    assert position_groups([12.5, 10.0, 11.0, 12.0, 14.0, 30.0], 2.0) == [
        [10.0, 11.0, 12.0],
        [12.5, 14.0],
        [30.0],
    ]
    assert position_groups([], 2.0) == []


def test_wrapped_rows_join_cell_by_cell_without_stray_spaces() -> None:
    assert joined_rows(["Flight", "", "Mumbai"], ["No.", "Gate", ""]) == [
        "Flight No.",
        "Gate",
        "Mumbai",
    ]


def test_a_grid_is_a_pipe_table_with_its_first_row_as_header_and_cells_escaped() -> None:
    rows = [["Plan", "Price"], ["a|b", "10"], ["", "x"]]
    assert pipe_table(rows, escape_pipes) == (
        "| Plan | Price |\n| --- | --- |\n| a\\|b | 10 |\n|  | x |"
    )
    assert pipe_table(rows, str.upper, delimiter="---") == (
        "| PLAN | PRICE |\n|---|---|\n| A|B | 10 |\n|  | X |"
    )
    assert pipe_table([["only", "header"]], escape_pipes) == "| only | header |\n| --- | --- |"
    assert pipe_row(["a", "b"]) == "| a | b |"
