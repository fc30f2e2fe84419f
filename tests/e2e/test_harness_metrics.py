"""The harness runs invocations in threads of one process; each must keep its own metrics, as
each Lambda environment does (a shared set once failed a batch no real Lambda would fail)."""

from __future__ import annotations

import json
import threading

from aws_lambda_powertools.metrics import MetricUnit

from drac.aws.lambda_support import metrics
from tests.e2e.harness import metrics_per_invocation


def test_an_invocations_flush_never_takes_another_invocations_metrics(capsys) -> None:
    metrics_per_invocation()
    added = threading.Barrier(2)
    flushed = threading.Event()
    errors: list[BaseException] = []

    def invocation(name: str, first: bool) -> None:
        try:
            metrics.add_metric(name=name, unit=MetricUnit.Count, value=1)
            metrics.add_metadata(key="stage", value=name)
            added.wait()
            if not first:
                flushed.wait(5)
            metrics.flush_metrics()
            if first:
                flushed.set()
        except BaseException as exc:  # handed to the test
            errors.append(exc)

    threads = [
        threading.Thread(target=invocation, args=("A", True)),
        threading.Thread(target=invocation, args=("B", False)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    said = sorted((line["stage"], line.get("A"), line.get("B")) for line in lines)
    assert said == [("A", [1.0], None), ("B", None, [1.0])]
