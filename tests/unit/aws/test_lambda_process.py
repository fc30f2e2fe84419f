"""In Lambda the function's process hides its environment (the role's credentials) from the
parser processes it starts. They run as the same user, so they could otherwise read it from
/proc/<parent>/environ although their own environment holds no credential; the kernel lets a
process read another's environ or memory only when it may ptrace it, which a non-dumpable
process refuses to a process without CAP_SYS_PTRACE (proc(5), "/proc/pid/environ"; ptrace(2),
"Ptrace access mode checking"). Lambda runs functions without that capability; the test
process may be root, which has it, so the flag itself is what is checked."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux prctl"),
    pytest.mark.subprocess,
]

PROBE = (
    "import ctypes, drac.aws.lambda_support\n"
    "print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))  # PR_GET_DUMPABLE\n"
)


def _dumpable(in_lambda: bool) -> str:
    env = {k: v for k, v in os.environ.items() if k != "AWS_LAMBDA_FUNCTION_NAME"}
    if in_lambda:
        env["AWS_LAMBDA_FUNCTION_NAME"] = "Drac-Render"
    answer = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    return answer.stdout.strip()


def test_the_lambda_process_is_not_dumpable_by_its_children() -> None:
    assert _dumpable(in_lambda=True) == "0"
    assert _dumpable(in_lambda=False) == "1"  # the local runtime keeps the default
