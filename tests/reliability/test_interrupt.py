"""Ctrl-C stops `drac ingest` at once, and LibreOffice with it."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

from hostile_office import docx
from polling import wait_for


def _gone(pid: int) -> bool:
    try:
        return "State:\tZ" in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True



def test_ctrl_c_abandons_the_batch_and_kills_libreoffice(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    soffice = tmp_path / "soffice"
    soffice.write_text(f"#!/bin/sh\nsleep 300 &\necho $! >> {pids}\nwait\n")
    soffice.chmod(soffice.stat().st_mode | stat.S_IEXEC)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    for name in ("first.docx", "second.docx"):
        (tmp_path / name).write_bytes(docx([f"The {name} document."]))
    env = {**os.environ, "DRAC_SOFFICE": str(soffice), "TMPDIR": str(scratch)}
    command = [sys.executable, "-c", "from drac.cli import main; main()", "ingest",
               "first.docx", "second.docx", "-w", "ws", "--jobs", "1"]  # fmt: skip
    drac = subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: pids.exists() and pids.read_text().strip() != "")
        drac.send_signal(signal.SIGINT)
        _, err = drac.communicate(timeout=20)
    finally:
        drac.kill()
    assert drac.returncode == 130
    assert "interrupted: 0 of 2 document(s) finished" in err
    [converter] = [int(pid) for pid in pids.read_text().split()]  # the second never started
    wait_for(lambda: _gone(converter))
    wait_for(lambda: list(scratch.iterdir()) == [])
    status = subprocess.run(
        [sys.executable, "-c", "from drac.cli import main; main()", "status", "-w", "ws"],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "no documents" in status.stdout
