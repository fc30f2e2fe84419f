"""A real full disk (a 1 MiB tmpfs, mounted when the tests run as root): `status` and
`ingest` each give one clear line, and the document being ingested leaves nothing behind."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

DRAC = [sys.executable, "-c", "from drac.cli import main; main()"]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def drac(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*DRAC, *args], capture_output=True, text=True, timeout=120)


def _fill(disk: Path, name: str = "filler") -> None:
    with (disk / name).open("wb") as filler:
        try:
            while True:
                filler.write(b"\0" * 65536)
                filler.flush()
        except OSError:
            pass


def test_a_full_disk_gives_one_line_and_leaves_nothing_behind(
    small_disk: Path, tmp_path: Path
) -> None:
    (tmp_path / "small.md").write_text("# Small\n\nA short note about returns.\n")
    big = tmp_path / "big.md"
    big.write_text("# Big\n\n" + "Words about returns and refunds. " * 20000)
    ws = small_disk / "ws"
    assert drac("ingest", str(tmp_path / "small.md"), "-w", str(ws)).returncode == 0
    before = sorted(p.name for p in (ws / "documents").iterdir())
    _fill(small_disk)

    for command in (["status"], ["ingest", str(big)]):
        result = drac(*command, "-w", str(ws))
        assert result.returncode == 1, result.stderr
        assert "Traceback" not in result.stderr
        lines = [line for line in result.stderr.splitlines() if "no space left" in line]
        assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
        assert "free some space" in lines[0]
    assert sorted(p.name for p in (ws / "documents").iterdir()) == before

    (small_disk / "filler").unlink()  # room to open the database, not for the document
    (small_disk / "room").write_bytes(b"\0" * 256 * 1024)
    _fill(small_disk)
    (small_disk / "room").unlink()
    result = drac("ingest", str(big), "-w", str(ws))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if "no space left" in line]
    assert len(lines) == 1 and "free some space" in lines[0], result.stderr
    assert sorted(p.name for p in (ws / "documents").iterdir()) == before
    assert list((ws / "tmp").iterdir()) == []

    (small_disk / "filler").unlink()
    status = drac("status", "-w", str(ws))
    assert status.returncode == 0 and "1 INDEXED" in status.stdout
    assert drac("check", "-w", str(ws)).returncode == 0
