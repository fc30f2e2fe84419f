-- The local workspace database. Files under documents/ hold the same data in readable form.
PRAGMA journal_mode = WAL;

CREATE TABLE IF NOT EXISTS documents (
    document_id    TEXT PRIMARY KEY,
    source         TEXT NOT NULL,
    source_path    TEXT,
    sha256         TEXT NOT NULL,
    tenant         TEXT,
    format         TEXT NOT NULL,
    status         TEXT NOT NULL,
    pages          INTEGER NOT NULL DEFAULT 0,
    active_version INTEGER,
    warnings       TEXT NOT NULL DEFAULT '[]',
    error          TEXT,
    conversion_failures INTEGER NOT NULL DEFAULT 0,
    attempt        INTEGER NOT NULL DEFAULT 0,
    table_rows     TEXT,
    owner          TEXT,
    metadata       TEXT NOT NULL DEFAULT '{}',
    verification   TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);

-- Which document each source (a file path) holds now; the latest ingest of a path wins.
CREATE TABLE IF NOT EXISTS sources (
    source       TEXT PRIMARY KEY,
    document_id  TEXT NOT NULL,
    ord          TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sources_by_document ON sources (document_id);

CREATE TABLE IF NOT EXISTS elements (
    document_id  TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    element_id   TEXT NOT NULL,
    data         TEXT NOT NULL,
    PRIMARY KEY (document_id, seq)
);

CREATE TABLE IF NOT EXISTS plan_versions (
    document_id   TEXT NOT NULL,
    version       INTEGER NOT NULL,
    strategy      TEXT NOT NULL,
    planner       TEXT NOT NULL,
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    data          TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    PRIMARY KEY (document_id, version)
);

CREATE TABLE IF NOT EXISTS chunks (
    chunk_id      TEXT PRIMARY KEY,
    document_id   TEXT NOT NULL,
    plan_version  INTEGER NOT NULL,
    seq           INTEGER NOT NULL,
    data          TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_by_document ON chunks (document_id, seq);

-- BM25 term index of the active chunks (drac.retrieval: the tokenisation `drac eval` uses).
-- Workspaces made before it also hold an unused FTS5 table, chunks_fts.
CREATE TABLE IF NOT EXISTS bm25_docs (
    chunk_id   TEXT PRIMARY KEY,
    length     INTEGER NOT NULL,
    tokeniser  TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS bm25_postings (
    term      TEXT NOT NULL,
    chunk_id  TEXT NOT NULL,
    tf        INTEGER NOT NULL,
    PRIMARY KEY (term, chunk_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS bm25_postings_by_chunk ON bm25_postings (chunk_id);

CREATE TABLE IF NOT EXISTS plan_cache (
    cache_key  TEXT PRIMARY KEY,
    data       TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS ledger (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    document_id   TEXT NOT NULL,
    stage         TEXT NOT NULL,
    model         TEXT NOT NULL,
    input_tokens  INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    latency_ms    REAL NOT NULL,
    outcome       TEXT NOT NULL,
    at            TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS embedding_cache (
    model      TEXT NOT NULL,
    text_hash  TEXT NOT NULL,
    vector     BLOB NOT NULL,
    PRIMARY KEY (model, text_hash)
);

-- Settings the workspace remembers (the strategy of its last full re-plan), as JSON.
CREATE TABLE IF NOT EXISTS settings (
    name   TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);
