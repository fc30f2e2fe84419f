"""Handler tests share the moto fixture of the adapter tests; Powertools runs offline."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _powertools_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "1")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "Drac")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
