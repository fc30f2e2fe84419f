"""`drac check`: verify a workspace and say, for each thing wrong, which file and what to do.

Checked: the database (it opens, SQLite's integrity check), every live document's files (the
source copy, the Markdown, elements, sections, every plan version and its chunks, each
present and parseable, chunks matching their plan), the search index (the active chunks are
the active plan's, every chunk is in the BM25 index), and what interrupted or failed runs
left (folders of no document, temporary files). Nothing is changed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict

from drac.commit import plan_chunks
from drac.errors import DracError, WorkspaceError
from drac.local.database import DAMAGED_DATABASE_FIX
from drac.local.errors import ForeignSchemaError, LinkInWorkspaceError
from drac.local.files import is_temporary_name
from drac.local.workspace import DATABASE, TEMPORARY_FOLDER, Workspace
from drac.models import DocumentRecord, DocumentStatus, Element, PlanVersion
from drac.retrieval.text import TOKENISER

T = TypeVar("T")


class Problem(BaseModel):
    """One thing wrong with a workspace: where, what, and what to do about it."""

    model_config = ConfigDict(frozen=True)

    file: str
    problem: str
    fix: str


REPAIR_FIX = "`drac check --repair` writes it again from the database"


class CheckReport(BaseModel):
    """What `check_workspace` looked at and what it found."""

    workspace: str
    documents: int = 0
    chunks: int = 0
    problems: list[Problem]


def check_workspace(root: Path) -> CheckReport:
    """Every problem of the workspace at root (an empty list: it is sound)."""
    database = root / DATABASE
    if not database.exists():
        fix = "check the path (or --workspace), or run `drac ingest` to make one"
        return CheckReport(
            workspace=str(root),
            problems=[Problem(file=str(root), problem="no drac workspace here", fix=fix)],
        )
    links = list(_links(root))
    try:
        ws = Workspace(root, create=False)
    except ForeignSchemaError as exc:
        foreign = [
            Problem(file=str(database), problem=f"the database holds a {item}", fix=FOREIGN_FIX)
            for item in exc.found
        ]
        return CheckReport(workspace=str(root), problems=[*links, *foreign])
    except LinkInWorkspaceError:
        return CheckReport(workspace=str(root), problems=links)
    except DracError as exc:
        problem = Problem(file=str(database), problem=str(exc), fix=DAMAGED_DATABASE_FIX)
        return CheckReport(workspace=str(root), problems=[*links, problem])
    try:
        report = _check(ws)
    finally:
        ws.close()
    report.problems[:0] = links
    return report


FOREIGN_FIX = (
    "drac does not open this workspace: it may have come with the documents; move it aside "
    "and ingest your documents into a new one"
)
LINK_FIX = "remove the link (`drac check --repair` does): drac never follows one"


def _links(root: Path) -> Iterator[Problem]:
    """A problem for each symbolic link inside the workspace (none is ever followed)."""
    for folder, folders, files in os.walk(root):
        for name in sorted([*folders, *files]):
            path = Path(folder, name)
            if path.is_symlink():
                target = os.readlink(path)
                problem = f"a symbolic link (to {target}) inside the workspace"
                yield Problem(file=str(path), problem=problem, fix=LINK_FIX)


def _check(ws: Workspace) -> CheckReport:
    problems: list[Problem] = []
    database = str(ws.root / DATABASE)
    integrity = _guarded(problems, database, lambda: ws.db.query("PRAGMA integrity_check"))
    if integrity is not None:
        messages = [str(row[0]) for row in integrity]
        if messages != ["ok"]:
            problem = f"SQLite's integrity check fails: {'; '.join(messages[:3])}"
            problems.append(Problem(file=database, problem=problem, fix=DAMAGED_DATABASE_FIX))
    records = _guarded(problems, database, ws.documents)
    if records is None:
        return CheckReport(workspace=str(ws.root), problems=problems)
    chunks = 0
    for record in records:
        if record.live and record.active_version:
            problems.extend(_check_document(ws, record))
            with contextlib.suppress(WorkspaceError):  # reported by the checks above
                chunks += len(ws.active_chunks(record.document_id))
    problems.extend(_check_index(ws, database))
    problems.extend(_leftovers(ws, records))
    live = sum(1 for record in records if record.live)
    return CheckReport(workspace=str(ws.root), documents=live, chunks=chunks, problems=problems)


def _parses(read: Callable[[], object]) -> bool:
    try:
        read()
    except (WorkspaceError, KeyError):
        return False
    return True


def _guarded(problems: list[Problem], file: str, read: Callable[[], T]) -> T | None:
    """The read's result, or None with the WorkspaceError it raised recorded as a problem."""
    try:
        return read()
    except WorkspaceError as exc:
        problems.append(_problem(file, exc))
        return None


def _problem(file: str, error: Exception) -> Problem:
    """A problem from a drac error whose message ends in `; <what to do>`."""
    text = str(error)
    what, _, fix = text.partition("; ")
    if what.startswith(file):
        what = what[len(file) :].lstrip(": ") or what
    return Problem(file=file, problem=what, fix=fix or "see the message")


def _check_document(ws: Workspace, record: DocumentRecord) -> Iterator[Problem]:
    document_id = record.document_id
    folder = ws.root / "documents" / document_id
    reconvert = ws.repair_hint(document_id)
    if not folder.is_dir():
        yield Problem(file=str(folder), problem="the document's folder is missing", fix=reconvert)
        return
    source = folder / "source" / record.source
    if not source.is_file():
        yield Problem(
            file=str(source), problem="the stored copy of the source is missing", fix=reconvert
        )
    for name, read in (
        ("document.md", lambda: ws.get_markdown(document_id)),
        ("sections.json", lambda: ws.get_sections(document_id)),
        ("elements.jsonl", lambda: _elements_file(folder / "elements.jsonl")),
    ):
        try:
            read()
        except (WorkspaceError, KeyError, ValueError, OSError) as exc:
            yield _problem(
                str(folder / name),
                exc
                if isinstance(exc, WorkspaceError)
                else WorkspaceError(f"{folder / name} cannot be read ({exc}); {reconvert}"),
            )
    database = str(ws.root / DATABASE)
    found: list[Problem] = []
    elements = _guarded(found, database, lambda: ws.get_elements(document_id))
    versions = _guarded(found, database, lambda: ws.plans.versions(document_id)) or []
    yield from found
    for row in versions:
        version = int(str(row["version"]))
        yield from _check_version(ws, record, version, elements)


def _elements_file(path: Path) -> list[Element]:
    return [
        Element.model_validate_json(line)
        for line in path.read_text("utf-8").splitlines()
        if line.strip()
    ]


def _check_version(
    ws: Workspace, record: DocumentRecord, version: int, elements: list[Element] | None
) -> Iterator[Problem]:
    document_id = record.document_id
    folder = ws.root / "documents" / document_id
    replan = ws.repair_hint(document_id, replan=True)
    plan_file = folder / "plans" / f"v{version:04d}.json"
    rewrite = REPAIR_FIX if _parses(lambda: ws.plans.get_plan(document_id, version)) else replan
    try:
        PlanVersion.model_validate_json(plan_file.read_bytes())
    except FileNotFoundError:
        yield Problem(file=str(plan_file), problem="the plan file is missing", fix=rewrite)
    except ValueError as exc:
        reason = (str(exc).splitlines() or ["not a plan"])[0]
        yield Problem(
            file=str(plan_file), problem=f"the plan file is damaged ({reason})", fix=rewrite
        )
    database = str(ws.root / DATABASE)
    chunks_file = folder / "chunks" / f"v{version:04d}.jsonl"
    found: list[Problem] = []
    plan = _guarded(found, database, lambda: ws.plans.get_plan(document_id, version))
    chunks = _guarded(found, str(chunks_file), lambda: ws.plan_chunk_file(document_id, version))
    rebuild = REPAIR_FIX if plan is not None and elements is not None else replan
    yield from (
        problem.model_copy(update={"fix": rebuild}) if problem.file == str(chunks_file) else problem
        for problem in found
    )
    if plan is None or chunks is None:
        return
    planned = [tuple(ids) for ids in plan.chunk_ids_arrays]
    if [chunk.element_ids for chunk in chunks] != planned:
        yield Problem(
            file=str(chunks_file),
            problem=f"its {len(chunks)} chunks do not match the {len(planned)} of plan v{version}",
            fix=rebuild,
        )
    if elements is not None:
        known = {element.id for element in elements}
        unknown = sorted({i for chunk in chunks for i in chunk.element_ids} - known)
        if unknown:
            yield Problem(
                file=str(chunks_file),
                problem=f"chunks name {len(unknown)} element(s) the document does not have "
                f"({', '.join(unknown[:3])})",
                fix=ws.repair_hint(document_id),
            )
    if version == record.active_version:
        found.clear()
        indexed = _guarded(found, database, lambda: ws.active_chunks(document_id))
        yield from found
        if indexed is not None and [c.chunk_id for c in indexed] != [c.chunk_id for c in chunks]:
            yield Problem(
                file=database,
                problem=f"the search index holds other chunks of {record.source} than its "
                f"active plan v{version}",
                fix=replan,
            )


def _check_index(ws: Workspace, database: str) -> Iterator[Problem]:
    found: list[Problem] = []
    rows = _guarded(
        found,
        database,
        lambda: ws.db.query(
            "SELECT COUNT(*) FROM chunks c LEFT JOIN bm25_docs d ON d.chunk_id = c.chunk_id"
            " WHERE d.chunk_id IS NULL OR d.tokeniser != ?",
            (TOKENISER,),
        ),
    )
    yield from found
    missing = int(rows[0][0]) if rows else 0
    if missing:
        yield Problem(
            file=database,
            problem=f"{missing} chunk(s) are missing from the BM25 index",
            fix="any `drac search` indexes them again",
        )


def _leftovers(ws: Workspace, records: list[DocumentRecord]) -> Iterator[Problem]:
    known = {record.document_id: record for record in records}
    documents = ws.root / "documents"
    for folder in sorted(documents.iterdir()) if documents.is_dir() else []:
        record = known.get(folder.name)
        if record is None:
            yield Problem(
                file=str(folder),
                problem="a folder of no document (left by an interrupted or failed run)",
                fix=f"`drac check --repair` removes it (or: rm -r {json.dumps(str(folder))})",
            )
        elif record.status is DocumentStatus.FAILED and not record.active_version:
            yield Problem(
                file=str(folder),
                problem=f"files of {record.source}, whose ingest FAILED, were left behind",
                fix=f"`drac check --repair` removes it (or: rm -r {json.dumps(str(folder))})",
            )
    temporary = ws.root / TEMPORARY_FOLDER
    leftovers = [*temporary.iterdir()] if temporary.is_dir() else []
    leftovers += [p for p in documents.rglob(".*.tmp") if is_temporary_name(p.name)]
    for path in sorted(leftovers):
        if path.is_file():
            yield Problem(
                file=str(path),
                problem="a temporary file an interrupted write left",
                fix="the next `drac ingest`, `drac replan` or `drac check --repair` removes it",
            )


def repair_workspace(root: Path) -> list[str]:
    """Write again what the database still holds and the files lost (plan files from the
    plan rows, chunk files rebuilt from plan and elements, as ingest wrote them), and remove
    what interrupted or failed runs left and every symbolic link inside the workspace (the
    links themselves, never what they point at); holds the writer lock. Returns what was
    done."""
    ws = Workspace(root, create=False)
    done: list[str] = []
    try:
        with ws.writing():  # which also empties the temporary folder
            for link in list(_links(root)):
                Path(link.file).unlink(missing_ok=True)
                done.append(f"removed the link {link.file}")
            records = ws.documents()
            for record in records:
                if record.live and record.active_version:
                    done.extend(_repair_document(ws, record))
            for problem in list(_leftovers(ws, records)):
                path = Path(problem.file)
                if path.is_dir():
                    shutil.rmtree(path)
                else:
                    path.unlink(missing_ok=True)
                done.append(f"removed {path}")
    finally:
        ws.close()
    return done


def _repair_document(ws: Workspace, record: DocumentRecord) -> Iterator[str]:
    document_id = record.document_id
    try:
        elements = ws.get_elements(document_id)
        versions = [int(str(row["version"])) for row in ws.plans.versions(document_id)]
    except WorkspaceError:
        return  # the database itself is damaged: nothing sound to write from
    for version in versions:
        try:
            plan = ws.plans.get_plan(document_id, version)
        except (WorkspaceError, KeyError):
            continue
        plan_key = ws.document_key(document_id, f"plans/v{version:04d}.json")
        try:
            PlanVersion.model_validate_json(ws.artifacts.get_bytes(plan_key))
        except (KeyError, ValueError):
            ws.artifacts.put_text(plan_key, plan.model_dump_json(indent=1))
            yield f"wrote {ws.artifacts.path(plan_key)} from the database"
        chunks_key = ws.document_key(document_id, f"chunks/v{version:04d}.jsonl")
        planned = [tuple(ids) for ids in plan.chunk_ids_arrays]
        try:
            sound = [c.element_ids for c in ws.plan_chunk_file(document_id, version)] == planned
        except WorkspaceError:
            sound = False
        if not sound:
            chunks = plan_chunks(record, elements, plan, plan.strategy)
            ws.artifacts.put_text(chunks_key, "".join(c.model_dump_json() + "\n" for c in chunks))
            yield f"wrote {ws.artifacts.path(chunks_key)} from plan v{version} and the elements"
