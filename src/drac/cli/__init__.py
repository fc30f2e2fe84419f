"""The `drac` command line: one click group, one module per command family.

The command modules are imported only when their command runs, so `drac --help` (and every
command) starts without loading the rest of drac.
"""

from __future__ import annotations

import difflib
import errno
import importlib
import os
import sys
from pathlib import Path

import click

from drac import __version__
from drac.errors import DracError
from drac.terminal import printable

CONFIG_FILE_NAME = "drac.toml"
"""`settings.CONFIG_NAME`, known here without importing the settings (a command that needs
none starts sooner: `drac render` starts its workers first)."""

COMMANDS: dict[str, tuple[str, str]] = {
    "ingest": (
        "drac.cli.ingest_commands",
        "Ingest files or folders (PDF, DOCX, PPTX, HTML, spreadsheets, Markdown, text, scans).",
    ),
    "replan": (
        "drac.cli.ingest_commands",
        "Plan stored documents again (all, or those named) without converting anything.",
    ),
    "remove": (
        "drac.cli.ingest_commands",
        "Forget ingested files: a document no remaining path holds leaves search.",
    ),
    "status": (
        "drac.cli.query_commands",
        "List the workspace's documents with status, pages, chunks and plan version.",
    ),
    "search": (
        "drac.cli.query_commands",
        "Search the active chunks by words (BM25), meaning (dense) or both (hybrid).",
    ),
    "show": (
        "drac.cli.query_commands",
        "Show one document: its elements, sections and plan as an outline.",
    ),
    "export": (
        "drac.cli.query_commands",
        "Write every chunk of the active plan versions to "
        "stdout as JSON Lines, each with its document's metadata (and verification "
        "flags, where the conversion was checked).",
    ),
    "inspect": (
        "drac.cli.inspect_command",
        "Write a self-contained HTML report of documents and their chunks.",
    ),
    "render": (
        "drac.cli.render_command",
        "Render each FILE's pages to OUT/<file stem>/page-0001.png, ...",
    ),
    "eval": (
        "drac.cli.eval_commands",
        "Score retrieval on QUERIES.csv: R@k, R@3, P@3, P@k, MRR, NDCG@k per chunk set.",
    ),
    "eval-conversion": ("drac.cli.fidelity_command", "Score conversions against source Markdown."),
    "cost": (
        "drac.cli.eval_commands",
        "Tokens and dollars per document and stage, the agentic equivalent, and projections.",
    ),
    "quote": (
        "drac.cli.quote_output",
        "Quote the documents under S3 prefixes as the cloud would ingest them; converts nothing.",
    ),
    "mcp": (
        "drac.cli.mcp_command",
        "Serve a workspace over the Model Context Protocol (stdio) to an agent.",
    ),
    "cloud-audit": (
        "drac.cli.cloud_commands",
        "List the principals that may call a deployed stack's retrieval function or re-plan "
        "machine directly.",
    ),
    "cloud-smoke": (
        "drac.cli.cloud_commands",
        "Check a deployed stack end to end: upload, index, query, refuse, re-plan, delete, alarms.",
    ),
    "check": (
        "drac.cli.check_command",
        "Verify the workspace: database, every document's files, "
        "plans, chunks and the search index.",
    ),
}
"""Each command's module and its one-line help (a test checks they match the commands)."""


class LazyGroup(click.Group):
    """A group whose commands are imported when one runs, not when the help is listed."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, sorted."""
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Import the command's module (its decorators register it) and return it."""
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(COMMANDS[cmd_name][0])
        return self.commands.get(cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """The command named first; a mistyped name gets the closest commands suggested
        (click suggests among the commands imported so far, which here is none)."""
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError:
            name = args[0] if args else ""
            if not name or name in COMMANDS:
                raise
            # click's own NoSuchCommand takes possibilities only from 8.2 on: suggest here
            close = difflib.get_close_matches(name, list(COMMANDS), n=3)
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise click.UsageError(f"No such command {name!r}.{hint}", ctx=ctx) from None

    def invoke(self, ctx: click.Context) -> object:
        """Run the command. Every failure ends as one line saying what to do, never a
        traceback (DRAC_TRACEBACK=1 shows it for an unexpected one), and an error quoting a
        document or file name is printed without its control characters."""
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:
            exc.message = printable(exc.message)  # type: ignore[misc]  # Final in click's stubs
            raise
        except (click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:
            # The reader has what it wanted (`drac export | head`): end quietly with 0, and
            # keep Python from complaining again when it flushes stdout at exit.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise click.exceptions.Exit(0) from None
        except Exception as exc:
            from drac.settings import LocalSettings

            wanted = LocalSettings.from_env().traceback
            if wanted and not isinstance(exc, DracError | OSError):
                raise
            raise click.ClickException(printable(failure_line(exc))) from exc

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the commands with their one-line help, importing none of them."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name][1]) for name in self.list_commands(ctx)])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="drac")
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Settings file (default $DRAC_CONFIG, else ~/.config/drac/drac.toml when present; "
    "a drac.toml in the current folder is never read).",
)
def cli(config: Path | None) -> None:
    """drac: convert documents once, plan chunks by element IDs, rebuild text verbatim."""
    if config is not None:
        os.environ["DRAC_CONFIG"] = str(config)  # every Settings.load of this run reads it
        return
    if not Path(CONFIG_FILE_NAME).is_file():  # the settings are loaded by the commands using them
        return
    from drac.settings import CONFIG_NAME, named_config_file

    if not named_config_file():
        click.echo(
            printable(
                f"drac: not reading ./{CONFIG_NAME} (a settings file in the current folder may "
                f"have come with the documents); name it to use it: --config {CONFIG_NAME} "
                "or DRAC_CONFIG"
            ),
            err=True,
        )


def failure_line(error: Exception) -> str:
    """One line for an error a command did not handle itself."""
    if isinstance(error, DracError):
        return str(error)
    if isinstance(error, OSError):
        where = f" ({error.filename})" if error.filename else ""
        if error.errno == errno.ENOSPC:
            return f"no space left on the device{where}; free some space and run it again"
        return f"{error.strerror or error}{where}"
    return (
        f"unexpected error ({type(error).__name__}): {error}; set DRAC_TRACEBACK=1 to see "
        "where, and please report it"
    )


def _register_commands() -> None:
    """Import every command module (for tests and tools that want all commands loaded)."""
    for module in dict.fromkeys(module for module, _ in COMMANDS.values()):
        importlib.import_module(module)


def main() -> None:
    """Entry point of the `drac` console script."""
    cli()
