"""`drac mcp`: serve the workspace to an agent over the Model Context Protocol."""

from __future__ import annotations

from pathlib import Path

import click

from drac.cli import cli
from drac.cli.options import workspace_option


@cli.command()
@workspace_option
@click.option(
    "--allow-ingest",
    "allow_ingest",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Enable the ingest tool for paths inside this folder (off by default).",
)
def mcp(workspace: Path, allow_ingest: Path | None) -> None:
    """Serve a workspace over the Model Context Protocol (stdio) to an agent."""
    try:
        from drac.integrations.mcp_server import serve
    except ImportError as exc:
        raise click.ClickException(
            f"drac mcp needs the MCP SDK: pip install 'drac[mcp]' ({exc})"
        ) from exc
    serve(workspace, allow_ingest)
