"""What arrives with the documents cannot steer drac: a planted `.drac` workspace (with links
out of it, or a database with triggers of its own), a `drac.toml` beside the documents, a
metadata key with a trailing newline. Each test plants what an archive, a shared drive or a
synced folder could carry, runs drac as a user would, and checks a canary folder, a local
listener and the workspace's own data."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_links import listening
from pdfs import Text, make_pdf, text_page

from drac.errors import DracError, MetadataError
from drac.filters import parse_expressions
from drac.local.check import check_workspace
from drac.local.errors import ForeignSchemaError, LinkInWorkspaceError, UntrustedWorkspaceError
from drac.local.trust import choose_workspace
from drac.local.workspace import Workspace
from drac.metadata import check_key, parse_assignments

DRAC = [sys.executable, "-c", "from drac.cli import main; main()"]
GOOD = "# Mine\n\nThe user's own note about quarterly returns.\n"


def drac(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the drac CLI in `cwd` as a user would (no DRAC_WORKSPACE or DRAC_CONFIG)."""
    environment = {
        k: v for k, v in os.environ.items() if k not in ("DRAC_WORKSPACE", "DRAC_CONFIG")
    }
    environment.update(env or {})
    return subprocess.run(
        [*DRAC, *args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=300
    )


def _canary_folder(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A folder of the user's that must come out of every test as it went in."""
    folder = tmp_path / "precious"
    (folder / "deep").mkdir(parents=True)
    files = {"report.txt": "quarterly numbers\n", "deep/notes.txt": "private notes\n"}
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder, files


def _unchanged(folder: Path, files: dict[str, str]) -> None:
    found = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert found == sorted(files), f"files appeared or vanished in {folder}: {found}"
    for name, text in files.items():
        assert (folder / name).read_text() == text


def _planted_archive(tmp_path: Path) -> Path:
    """An extracted archive holding a real drac workspace made elsewhere (then moved in),
    and a subfolder where the user keeps their own document."""
    elsewhere = tmp_path / "attacker" / ".drac"
    Workspace(elsewhere).close()
    archive = tmp_path / "archive"
    (archive / "mine").mkdir(parents=True)
    shutil.move(str(elsewhere), archive / ".drac")
    (archive / "mine" / "mine.md").write_text(GOOD)
    return archive


# --- finding 1: a planted workspace ------------------------------------------------------------


def test_a_workspace_found_above_that_drac_did_not_make_is_refused(tmp_path):
    archive = _planted_archive(tmp_path)
    precious, files = _canary_folder(tmp_path)
    shutil.rmtree(archive / ".drac" / "tmp", ignore_errors=True)
    (archive / ".drac" / "tmp").symlink_to(precious, target_is_directory=True)

    result = drac("ingest", "mine.md", cwd=archive / "mine")

    assert result.returncode != 0
    assert "not using the workspace" in result.stderr
    assert "--workspace" in result.stderr and "DRAC_WORKSPACE" in result.stderr
    _unchanged(precious, files)
    assert not (archive / "mine" / ".drac").exists(), "nothing is made when refused"


def test_a_planted_workspace_in_the_current_folder_is_refused_too(tmp_path):
    archive = _planted_archive(tmp_path)
    (archive / "mine.md").write_text(GOOD)

    result = drac("ingest", "mine.md", cwd=archive)

    assert result.returncode != 0
    assert "not using the workspace .drac" in result.stderr


def test_a_workspace_named_with_a_linked_temporary_folder_deletes_nothing(tmp_path):
    archive = _planted_archive(tmp_path)
    precious, files = _canary_folder(tmp_path)
    shutil.rmtree(archive / ".drac" / "tmp", ignore_errors=True)
    (archive / ".drac" / "tmp").symlink_to(precious, target_is_directory=True)

    result = drac("ingest", "mine/mine.md", "--workspace", ".drac", cwd=archive)

    assert result.returncode != 0
    assert "is a symbolic link" in result.stderr
    _unchanged(precious, files)


def test_a_workspace_whose_documents_folder_is_a_link_writes_nothing_through_it(tmp_path):
    archive = _planted_archive(tmp_path)
    precious, files = _canary_folder(tmp_path)
    shutil.rmtree(archive / ".drac" / "documents", ignore_errors=True)
    (archive / ".drac" / "documents").symlink_to(precious, target_is_directory=True)

    result = drac("ingest", "mine/mine.md", "--workspace", ".drac", cwd=archive)

    assert result.returncode != 0
    assert "is a symbolic link" in result.stderr
    _unchanged(precious, files)


def test_a_link_deep_inside_a_workspace_is_never_followed_and_check_names_it(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "mine.md").write_text(GOOD)
    assert drac("ingest", "mine.md", "--no-embed", cwd=project).returncode == 0
    precious, files = _canary_folder(tmp_path)
    [document] = (project / ".drac" / "documents").iterdir()
    shutil.rmtree(document / "chunks")
    (document / "chunks").symlink_to(precious, target_is_directory=True)

    replan = drac("replan", "--target-chars", "300", cwd=project)
    check = drac("check", cwd=project)
    repair = drac("check", "--repair", cwd=project)
    assert "removed the link" in repair.stderr + repair.stdout

    _unchanged(precious, files)
    assert "is a symbolic link" in replan.stderr + replan.stdout
    assert check.returncode != 0 and "symbolic link" in check.stdout + check.stderr
    shown = str((document / "chunks").relative_to(project))
    assert f"problem {shown}: a symbolic link" in check.stdout
    assert not (document / "chunks").is_symlink(), "--repair removes the link itself"
    _unchanged(precious, files)


def test_drac_uses_its_own_workspace_from_a_subfolder_and_says_which(tmp_path):
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "mine.md").write_text(GOOD)
    assert drac("ingest", "mine.md", "--no-embed", cwd=project).returncode == 0

    result = drac("status", cwd=project / "sub")

    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines()[0] == f"drac: using the workspace {project / '.drac'}"
    assert "mine.md" in result.stdout


def test_a_folder_put_where_the_users_workspace_was_is_not_taken_for_it(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "mine.md").write_text(GOOD)
    assert drac("ingest", "mine.md", "--no-embed", cwd=project).returncode == 0
    shutil.rmtree(project / ".drac")
    other = tmp_path / "other" / ".drac"
    Workspace(other).close()
    shutil.move(str(other), project / ".drac")  # same path, another folder

    with pytest.raises(UntrustedWorkspaceError, match="did not make it"):
        choose_workspace(None, project)


def test_another_workspace_put_into_the_users_folder_is_not_taken_for_it(tmp_path):
    # The same folder (path, device and inode all unchanged) now holds someone else's
    # workspace: only the mark drac wrote tells the two apart. A file system that gives a new
    # folder a removed folder's inode number makes the same case.
    project = tmp_path / "project"
    project.mkdir()
    (project / "mine.md").write_text(GOOD)
    assert drac("ingest", "mine.md", "--no-embed", cwd=project).returncode == 0
    mine = project / ".drac"
    inode = mine.stat().st_ino
    other = tmp_path / "other" / ".drac"
    Workspace(other).close()
    for entry in mine.iterdir():
        shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    for entry in other.iterdir():
        shutil.move(str(entry), mine / entry.name)
    assert mine.stat().st_ino == inode

    with pytest.raises(UntrustedWorkspaceError, match="did not make it"):
        choose_workspace(None, project)


def test_naming_a_workspace_once_makes_it_found_from_then_on(tmp_path):
    archive = _planted_archive(tmp_path)

    named = drac("status", "--workspace", str(archive / ".drac"), cwd=archive / "mine")
    found = drac("status", cwd=archive / "mine")

    assert named.returncode == 0, named.stderr
    assert found.returncode == 0, found.stderr
    assert choose_workspace(None, archive / "mine").how == "above"


def test_a_leftover_dot_drac_that_is_not_a_workspace_is_not_made_one(tmp_path):
    folder = tmp_path / "extracted"
    (folder / ".drac").mkdir(parents=True)
    (folder / ".drac" / "tmp").symlink_to(tmp_path, target_is_directory=True)

    with pytest.raises(UntrustedWorkspaceError, match="holds no drac workspace"):
        choose_workspace(None, folder)
    assert choose_workspace(None, tmp_path / "nowhere").how == "new"


# --- finding 2: a planted database -------------------------------------------------------------

_REWRITE = """
CREATE TRIGGER rewrite_chunks AFTER INSERT ON chunks BEGIN
  UPDATE chunks SET data = json_set(data, '$.text', 'ATTACKER TEXT') WHERE chunk_id = NEW.chunk_id;
END;
CREATE TABLE stolen (document_id TEXT);
CREATE TRIGGER copy_ids AFTER INSERT ON documents BEGIN
  INSERT INTO stolen VALUES (NEW.document_id);
END;
CREATE VIEW everything AS SELECT * FROM chunks;
"""


def _workspace_with(tmp_path: Path, sql: str) -> Path:
    root = tmp_path / "ws"
    Workspace(root).close()
    connection = sqlite3.connect(root / "drac.sqlite")
    connection.executescript(sql)
    connection.close()
    return root


def test_a_database_with_triggers_views_or_tables_drac_does_not_make_is_refused(tmp_path):
    root = _workspace_with(tmp_path, _REWRITE)
    (tmp_path / "mine.md").write_text(GOOD)

    result = drac("ingest", "mine.md", "--workspace", str(root), cwd=tmp_path)
    with pytest.raises(ForeignSchemaError) as refused:
        Workspace(root)

    assert result.returncode != 0
    assert "rewrite_chunks" in result.stderr
    names = {item.name for item in refused.value.found}
    assert names == {"rewrite_chunks", "copy_ids", "stolen", "everything"}
    connection = sqlite3.connect(root / "drac.sqlite")
    assert connection.execute("SELECT count(*) FROM chunks").fetchone() == (0,)
    assert connection.execute("SELECT count(*) FROM stolen").fetchone() == (0,)
    connection.close()


def test_drac_check_names_every_object_drac_does_not_make(tmp_path):
    root = _workspace_with(tmp_path, _REWRITE)

    report = check_workspace(root)
    listed = " ".join(problem.problem for problem in report.problems)

    for name in ("rewrite_chunks", "copy_ids", "stolen", "everything"):
        assert name in listed
    assert len(report.problems) == 4


@pytest.mark.parametrize(
    "sql",
    [
        "DROP TABLE settings; CREATE TABLE settings (name TEXT PRIMARY KEY,"
        " value TEXT NOT NULL CHECK (length(value) < 5))",
        "DROP INDEX chunks_by_document; CREATE INDEX chunks_by_document ON chunks (data)",
        "ALTER TABLE chunks ADD COLUMN extra TEXT DEFAULT 'x'",
        "DROP TABLE plan_cache; CREATE TABLE plan_cache (cache_key TEXT PRIMARY KEY,"
        " data TEXT NOT NULL DEFAULT 'planted')",
    ],
    ids=["check-constraint", "changed-index", "extra-column", "changed-default"],
)
def test_a_changed_table_or_index_is_refused(tmp_path, sql):
    root = _workspace_with(tmp_path, sql)

    with pytest.raises(ForeignSchemaError):
        Workspace(root)


def test_a_workspace_of_an_earlier_drac_still_opens(tmp_path):
    """Its documents table lacks the columns added since, and it keeps the FTS5 table that
    earlier versions made: both are drac's own."""
    root = tmp_path / "old"
    root.mkdir()
    connection = sqlite3.connect(root / "drac.sqlite")
    connection.executescript(
        """
        CREATE TABLE documents (document_id TEXT PRIMARY KEY, source TEXT NOT NULL,
            source_path TEXT, sha256 TEXT NOT NULL, tenant TEXT, format TEXT NOT NULL,
            status TEXT NOT NULL, pages INTEGER NOT NULL DEFAULT 0, active_version INTEGER,
            warnings TEXT NOT NULL DEFAULT '[]', error TEXT, created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL);
        CREATE VIRTUAL TABLE chunks_fts USING fts5 (
            chunk_id UNINDEXED, breadcrumb, text, tokenize = 'unicode61 remove_diacritics 2'
        );
        """
    )
    connection.close()

    Workspace(root).close()


# --- finding 3: a drac.toml beside the documents ---------------------------------------------


def _pdf(folder: Path) -> None:
    page = text_page([Text("A page with a few words about quarterly returns", 72, 720)])
    (folder / "scan-me.pdf").write_bytes(make_pdf([page]))


def test_a_drac_toml_in_the_ingested_folder_sends_nothing(tmp_path):
    folder = tmp_path / "shared-drive"
    folder.mkdir()
    _pdf(folder)
    with listening("NOT-A-MODEL", seconds=120) as listener:
        (folder / "drac.toml").write_text(
            f'[model]\nbackend = "openai"\nopenai_base_url = "{listener.url("/v1")}"\n'
        )
        result = drac("ingest", ".", "--no-embed", cwd=folder)

    assert listener.requests == []
    assert result.returncode == 0, result.stderr
    assert "not reading ./drac.toml" in result.stderr
    assert "--config drac.toml" in result.stderr


def test_a_named_settings_file_that_sends_documents_out_is_announced(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "mine.md").write_text(GOOD)
    config = tmp_path / "my-settings.toml"
    config.write_text(
        '[model]\nbackend = "openai"\nopenai_base_url = "http://127.0.0.1:9/v1"\n'
        'openai_model = "a-model"\n'
    )

    result = drac("--config", str(config), "ingest", "mine.md", "--no-embed", cwd=folder)

    assert result.returncode == 0, result.stderr
    line = f"drac: settings from {config} send documents to http://127.0.0.1:9/v1"
    assert line in result.stderr


def test_the_users_own_config_folder_is_read(tmp_path):
    home_config = tmp_path / "config"
    (home_config / "drac").mkdir(parents=True)
    (home_config / "drac" / "drac.toml").write_text("[settings]\nbatch_size = 3\n")
    from drac.settings import Settings

    settings = Settings.load({"XDG_CONFIG_HOME": str(home_config)})

    assert settings.conversion.batch_size == 3
    assert settings.config_file == home_config / "drac" / "drac.toml"


def test_a_drac_toml_in_the_current_folder_is_not_read_by_the_library(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "drac.toml").write_text('[model]\nbackend = "openai"\n')
    from drac.settings import Settings

    settings = Settings.load({"XDG_CONFIG_HOME": str(tmp_path / "empty")})

    assert settings.models.backend == "offline"
    assert settings.config_file is None


# --- finding 6: keys matched whole -----------------------------------------------------------


@pytest.mark.parametrize("key", ["tenant\n", "team\n", "a\nb"])
def test_a_key_with_a_newline_is_refused_everywhere(tmp_path, key):
    with pytest.raises(MetadataError):
        check_key(key, "test")
    try:  # --meta strips what surrounds a key; what it keeps is matched whole
        kept = parse_assignments([f"{key}=x"], "--meta")
    except DracError:
        kept = {}
    assert all("\n" not in name for name in kept)
    with pytest.raises((DracError, ValueError)):
        parse_expressions([json.dumps({"equals": {"key": key, "value": "x"}})])


def test_a_sidecar_with_a_newline_key_fails_its_document_alone(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "bad.md").write_text(GOOD)
    (folder / "bad.md.metadata.json").write_text(
        json.dumps({"metadataAttributes": {"tenant\n": "other"}})
    )
    (folder / "good.md").write_text("# Good\n\nAnother note.\n")

    result = drac("ingest", ".", "--no-embed", "--json", cwd=folder)
    outcomes = {Path(item["path"]).name: item for item in json.loads(result.stdout)["outcomes"]}

    assert outcomes["bad.md"]["status"] == "FAILED"
    assert "may hold only letters" in outcomes["bad.md"]["error"]
    assert outcomes["good.md"]["status"] == "INDEXED"


def test_links_inside_a_workspace_are_refused_by_the_store_itself(tmp_path):
    root = tmp_path / "ws"
    ws = Workspace(root)
    (root / "documents").mkdir(exist_ok=True)
    (root / "documents" / "d1").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(LinkInWorkspaceError):
        ws.artifacts.put_bytes("documents/d1/x.txt", b"x")
    ws.close()
    assert not (tmp_path / "x.txt").exists()
