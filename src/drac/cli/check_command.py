"""`drac check`: verify a workspace and list what is wrong, each with its fix."""

from __future__ import annotations

from pathlib import Path

import click

from drac.cli import cli
from drac.cli.options import json_option, print_json, stderr, stdout, workspace_option
from drac.local.check import check_workspace, repair_workspace
from drac.terminal import markup


@cli.command("check")
@workspace_option
@click.option(
    "--repair",
    is_flag=True,
    help="Write plan and chunk files again from the database and remove what interrupted "
    "or failed runs left, then check.",
)
@json_option
def check_command(workspace: Path, repair: bool, as_json: bool) -> None:
    """Verify the workspace: database, every document's files, plans, chunks and the search
    index. Lists each problem with what to do; exits 1 when there is any. Changes nothing
    unless --repair is given."""
    if repair and (workspace / "drac.sqlite").exists():
        for action in repair_workspace(workspace):
            stderr.print(f"[green]repaired[/] {markup(action)}")
    report = check_workspace(workspace)
    if as_json:
        print_json(report)
    elif not report.problems:
        stdout.print(
            f"no problems found: {report.documents} document(s), {report.chunks} active "
            f"chunk(s) in {markup(report.workspace)}"
        )
    else:
        for problem in report.problems:
            stdout.print(f"[red]problem[/] {markup(problem.file)}: {markup(problem.problem)}")
            stdout.print(f"   [bold]fix[/]: {markup(problem.fix)}", highlight=False)
        stdout.print(f"{len(report.problems)} problem(s) in {markup(report.workspace)}")
    if report.problems:
        raise SystemExit(1)
