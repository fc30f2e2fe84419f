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
    from drac.cli import (  # noqa: F401
        eval_commands,
        ingest_commands,
        inspect_command,
        query_commands,
        render_command,
    )


def main() -> None:
    """Entry point of the `drac` console script."""
    _register_commands()
    cli()
