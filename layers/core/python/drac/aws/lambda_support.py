"""Powertools logger, tracer and metrics shared by the handlers, plus small helpers."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit

from drac.models import LedgerEntry

logger = Logger(service="drac")
tracer = Tracer(service="drac")
metrics = Metrics(namespace="Drac", service="drac")

__all__ = ["MetricUnit", "correlate", "logger", "metrics", "record_tokens", "tracer"]


def correlate(document_id: str | None, **keys: Any) -> None:
    """Use the document id as the correlation id of every log line of this invocation."""
    if document_id:
        logger.set_correlation_id(document_id)
        logger.append_keys(document_id=document_id, **keys)


def record_tokens(entries: list[LedgerEntry], stage: str) -> None:
    """Emit tokens in/out of this invocation's model calls as metrics."""
    if not entries:
        return
    metrics.add_metric(name="InputTokens", unit=MetricUnit.Count,
                       value=sum(e.input_tokens for e in entries))
    metrics.add_metric(name="OutputTokens", unit=MetricUnit.Count,
                       value=sum(e.output_tokens for e in entries))
    metrics.add_metadata(key="stage", value=stage)
