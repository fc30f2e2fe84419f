"""`drac.Workspace`: ingest, search, export, re-plan and remove from Python, as the `drac`
commands do (they call the same functions)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from drac.api.embedding import (
    IngestEmbedding,
    embed_new_chunks,
    embedding_wanted,
    not_embedded,
    search_embedder,
)
from drac.api.models_setup import build_escalation, build_models
from drac.api.operations import Removal, remove_reference, replan_all
from drac.api.reports import IngestReport, ReplanReport
from drac.api.running import QuietEvents, RunEvents, run_all
from drac.api.status import WorkspaceStatus, gather_status
from drac.api.views import ChunkView, Hit, SearchResults, exported_chunks
from drac.embedders.factory import embedder_from_spec, is_configured
from drac.errors import FilterError
from drac.filters import MetadataFilter, parse_expressions
from drac.local.inputs import walk_inputs
from drac.local.office_ahead import OfficeAhead
from drac.local.outcome import Outcome
from drac.local.pipeline import IngestSettings, ingest_file, live_documents
from drac.local.search import EmbedReport, Progress, default_mode, search_workspace
from drac.local.trust import choose_workspace
from drac.local.workspace import Workspace as LocalWorkspace
from drac.metadata import MetaValue, validated
from drac.models import DocumentRecord, Strategy
from drac.ports import Embedder
from drac.retrieval.rank import Mode
from drac.settings import EmbedderSettings
from drac.strategies import resolve_strategy

PathLike = str | os.PathLike[str]
FilterSpec = MetadataFilter | Mapping[str, Any] | str | Sequence[str]
"""A metadata filter: a `MetadataFilter`, its JSON form as a mapping (Bedrock's shape), or
`drac search --filter` expressions (`"year>=2023"`, `"department=legal|hr"`; several: all)."""

DEFAULT_JOBS = min(4, os.cpu_count() or 1)


class Workspace:
    """A drac workspace: a folder holding converted documents, their plans and active chunks.

    Open one with `Workspace.open(path)`; use it as a context manager (or call `close`).
    Writes (`ingest`, `replan`, `remove`) hold the workspace's single-writer lock, as the
    commands do; reads never wait."""

    def __init__(self, local: LocalWorkspace) -> None:
        self._local = local

    @classmethod
    def open(cls, path: PathLike | None = None, *, create: bool = True) -> Workspace:
        """The workspace at `path` (made when missing, unless `create` is False). A path
        named here is the caller's decision, as `--workspace` is, and is remembered as this
        user's; without one, the commands' rule applies: `.drac` here or in the nearest
        parent folder if drac made it for this user (UntrustedWorkspaceError otherwise),
        else a new `./.drac`."""
        named = Path(path) if path is not None else None
        choice = choose_workspace(named, Path.cwd())
        return cls(LocalWorkspace(choice.root, create=create))

    @property
    def root(self) -> Path:
        """The workspace folder."""
        return self._local.root

    @property
    def local(self) -> LocalWorkspace:
        """The underlying local workspace (its ports), for what this class does not cover."""
        return self._local

    def close(self) -> None:
        """Release the database."""
        self._local.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    # --- writes ----------------------------------------------------------------------
    def ingest(
        self,
        paths: PathLike | Iterable[PathLike],
        *,
        strategy: Strategy | str | None = None,
        model: str | None = None,
        force: bool = False,
        tenant: str | None = None,
        metadata: Mapping[str, MetaValue] | None = None,
        jobs: int = DEFAULT_JOBS,
        embed: bool | None = None,
        events: RunEvents | None = None,
    ) -> IngestReport:
        """Ingest files and folders (walked without following links; other entries are
        listed in `skipped` with their reasons) and report each document's outcome. A bad
        document is a FAILED outcome, never an exception; the others go on.

        `strategy`: a `Strategy` or a preset name (default: the workspace's remembered one);
        `model`: offline, bedrock or openai (default: DRAC_MODEL or the settings); `metadata`:
        every document's metadata, over each file's `<file>.metadata.json`; `embed`: embed the
        new chunk texts for search by meaning now (default yes, unless DRAC_EMBED_AT_INGEST=0).
        """
        given = [Path(paths)] if isinstance(paths, str | os.PathLike) else [Path(p) for p in paths]
        extra = validated(metadata.items(), "metadata") if metadata else {}
        inputs = walk_inputs(given)
        report = IngestReport(outcomes=list(inputs.failed), skipped=list(inputs.skipped))
        if not inputs.files:
            return report
        chosen = self._strategy(strategy)
        models = build_models(model, chosen)
        escalation = build_escalation() if models.vision is not None else None
        settings = IngestSettings(strategy=chosen, force=force, tenant=tenant, metadata=extra)
        named = set(given)

        def run(path: Path, progress: Progress) -> Outcome:
            return ahead.serve(
                path,
                ingest_file,
                path,
                self._local,
                settings,
                vision=models.vision,
                text_model=models.text,
                escalation=escalation,
                progress=progress,
                follow_symlinks=path in named,
            )

        embedder, warning = self._embedder(embed)
        with self._local.writing():
            embedding = IngestEmbedding(self._local, embedder, jobs).start()
            ahead = OfficeAhead(inputs.files, self._local, settings, named, embedding.budget)
            listener = embedding.events(events if events is not None else QuietEvents())
            try:
                with ahead:
                    outcomes = run_all(inputs.files, run, jobs, listener, embedding.budget)
            except BaseException:
                embedding.abandon()
                raise
            report.outcomes.extend(outcomes)
            report.embedded, report.embed_warning = embedding.finish()
        report.embed_warning = warning or report.embed_warning
        return report

    def replan(
        self,
        documents: Iterable[str] = (),
        *,
        strategy: Strategy | str | None = None,
        model: str | None = None,
        embed: bool | None = None,
    ) -> ReplanReport:
        """Plan stored documents again (those named by id, name or path; all live ones when
        none is named) from their stored elements, converting nothing. A strategy given for
        all documents is remembered for later ingests and re-plans."""
        names = list(documents)
        chosen = self._strategy(strategy)
        models = build_models(model, chosen)
        records = live_documents(self._local, names)
        with self._local.writing():
            run = replan_all(self._local, records, chosen, models.text)
            if (
                strategy is not None
                and not names
                and not run.stopped
                and not any(outcome.failed for outcome in run.outcomes)
            ):
                self._local.save_strategy(chosen)
            embedded, warning = self._embed(embed)
        return ReplanReport(run.outcomes, run.stopped, embedded, warning)

    def remove(self, *references: str) -> list[Removal]:
        """Forget paths (a path forgets that path; a name or id every path of its document);
        a document no path holds any more leaves search. Files on disk are not touched."""
        with self._local.writing():
            return [found for ref in references for found in remove_reference(self._local, ref)]

    # --- reads -----------------------------------------------------------------------
    def search(
        self,
        query: str,
        k: int = 6,
        *,
        mode: Mode | str | None = None,
        filters: FilterSpec | None = None,
        embedder: str | None = None,
    ) -> SearchResults:
        """The `k` best active chunks for `query`: by words (`bm25`), meaning (`dense`) or
        both (`hybrid`; the default with an embedder, else `bm25`), only of documents whose
        metadata passes `filters`. `embedder` is a spec as `--embedder` takes (default:
        DRAC_EMBEDDER, else the embedded model where installed); with neither `mode` nor an
        embedder named, an embedder that cannot run falls back to BM25 (`note` says why).

        Raises ValueError for a bad mode, filter or a dense search without an embedder."""
        metadata_filter = _as_filter(filters)
        spec = embedder if embedder is not None else EmbedderSettings.from_env().spec
        chosen = embedder_from_spec(spec)
        wanted = Mode(mode) if mode else default_mode(chosen)
        result = search_workspace(
            self._local,
            query,
            mode=wanted,
            k=k,
            embedder=chosen,
            fallback=mode is None and not is_configured(spec),
            metadata_filter=metadata_filter,
        )
        hits = tuple(
            Hit(hit.chunk, dict(hit.metadata), None, hit.score, rank, result.mode)
            for rank, hit in enumerate(result.hits, start=1)
        )
        return SearchResults(query, result.mode, hits, result.note, result.embedded)

    def chunks(self, document: str | None = None) -> Iterator[ChunkView]:
        """The active chunks (of one document, by id, name or path; else all) exactly as
        `drac export` writes them: `ChunkView.to_dict()` is one export line."""
        document_id = self.document(document).document_id if document is not None else None
        return exported_chunks(self._local, document_id)

    def chunk(self, chunk_id: str) -> ChunkView | None:
        """One active chunk by its id (None when no active chunk has it)."""
        document_id = chunk_id.split("-v", 1)[0]
        for view in exported_chunks(self._local, document_id):
            if view.chunk_id == chunk_id:
                return view
        return None

    def documents(self) -> list[DocumentRecord]:
        """Every document the workspace knows (live, failed and retired), oldest first."""
        return self._local.documents()

    def document(self, reference: str) -> DocumentRecord:
        """A document by id, unique id prefix, source file name, stem or path
        (WorkspaceError when none or several match)."""
        return self._local.find_document(reference)

    def status(self) -> WorkspaceStatus:
        """Every document with its status, pages, chunks, plan version, planning,
        verification and box counts, and the strategy new documents get."""
        return gather_status(self._local)

    # --- helpers ---------------------------------------------------------------------
    def _strategy(self, asked: Strategy | str | None) -> Strategy:
        if isinstance(asked, Strategy):
            return asked
        if isinstance(asked, str):
            return resolve_strategy(asked)
        return self._local.saved_strategy() or Strategy()

    def _embedder(self, embed: bool | None) -> tuple[Embedder | None, str | None]:
        """The embedder new chunk texts are embedded with (None when not wanted), or the
        warning of one that cannot be made."""
        if not embedding_wanted(embed):
            return None, None
        try:
            return search_embedder(), None
        except Exception as exc:  # the ingest goes on; search embeds what is missing
            return None, not_embedded(exc)

    def _embed(self, embed: bool | None) -> tuple[EmbedReport | None, str | None]:
        """Embed new chunk texts (a warning, never an error, when the embedder fails)."""
        embedder, warning = self._embedder(embed)
        if embedder is None:
            return None, warning
        try:
            return embed_new_chunks(self._local, embedder), None
        except Exception as exc:  # the re-plan has succeeded; search embeds what is missing
            return None, not_embedded(exc)


def _as_filter(filters: FilterSpec | None) -> MetadataFilter | None:
    """A filter from any form `Workspace.search` takes (FilterError, a ValueError, if bad)."""
    if filters is None or isinstance(filters, MetadataFilter):
        return filters
    if isinstance(filters, str):
        return parse_expressions([filters])
    if isinstance(filters, Mapping):
        from pydantic import ValidationError

        try:
            return MetadataFilter.model_validate(dict(filters))
        except ValidationError as exc:
            raise FilterError(f"filter: {exc.errors()[0]['msg']}") from exc
    return parse_expressions(list(filters))
