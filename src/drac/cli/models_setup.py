"""Build the model clients a command asks for (offline needs none), and the conversion
options the settings give."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from drac.errors import DracError
from drac.models import Strategy
from drac.ports import TextModel, VisionModel

if TYPE_CHECKING:
    from drac.documents.options import ConversionOptions
    from drac.documents.vision.escalate import Escalation


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
        from drac.terminal import printable

        stderr.print(printable(line), markup=False, highlight=False)

    try:
        vision, text_model = build(backend, strategy, notice=notice)
    except DracError as exc:
        raise click.UsageError(str(exc)) from exc
    return vision, text_model


def build_escalation(spec: str | None) -> Escalation | None:
    """The escalation model `--escalate-to` or the settings name (`drac.api`); exits with a
    clear message when it cannot be built."""
    from drac.api.models_setup import build_escalation as build

    try:
        return build(spec)
    except DracError as exc:
        raise click.UsageError(str(exc)) from exc


def conversion_options() -> ConversionOptions:
    """The conversion options the settings ask for (a document's CPU budget,
    DRAC_DOCUMENT_CPU_S and DRAC_DOCUMENT_CPU_S_PER_MIB); exits with a clear message when
    a setting is invalid."""
    from drac.documents.options import ConversionOptions
    from drac.settings import Settings

    try:
        settings = Settings.load()
    except DracError as exc:
        raise click.UsageError(str(exc)) from exc
    return ConversionOptions(
        cpu_budget_s=settings.conversion.document_cpu_s,
        cpu_budget_s_per_mib=settings.conversion.document_cpu_s_per_mib,
    )
