"""SQLite adapters of the element, plan, plan-cache and ledger ports."""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from drac.errors import WorkspaceError
from drac.local.database import Database
from drac.models import Element, LedgerEntry, PlanVersion, SectionPlan
from drac.ports import ElementTable, Ledger, PlanCache, PlanStore


class SqliteElementTable(ElementTable):
    """Elements per document, in order."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def put_elements(self, document_id: str, elements: Sequence[Element]) -> None:
        """Replace the document's elements."""
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM elements WHERE document_id = ?", (document_id,))
            conn.executemany(
                "INSERT INTO elements (document_id, seq, element_id, data) VALUES (?, ?, ?, ?)",
                [(document_id, i, e.id, e.model_dump_json()) for i, e in enumerate(elements)],
            )

    def get_elements(self, document_id: str) -> list[Element]:
        """The document's elements in document order."""
        rows = self.db.query(
            "SELECT seq, data FROM elements WHERE document_id = ? ORDER BY seq", (document_id,)
        )
        try:
            return [Element.model_validate_json(row["data"]) for row in rows]
        except ValueError as exc:
            bad = next(row["seq"] for row in rows if not _parses(Element, row["data"]))
            raise WorkspaceError(
                f"{self.db.path}: element row {bad} of document {document_id} is damaged;"
                f" `drac ingest --force` its file to convert it again"
            ) from exc


def _parses(model: type[BaseModel], data: str) -> bool:
    try:
        model.model_validate_json(data)
    except ValueError:
        return False
    return True


class SqlitePlanStore(PlanStore):
    """Plan versions; old versions are kept."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def save_plan(self, plan: PlanVersion) -> None:
        """Insert a new version; refuses to overwrite an existing one."""
        usage = plan.usage
        planners = sorted({section.planner for section in plan.sections}) or ["rules"]
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO plan_versions (document_id, version, strategy, planner, input_tokens,"
                " output_tokens, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    plan.document_id,
                    plan.version,
                    plan.strategy.name,
                    ",".join(planners),
                    usage.input_tokens,
                    usage.output_tokens,
                    plan.model_dump_json(),
                    plan.created_at,
                ),
            )

    def get_plan(self, document_id: str, version: int) -> PlanVersion:
        """One stored version; KeyError when absent."""
        rows = self.db.query(
            "SELECT data FROM plan_versions WHERE document_id = ? AND version = ?",
            (document_id, version),
        )
        if not rows:
            raise KeyError(f"{document_id} has no plan version {version}")
        try:
            return PlanVersion.model_validate_json(rows[0]["data"])
        except ValueError as exc:
            raise WorkspaceError(
                f"{self.db.path}: plan version {version} of document {document_id} is damaged;"
                f" `drac replan {document_id}` makes a new one"
            ) from exc

    def latest_version(self, document_id: str) -> int:
        """Highest stored version, 0 when none."""
        rows = self.db.query(
            "SELECT MAX(version) AS v FROM plan_versions WHERE document_id = ?", (document_id,)
        )
        return int(rows[0]["v"] or 0)

    def versions(self, document_id: str) -> list[dict[str, object]]:
        """Summary rows of every stored version, oldest first."""
        rows = self.db.query(
            "SELECT version, strategy, planner, input_tokens, output_tokens, created_at"
            " FROM plan_versions WHERE document_id = ? ORDER BY version",
            (document_id,),
        )
        return [dict(row) for row in rows]


class SqlitePlanCache(PlanCache):
    """Section plans by content-and-strategy key."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self, key: str) -> SectionPlan | None:
        """The cached plan, if any."""
        rows = self.db.query("SELECT data FROM plan_cache WHERE cache_key = ?", (key,))
        return SectionPlan.model_validate_json(rows[0]["data"]) if rows else None

    def put(self, key: str, plan: SectionPlan) -> None:
        """Remember a plan."""
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO plan_cache (cache_key, data) VALUES (?, ?)",
                (key, plan.model_dump_json()),
            )


class SqliteLedger(Ledger):
    """Every model call's tokens, latency and outcome."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def record(self, entry: LedgerEntry) -> None:
        """Append one entry."""
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO ledger (document_id, stage, model, input_tokens, output_tokens,"
                " latency_ms, outcome, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    entry.document_id,
                    entry.stage,
                    entry.model,
                    entry.input_tokens,
                    entry.output_tokens,
                    entry.latency_ms,
                    entry.outcome,
                    entry.at,
                ),
            )

    def entries(self) -> list[LedgerEntry]:
        """All entries, oldest first."""
        rows = self.db.query(
            "SELECT document_id, stage, model, input_tokens, output_tokens, latency_ms, outcome,"
            " at FROM ledger ORDER BY id"
        )
        return [LedgerEntry(**dict(row)) for row in rows]


class SqliteVectorStore:
    """Cached embeddings (float32) by model and text hash."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def get_vectors(self, model: str, keys: Sequence[str]) -> dict[str, list[float]]:
        """The stored vectors of these keys."""
        found: dict[str, list[float]] = {}
        for start in range(0, len(keys), 500):
            batch = list(keys[start : start + 500])
            marks = ",".join("?" * len(batch))
            rows = self.db.query(
                f"SELECT text_hash, vector FROM embedding_cache WHERE model = ?"
                f" AND text_hash IN ({marks})",
                (model, *batch),
            )
            for row in rows:
                found[row["text_hash"]] = array("f", row["vector"]).tolist()
        return found

    def put_vectors(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Store vectors by key."""
        with self.db.transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO embedding_cache (model, text_hash, vector)"
                " VALUES (?, ?, ?)",
                [(model, key, array("f", vector).tobytes()) for key, vector in vectors.items()],
            )
