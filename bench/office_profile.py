"""Where an office document's CPU goes in offline ingest: each step's CPU seconds (drac's process
and every process it started), one document at a time.

Usage:
    python bench/office_profile.py FOLDER [--alone]

Every file under FOLDER is ingested into a fresh workspace in one process. Without `--alone`
the run's DOCX, PPTX and HTML are first converted ahead in batches, as `drac ingest` does
(`OfficeAhead`; the batches' step is measured before any document is ingested); with
`--alone` each document is converted by a LibreOffice of its own. A step's CPU is this
process's, every child it reaped, and the live contained workers', before and after the step.
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import resource
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import processes_cpu_s

import drac.documents.intake.normalise as normalise_module
import drac.documents.offline.converter as offline_module
import drac.local.office_ahead as ahead_module
import drac.local.pipeline as pipeline_module
from drac.cli.models_setup import conversion_options
from drac.local.pipeline import IngestSettings, ingest_file
from drac.local.workspace import Workspace

_SPENT: collections.Counter[str] = collections.Counter()
_CALLS: collections.Counter[str] = collections.Counter()
_DEPTH = [0]
_STARTS = [0]


def tree_cpu() -> float:
    """CPU seconds of this process, its reaped children and its live children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime
    live = processes_cpu_s().values()
    return total + sum(cpu for parent, cpu in live if parent == os.getpid())


def measured(module: Any, name: str, label: str) -> None:
    """Replace `module.name` by a wrapper adding its CPU to `label` (outermost call only)."""
    function: Callable[..., Any] = getattr(module, name)

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _DEPTH[0]:
            return function(*args, **kwargs)
        _DEPTH[0] += 1
        started = tree_cpu()
        try:
            return function(*args, **kwargs)
        finally:
            _SPENT[label] += tree_cpu() - started
            _CALLS[label] += 1
            _DEPTH[0] -= 1

    setattr(module, name, wrapper)


def _count_starts() -> None:
    original = subprocess.Popen.__init__

    def counting(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
        _STARTS[0] += 1
        original(self, *args, **kwargs)

    subprocess.Popen.__init__ = counting  # type: ignore[method-assign]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--alone", action="store_true")
    args = parser.parse_args()
    _count_starts()
    ahead_module._ROOM = 10**6  # the batches all made before the first document is ingested
    steps = [
        (normalise_module, "remove_external_references", "sanitizer worker (alone)"),
        (normalise_module, "_run_guarded", "LibreOffice, one per document"),
        (ahead_module, "prepare", "ahead: bomb check, sanitizer worker"),
        (ahead_module, "convert_batch", "ahead: LibreOffice batches"),
        (offline_module, "read_slide_headings", "file's own slides"),
        (offline_module, "read_file_tables", "file's own tables"),
        (offline_module, "read_file_structure", "file's own structure"),
        (offline_module, "contained_call", "pdfium text layer"),
        (pipeline_module, "with_boxes", "pdfium boxes"),
        (pipeline_module, "parse_document", "parse"),
        (pipeline_module, "_plan", "plan and assemble"),
    ]
    for module, name, label in steps:
        measured(module, name, label)
    files = sorted(path for path in args.folder.rglob("*") if path.is_file())
    settings = IngestSettings(conversion=conversion_options())
    with tempfile.TemporaryDirectory(prefix="drac-profile-") as tmp:
        workspace = Workspace(Path(tmp) / "ws")
        started, wall = tree_cpu(), time.monotonic()
        ahead_files = [] if args.alone else files
        with (
            workspace.writing(),
            ahead_module.OfficeAhead(ahead_files, workspace, settings) as ahead,
        ):
            ahead._thread.join()
            for path in files:
                outcome = ahead.serve(path, ingest_file, path, workspace, settings)
                if outcome.status not in ("INDEXED", "PARTIAL"):
                    print(f"{path.name}: {outcome.status} {outcome.error}")
        total = tree_cpu() - started
        workspace.close()
    count = len(files)
    print(
        f"{count} files: {total:.2f} CPU s, {total / count:.3f} a document; wall "
        f"{time.monotonic() - wall:.1f} s; {_STARTS[0]} processes started by drac"
    )
    for label, seconds in _SPENT.most_common():
        print(f"  {label:40s} {seconds:7.2f} s {seconds / count:7.3f} a document")
    rest = total - sum(_SPENT.values())
    print(f"  {'drac and Python otherwise':40s} {rest:7.2f} s {rest / count:7.3f} a document")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
