"""Office documents' CPU seconds in `drac ingest`: the corpus DOCX, PPTX and HTML ingested offline
with this tree's code and with the code of a git revision, and their Markdown, warnings and
chunks compared (they must be identical).

Usage:
    python bench/office_cpu.py REF [--formats docx,pptx,html] [--limit N] [--write]

REF's whole `src/` is taken from git (`git archive`). For each format, the documents of both
corpus companies (each company's in a folder of its own; `--limit N` takes the first N of each)
are ingested into a fresh workspace by a fresh `drac ingest --no-embed` process (default jobs)
with each code, REF first; CPU seconds are the process's and every process it started (user +
system, RUSAGE_CHILDREN), wall-clock seconds are given for orientation only. Then every
document's stored Markdown and warnings and the `drac export` of both workspaces are compared.
--write puts the result into docs/benchmarks.md (section "office-cpu").
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import COMPANIES, CORPUS, REPO, machine, write_section
from converter_speed import sources_at

_DUMP = """
import json, sys
from pathlib import Path
from drac.local.workspace import Workspace
ws = Workspace(Path(sys.argv[1]), create=False)
out = {}
for record in ws.documents():
    out[record.source_path or record.source] = {
        "status": record.status.value, "pages": record.pages, "warnings": record.warnings,
        "markdown": ws.get_markdown(record.document_id),
    }
ws.close()
print(json.dumps(out, sort_keys=True))
"""


def ingest(src: Path, folder: Path, workspace: Path) -> tuple[float, float]:
    """(wall-clock, CPU) seconds of `drac ingest --no-embed` of `folder` with the code under
    `src`, every process it started included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "from drac.cli import main; main()", "ingest", "--no-embed",
         str(folder), "-w", str(workspace)],
        check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(src)},
    )  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def stored(src: Path, workspace: Path) -> tuple[dict[str, object], bytes]:
    """Every document's status, pages, warnings and Markdown, and the workspace's export."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    dump = subprocess.run(
        [sys.executable, "-c", _DUMP, str(workspace)], check=True, capture_output=True, env=env
    ).stdout
    export = subprocess.run(
        [sys.executable, "-c", "from drac.cli import main; main()", "export", "-w",
         str(workspace)],
        check=True, capture_output=True, env=env,
    ).stdout  # fmt: skip
    return json.loads(dump), export


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ref")
    parser.add_argument("--formats", default="docx,pptx,html")
    parser.add_argument("--limit", type=int, default=0, help="documents per company (0: all)")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="drac-office-") as tmp:
        codes = {"before": sources_at(args.ref, Path(tmp)), "now": REPO / "src"}
        for fmt in args.formats.split(","):
            folder = Path(tmp) / fmt
            count = 0
            for company, name in COMPANIES.items():
                files = sorted((CORPUS / name / fmt).glob(f"*.{fmt}"))
                files = files[: args.limit] if args.limit else files
                (folder / company).mkdir(parents=True)
                for file in files:
                    (folder / company / file.name).write_bytes(file.read_bytes())
                count += len(files)
            runs = {}
            for code, src in codes.items():
                workspace = Path(tmp) / f"ws-{fmt}-{code}"
                wall, cpu = ingest(src, folder, workspace)
                runs[code] = (wall, cpu, *stored(REPO / "src", workspace))
            same_docs = runs["before"][2] == runs["now"][2]
            same_chunks = runs["before"][3] == runs["now"][3]
            rows.append((fmt, count, runs, same_docs, same_chunks))
            print(fmt, count, {k: (round(v[0], 1), round(v[1], 1)) for k, v in runs.items()},
                  same_docs, same_chunks, flush=True)  # fmt: skip
    body = _body(args, rows)
    print(body)
    if args.write:
        write_section("office-cpu", body)
    return 0 if all(row[3] and row[4] for row in rows) else 1


def _body(args: argparse.Namespace, rows: list[tuple]) -> str:  # type: ignore[type-arg]
    commit = subprocess.run(
        ["git", "rev-parse", "--short", args.ref], cwd=REPO, check=True, capture_output=True,
        text=True,
    ).stdout.strip()  # fmt: skip
    limit = f" --limit {args.limit}" if args.limit else ""
    lines = [
        "## Office documents: CPU seconds per document in `drac ingest`\n",
        f"Command: `python bench/office_cpu.py {args.ref} --formats {args.formats}{limit} --write`"
        f" (`{args.ref}` = {commit}, one LibreOffice process per document)  \n"
        f"Machine: {machine()}.\n",
        "`drac ingest --no-embed` of the corpus documents of both companies into a fresh"
        " workspace (default jobs), CPU seconds of the process and every process it started"
        " (user + system); wall-clock seconds only for orientation (the machine is shared).\n",
        "| format | documents | CPU s / document before | now | CPU s before | now |"
        " wall s before | now | Markdown and warnings | chunks (`drac export`) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for fmt, count, runs, same_docs, same_chunks in rows:
        before, now = runs["before"], runs["now"]
        lines.append(
            f"| {fmt.upper()} | {count} | {before[1] / count:.3f} | **{now[1] / count:.3f}** |"
            f" {before[1]:.1f} | {now[1]:.1f} | {before[0]:.1f} | {now[0]:.1f} |"
            f" {'identical' if same_docs else 'DIFFERENT'} |"
            f" {'identical' if same_chunks else 'DIFFERENT'} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
