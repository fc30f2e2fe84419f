"""The `drac` command line: one click group, one module per command family."""

from __future__ import annotations

import click

from drac import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="drac")
def cli() -> None:
    """drac: convert documents once, plan chunks by element IDs, rebuild text verbatim."""


def _register_commands() -> None:
    # Each command module adds its commands to `cli` on import.
    from drac.cli import ingest_commands, query_commands  # noqa: F401
    from drac.cli import render_command  # noqa: F401
    from drac.cli import eval_commands  # noqa: F401


def main() -> None:
    """Entry point of the `drac` console script."""
    _register_commands()
    cli()
