"""`drac --help` lists every command without importing one; each listed help is the
command's own."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest

from drac.cli import COMMANDS, _register_commands, cli


def test_the_listed_help_is_each_commands_own_first_docstring_line() -> None:
    _register_commands()
    assert set(cli.commands) == set(COMMANDS)
    for name, (_module, listed) in COMMANDS.items():
        assert cli.commands[name].get_short_help_str(limit=1000) == listed, name


@pytest.mark.subprocess
def test_help_imports_no_command_module() -> None:
    probe = (
        "import json, sys\n"
        "from drac.cli import cli\n"
        "try:\n    cli(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    loaded = set(json.loads(done.stderr))
    assert "Commands:" in done.stdout and "ingest" in done.stdout
    heavy = {"drac.cli.ingest_commands", "drac.local", "drac.models", "pydantic", "rich"}
    assert not heavy & loaded


def test_an_unknown_command_is_a_usage_error() -> None:
    from click.testing import CliRunner

    result = CliRunner().invoke(cli, ["ingets"])
    assert result.exit_code == 2 and "No such command" in result.output
    assert isinstance(cli, click.Group)
