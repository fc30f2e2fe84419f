"""Throughput model of the cloud pipeline: pages per hour, hours to ingest 1,000 / 100,000 /
1,000,000 pages, and the bottleneck, at the deployment's settings and at raised quotas.

A discrete-event simulation of the ingest state machine with the ASL's concurrency settings
(read from cdk.json through drac.settings): at most `maxRunningDocuments` documents in flight,
`batchConcurrency` conversion batches per document, `indexConcurrency` chunk ranges per
document, all model calls under the account's Bedrock quotas (requests and tokens per minute)
and Lambda's concurrency. Rendering speed is measured here on the corpus PDFs; model latency,
tokens and quotas are assumptions, printed with the results and settable by flags.

    .venv/bin/python bench/cloud_throughput.py [--batch-latency-s 25] [--conversion-rpm 100] ...
    [--write: update the "Cloud throughput" section of docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import heapq
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from _common import CORPUS, machine, write_section
from render_dense import dense_pdf

from drac.aws.stages.fanout import render_slices
from drac.documents.pdf.render import RenderOptions, render_pages
from drac.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Assumptions:
    """Per-stage costs and quotas (seconds, tokens, requests)."""

    render_pages_per_s: float = 20.0
    lambda_cpu_factor: float = 0.6  # a 2 GB Lambda gets about 1.2 vCPU; this machine's core ~2
    pages_per_document: float = 8.0
    office_fraction: float = 0.5
    libreoffice_s: float = 6.0  # per document (start-up) ...
    libreoffice_s_per_page: float = 0.25  # ... plus per page
    step_overhead_s: float = 12.0  # state transitions, Lambda invocations, S3/DynamoDB I/O
    slice_overhead_s: float = 1.0  # a render slice: a warm Render invocation, the PDF's GET
    batch_latency_s: float = 25.0  # one 5-page Converse call generating ~3,000 tokens
    input_tokens_per_page: int = 1700
    output_tokens_per_page: int = 600
    chunks_per_page: float = 1.4  # measured: the corpus' 226 PDF pages give 309 chunks
    embed_latency_s: float = 0.12
    conversion_rpm: float = 100.0
    conversion_tpm: float = 1_000_000.0
    embedding_rpm: float = 2000.0
    lambda_concurrency: int = 1000


class RateLimit:
    """A per-minute quota: the earliest time a request (of some weight) may start."""

    def __init__(self, per_minute: float) -> None:
        self.interval = 60.0 / per_minute
        self.next_free = 0.0
        self.used = 0.0

    def admit(self, now: float, weight: float = 1.0) -> float:
        start = max(now, self.next_free)
        self.next_free = start + self.interval * weight
        self.used += self.interval * weight
        return start


@dataclass
class Run:
    """One simulated ingest of `documents` documents."""

    hours: float
    pages: int
    utilisation: dict[str, float]

    @property
    def pages_per_hour(self) -> float:
        return self.pages / self.hours if self.hours else 0.0

    @property
    def bottleneck(self) -> str:
        """A quota in use 90% of the time or more limits the run; otherwise the number of
        documents in flight does (a waiting document holds its slot, so slots always look
        busy under a backlog)."""
        quotas = {k: v for k, v in self.utilisation.items() if not k.startswith("document")}
        busiest = max(quotas, key=quotas.__getitem__)
        if quotas[busiest] >= 0.9:
            return busiest
        return "document slots (maxRunningDocuments)"


def simulate(settings: Settings, costs: Assumptions, total_pages: int, seed: int = 7) -> Run:
    """Simulate ingesting documents until `total_pages` pages are in."""
    rng = random.Random(seed)
    documents: list[int] = []
    while sum(documents) < total_pages:
        documents.append(max(1, min(settings.conversion.max_pages, int(rng.expovariate(
            1 / costs.pages_per_document)) + 1)))
    requests = RateLimit(costs.conversion_rpm)
    tokens = RateLimit(costs.conversion_tpm)
    embeddings = RateLimit(costs.embedding_rpm)
    render_rate = costs.render_pages_per_s * costs.lambda_cpu_factor
    events: list[tuple[float, int, Callable[[float], None]]] = []
    counter = [0]
    running = [0]
    lambdas = [0, 0.0, 0.0]  # in flight, busy-seconds, peak
    slots_busy = [0.0]
    pending = list(reversed(documents))
    finished = [0.0]

    def at(when: float, action: Callable[[float], None]) -> None:
        counter[0] += 1
        heapq.heappush(events, (when, counter[0], action))

    def lambda_for(seconds: float) -> None:
        lambdas[1] += seconds

    def start_documents(now: float) -> None:
        while pending and running[0] < settings.cloud.max_running_documents:
            running[0] += 1
            pages = pending.pop()
            begin(now, pages)

    def begin(now: float, pages: int) -> None:
        started = now
        size = settings.conversion.batch_size
        batches = [min(size, pages - i) for i in range(0, pages, size)]
        # CountPages, then the slices rendered renderConcurrency at once (the ingest machine)
        slices = render_slices(len(batches), size)
        largest = max(s.last - s.first + 1 for s in slices) * size
        waves = -(-len(slices) // settings.conversion.render_concurrency)
        prepare = costs.step_overhead_s + waves * (
            costs.slice_overhead_s + min(largest, pages) / render_rate)
        if rng.random() < costs.office_fraction:
            prepare += costs.libreoffice_s + costs.libreoffice_s_per_page * pages
        lambda_for(prepare)
        state = {"queue": list(batches), "in_flight": 0, "left": len(batches)}

        def convert_next(now: float) -> None:
            while state["queue"] and state["in_flight"] < settings.conversion.batch_concurrency:
                size = state["queue"].pop()
                state["in_flight"] += 1
                weight = size * (costs.input_tokens_per_page + costs.output_tokens_per_page)
                start = max(requests.admit(now), tokens.admit(now, weight))
                latency = costs.batch_latency_s * size / settings.conversion.batch_size
                lambda_for(latency)
                at(start + latency, batch_done)

        def batch_done(now: float) -> None:
            state["in_flight"] -= 1
            state["left"] -= 1
            if state["left"]:
                convert_next(now)
            else:
                index(now)

        def index(now: float) -> None:
            chunks = max(1, round(pages * costs.chunks_per_page))
            ranges = -(-chunks // 100)
            waves = -(-ranges // settings.deploy.index_concurrency)
            start = now
            for _ in range(chunks):
                start = embeddings.admit(start)
            done = max(start, now + waves * 100 * costs.embed_latency_s)
            lambda_for(chunks * costs.embed_latency_s)
            at(done + costs.step_overhead_s / 2, finish)

        def finish(now: float) -> None:
            running[0] -= 1
            slots_busy[0] += now - started
            finished[0] = now
            start_documents(now)

        at(now + prepare, convert_next)

    start_documents(0.0)
    while events:
        when, _, action = heapq.heappop(events)
        action(when)
    seconds = finished[0]
    utilisation = {
        "document slots (maxRunningDocuments)": slots_busy[0]
        / (seconds * settings.cloud.max_running_documents),
        "conversion requests per minute": requests.used / seconds,
        "conversion tokens per minute": tokens.used / seconds,
        "embedding requests per minute": embeddings.used / seconds,
        "Lambda concurrency": lambdas[1] / (seconds * costs.lambda_concurrency),
    }
    return Run(hours=seconds / 3600, pages=sum(documents), utilisation=utilisation)


def measured_render_rate(pages: int = 100) -> float:
    """drac's renderer on the corpus' densest pages (bench/render_dense.py), in its contained
    worker, pages per second on this machine."""
    data, _ranked, _corpus_pages = dense_pdf(sorted(CORPUS.rglob("*.pdf")), pages, 20)
    started = time.perf_counter()
    rendered = sum(1 for _ in render_pages(data, RenderOptions()))
    return rendered / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    defaults = Assumptions()
    for name, value in vars(defaults).items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=None)
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args()
    write = args.write
    overrides = {k: v for k, v in vars(args).items() if v is not None and k != "write"}
    context = json.loads((ROOT / "cdk.json").read_text())["context"]
    settings = Settings.from_context(context)
    render = overrides.pop("render_pages_per_s", None) or measured_render_rate()
    costs = replace(defaults, render_pages_per_s=render, **overrides)
    def wider(documents: int, concurrency: int = 5) -> Settings:
        return settings.changed(max_running_documents=documents,
                                batch_concurrency=concurrency,
                                index_concurrency=concurrency)

    raised = replace(costs, conversion_rpm=costs.conversion_rpm * 10,
                     conversion_tpm=costs.conversion_tpm * 10,
                     embedding_rpm=costs.embedding_rpm * 3)
    lines = [
        f"Rendering measured here on the corpus' densest pages (bench/render_dense.py):"
        f" {render:.1f} pages/s on one core, x{costs.lambda_cpu_factor}"
        " in a 2 GB Lambda. Assumptions (flags of the command):",
        "",
        "```",
        json.dumps(vars(costs), indent=1),
        "```",
        "",
        "| scenario | pages/hour | 1,000 pages | 100,000 pages | 1,000,000 pages | bottleneck |",
        "|---|---:|---:|---:|---:|---|",
    ]
    scenarios = (
        (f"cdk.json (maxRunningDocuments {settings.cloud.max_running_documents}), assumed quotas",
         settings, costs),
        ("maxRunningDocuments 50, assumed quotas", wider(50), costs),
        ("maxRunningDocuments 50, quotas x10", wider(50), raised),
        ("maxRunningDocuments 300, batch/index concurrency 10, assumed quotas",
         wider(300, 10), costs),
        ("maxRunningDocuments 300, batch/index concurrency 10, quotas x10", wider(300, 10),
         raised),
    )
    million = 0.0
    for label, chosen, chosen_costs in scenarios:
        small = simulate(chosen, chosen_costs, 1_000)
        large = simulate(chosen, chosen_costs, 100_000)
        million = 1_000_000 / large.pages_per_hour  # steady state of the 100,000-page run
        rpm = large.utilisation["conversion requests per minute"]
        lines.append(
            f"| {label} | {large.pages_per_hour:,.0f} | {_duration(small.hours)} |"
            f" {_duration(large.hours)} | {_duration(million)} | {large.bottleneck}"
            f" (conversion RPM in use {rpm:.0%}) |"
        )
    print("\n".join(lines))
    cost = cost_lines(costs, settings)
    print("\n".join(cost))
    if write:
        write_section("cloud-cost", "\n".join([
            "## Cloud cost (a model of the default stack)",
            "",
            "Command: `.venv/bin/python bench/cloud_throughput.py --write` (printed after the"
            " throughput table, from the same assumptions as \"Cloud throughput\": tokens per"
            " page, chunks per page, Bedrock latency, the rendering speed measured there,"
            f" {render:.1f} pages/s), at cdk.json's settings, with"
            " on-demand us-east-1 list prices that could not be verified offline. A model, not a"
            " bill: compare with Bedrock Knowledge Bases or Textract per page using your own"
            " price list.",
            "",
            *cost,
            "",
            "The idle month is dominated by OpenSearch Serverless (the first collection of an"
            " account even starts at 4 OCUs until it scales in; docs/aws.md, \"Costs\");"
            " ingestion by the conversion model's tokens.",
        ]))
        write_section("cloud-throughput", "\n".join([
            "## Cloud throughput (a model of the deployed pipeline)",
            "",
            "Command: `.venv/bin/python bench/cloud_throughput.py --write`  ",
            f"Machine: {machine()}.",
            "",
            "A discrete-event simulation of the ingest state machine at the stack's concurrency"
            " settings (cdk.json, read through `drac.settings`), under Bedrock's per-minute"
            " quotas and Lambda's concurrency; not a run against AWS (there is no account"
            " here). Model latency, tokens and quotas are assumptions; check your account's"
            " Bedrock quotas before relying on a row.",
            "",
            *lines,
            "",
            "The default stack is limited by its document slots (`maxRunningDocuments` 10,"
            " which keeps a burst from exhausting Bedrock); past about 50 slots the"
            " conversion model's requests per minute decide, so raising slots without a"
            " quota increase buys nothing (rows 2 and 4). A million pages in about"
            f" {million:.0f} hours needs both: 300 slots, 10 batches per document and ten times"
            " the assumed"
            " quotas. docs/aws.md, \"Scale\", says which setting and quota to raise.",
        ]))


@dataclass(frozen=True)
class ServicePrices:
    """On-demand us-east-1 list prices assumed by the cost model (unverified offline)."""

    lambda_gb_s: float = 0.0000166667
    lambda_request: float = 0.20 / 1e6
    sfn_transition: float = 0.025 / 1000
    dynamodb_write: float = 0.625 / 1e6
    dynamodb_read: float = 0.125 / 1e6
    s3_put: float = 0.005 / 1000
    s3_get: float = 0.0004 / 1000
    ocu_hour: float = 0.24
    alarm_month: float = 0.10
    kms_key_month: float = 1.0
    interface_endpoint_az_hour: float = 0.01


def cost_lines(costs: Assumptions, settings: Settings, alarms: int = 42) -> list[str]:
    """Dollars per 1,000 pages ingested and per month idle, from the throughput model's
    assumptions (tokens, chunks, latencies, render speed) and `ServicePrices`."""
    from drac.costs.prices import DEFAULT_MODELS

    prices = ServicePrices()
    pages = 1000
    batches = pages / settings.conversion.batch_size
    documents = pages / costs.pages_per_document
    chunks = pages * costs.chunks_per_page
    conversion = DEFAULT_MODELS[settings.models.conversion_model].cost(
        int(pages * costs.input_tokens_per_page), int(pages * costs.output_tokens_per_page))
    embedding = DEFAULT_MODELS[settings.models.embedding_model_id].cost(int(chunks * 175), 0)
    render_s = pages / (costs.render_pages_per_s * costs.lambda_cpu_factor)
    gb_s = (render_s * 2.0  # Render, 2 GB
            + batches * costs.batch_latency_s * 1.0  # Convert waits on Bedrock, 1 GB
            + documents * costs.office_fraction * (costs.libreoffice_s + costs.pages_per_document
                                                   * costs.libreoffice_s_per_page) * 3.0
            + documents * 12 * 1.0 * 0.5)  # a dozen other invocations of about a second
    # render slices of about 50 pages: one per document at the assumed 8 pages a document
    size = settings.conversion.batch_size
    slices = documents * len(render_slices(-(-int(costs.pages_per_document) // size), size))
    invocations = batches + documents * 14 + slices
    lambda_cost = gb_s * prices.lambda_gb_s + invocations * prices.lambda_request
    # per batch (map item, task), per render slice (map item, task), per document (with
    # FindScans and AnyScans, which a born-digital PDF passes through: statemachine/ingest)
    transitions = batches * 6 + slices * 4 + documents * 49
    sfn = transitions * prices.sfn_transition
    dynamodb = (pages * 20 + chunks * 2 + documents * 30) * prices.dynamodb_write + (
        pages * 20 + documents * 30) * prices.dynamodb_read  # ~20 elements a page, each 1 WRU
    # a PNG a page; per batch its Markdown and its pages' text-layer sizes (written by a slice)
    s3 = (pages + batches * 3 + documents * 10) * prices.s3_put + (
        pages + batches + slices + documents * 10) * prices.s3_get  # each slice GETs the PDF
    rows = [(f"conversion (Bedrock, {settings.models.conversion_model})", conversion),
            ("embeddings (Titan V2)", embedding), ("Lambda (GB-seconds, requests)", lambda_cost),
            ("Step Functions (state transitions)", sfn), ("DynamoDB (on demand)", dynamodb),
            ("S3 (requests)", s3)]
    total = sum(value for _, value in rows)
    ocus = 2 if settings.deploy.collection_standby_replicas == "ENABLED" else 1
    idle = {f"OpenSearch Serverless ({ocus} OCU minimum, 730 h)": ocus * prices.ocu_hour * 730,
            f"CloudWatch alarms ({alarms})": alarms * prices.alarm_month,
            "KMS key (alarm topic)": prices.kms_key_month}
    lines = ["| per 1,000 pages ingested | USD |", "|---|---:|"]
    lines += [f"| {label} | {value:.3f} |" for label, value in rows]
    lines += [f"| **total** | **{total:.2f}** |", "", "| per month, idle | USD |", "|---|---:|"]
    lines += [f"| {label} | {value:.2f} |" for label, value in idle.items()]
    lines += [f"| **total** | **{sum(idle.values()):.0f}** |", ""]
    endpoint = 2 * 730 * prices.interface_endpoint_az_hour  # the converters' VPC has 2 AZs
    lines += ["| options, per month | USD |", "|---|---:|",
              "| isolated converters' VPC (default): its STS interface endpoint (per-document "
              "credentials), 2 AZs x 730 h; gateway endpoints free; the reject flow log bills "
              f"only the log data it writes | {endpoint:.2f} |",
              f"| `tracingEndpoint`: X-Ray interface endpoint, 2 AZs x 730 h (+$0.01/GB) "
              f"| {endpoint:.2f} |",
              "| `privateCollection`: OpenSearch Serverless and Bedrock runtime interface "
              f"endpoints, 2 AZs x 730 h each (+$0.01/GB) | {2 * endpoint:.2f} |", "",
              "Prices (`ServicePrices` in the command, `drac.costs.prices` for models): "
              + json.dumps(vars(prices))]
    return lines


def _duration(hours: float) -> str:
    return f"{hours * 60:.0f} min" if hours < 1 else f"{hours:.1f} h"


if __name__ == "__main__":
    main()
