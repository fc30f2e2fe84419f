"""Planning attempts of a document that stored no plan version, read from the ledger (every
model call is recorded there): `status` and `show` report them."""

from __future__ import annotations

from collections import Counter
from typing import Any

from drac.local.workspace import Workspace
from drac.models import DocumentRecord


def unstored_planning(ws: Workspace, record: DocumentRecord) -> dict[str, Any] | None:
    """The planning calls made for the document since its latest stored plan version
    (attempts that stored nothing: every section fell back, or the server went away), else
    None: their count, outcomes, tokens and time, and when the last one was made."""
    versions = ws.plans.versions(record.document_id)
    latest = max((str(row["created_at"]) for row in versions), default="")
    since = max((int(str(row["version"])) for row in versions), default=0)
    calls = [
        entry
        for entry in ws.ledger_entries()
        if entry.document_id == record.document_id
        and entry.stage == "planning"
        and entry.at > latest
    ]
    if not calls:
        return None
    outcomes = Counter(entry.outcome.split(":")[0] for entry in calls)
    return {
        "since_version": since,
        "last_at": calls[-1].at,
        "calls": len(calls),
        "outcomes": dict(outcomes),
        "input_tokens": sum(entry.input_tokens for entry in calls),
        "output_tokens": sum(entry.output_tokens for entry in calls),
        "seconds": round(sum(entry.latency_ms for entry in calls) / 1000, 3),
    }


def describe_unstored(calls: dict[str, Any]) -> str:
    """One line: 'planning since v1 stored no plan: 2 call(s) (2 unparseable), 900 in / 80
    out tokens, 12.5 s, last at 2026-...Z'."""
    outcomes = ", ".join(f"{count} {name}" for name, count in calls["outcomes"].items())
    return (
        f"planning since v{calls['since_version']} stored no plan: {calls['calls']} call(s) "
        f"({outcomes}), {calls['input_tokens']:,} in / {calls['output_tokens']:,} out "
        f"tokens, {calls['seconds']:g} s, last at {calls['last_at']}"
    )
