"""Folder ingest of an untrusted tree (an extracted archive): symbolic links are not followed,
FIFOs, sockets and devices are skipped, and every skipped entry is reported with its reason.
A FIFO or device named on the command line fails at once instead of hanging."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from drac.local.inputs import collect_inputs, walk_inputs
from drac.local.pipeline import IngestSettings, ingest_file
from drac.local.workspace import Workspace

CANARY = "CANARY-7f3a9c secret line that must never be indexed"
DRAC = [sys.executable, "-c", "from drac.cli import main; main()"]


def drac(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*DRAC, *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "canary.txt").write_text(CANARY + "\n")
    (outside / "secret.md").write_text(f"# Secret\n\n{CANARY}\n")
    folder = tmp_path / "archive"
    (folder / "sub").mkdir(parents=True)
    (folder / "good.md").write_text("# Good\n\nA plain document about returns.\n")
    (folder / "passwd.txt").symlink_to(outside / "canary.txt")
    (folder / "status.txt").symlink_to("/proc/self/status")
    (folder / "inside.md").symlink_to("good.md")
    (folder / "up.md").symlink_to("../outside/secret.md")
    (folder / "linked").symlink_to(outside, target_is_directory=True)
    (folder / "sub" / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    os.mkfifo(folder / "pipe.md")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(folder / "sock.md"))
    listener.close()
    with contextlib.suppress(PermissionError):  # not root: no device node in the tree
        os.mknod(folder / "null.md", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    return folder


def test_a_folder_walk_follows_no_link_and_reports_every_skipped_entry(tree: Path) -> None:
    result = drac("ingest", str(tree), "-w", str(tree.parent / "ws"), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    by_name = {Path(o["path"]).name: o for o in summary["outcomes"]}
    assert by_name["good.md"]["status"] == "INDEXED"
    reasons = {Path(s["path"]).name: s["reason"] for s in summary["skipped_entries"]}
    for link in ("passwd.txt", "status.txt", "inside.md", "up.md", "linked", "dangling.md"):
        assert "symbolic link" in reasons[link], link
    assert "FIFO" in reasons["pipe.md"] and "socket" in reasons["sock.md"]
    if (tree / "null.md").exists():
        assert "device" in reasons["null.md"]
    assert summary["skipped"] == len(reasons)
    exported = drac("export", "-w", str(tree.parent / "ws")).stdout
    assert CANARY not in exported and "VmRSS" not in exported and "returns" in exported

    human = drac("ingest", str(tree), "-w", str(tree.parent / "ws2"))
    assert human.returncode == 0
    assert "skipped" in human.stderr and "passwd.txt: symbolic link" in human.stderr
    assert "SKIPPED" in human.stderr  # the summary table counts them


def test_walk_inputs_lists_the_skipped_entries_with_their_reasons(tree: Path) -> None:
    (tree / ".git").mkdir()
    (tree / "sub" / "LICENSE").write_text("not a document")
    files, failed, skipped = walk_inputs([tree])
    assert files == [tree / "good.md"] and failed == []
    reasons = {Path(entry.path).name: entry.reason for entry in skipped}
    assert "symbolic link" in reasons["linked"] and "hidden" in reasons[".git"]
    assert reasons["LICENSE"] == "not a document file ending (none)"
    assert collect_inputs([tree]) == ([tree / "good.md"], [])


def test_a_fifo_or_device_named_on_the_command_line_fails_without_hanging(tree: Path) -> None:
    result = drac("ingest", str(tree / "pipe.md"), "/dev/zero", "-w", str(tree.parent / "ws"))
    assert result.returncode == 1
    assert "pipe.md: a named pipe (FIFO), not a regular file" in result.stderr
    assert "/dev/zero: a character device, not a regular file" in result.stderr


def test_a_file_swapped_for_a_link_after_the_walk_is_not_read(tree: Path) -> None:
    workspace = Workspace(tree.parent / "ws", create=True)
    try:
        outcome = ingest_file(
            tree / "passwd.txt", workspace, IngestSettings(), follow_symlinks=False
        )
        assert outcome.status == "FAILED" and "symbolic link" in (outcome.error or "")
        assert CANARY not in json.dumps([c.text for c in workspace.active_chunks()])
    finally:
        workspace.close()


def test_a_link_named_on_the_command_line_is_read_as_the_user_asked(tree: Path) -> None:
    workspace = Workspace(tree.parent / "ws", create=True)
    try:
        outcome = ingest_file(tree / "inside.md", workspace, IngestSettings())
        assert outcome.status == "INDEXED"
    finally:
        workspace.close()
