"""CPU and wall time of `drac ingest --no-embed` on given files, each in a fresh workspace
and a fresh process (its CPU counts every contained worker and LibreOffice run it reaped).

    .venv/bin/python bench/document_budget.py FILE... [--timeout S] [--env NAME=VALUE ...]
    .venv/bin/python bench/document_budget.py --write-hostile FOLDER   # the three small files
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(path: Path, timeout: float, env: dict[str, str]) -> dict[str, object]:
    """One ingest of `path`: outcome, reason, wall seconds, CPU seconds of the process tree."""
    with tempfile.TemporaryDirectory(prefix="drac-budget-") as work:
        command = [
            str(ROOT / ".venv/bin/drac"), "ingest", "--no-embed", "--json",
            "--workspace", str(Path(work) / "ws"), str(path),
        ]  # fmt: skip
        started = time.monotonic()
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **env},
            start_new_session=True,
        )
        try:
            out, _ = process.communicate(timeout=timeout)
            outcome = json.loads(out or b"{}")
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.communicate()
            outcome = {}
        wall = time.monotonic() - started
    found = [
        {"status": item.get("status"), "error": (item.get("error") or "")[:300],
         "pages": item.get("pages"), "parsers_cpu_s": item.get("cpu_s")}
        for item in outcome.get("outcomes", [])
    ] or "killed at the timeout (CPU: a lower bound)"  # fmt: skip
    return {"file": path.name, "bytes": path.stat().st_size, "wall_s": round(wall, 1),
            "outcome": found}  # fmt: skip


def main() -> None:
    """Measure each file named, printing one JSON line each."""
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--env", action="append", default=[])
    parser.add_argument("--write-hostile", type=Path)
    args = parser.parse_args()
    if args.write_hostile:
        sys.path[:0] = [str(ROOT / "tests/reliability")]
        from hostile_cost import many_frames_tiff, nested_tables_docx, tiny_image_pages_pdf

        args.write_hostile.mkdir(parents=True, exist_ok=True)
        (args.write_hostile / "tiny-image-pages.pdf").write_bytes(tiny_image_pages_pdf(400))
        (args.write_hostile / "many-frames.tif").write_bytes(many_frames_tiff(3000))
        (args.write_hostile / "nested-tables.docx").write_bytes(nested_tables_docx(3000))
    env = dict(item.split("=", 1) for item in args.env)
    for path in args.files:
        before = os.times()
        result = measure(path, args.timeout, env)
        after = os.times()
        result["cpu_s"] = round(
            after.children_user + after.children_system
            - before.children_user - before.children_system, 1
        )  # fmt: skip
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
