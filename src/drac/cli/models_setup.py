"""Build the model clients a command asks for (offline needs none)."""

from __future__ import annotations

import click

from drac.errors import DracError
from drac.models import Strategy
from drac.ports import TextModel, VisionModel


def build_models(
    backend: str | None, strategy: Strategy
) -> tuple[VisionModel | None, TextModel | None]:
    """The vision model for conversion and the text model for LLM planning, per settings
    (`drac.api.build_models`); a settings file that sends documents to the network is named
    on stderr.

    Exits with a clear message when the llm planner is asked for without a model backend.
    """
    from drac.api.models_setup import build_models as build

    def notice(line: str) -> None:
        from drac.cli.options import stderr
        from drac.cli.terminal import printable

        stderr.print(printable(line), markup=False, highlight=False)

    try:
        vision, text_model = build(backend, strategy, notice=notice)
    except DracError as exc:
        raise click.UsageError(str(exc)) from exc
    return vision, text_model
