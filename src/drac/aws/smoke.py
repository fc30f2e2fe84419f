"""A deployed stack checked end to end with real credentials (`drac cloud-smoke`).

As one tenant's principal: upload a PDF, a DOCX and an XLSX under `incoming/<tenant>/`, wait
until the documents table says INDEXED, query the retrieval function URL (SigV4, service
`lambda`), send a tenant re-plan event and wait for the new plan versions, delete the uploads
and wait until the API no longer returns their chunks. As another tenant's principal: the same
query naming the first tenant must be refused (403). As the operator: read the stack's
outputs, the documents table and the state of every CloudWatch alarm of the stack.

Every check is one `Check` (a name, passed or not, what was seen); the run stops at the first
check a later one depends on and reports the rest as not run.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from drac.aws.retrieval_client import signed_headers
from drac.errors import DracError
from drac.ids import document_id_for

REPLAN_DETAIL_TYPE = "Replan Requested"
ALARM_TYPE = "AWS::CloudWatch::Alarm"
QUERY = "baggage warranty environmental policy sales"


@dataclass(frozen=True)
class StackView:
    """The names of a deployed stack the smoke test uses."""

    documents_bucket: str
    documents_table: str
    event_bus: str
    tenant_source_prefix: str
    retrieve_url: str
    alarms: tuple[str, ...]


@dataclass(frozen=True)
class Caller:
    """One identity: a boto3 session and the HTTP client its signed API calls go through."""

    session: Any
    http: httpx.Client


@dataclass(frozen=True)
class Check:
    """One thing the smoke test verified: its name, whether it held, what was seen."""

    name: str
    ok: bool
    detail: str

    def line(self) -> str:
        """The check as one printed line."""
        return f"{'OK  ' if self.ok else 'FAIL'} {self.name}: {self.detail}"


@dataclass
class SmokePlan:
    """What to upload and how long to wait."""

    tenant: str
    documents: dict[str, bytes]
    """File name -> bytes (uploaded as incoming/<tenant>/smoke/<name>)."""
    timeout_s: float = 900.0
    poll_s: float = 5.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    progress: Callable[[str], None] = field(default=lambda _message: None)


def read_stack(session: Any, stack_name: str) -> StackView:
    """The names the smoke test needs, from a stack's outputs and its alarm resources."""
    cloudformation = session.client("cloudformation")
    try:
        (stack,) = cloudformation.describe_stacks(StackName=stack_name)["Stacks"]
        pages = cloudformation.get_paginator("list_stack_resources").paginate(StackName=stack_name)
        alarms = tuple(
            sorted(
                resource["PhysicalResourceId"]
                for page in pages
                for resource in page["StackResourceSummaries"]
                if resource["ResourceType"] == ALARM_TYPE
            )
        )
    except Exception as exc:  # botocore's errors vary: say which stack could not be read
        raise DracError(f"cannot read stack {stack_name!r}: {exc}") from exc
    outputs = {o["OutputKey"]: str(o["OutputValue"]) for o in stack.get("Outputs", [])}
    needed = (
        "DocumentsBucket",
        "DocumentsTable",
        "EventBusName",
        "ReplanTenantSourcePrefix",
        "RetrieveUrl",
    )
    missing = [name for name in needed if name not in outputs]
    if missing:
        raise DracError(f"stack {stack_name!r} has no {', '.join(missing)} output (redeploy it)")
    return StackView(
        documents_bucket=outputs["DocumentsBucket"],
        documents_table=outputs["DocumentsTable"],
        event_bus=outputs["EventBusName"],
        tenant_source_prefix=outputs["ReplanTenantSourcePrefix"],
        retrieve_url=outputs["RetrieveUrl"],
        alarms=alarms,
    )


def smoke_documents(pdf: Path, docx: Path) -> dict[str, bytes]:
    """The three documents: the given PDF and DOCX and a small XLSX written here."""
    from openpyxl import Workbook

    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None  # a new workbook always has its first sheet
    sheet.title = "Sales"
    for row in (["region", "quarter", "sales"], ["north", "Q1", 120], ["south", "Q1", 95]):
        sheet.append(row)
    buffer = io.BytesIO()
    workbook.save(buffer)
    return {
        pdf.name: pdf.read_bytes(),
        docx.name: docx.read_bytes(),
        "sales.xlsx": buffer.getvalue(),
    }


def query(caller: Caller, url: str, body: dict[str, Any], region: str) -> tuple[int, Any]:
    """POST a SigV4-signed request to the retrieval function URL: (status, parsed body)."""
    text = json.dumps(body)
    headers = signed_headers(caller.session, url, text, region)
    response = caller.http.post(url, content=text.encode("utf-8"), headers=headers)
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, response.text[:300]


class _Failed(Exception):
    """A check failed that later checks depend on."""


def run_smoke(
    stack: StackView,
    plan: SmokePlan,
    *,
    operator: Any,
    tenant: Caller,
    other: Caller,
    region: str,
) -> list[Check]:
    """Run every check against the deployed stack; the list ends at the first check later
    ones depend on (then with a FAIL naming why the rest did not run)."""
    checks: list[Check] = []
    try:
        for check in _steps(stack, plan, operator, tenant, other, region):
            checks.append(check)
            plan.progress(check.line())
    except _Failed as exc:
        checks.append(Check("remaining checks", False, f"not run: {exc}"))
        plan.progress(checks[-1].line())
    checks.append(check_alarms(operator, stack.alarms))
    plan.progress(checks[-1].line())
    return checks


def _steps(
    stack: StackView, plan: SmokePlan, operator: Any, tenant: Caller, other: Caller, region: str
) -> Iterator[Check]:
    s3 = tenant.session.client("s3")
    keys = {name: f"incoming/{plan.tenant}/smoke/{name}" for name in plan.documents}
    ids = {name: document_id_for(data, plan.tenant) for name, data in plan.documents.items()}
    table = operator.client("dynamodb")
    # a record left by an earlier run (DELETED, or FAILED) says nothing about this upload
    before = _read_records(table, stack.documents_table, ids)

    def indexed(name: str, item: dict[str, Any]) -> bool:
        return item != before.get(name) and _indexed(name, item)

    for name, data in plan.documents.items():
        s3.put_object(Bucket=stack.documents_bucket, Key=keys[name], Body=data)
    yield Check("upload", True, f"{len(keys)} objects under incoming/{plan.tenant}/smoke/")

    records = _wait_records(table, stack.documents_table, ids, plan, indexed, "INDEXED")
    versions = {name: int(record["active_version"]["N"]) for name, record in records.items()}
    yield _need(Check("indexed", True, ", ".join(f"{n} v{versions[n]}" for n in ids)))

    document_ids = sorted(ids.values())
    body = {"query": QUERY, "k": 20, "filters": {"document_ids": document_ids}}
    status, answer = query(tenant, stack.retrieve_url, body, region)
    found = {c["document_id"] for c in answer["chunks"]} if status == 200 else set()
    tenants = {c["tenant"] for c in answer["chunks"]} if status == 200 else set()
    ok = status == 200 and found == set(document_ids) and tenants == {plan.tenant}
    detail = f"status {status}, chunks of {len(found)}/{len(ids)} documents, tenants {tenants}"
    yield Check("query as the tenant", ok, detail if status == 200 else f"{detail}: {answer}")

    status, answer = query(other, stack.retrieve_url, {**body, "tenant": plan.tenant}, region)
    yield Check("query as another tenant refused", status == 403, f"status {status}")

    events = tenant.session.client("events")
    detail_body = {"tenant": plan.tenant, "document_ids": document_ids, "strategy": "fine"}
    sent = events.put_events(
        Entries=[
            {
                "EventBusName": stack.event_bus,
                "Source": f"{stack.tenant_source_prefix}{plan.tenant}",
                "DetailType": REPLAN_DETAIL_TYPE,
                "Detail": json.dumps(detail_body),
            }
        ]
    )
    if sent.get("FailedEntryCount"):
        yield _need(Check("re-plan", False, f"event refused: {sent['Entries']}"))

    def replanned(name: str, item: dict[str, Any]) -> bool:
        version = item.get("active_version", {}).get("N")
        return _indexed(name, item) and version is not None and int(version) > versions[name]

    _wait_records(table, stack.documents_table, ids, plan, replanned, "a new plan version")
    yield Check("re-plan", True, f"{len(ids)} documents on a new plan version")

    for key in keys.values():
        s3.delete_object(Bucket=stack.documents_bucket, Key=key)
    _wait_records(table, stack.documents_table, ids, plan, _deleted, "DELETED")
    left = _wait_chunks_gone(tenant, stack.retrieve_url, body, plan, region)
    yield Check("delete", not left, f"{len(ids)} DELETED, chunks left in search: {left}")


def _need(check: Check) -> Check:
    if not check.ok:
        raise _Failed(f"{check.name} failed: {check.detail}")
    return check


def _indexed(_name: str, item: dict[str, Any]) -> bool:
    status = item.get("status", {}).get("S")
    if status in {"FAILED", "PARTIAL", "DELETED"}:
        raise _Failed(f"a document ended {status}: {item.get('error', {}).get('S', '')}")
    return status == "INDEXED"


def _deleted(_name: str, item: dict[str, Any]) -> bool:
    return item.get("status", {}).get("S") == "DELETED"


def _wait_records(
    table: Any,
    table_name: str,
    ids: dict[str, str],
    plan: SmokePlan,
    done: Callable[[str, dict[str, Any]], bool],
    what: str,
) -> dict[str, dict[str, Any]]:
    """Poll the documents table until every document is `done`; _Failed on timeout."""
    deadline = plan.clock() + plan.timeout_s
    while True:
        records = _read_records(table, table_name, ids)
        waiting = sorted(n for n in ids if n not in records or not done(n, records[n]))
        if not waiting:
            return records
        if plan.clock() > deadline:
            raise _Failed(f"not {what} after {plan.timeout_s:.0f} s: {', '.join(waiting)}")
        plan.progress(f"     waiting for {what}: {', '.join(waiting)}")
        plan.sleep(plan.poll_s)


def _read_records(table: Any, table_name: str, ids: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The documents table's items of these documents (file name -> item), where they exist."""
    records: dict[str, dict[str, Any]] = {}
    for name, document_id in ids.items():
        item = table.get_item(
            TableName=table_name, Key={"document_id": {"S": document_id}}, ConsistentRead=True
        ).get("Item")
        if item is not None:
            records[name] = item
    return records


def _wait_chunks_gone(
    caller: Caller, url: str, body: dict[str, Any], plan: SmokePlan, region: str
) -> int:
    """Chunks the API still returns for the documents when they stop (or the time is up)."""
    deadline = plan.clock() + plan.timeout_s
    while True:
        status, answer = query(caller, url, body, region)
        if status != 200:
            raise _Failed(f"query after delete answered {status}: {answer}")
        left = len(answer["chunks"])
        if not left or plan.clock() > deadline:
            return left
        plan.progress(f"     waiting for {left} chunks to leave the index")
        plan.sleep(plan.poll_s)


def check_alarms(operator: Any, names: tuple[str, ...]) -> Check:
    """Every alarm of the stack OK (INSUFFICIENT_DATA, an alarm without data yet, is named
    but passes; ALARM fails)."""
    if not names:
        return Check("alarms", False, "the stack has no alarms (wrong stack?)")
    cloudwatch = operator.client("cloudwatch")
    states: dict[str, str] = {}
    for start in range(0, len(names), 100):  # DescribeAlarms takes at most 100 names
        batch = list(names[start : start + 100])
        answer = cloudwatch.describe_alarms(AlarmNames=batch, MaxRecords=100)
        states.update({a["AlarmName"]: a["StateValue"] for a in answer["MetricAlarms"]})
    missing = sorted(set(names) - set(states))
    alarming = sorted(name for name, state in states.items() if state == "ALARM")
    no_data = sorted(name for name, state in states.items() if state == "INSUFFICIENT_DATA")
    detail = f"{len(states) - len(alarming) - len(no_data)}/{len(names)} OK"
    if no_data:
        detail += f", without data yet: {', '.join(no_data)}"
    if alarming:
        detail += f", IN ALARM: {', '.join(alarming)}"
    if missing:
        detail += f", not found: {', '.join(missing)}"
    return Check("alarms", not alarming and not missing, detail)
