"""The `drac` command line: one click group, one module per command family.

The command modules are imported only when their command runs, so `drac --help` (and every
command) starts without loading the rest of drac.
"""

from __future__ import annotations

import importlib

import click

from drac import __version__

COMMANDS: dict[str, tuple[str, str]] = {
    "ingest": ("drac.cli.ingest_commands", "Ingest files or folders (PDF, DOCX, PPTX, HTML, "
               "spreadsheets, Markdown, text, scans)."),
    "replan": ("drac.cli.ingest_commands", "Plan stored documents again (all, or those named) "
               "without converting anything."),
    "remove": ("drac.cli.ingest_commands", "Forget ingested files: a document no remaining "
               "path holds leaves search."),
    "status": ("drac.cli.query_commands", "List the workspace's documents with status, pages, "
               "chunks and plan version."),
    "search": ("drac.cli.query_commands", "Search the active chunks by words (BM25), meaning "
               "(dense) or both (hybrid)."),
    "show": ("drac.cli.query_commands", "Show one document: its elements, sections and plan "
             "as an outline."),
    "export": ("drac.cli.query_commands", "Write every chunk of the active plan versions to "
               "stdout as JSON Lines."),
    "inspect": ("drac.cli.inspect_command", "Write a self-contained HTML report of documents "
                "and their chunks."),
    "render": ("drac.cli.render_command", "Render each FILE's pages to "
               "OUT/<file stem>/page-0001.png, ..."),
    "eval": ("drac.cli.eval_commands", "Score retrieval on QUERIES.csv: R@k, R@3, P@3, P@k, "
             "MRR, NDCG@k per chunk set."),
    "eval-conversion": ("drac.cli.fidelity_command", "Score conversions against source Markdown."),
    "cost": ("drac.cli.eval_commands", "Tokens and dollars per document and stage, the agentic "
             "equivalent, and projections."),
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

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the commands with their one-line help, importing none of them."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name][1]) for name in self.list_commands(ctx)])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="drac")
def cli() -> None:
    """drac: convert documents once, plan chunks by element IDs, rebuild text verbatim."""


def _register_commands() -> None:
    """Import every command module (for tests and tools that want all commands loaded)."""
    for module in dict.fromkeys(module for module, _ in COMMANDS.values()):
        importlib.import_module(module)


def main() -> None:
    """Entry point of the `drac` console script."""
    cli()
