"""drac's Python API: the library the `drac` commands call.

import drac

with drac.Workspace.open("kb") as ws:
    report = ws.ingest(["handbook.pdf", "policies/"])
    for hit in ws.search("how do I claim warranty", k=5, filters="year>=2023"):
        print(hit.score, hit.pages, hit.text)
"""

from __future__ import annotations

from drac.api.errors import IngestInterrupted, ModelSetupError
from drac.api.models_setup import Models, build_models
from drac.api.operations import Removal
from drac.api.reports import IngestReport, ReplanReport
from drac.api.running import RunEvents
from drac.api.status import DocumentState, WorkspaceStatus
from drac.api.views import ChunkView, Hit, SearchResults
from drac.api.workspace import FilterSpec, Workspace
from drac.local.inputs import Skipped
from drac.local.outcome import Outcome
from drac.local.search import EmbedReport
from drac.retrieval.rank import Mode

__all__ = [
    "ChunkView",
    "DocumentState",
    "EmbedReport",
    "FilterSpec",
    "Hit",
    "IngestInterrupted",
    "IngestReport",
    "Mode",
    "ModelSetupError",
    "Models",
    "Outcome",
    "Removal",
    "ReplanReport",
    "RunEvents",
    "SearchResults",
    "Skipped",
    "Workspace",
    "WorkspaceStatus",
    "build_models",
]
