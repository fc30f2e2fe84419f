"""Options and helpers shared by the CLI commands."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import click
from pydantic import BaseModel
from rich.console import Console

from drac.errors import DracError
from drac.local.trust import DEFAULT_WORKSPACE, choose_workspace
from drac.local.workspace import Workspace
from drac.models import Strategy
from drac.strategies import PRESETS, resolve_strategy
from drac.terminal import json_text, printable

F = TypeVar("F", bound=Callable[..., Any])

# Piped output has no terminal width; 120 columns keeps tables readable in logs.
_PIPED_WIDTH = None if sys.stdout.isatty() else 120
stdout = Console(soft_wrap=True, width=_PIPED_WIDTH)
stderr = Console(stderr=True, soft_wrap=True, width=None if sys.stderr.isatty() else 120)


def workspace_option(function: F) -> F:
    """Add `--workspace DIR` (default $DRAC_WORKSPACE, else the `.drac` of this folder or the
    nearest parent folder that has one when drac made it for this user, else a new ./.drac)."""
    return click.option(
        "--workspace",
        "-w",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        envvar="DRAC_WORKSPACE",
        callback=_found_workspace,
        show_default=f"{DEFAULT_WORKSPACE} here or in the nearest parent folder with one",
        help="Workspace folder holding drac's state.",
    )(function)


def _found_workspace(_ctx: click.Context, _param: click.Parameter, value: Path | None) -> Path:
    """The workspace the command uses (drac.local.trust's rule); one line on stderr when it
    was found above this folder, a refusal naming how to name it when it is not the user's."""
    try:
        choice = choose_workspace(value, Path.cwd())
    except DracError as exc:
        raise click.ClickException(printable(exc)) from exc
    if choice.announcement:
        stderr.print(printable(choice.announcement), markup=False, highlight=False)
    return choice.root


def json_option(function: F) -> F:
    """Add `--json` for machine-readable output."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")(
        function
    )


def open_workspace(path: Path, *, create: bool = False) -> Workspace:
    """Open the workspace at path, or exit with a clear message."""
    try:
        return Workspace(path, create=create)
    except DracError as exc:
        raise click.ClickException(printable(exc)) from exc


def print_json(value: Any) -> None:
    """Print a JSON document (pydantic models included) to stdout."""
    if isinstance(value, BaseModel):
        text = value.model_dump_json(indent=2)
    else:
        text = json.dumps(_plain(value), indent=2, ensure_ascii=False)
    sys.stdout.write(json_text(text) + "\n")


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


_STRATEGY_OVERRIDES = (
    "planner",
    "target_chars",
    "hard_limit_chars",
    "min_chars",
    "section_budget",
    "table_rows",
    "hold_back_flags",
)


def strategy_options(function: F) -> F:
    """Add the strategy options (a preset name plus overrides); the command receives the
    resolved `Strategy` as its `strategy` argument, None when no option was given (the
    workspace's remembered strategy applies then, see `chosen_strategy`)."""

    @functools.wraps(function)
    def resolved(*args: Any, **kwargs: Any) -> Any:
        overrides = {name: kwargs.pop(name) for name in _STRATEGY_OVERRIDES}
        preset = kwargs.pop("strategy")
        if preset is None and all(value is None for value in overrides.values()):
            kwargs["strategy"] = None
            return function(*args, **kwargs)
        try:
            kwargs["strategy"] = resolve_strategy(preset, **overrides)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="strategy options") from exc
        return function(*args, **kwargs)

    options = [
        click.option(
            "--strategy",
            "-s",
            default=None,
            help=f"Strategy preset: {', '.join(PRESETS)}.",
        ),
        click.option(
            "--planner", type=click.Choice(["rules", "llm"]), default=None, help="Planner override."
        ),
        click.option(
            "--target-chars", type=int, default=None, help="Target chunk size in characters."
        ),
        click.option(
            "--hard-limit",
            "hard_limit_chars",
            type=int,
            default=None,
            help="Chunk size never exceeded.",
        ),
        click.option(
            "--min-chars",
            type=int,
            default=None,
            help="Size a chunk must reach before a heading may close it.",
        ),
        click.option(
            "--section-budget", type=int, default=None, help="Content elements per planner call."
        ),
        click.option(
            "--table-rows",
            type=click.Choice(["pipe", "sentences"]),
            default=None,
            help="Table rows (spreadsheets and the tables of converted documents) as "
            "pipe-table rows (default) or 'Column: value; ...' sentences; written at ingest "
            "(ingesting again with the other converts again; a re-plan keeps the stored rows).",
        ),
        click.option(
            "--hold-back-flags",
            type=click.IntRange(0),
            default=None,
            help="Do not index a vision model's page with more verification flags than this "
            "(checked against the page's text layer; the document becomes PARTIAL).",
        ),
    ]
    decorated: Any = resolved
    for option in reversed(options):
        decorated = option(decorated)
    return cast(F, decorated)


def chosen_strategy(asked: Strategy | None, workspace: Path) -> Strategy:
    """The strategy asked for, else the one the workspace remembers, else the default."""
    if asked is not None:
        return asked
    if not (workspace / "drac.sqlite").exists():
        return Strategy()
    ws = open_workspace(workspace)
    try:
        return ws.saved_strategy() or Strategy()
    finally:
        ws.close()


def model_option(function: F) -> F:
    """Add `--model offline|bedrock|openai` (default from DRAC_MODEL / drac.toml, else offline)."""
    return click.option(
        "--model",
        type=click.Choice(["offline", "bedrock", "openai"]),
        default=None,
        help="Model backend for conversion and LLM planning (default: offline).",
    )(function)
