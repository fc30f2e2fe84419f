"""Limits apply before memory is spent: sizes from `stat`, LibreOffice's folders cleaned up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hostile_office import docx

from drac.local.pipeline import IngestSettings, ingest_file
from drac.local.workspace import Workspace

_GIB = 1024**3


def test_a_file_over_the_limit_is_refused_without_being_opened(tmp_path, monkeypatch):
    huge = tmp_path / "huge.pdf"
    with huge.open("wb") as file:
        file.truncate(2 * _GIB)  # sparse: no disk or memory spent

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the file was opened before its size was checked")

    workspace = Workspace(tmp_path / "ws", create=True)
    monkeypatch.setattr(Path, "open", refuse)
    monkeypatch.setattr(Path, "read_bytes", refuse)
    outcome = ingest_file(huge, workspace, IngestSettings())
    assert outcome.status == "FAILED"
    assert outcome.error == "file is 2048.0 MiB, more than the 500 MiB limit"


# VmHWM, not ru_maxrss: a child's ru_maxrss starts at its parent's size at fork, and pytest's
# process may be large; VmHWM belongs to the memory map that exec made.
_INGEST_AND_MEASURE = """
import json, sys
from pathlib import Path
from drac.local.pipeline import IngestSettings, ingest_file
from drac.local.workspace import Workspace
workspace = Workspace(Path(sys.argv[2]), create=True)
outcome = ingest_file(Path(sys.argv[1]), workspace, IngestSettings())
peak_kib = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0])
print(json.dumps({"status": outcome.status, "error": outcome.error, "peak_mib": peak_kib / 1024}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_2_gb_file_costs_no_memory(tmp_path):
    huge = tmp_path / "huge.pdf"
    with huge.open("wb") as file:
        file.truncate(2 * _GIB)
    code = textwrap.dedent(_INGEST_AND_MEASURE)
    run = subprocess.run(
        [sys.executable, "-c", code, str(huge), str(tmp_path / "ws")],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    result = json.loads(run.stdout)
    assert result["status"] == "FAILED" and "500 MiB limit" in result["error"]
    assert result["peak_mib"] < 300  # the interpreter and drac's imports: about 100 MiB


_CONVERT = """
import sys
from drac.documents.intake.normalise import libreoffice_to_pdf
assert libreoffice_to_pdf(open(sys.argv[1], "rb").read(), ".docx").startswith(b"%PDF")
"""


@pytest.mark.libreoffice
def test_libreoffice_runs_leave_one_cached_profile_and_no_temporary_folder(tmp_path):
    scratch, cache = tmp_path / "tmp", tmp_path / "cache"
    scratch.mkdir()
    source = tmp_path / "note.docx"
    source.write_bytes(docx(["Profile test."]))
    env = {**os.environ, "TMPDIR": str(scratch), "XDG_CACHE_HOME": str(cache)}
    for _ in range(2):  # two processes: the old code left one drac-lo-profile-* per process
        subprocess.run(
            [sys.executable, "-c", textwrap.dedent(_CONVERT), str(source)],
            env=env, check=True, timeout=180,
        )  # fmt: skip
    assert sorted(path.name for path in scratch.iterdir()) == []
    assert sorted(path.name for path in (cache / "drac").iterdir()) == ["libreoffice-profile"]
