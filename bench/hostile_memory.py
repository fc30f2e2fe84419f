"""Peak memory and time of `drac ingest` (offline) on every input of the hostile set.

Each input is ingested by a fresh child process into a fresh workspace, so numbers do not mix:
the child reports its own peak (VmHWM, which unlike ru_maxrss does not start at the parent's
size) over its baseline after imports, and the largest child it waited for (LibreOffice, or a
contained pdfium/openpyxl worker).
Also times every text entry point (detectors, parsers, model-output checks) on the generated
pathological text, the numbers behind `tests/reliability/test_linear_time.py`.

    .venv/bin/python bench/hostile_memory.py [--write] [--only TEXT ...]

`--write` replaces the `hostile` section of RELIABILITY.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from _common import OUT, REPO, machine, write_section

sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "reliability")]

from hostile_files import HOSTILE_SET, Hostile  # noqa: E402
from hostile_pdf import big_image_pdf, many_pages_pdf  # noqa: E402
from hostile_text import hostile_text  # noqa: E402

RELIABILITY = REPO / "RELIABILITY.md"
_MIB = 1024 * 1024


def _prose(size: int) -> bytes:
    paragraph = (
        "## Service interval\n\nThe boiler is serviced once a year by a registered engineer; "
        "keep the report with the warranty card, because claims without it are refused.\n\n"
    )
    return (paragraph * (size // len(paragraph))).encode()


BENCH_ONLY: tuple[Hostile, ...] = (
    # 2 MiB, not more: planning is still quadratic in the number of sections (20 MiB took
    # 574 s), which issue 11's planning work fixes
    Hostile("Markdown, 2 MB of ordinary prose", b"prose-2mb.md", lambda: _prose(2 * _MIB),
            "INDEXED"),
    Hostile("text, 8 MB in 1,000-character lines", b"lines-8mb.txt",
            lambda: (("x" * 999 + "\n") * 8 * 1024).encode(), "INDEXED"),
    # many tiny elements: about 1.4 KB of memory each, whatever their size in the file
    Hostile("Markdown, 2 MB of one-character setext headings", b"setext-2mb.md",
            lambda: hostile_text("setext underlines", 2 * _MIB).encode(), "FAILED",
            "no text content"),
    Hostile("Markdown, 2 MB of empty ordered-list items", b"list-items-2mb.md",
            lambda: hostile_text("ordered-list lookalikes", 2 * _MIB).encode(), "INDEXED"),
    Hostile("PDF, 5,000 tiny pages (the page limit)", b"pages-5000.pdf",
            lambda: many_pages_pdf(5000, "tiny page"), "INDEXED"),
    Hostile("PDF, one 40,000 x 40,000 image (the reported 1.5 MB)", b"image-40k.pdf",
            lambda: big_image_pdf(40_000), "PARTIAL", "no text layer"),
)  # fmt: skip
"""Large honest inputs: what the peak-memory multiple of input size is measured on."""


def _vm_hwm_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _run_one(path: Path, workspace: Path) -> dict[str, object]:
    """Ingest one file (in this child process) and measure it."""
    from drac.local.pipeline import IngestSettings, ingest_file
    from drac.local.workspace import Workspace

    ws = Workspace(workspace, create=True)
    baseline = _vm_hwm_mib()
    started = time.perf_counter()
    outcome = ingest_file(path, ws, IngestSettings())
    seconds = time.perf_counter() - started
    from drac.documents.sandbox.containment.pool import _POOL

    _POOL.close()  # reap the contained workers, so their peaks count below
    said = outcome.error if outcome.failed else " | ".join(outcome.warnings)
    return {
        "status": outcome.status,
        "said": said or "",
        "seconds": seconds,
        "baseline_mib": baseline,
        "peak_mib": _vm_hwm_mib(),
        "parser_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }


def _measure(item: Hostile, folder: Path) -> dict[str, object]:
    path = item.write(folder)
    size = path.stat().st_size
    workspace = folder / "ws"
    shutil.rmtree(workspace, ignore_errors=True)
    command = [sys.executable, __file__, "--one", os.fsencode(path), "--workspace", workspace]
    run = subprocess.run(command, capture_output=True, timeout=900)
    path.unlink()
    if run.returncode != 0:
        return {"status": "CRASHED", "said": run.stderr.decode(errors="replace")[-300:],
                "size": size, "seconds": 0.0}  # fmt: skip
    result = json.loads(run.stdout)
    result["size"] = size
    return result


_GROUPS = {
    "detection": ("detect_format", "detect_format (as .html)", "decode_text"),
    "model-output checks": ("clean_model_markdown", "check_batch", "repair_markers", "page_texts"),
    "planner answer": ("parse_answer", "expand_ranges", "planner preview"),
    "parsing": ("parse_document", "split_text"),
}
"""Entry points of `test_linear_time`, grouped into the columns of the report."""


def _text_timings() -> list[tuple[str, int, dict[str, float], str]]:
    """Per family: characters, the slowest entry point's ms per group, and a note."""
    from hostile_text import TEXT_FAMILIES, hostile_text
    from test_linear_time import ENTRY_POINTS, _timed

    rows = []
    for family in TEXT_FAMILIES:
        text = hostile_text(family)
        times = {name: _timed(function, text) * 1000 for name, function in ENTRY_POINTS.items()}
        groups = {group: max(times[name] for name in names) for group, names in _GROUPS.items()}
        rows.append((family, len(text), groups, ""))
    return rows


def _size(size: int) -> str:
    if size >= 1024**3:
        return f"{size / 1024**3:.1f} GiB"
    if size >= _MIB:
        return f"{size / _MIB:.1f} MiB"
    return f"{size / 1024:.1f} KiB" if size >= 1024 else f"{size} B"


def _cell(text: str, limit: int = 90) -> str:
    flat = " ".join(text.split()).replace("|", "\\|")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _report(results: list[tuple[Hostile, dict]], texts: list, seconds: float) -> str:
    lines = [
        "## Hostile inputs: outcome, time and peak memory",
        "",
        "Command: `.venv/bin/python bench/hostile_memory.py --write`  ",
        f"Machine: {machine()}; {seconds:.0f} s in all.",
        "",
        "Each input is ingested offline (`ingest_file`, default settings) by a fresh process "
        "into a fresh workspace. *drac peak* is that process's peak resident memory (VmHWM) "
        "above its baseline after imports; *parser* is the largest child's peak: a contained "
        "pdfium or openpyxl worker (at most 2 GiB of address space) or LibreOffice (0: none "
        "started); *multiple* is drac's peak over the input's size, for inputs of "
        "1 MiB or more (below that, fixed costs dominate).",
        "",
        "| input | size | outcome | reason or first warning | time | drac peak | parser "
        "| multiple | expected |",
        "|---|---:|---|---|---:|---:|---:|---:|---|",
    ]
    multiples: list[tuple[float, str]] = []
    refused: list[tuple[float, str]] = []
    for item, result in results:
        size = int(result["size"])
        extra = max(0.0, float(result.get("peak_mib", 0)) - float(result.get("baseline_mib", 0)))
        multiple = extra * _MIB / size if size else 0.0
        if size >= _MIB:
            accepted = result["status"] in ("INDEXED", "PARTIAL")
            (multiples if accepted else refused).append((multiple, item.label))
        matches = result["status"] == item.status
        shown_multiple = f"{multiple:.1f}x" if size >= _MIB else "-"
        lines.append(
            f"| {_cell(item.label, 60)} | {_size(size)} | {result['status']} | "
            f"{_cell(str(result['said']))} | {float(result['seconds']):.2f} s | "
            f"{extra:.0f} MiB | {float(result.get('parser_mib', 0)):.0f} MiB | "
            f"{shown_multiple} | {'yes' if matches else '**no: ' + item.status + '**'} |"
        )
    if multiples:
        worst, label = max(multiples)
        lines += [
            "",
            f"Largest peak-memory multiple among accepted inputs of 1 MiB or more: "
            f"**{worst:.1f}x** the input size ({label}).",
        ]
    if refused:
        worst, label = max(refused)
        lines += [
            f"Largest among refused inputs of 1 MiB or more: **{worst:.1f}x** ({label}).",
        ]
    lines += [
        "",
        "### Text entry points on pathological text",
        "",
        "Milliseconds of the slowest entry point of each group on each generated family "
        "(`tests/reliability/hostile_text.py`); the test's budget is 2,000 ms per call.",
        "",
        "| family | characters | " + " | ".join(_GROUPS) + " | note |",
        "|---|---:|" + "---:|" * len(_GROUPS) + "---|",
        *(
            f"| {family} | {size:,} | "
            + " | ".join(f"{groups[group]:.1f}" for group in _GROUPS)
            + f" | {note} |"
            for family, size, groups, note in texts
        ),
    ]
    return "\n".join(lines)


def main() -> None:
    """Run the benchmark and print (or `--write`) its table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update RELIABILITY.md")
    parser.add_argument("--only", nargs="*", default=[], help="inputs whose label has TEXT")
    parser.add_argument("--one", type=os.fsencode, help=argparse.SUPPRESS)
    parser.add_argument("--workspace", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(_run_one(Path(os.fsdecode(args.one)), args.workspace)))
        return
    started = time.perf_counter()
    folder = OUT / "hostile"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    results = []
    for item in (*HOSTILE_SET, *BENCH_ONLY):
        if args.only and not any(text in item.label for text in args.only):
            continue
        result = _measure(item, folder)
        print(f"{item.label}: {result['status']} {float(result['seconds']):.2f} s", flush=True)
        results.append((item, result))
    report = _report(results, _text_timings(), time.perf_counter() - started)
    print(report)
    if args.write:
        write_section("hostile", report, RELIABILITY)


if __name__ == "__main__":
    main()
