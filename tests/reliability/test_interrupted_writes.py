"""Replans killed at any moment leave no temporary file behind once the next writer runs,
and the workspace stays readable."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

DRAC = [sys.executable, "-c", "from drac.cli import main; main()"]


def _temporary_files(root: Path) -> list[Path]:
    return [path for path in root.rglob("*.tmp")]


def test_killed_replans_leave_no_temporary_files_after_the_next_writer(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    paragraph = "Returns are accepted within thirty days of purchase with a receipt. " * 6
    for number in range(40):
        sections = "".join(f"## Part {n}\n\n{paragraph}\n\n" for n in range(8))
        (docs / f"doc{number:02d}.md").write_text(f"# Document {number}\n\n{sections}")
    ws = tmp_path / "ws"
    subprocess.run([*DRAC, "ingest", str(docs), "-w", str(ws)], check=True, capture_output=True)
    killed_mid_write = 0
    for attempt in range(8):
        replan = subprocess.Popen(
            [*DRAC, "replan", "--target-chars", str(300 + 50 * attempt), "-w", str(ws)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while replan.poll() is None and time.monotonic() < deadline:
            if _temporary_files(ws):  # caught mid-write: kill it there
                killed_mid_write += 1
                break
            time.sleep(0.002)
        replan.kill()  # SIGKILL; nothing when the replan already finished (a quiet machine)
        replan.wait()
    assert killed_mid_write > 0  # at least one kill landed while a file was half written
    done = subprocess.run(
        [*DRAC, "replan", "--target-chars", "900", "-w", str(ws)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert _temporary_files(ws) == []
    status = subprocess.run([*DRAC, "status", "-w", str(ws)], capture_output=True, text=True)
    assert status.returncode == 0 and "40 INDEXED" in status.stdout
