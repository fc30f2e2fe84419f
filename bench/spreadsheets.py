"""Spreadsheet benchmark: time and peak memory of a large workbook, stage by stage.

Generates (once, cached under bench/out/sheets/) a workbook of ROWS x COLS cells of mixed
types and number formats, then runs each stage in a fresh Python process so each peak RSS is
its own: reading to Markdown, + parsing into elements, + sectioning/planning/assembly, and
the whole `drac ingest` (SQLite, FTS5 index) into a new workspace; for pipe-table rows and
for sentence rows.

    .venv/bin/python bench/spreadsheets.py [--rows 200000] [--cols 30] [--table-rows pipe,sentences]
        [--stages read,parse,plan,ingest] [--write]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from _common import OUT, machine, write_section

STAGES = ("read", "parse", "plan", "ingest")
_WHAT = {
    "read": "read_spreadsheet (openpyxl read-only, spooled rows, Markdown)",
    "parse": "read + parse_markdown (elements)",
    "plan": "read + parse + sections + rules plan + assemble (no storage)",
    "ingest": "`drac ingest` into a new workspace (all of it, SQLite + FTS5)",
}


def workbook(rows: int, cols: int) -> Path:
    """The benchmark workbook, generated once (openpyxl write-only, a few number formats)."""
    path = OUT / "sheets" / f"sales_{rows}x{cols}.xlsx"
    if path.exists():
        return path
    from openpyxl import Workbook
    from openpyxl.cell import WriteOnlyCell

    path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(1)
    book = Workbook(write_only=True)
    sheet = book.create_sheet("Sales")
    kinds = ["id", "text", "int", "money", "pct", "date"]
    columns = [kinds[i % len(kinds)] if i else "id" for i in range(cols)]
    sheet.append([f"{kind.title()} {i}" for i, kind in enumerate(columns)])
    formats = {"money": "#,##0.00", "pct": "0.0%", "date": "yyyy-mm-dd"}
    words = ["North", "South", "East", "West", "Widget", "Gadget", "Online", "Retail"]
    start = date(2020, 1, 1)
    for n in range(rows):
        row: list[Any] = []
        for kind in columns:
            value: Any = {
                "id": f"R{n:07d}",
                "text": rng.choice(words),
                "int": rng.randint(0, 99999),
                "money": round(rng.uniform(0, 1e6), 2),
                "pct": round(rng.random(), 4),
                "date": start + timedelta(days=rng.randint(0, 1800)),
            }[kind]
            if kind in formats:
                cell = WriteOnlyCell(sheet, value=value)
                cell.number_format = formats[kind]
                value = cell
            row.append(value)
        sheet.append(row)
    book.save(path)
    return path


def _stage(name: str, path: Path, table_rows: str) -> dict[str, Any]:
    """Run one stage in this process; return its numbers (peak RSS read after it)."""
    from drac.documents.intake.detect import DocumentFormat
    from drac.documents.spreadsheets import read_spreadsheet
    from drac.ingest import element_config, spreadsheet_options
    from drac.models import DocumentRecord, Strategy
    from drac.parsing import parse_markdown

    baseline = _peak_mib()
    strategy = Strategy(table_rows=table_rows)  # type: ignore[arg-type]
    options = spreadsheet_options(strategy)
    started = time.perf_counter()
    result = read_spreadsheet(path.read_bytes(), DocumentFormat.XLSX, path.name, options)
    numbers: dict[str, Any] = {
        "rows": result.rows,
        "markdown_mib": round(len(result.markdown) / 2**20, 1),
    }
    if name in ("parse", "plan"):
        elements = parse_markdown(result.markdown, element_config(strategy))
        numbers["elements"] = len(elements)
        del result
    if name == "plan":
        from drac.assemble import assemble_chunks
        from drac.planning import plan_document
        from drac.sectioning import make_sections

        sections = make_sections(elements, strategy.section_budget)
        plan = plan_document("d", elements, sections, strategy, version=1)
        record = DocumentRecord(document_id="d", source=path.name, sha256="0")
        numbers["chunks"] = len(assemble_chunks(record, elements, plan))
    numbers["seconds"] = round(time.perf_counter() - started, 1)
    numbers["baseline_mib"] = baseline
    numbers["peak_mib"] = _peak_mib()
    return numbers


def _ingest(path: Path, table_rows: str) -> dict[str, Any]:
    """`drac ingest` in a child process: wall time and the child's peak RSS."""
    drac = Path(sys.executable).with_name("drac")
    with tempfile.TemporaryDirectory(prefix="drac-bench-") as tmp:
        started = time.perf_counter()
        done = subprocess.run(
            [str(drac), "ingest", str(path), "-w", tmp, "--table-rows", table_rows, "--json"],
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if done.returncode:
        raise SystemExit(f"drac ingest failed: {done.stderr[-2000:]}")
    outcome = json.loads(done.stdout[done.stdout.index("{") :])["outcomes"][0]
    return {
        "elements": outcome["elements"],
        "chunks": outcome["chunks"],
        "seconds": round(seconds, 1),
        "peak_mib": round(peak),
    }


def _peak_mib() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def _run_child(name: str, path: Path, table_rows: str) -> dict[str, Any]:
    """One stage in a fresh process (ingest: a process that runs `drac ingest` and reads
    that one child's peak)."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", name, str(path), table_rows],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def _report(
    rows: int, cols: int, path: Path, results: dict[tuple[str, str], dict[str, Any]]
) -> str:
    size = path.stat().st_size / 2**20
    lines = [
        "## Spreadsheets: a large workbook",
        "",
        f"`.venv/bin/python bench/spreadsheets.py --rows {rows} --cols {cols} --write` on "
        f"{machine()}. One sheet, {rows:,} rows x {cols} columns (ids, text, integers, "
        f"`#,##0.00` amounts, `0.0%` shares, dates), {size:.1f} MiB XLSX. Each stage runs in a "
        "fresh process, so each peak RSS is its own (Python and drac's imports alone: "
        f"{next(iter(results.values())).get('baseline_mib', '?')} MiB).",
        "",
        "| rows as | stage | time (s) | peak RSS (MiB) | output |",
        "|---|---|---:|---:|---|",
    ]
    labels = {"rows": "{:,} rows", "markdown_mib": "{} MiB of Markdown"}
    for (mode, name), numbers in results.items():
        output = ", ".join(
            labels.get(key, "{:,} " + key).format(numbers[key])
            for key in ("rows", "markdown_mib", "elements", "chunks")
            if key in numbers
        )
        lines.append(
            f"| {mode} | {_WHAT[name]} | {numbers['seconds']} | {numbers['peak_mib']} | {output} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    """Parse arguments, generate the workbook if needed, run the stages, print the table."""
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        name, path, mode = sys.argv[2], Path(sys.argv[3]), sys.argv[4]
        print(json.dumps(_ingest(path, mode) if name == "ingest" else _stage(name, path, mode)))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--cols", type=int, default=30)
    parser.add_argument("--stages", default=",".join(STAGES))
    parser.add_argument("--table-rows", default="pipe,sentences")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args()
    if shutil.which("drac", path=str(Path(sys.executable).parent)) is None:
        raise SystemExit("run with the venv's Python (.venv/bin/python), where drac is installed")
    started = time.perf_counter()
    path = workbook(args.rows, args.cols)
    print(f"workbook {path} ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    results: dict[tuple[str, str], dict[str, Any]] = {}
    for mode in args.table_rows.split(","):
        for name in args.stages.split(","):
            results[mode, name] = _run_child(name, path, mode)
            print(mode, name, results[mode, name], file=sys.stderr)
    report = _report(args.rows, args.cols, path, results)
    print(report)
    if args.write:
        write_section("spreadsheets", report)


if __name__ == "__main__":
    main()
