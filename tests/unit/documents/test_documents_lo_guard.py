"""LibreOffice runs capped in memory, dies with drac, and leaves no folder behind.

A fake `soffice` (a shell script) stands in for LibreOffice: it reports its limits, writes a
PDF and a profile, or hangs with a grandchild, as each test needs.
"""

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from polling import wait_for
from reliability.hostile_links import package

from drac.documents.intake import normalise
from drac.documents.intake.normalise import libreoffice_to_pdf
from drac.errors import DocumentError

pytestmark = pytest.mark.subprocess

# a package LibreOffice stand-ins are given: the reference sanitizer refuses anything not a ZIP
PACKAGE = package({"[Content_Types].xml": "<Types/>"})

@pytest.fixture(autouse=True)
def _fakes_may_write_their_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fakes below write pid files to tmp_path: the guard's Landlock policy lets the real
    LibreOffice write only its work folder."""
    monkeypatch.setattr(normalise, "LIBREOFFICE_WRITABLE", [str(tmp_path)])


_CONVERTS = """
for a; do
  case "$prev" in --outdir) out="$a";; esac
  case "$a" in -env:UserInstallation=file://*) profile="${a#-env:UserInstallation=file://}";; esac
  prev="$a"
done
mkdir -p "$out" "$profile/user"
echo settings > "$profile/user/registrymodifications.xcu"
printf '%%PDF-1.4 fake' > "$out/document.pdf"
"""


def _fake_soffice(tmp_path: Path, body: str) -> str:
    """A fake LibreOffice in tmp_path, which it may also write (the guard's Landlock policy
    lets the real one write only its work folder)."""
    script = tmp_path / "soffice"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """Private temporary and cache folders, so folders can be counted without other runs."""
    scratch, cache = tmp_path / "tmp", tmp_path / "cache"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setattr("tempfile.tempdir", None)  # re-read TMPDIR
    return scratch, cache


def test_libreoffice_runs_under_the_memory_limit(tmp_path, monkeypatch):
    # the fake reports its limit inside its "PDF": it may write nothing outside its work folder
    body = _CONVERTS.replace("'%%PDF-1.4 fake'", "'%%PDF-1.4 %s' \"$(ulimit -v)\"")
    monkeypatch.setenv("DRAC_SOFFICE", _fake_soffice(tmp_path, body))
    pdf = libreoffice_to_pdf(PACKAGE, ".docx", timeout_s=10, memory_bytes=768 * 1024 * 1024)
    assert pdf.split()[-1] == str(768 * 1024).encode()  # ulimit -v counts KiB


def test_a_crash_names_the_signal_and_the_memory_limit(tmp_path, monkeypatch):
    soffice = _fake_soffice(tmp_path, "echo 'std::bad_alloc' >&2\nkill -ABRT $$\n")
    monkeypatch.setenv("DRAC_SOFFICE", soffice)
    with pytest.raises(DocumentError, match=r"crashed \(SIGABRT\).*2 GiB memory limit.*bad_alloc"):
        libreoffice_to_pdf(PACKAGE, ".docx", timeout_s=10, memory_bytes=2 * 1024**3)


def test_no_folder_is_left_behind_and_one_profile_template_is_reused(tmp_path, monkeypatch):
    scratch, cache = _isolated(tmp_path, monkeypatch)
    monkeypatch.setenv("DRAC_SOFFICE", _fake_soffice(tmp_path, _CONVERTS))
    for _ in range(3):
        assert libreoffice_to_pdf(PACKAGE, ".docx", timeout_s=10).startswith(b"%PDF")
    assert list(scratch.iterdir()) == []
    assert [path.name for path in (cache / "drac").iterdir()] == ["libreoffice-profile"]
    template = cache / "drac" / "libreoffice-profile" / "user" / "registrymodifications.xcu"
    assert template.read_text() == "settings\n"


_CONVERT_AND_HANG = """
import os, sys
sys.path[:0] = {paths!r}
from drac.documents.intake import normalise
normalise.LIBREOFFICE_WRITABLE[:] = [{writable!r}]
normalise.libreoffice_to_pdf({data!r}, ".docx", timeout_s=120)
"""


def test_killing_drac_kills_libreoffice_and_removes_its_folder(tmp_path, monkeypatch):
    scratch, _ = _isolated(tmp_path, monkeypatch)
    pids = tmp_path / "pids"
    # LibreOffice's real shape: the started program forks the converter, which outlives it
    body = f"sleep 300 &\necho $! >> {pids}\necho $$ >> {pids}\nwait\n"
    monkeypatch.setenv("DRAC_SOFFICE", _fake_soffice(tmp_path, body))
    code = textwrap.dedent(
        _CONVERT_AND_HANG.format(paths=sys.path, writable=str(tmp_path), data=PACKAGE)
    )
    drac = subprocess.Popen([sys.executable, "-c", code])
    try:
        wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 2, timeout_s=10.0)
        assert len(list(scratch.iterdir())) == 1  # the conversion's work folder
        drac.send_signal(signal.SIGKILL)
        drac.wait(10)
        children = [int(pid) for pid in pids.read_text().split()]
        wait_for(lambda: all(_gone(pid) for pid in children), timeout_s=10.0)
        wait_for(lambda: list(scratch.iterdir()) == [], timeout_s=10.0)
    finally:
        drac.kill()


def _gone(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "State:\tZ" in status


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_guard_itself_exits_when_its_command_exits(tmp_path, monkeypatch):
    monkeypatch.setenv("DRAC_SOFFICE", _fake_soffice(tmp_path, _CONVERTS))
    before = {p for p in os.listdir("/proc") if p.isdigit()}
    libreoffice_to_pdf(PACKAGE, ".docx", timeout_s=10)
    after = {p for p in os.listdir("/proc") if p.isdigit()} - before
    # this test's guard only: its command line names the fake soffice in tmp_path (other
    # processes on the machine may be converting at the same time)
    mine = [pid for pid in after if "lo_guard" in (line := _cmdline(pid)) and str(tmp_path) in line]
    assert not mine


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return ""


def test_work_folders_of_dead_drac_processes_are_removed_by_the_next_conversion(
    tmp_path, monkeypatch
):
    """A kill between the work folder's creation and the guard's start (or after the guard
    ended) leaves a folder no guard removes: the next conversion does."""
    scratch, _ = _isolated(tmp_path, monkeypatch)
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = scratch / "drac-lo-stale"
    stale.mkdir()
    (stale / ".drac-owner").write_text(f"{dead.pid} 1")
    (stale / "document.docx").write_bytes(b"source copy")
    unmarked_recent = scratch / "drac-lo-starting"  # another process's, being prepared
    unmarked_recent.mkdir()
    live = scratch / "drac-lo-live"
    live.mkdir()
    (live / ".drac-owner").write_text(normalise._process_identity(os.getppid()) or "")
    monkeypatch.setenv("DRAC_SOFFICE", _fake_soffice(tmp_path, _CONVERTS))
    libreoffice_to_pdf(PACKAGE, ".docx", timeout_s=10)
    assert sorted(path.name for path in scratch.iterdir()) == ["drac-lo-live", "drac-lo-starting"]


_PROBE = r"""
out=""
for a; do
  case "$prev" in --outdir) out="$a";; esac
  prev="$a"
done
mkdir -p "$out"
/usr/bin/python3 - "$out/document.pdf" <<'PY'
import socket, sys
said = []
try:
    socket.create_connection(("127.0.0.1", PORT), timeout=3).close()
    said.append("connected")
except OSError as exc:
    said.append(f"refused {exc.errno}")
try:
    said.append(open("CANARY").read())
except OSError as exc:
    said.append(f"denied {exc.errno}")
open(sys.argv[1], "w").write("%PDF-1.4 " + " | ".join(said))
PY
"""


@pytest.mark.skipif(not Path("/usr/bin/python3").exists(), reason="the probe needs python3")
def test_libreoffice_under_the_guard_reaches_no_listener_and_no_canary(tmp_path, monkeypatch):
    """Whatever LibreOffice does (here a probe in its place), it connects nowhere, not even to
    127.0.0.1, and reads no file outside its work folder and system paths."""
    from drac.documents.sandbox.containment.policy import landlock_abi

    monkeypatch.setattr(normalise, "LIBREOFFICE_WRITABLE", [])
    secret = tmp_path.parent / f"{tmp_path.name}-secret"  # not beneath the fake's own folder
    secret.mkdir()
    canary = secret / "canary.txt"
    canary.write_text("CANARY-5e1d")
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.5)
    port = server.getsockname()[1]
    probe = _PROBE.replace("PORT", str(port)).replace("CANARY", str(canary))
    monkeypatch.setenv("DRAC_SOFFICE", _fake_soffice(tmp_path, probe))
    try:
        said = libreoffice_to_pdf(PACKAGE, ".docx", timeout_s=30).decode()
        with pytest.raises(TimeoutError):
            server.accept()  # nothing ever connected
    finally:
        server.close()
    assert "connected" not in said and "refused" in said
    assert "CANARY" not in said
    if landlock_abi() == 0:
        pytest.skip(f"the canary was readable: no Landlock here ({said})")
    assert "denied" in said


_GUARD_FROM_A_THREAD = """
import os, subprocess, sys, threading, time
guard, workdir, soffice, started, policy = sys.argv[1:6]

def convert():  # the thread that started the guard ends (once it runs) before drac does
    subprocess.Popen([sys.executable, "-I", "-S", guard, str(os.getpid()), str(2**31), workdir,
                      policy, "--", soffice], cwd=workdir, start_new_session=True)
    while not os.path.exists(started):
        time.sleep(0.05)

thread = threading.Thread(target=convert)
thread.start()
thread.join()
time.sleep(2)
os._exit(130)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG")
def test_the_folder_is_removed_when_the_converting_thread_dies_before_drac(tmp_path):
    """Before: Ctrl-C (os._exit from the main thread) sometimes left the work folder. When the
    converting thread is torn down first, Linux sends the death signal while the guard's
    parent is still drac's pid (re-parented to another of its threads), so the guard took it
    for drac's own SIGTERM (a timeout, after which drac removes the folder) and kept it."""
    workdir = tmp_path / "drac-lo-work"
    workdir.mkdir()
    (workdir / "document.docx").write_bytes(b"source copy")
    started = tmp_path / "started"
    soffice = _fake_soffice(tmp_path, f"touch {started}\nsleep 300 &\nwait\n")
    drac = subprocess.run(
        [sys.executable, "-c", _GUARD_FROM_A_THREAD, str(normalise._GUARD), str(workdir),
         soffice, str(started),
         json.dumps({"readable": normalise.LIBREOFFICE_READABLE, "writable": [str(tmp_path)]})],
        timeout=60,
    )  # fmt: skip
    assert drac.returncode == 130
    wait_for(lambda: not workdir.exists(), timeout_s=10.0)


AWS_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "ASIACANARYKEY",
    "AWS_SECRET_ACCESS_KEY": "canary-secret",
    "AWS_SESSION_TOKEN": "canary-token",
    "AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://127.0.0.1:1/creds",
}


def test_libreoffice_gets_no_aws_credentials(tmp_path, monkeypatch):
    # In Lambda the function role's credentials are environment variables: a LibreOffice
    # exploit must not find them in its own environment.
    for name, value in AWS_CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    body = _CONVERTS.replace("'%%PDF-1.4 fake'", "'%%PDF-1.4 %s' \"$(env | tr '\\n' ' ')\"")
    monkeypatch.setenv("DRAC_SOFFICE", _fake_soffice(tmp_path, body))
    pdf = libreoffice_to_pdf(PACKAGE, ".docx", timeout_s=10, memory_bytes=768 * 1024 * 1024)
    assert b"HOME=" in pdf  # the environment was written
    for name, value in AWS_CREDENTIALS.items():
        assert name.encode() not in pdf and value.encode() not in pdf, name
