"""Ingest with embedding: embedding after conversion in calls of 8 texts (the earlier
behaviour) and of 64 (what `replan` and `search` now do), against embedding alongside it (each
committed document's chunks embedded while later ones convert, one thread budget of the
cores), and an ingest without embedding, on the same corpus folders.

Each run is a fresh process with a fresh workspace under bench/out/ingest_embedding/; wall
seconds and CPU seconds (the process and its contained workers) per run, the modes
interleaved `--rounds` times, the median reported; then the vectors of both embedding modes
compared text by text (retrieval must not change).

    DRAC_SHARED=/work/shared .venv/bin/python bench/ingest_embedding.py [--rounds 2] [--write]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import CORPUS, OUT, REPO, machine, write_section

MODES = ("none", "after", "alongside")
"""`after64` (embedding after conversion, 64 texts a call) may be added with --modes."""
FOLDERS = ("Velvera Technologies/md", "Velvera Technologies/pdf", "Velvera Technologies/docx")
WORK = OUT / "ingest_embedding"


def run_mode(mode: str, workspace: Path, folders: list[Path], jobs: int) -> dict[str, object]:
    """One ingest in this process (the child's side)."""
    from drac.api import Workspace
    from drac.api.embedding import search_embedder
    from drac.local.search import embed_active_chunks

    shutil.rmtree(workspace, ignore_errors=True)
    started = time.perf_counter()
    with Workspace.open(workspace) as ws:
        events = _LastDocument(ws)
        report = ws.ingest(folders, jobs=jobs, embed=mode == "alongside", events=events)
        converted = events.at - started
        embedded = report.embedded.embedded if report.embedded else 0
        if mode.startswith("after"):
            embedder = search_embedder()
            assert embedder is not None, "the embedded model is not installed"
            batch = 8 if mode == "after" else 64  # 8 texts a call: the earlier ingest's step
            embedded = embed_active_chunks(ws.local, embedder, batch=batch).embedded
        statuses = sorted({o.status for o in report.outcomes})
        return {
            "converted_s": converted,
            "embedded_while_converting": events.vectors,
            "documents": len(report.outcomes),
            "statuses": statuses,
            "chunks": len(list(ws.chunks())),
            "embedded": embedded,
            "warning": report.embed_warning,
        }


class _LastDocument:
    """Run events noting when the last document finished and how many vectors were stored
    by then."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.at = 0.0
        self.vectors = 0

    def started(self, path: Path) -> object:
        return lambda done, total: None

    def ended(self, path: Path) -> None:
        return None

    def finished(self, outcome: object) -> None:
        self.at = time.perf_counter()
        rows = self.ws.local.db.query("SELECT count(*) FROM embedding_cache")
        self.vectors = int(rows[0][0])


def measure(mode: str, workspace: Path, folders: list[Path], jobs: int) -> dict[str, object]:
    """One run in a fresh process: its result, wall and CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    command = [sys.executable, __file__, "--child", mode, "--workspace", str(workspace)]
    command += ["--jobs", str(jobs), *[str(f) for f in folders]]
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=REPO)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    load = float(Path("/proc/loadavg").read_text().split()[1])  # 5 minutes: the run's
    result.update(mode=mode, wall=wall, cpu=cpu, load=load)
    return result


def vector_difference(first: Path, second: Path) -> tuple[int, float]:
    """Texts compared and the largest absolute difference of their vectors' components."""
    from drac.api import Workspace
    from drac.api.embedding import search_embedder
    from drac.embedders.cache import model_identity, text_key

    embedder = search_embedder()
    assert embedder is not None
    identity = model_identity(embedder)
    largest, count = 0.0, 0
    with Workspace.open(first, create=False) as a, Workspace.open(second, create=False) as b:
        texts = sorted({view.text for view in a.chunks()})
        assert texts == sorted({view.text for view in b.chunks()}), "the chunks differ"
        keys = [text_key(t) for t in texts]
        va = a.local.vectors.get_vectors(identity, keys)
        vb = b.local.vectors.get_vectors(identity, keys)
        for key in keys:
            count += 1
            largest = max(largest, max(abs(x - y) for x, y in zip(va[key], vb[key], strict=True)))
    return count, largest


def main() -> None:
    """Run the modes interleaved, print (and with --write store) the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--child", choices=(*MODES, "after64"))
    parser.add_argument("--workspace", type=Path)
    parser.add_argument("folders", nargs="*", type=Path)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_mode(args.child, args.workspace, args.folders, args.jobs)))
        return
    folders = [CORPUS / name for name in FOLDERS]
    modes = args.modes.split(",")
    runs: dict[str, list[dict[str, object]]] = {mode: [] for mode in modes}
    for round_ in range(args.rounds):
        for mode in modes:
            run = measure(mode, WORK / mode, folders, args.jobs)
            runs[mode].append(run)
            print(f"round {round_ + 1} {mode}: {run}", flush=True)
    compared, largest = vector_difference(WORK / "after", WORK / "alongside")
    first = runs["after"][0]
    lines = [
        f"Velvera's {', '.join(f.split('/')[1] for f in FOLDERS)} folders in one ingest "
        f"({first['documents']} documents, {first['chunks']} chunks), offline, "
        f"`--jobs {args.jobs}`, the embedded model, a fresh workspace and process per run, "
        f"median of {args.rounds} interleaved rounds; {machine()}.",
        "`DRAC_SHARED=/work/shared .venv/bin/python bench/ingest_embedding.py "
        f"--rounds {args.rounds} --modes {args.modes} --write`",
        "",
        "| ingest | wall s | CPU s | conversion done at s | embedded by then | load (5 min) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    names = {
        "none": "without embedding (`--no-embed`)",
        "after": "embedding after conversion, 8 texts a call (before)",
        "after64": "embedding after conversion, 64 texts a call",
        "alongside": "embedding alongside conversion (now)",
    }

    def median(mode: str, key: str) -> float:
        return statistics.median(float(str(run[key])) for run in runs[mode])

    for mode in modes:
        embedded = runs[mode][0]["embedded"]
        lines.append(
            f"| {names[mode]} | {median(mode, 'wall'):.1f} | {median(mode, 'cpu'):.1f} | "
            f"{median(mode, 'converted_s'):.1f} | "
            f"{median(mode, 'embedded_while_converting'):.0f} of {embedded} | "
            f"{median(mode, 'load'):.1f} |"
        )
    lines += [
        "",
        f"Vectors of the two embedding modes, {compared} chunk texts: largest difference of a "
        f"component {largest:.1e}. Wall seconds depend on the load other processes put on the "
        "shared machine (the load column); CPU seconds much less.",
    ]
    body = "\n".join(lines)
    print(body)
    if args.write:
        write_section("ingest-embedding", body)


if __name__ == "__main__":
    main()
