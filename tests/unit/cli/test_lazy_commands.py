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


def test_the_cli_knows_the_settings_file_name_without_importing_the_settings() -> None:
    from drac.cli import CONFIG_FILE_NAME
    from drac.settings import CONFIG_NAME

    assert CONFIG_FILE_NAME == CONFIG_NAME


@pytest.mark.subprocess
def test_render_starts_its_workers_before_importing_pydantic(tmp_path) -> None:
    probe = (
        "import json, sys\n"
        "from drac.documents.sandbox.containment import pool\n"
        "seen = []\n"
        "start = pool.Pool.start_ahead\n"
        "def ahead(self, limits, count):\n"
        "    seen.append(sorted(sys.modules))\n"
        "    return start(self, limits, count)\n"
        "pool.Pool.start_ahead = ahead\n"
        "from drac.cli import cli\n"
        "try:\n    cli(['render', sys.argv[1], '--out', sys.argv[2]])\n"
        "except SystemExit:\n    pass\n"
        "print(json.dumps(seen), file=sys.stderr)\n"
    )
    note = tmp_path / "note.md"
    note.write_text("# Note\n")
    done = subprocess.run([sys.executable, "-c", probe, str(note), str(tmp_path / "out")],
                          capture_output=True, text=True, check=True, cwd=tmp_path)
    [loaded] = json.loads(done.stderr.strip().splitlines()[-1])
    assert not {"pydantic", "drac.settings", "rich", "pypdfium2", "drac.local"} & set(loaded)
