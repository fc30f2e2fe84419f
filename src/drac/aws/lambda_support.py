"""Powertools logger, tracer and metrics shared by the handlers, plus small helpers."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit

from drac.aws.dynamo import DynamoLedger
from drac.documents.sandbox.containment.policy import hide_from_children
from drac.models import LedgerEntry

if "AWS_LAMBDA_FUNCTION_NAME" in os.environ:  # in Lambda: its parsers cannot read ours
    hide_from_children()

logger = Logger(service="drac")
tracer = Tracer(service="drac")
metrics = Metrics(namespace="Drac", service="drac")

__all__ = [
    "MetricUnit",
    "correlate",
    "logger",
    "metered_tokens",
    "metrics",
    "record_tokens",
    "tracer",
]


def correlate(document_id: str | None, **keys: Any) -> None:
    """Use the document id as the correlation id of every log line of this invocation."""
    if document_id:
        logger.set_correlation_id(document_id)
        logger.append_keys(document_id=document_id, **keys)


def record_tokens(entries: list[LedgerEntry], stage: str) -> None:
    """Emit tokens in/out of this invocation's model calls as metrics."""
    if not entries:
        return
    metrics.add_metric(
        name="InputTokens", unit=MetricUnit.Count, value=sum(e.input_tokens for e in entries)
    )
    metrics.add_metric(
        name="OutputTokens", unit=MetricUnit.Count, value=sum(e.output_tokens for e in entries)
    )
    metrics.add_metadata(key="stage", value=stage)


@contextmanager
def metered_tokens(ledger: DynamoLedger, stage: str) -> Iterator[None]:
    """Emit the tokens of the model calls recorded in `ledger` inside the block as metrics."""
    start = len(ledger.entries)
    try:
        yield
    finally:
        record_tokens(ledger.entries[start:], stage)
